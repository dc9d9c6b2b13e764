"""The `results` table's columns: a prediction's dictionary flattened to typed columns (SI units; a name says its
unit when it is not SI). Training and serving share one table: a column a kind does not have is NULL.

Top-level scalar keys that no column names (a serving key added later, say) are kept in the `other` JSON column,
so nothing a prediction reports is dropped silently.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chipwise.catalog.overrides import USER_PROVIDER


@dataclass(frozen=True)
class Column:
    name: str
    sql: str  # DuckDB type
    path: tuple[str, ...]  # where the value sits in the prediction dictionary


def _c(name: str, sql: str = "DOUBLE", *path: str) -> Column:
    return Column(name, sql, path or (name,))


COLUMNS: tuple[Column, ...] = (
    # what the point is
    _c("kind", "VARCHAR"),
    _c("model", "VARCHAR"),
    _c("hardware", "VARCHAR"),
    _c("system", "VARCHAR"),
    _c("chips", "BIGINT"),
    _c("precision", "VARCHAR"),
    _c("projected", "BOOLEAN"),
    _c("plan", "JSON"),
    _c("plan_source", "VARCHAR"),
    _c("plan_tp", "BIGINT", "plan", "tp"),
    _c("plan_pp", "BIGINT", "plan", "pp"),
    _c("plan_dp", "BIGINT", "plan", "dp"),
    _c("plan_cp", "BIGINT", "plan", "cp"),
    _c("plan_ep", "BIGINT", "plan", "ep"),
    _c("plan_vpp", "BIGINT", "plan", "vpp"),
    _c("plan_microbatch", "BIGINT", "plan", "microbatch"),
    _c("plan_zero", "BIGINT", "plan", "zero"),
    _c("plan_recompute", "VARCHAR", "plan", "recompute"),
    # training
    _c("seq_len", "BIGINT"),
    _c("global_batch", "BIGINT"),
    _c("global_batch_tokens"),
    _c("tokens"),
    _c("steps"),
    _c("step_time_s"),
    _c("tokens_per_s"),
    _c("tokens_per_s_per_chip"),
    _c("tflops_per_chip"),
    _c("mfu"),
    _c("hfu"),
    _c("model_flops_per_token"),
    _c("memory_per_chip_gib"),
    _c("memory_capacity_gib"),
    _c("time_to_train_s"),
    _c("dominated_by", "VARCHAR"),
    _c("breakdown_s", "JSON", "breakdown"),
    _c("plans_evaluated", "BIGINT", "search", "evaluated"),
    _c("plans_feasible", "BIGINT", "search", "feasible"),
    # training at scale: failures, restarts and spares (goodput-adjusted "expected" figures)
    _c("chips_used", "BIGINT"),
    _c("goodput"),
    _c("expected_time_to_train_s"),
    _c("expected_cost_usd"),
    _c("expected_usd_per_million_tokens"),
    _c("expected_energy_j"),
    _c("expected_co2e_kg"),
    # serving (DESIGN.md's serving keys)
    _c("throughput_tokens_per_s"),
    _c("output_tokens_per_s"),
    _c("input_tokens_per_s"),
    _c("output_tokens_per_s_per_chip"),
    _c("requests_per_s"),
    _c("ttft_p50_s", "DOUBLE", "ttft_s", "p50"),
    _c("ttft_p90_s", "DOUBLE", "ttft_s", "p90"),
    _c("ttft_p99_s", "DOUBLE", "ttft_s", "p99"),
    _c("tpot_p50_s", "DOUBLE", "tpot_s", "p50"),
    _c("tpot_p90_s", "DOUBLE", "tpot_s", "p90"),
    _c("tpot_p99_s", "DOUBLE", "tpot_s", "p99"),
    _c("e2e_p50_s", "DOUBLE", "e2e_s", "p50"),
    _c("e2e_p99_s", "DOUBLE", "e2e_s", "p99"),
    _c("goodput_fraction", "DOUBLE", "goodput", "fraction"),
    _c("cost_usd_per_mtok"),  # per million output tokens
    _c("cost_usd_per_hour"),
    _c("energy_j_per_mtok"),  # per million output tokens, PUE included
    _c("co2e_kg_per_mtok"),
    _c("slo_met", "BOOLEAN"),
    # economics, energy and carbon
    _c("pricing", "VARCHAR"),
    _c("region", "VARCHAR"),
    _c("price_usd_per_chip_hour"),
    _c("price_status", "VARCHAR", "_price_status"),  # 'estimate' where a price is no published one (tables: §)
    _c("cost_usd"),
    _c("usd_per_million_tokens"),
    _c("economics_basis", "VARCHAR"),
    _c("energy_j"),
    _c("co2e_kg"),
    _c("power_w_per_chip"),
    _c("pue"),
    _c("tokens_per_kwh"),
    _c("flop_per_joule"),
    _c("other", "JSON", "_other"),
)

#: Keys never copied to `other`: bulky provenance (`chipwise predict --sources` shows it) or derivable.
_SKIP = frozenset({"figures", "price_source", "price_sources", "breakdown_fraction", "memory_breakdown_gib", "search"})
_TOP = frozenset(c.path[0] for c in COLUMNS)


def _get(result: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = result
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _plain(value: Any) -> Any:
    """NaN and infinities become NULL; NumPy scalars become Python ones."""
    if hasattr(value, "item") and not isinstance(value, list | dict | str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _cast(value: Any, sql: str) -> Any:
    value = _plain(value)
    if value is None:
        return None
    if sql == "JSON":
        return json.dumps(value, sort_keys=True)
    if sql == "BIGINT":
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int | float):
            return int(value) if float(value).is_integer() else None
        return None
    if sql == "DOUBLE":
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if sql == "BOOLEAN":
        return bool(value) if isinstance(value, bool | int) else None
    return str(value)


def price_status(result: Mapping[str, Any]) -> str | None:
    """The status of the prices a point is costed at (training's price_source, each serving pool's
    price_sources): 'estimate' where any is a catalog estimate, as predict marks it with §; 'user' for a price set
    with --set (which the catalog records as an estimate, but is the user's own figure)."""
    sources = [result.get("price_source"), *(result.get("price_sources") or ())]
    found = [
        "user" if s.get("provider") == USER_PROVIDER else str(s.get("status"))
        for s in sources
        if isinstance(s, Mapping) and s.get("status") is not None
    ]
    return "estimate" if "estimate" in found else (found[0] if found else None)


def flatten(result: Mapping[str, Any]) -> tuple[Any, ...]:
    """One row of the results table (in COLUMNS order) from a prediction dictionary."""
    scalar = (str, int, float, bool)
    other = {
        k: v for k, v in result.items() if k not in _TOP and k not in _SKIP and (isinstance(v, scalar) or v is None)
    }
    load = result.get("load")
    if isinstance(load, Mapping):  # a serving load's share of what the deployment sustains, among its scalars
        other.update({f"load.{k}": v for k, v in load.items() if isinstance(v, scalar)})
    full = {**result, "_other": other or None, "_price_status": price_status(result)}
    return tuple(_cast(_get(full, c.path), c.sql) for c in COLUMNS)
