"""Flattening a prediction into the results table's columns: nested keys, NULLs, and nothing dropped silently."""

from __future__ import annotations

import json
import math

import numpy as np

from chipwise.sweep.columns import COLUMNS, flatten


def _row(result: dict[str, object]) -> dict[str, object]:
    return dict(zip([c.name for c in COLUMNS], flatten(result), strict=True))


def test_a_serving_result_flattens_to_its_columns() -> None:
    row = _row(
        {
            "kind": "serve",
            "chips": np.int64(8),
            "throughput_tokens_per_s": np.float64(1.5e4),
            "ttft_s": {"mean": 0.2, "p50": 0.1, "p90": 0.3, "p99": 0.9},
            "tpot_s": {"p50": 0.01, "p90": 0.02, "p99": math.nan},
            "goodput": {"fraction": 0.97, "targets": {"ttft_p99": 2.0}},
            "cost_usd_per_mtok": 0.42,
            "plan": {"tp": 8, "max_batch": 256},
            "kv_cache_policy": "paged",  # a key no column names: kept in `other`
            "figures": {"h200.hbm": {"value": 1}},  # provenance: not stored
        }
    )
    assert row["kind"] == "serve" and row["chips"] == 8 and isinstance(row["chips"], int)
    assert row["throughput_tokens_per_s"] == 1.5e4 and row["ttft_p99_s"] == 0.9 and row["ttft_p50_s"] == 0.1
    assert row["tpot_p99_s"] is None  # NaN is NULL
    assert row["goodput_fraction"] == 0.97 and row["goodput"] is None  # serving's goodput is a mapping
    assert json.loads(str(row["plan"])) == {"max_batch": 256, "tp": 8} and row["plan_tp"] == 8
    assert json.loads(str(row["other"])) == {"kv_cache_policy": "paged"}
    assert row["step_time_s"] is None and row["time_to_train_s"] is None


def test_types_are_enforced() -> None:
    row = _row({"kind": "train", "chips": 8.5, "mfu": "high", "projected": True, "step_time_s": 1})
    assert row["chips"] is None and row["mfu"] is None and row["projected"] is True
    assert row["step_time_s"] == 1.0 and isinstance(row["step_time_s"], float) and row["other"] is None


def test_a_serving_loads_share_of_capacity_is_kept() -> None:
    """A prediction's load is a mapping: its utilisation and capacity (what says a point is overloaded) were dropped
    with it; its scalars are kept in `other`."""
    row = _row({"kind": "serve", "load": {"kind": "rate", "utilisation": 1.95, "capacity_requests_per_s": 2.05}})
    other = json.loads(str(row["other"]))
    assert other["load.utilisation"] == 1.95 and other["load.capacity_requests_per_s"] == 2.05


def test_a_prices_status_is_kept() -> None:
    """price_source was dropped whole: a catalog estimate (trn2's $2.73) read as a listed price in every table and
    export. Serving lists one price source per pool; a --set price is the user's."""
    estimate = {"provider": "aws", "status": "estimate"}
    assert _row({"kind": "train", "price_source": estimate})["price_status"] == "estimate"
    assert _row({"kind": "train", "price_source": {"provider": "user", "status": "estimate"}})["price_status"] == "user"
    pools = [{"provider": "aws", "status": "spec"}, estimate]
    assert _row({"kind": "serve", "price_sources": pools})["price_status"] == "estimate"
    assert _row({"kind": "serve", "price_sources": pools[:1]})["price_status"] == "spec"
    assert _row({"kind": "train"})["price_status"] is None and _row({"kind": "train"})["other"] is None
