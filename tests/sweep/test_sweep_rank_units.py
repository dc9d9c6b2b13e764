"""A ranking compares figures of one unit (store.UNITS): a training point without `tokens` has no run to time, only
seconds per token, and one ORDER BY over both had ranked it first by time (5.98e-07 s per token beside 597.9 s for a
whole run of 1e9 tokens): the best point 'by time' had no time to train."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from chipwise.sweep import Store, load_sweep, run_sweep

WriteSweep = Callable[..., Path]

# 2 chips x (no tokens, a 1e9-token run) = 4 points
NO_TOKENS = """\
name: nt
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, seq_len: 2048}
grid:
  hardware: [h100-sxm, b200]
  tokens: [null, 1e9]
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("units")
    (folder / "nt.yaml").write_text(NO_TOKENS, encoding="utf-8")
    path = folder / "nt.duckdb"
    run_sweep(load_sweep(folder / "nt.yaml"), path, workers=1)
    return path


def test_whole_runs_rank_first_by_time_then_the_points_timed_per_token(store: Path) -> None:
    with Store(store, read_only=True) as db:
        rows = db.ranked("nt", "time")
    assert [(r["hardware"], r["tokens"], r["rank_unit"]) for r in rows] == [
        ("b200", 1e9, "s"),
        ("h100-sxm", 1e9, "s"),
        ("b200", None, "s/token"),
        ("h100-sxm", None, "s/token"),
    ]
    for r in rows[:2]:  # a whole run by its expected time to train, seconds
        assert r["rank_value"] == r["expected_time_to_train_s"] and r["economics_basis"] == "whole run"
        assert r["rank_value"] > 1.0  # 1e9 tokens at some 1e5 tokens/s on 8 chips
    for r in rows[2:]:  # no run: seconds per token
        assert r["rank_value"] == pytest.approx(1.0 / r["tokens_per_s"], rel=1e-12)
        assert r["expected_time_to_train_s"] is None and r["economics_basis"] == "one hour"
    assert rows[0]["rank_value"] < rows[1]["rank_value"] and rows[2]["rank_value"] < rows[3]["rank_value"]
    assert all(r["tied_with"] == 0 for r in rows)


def test_the_best_by_time_is_a_whole_run_and_costs_rank_in_one_unit(store: Path) -> None:
    """Costs are per million tokens whether priced for a run or for one hour: one unit, no split."""
    with Store(store, read_only=True) as db:
        best = {r["best_by"]: r for r in db.best_per_what_if("nt")}
        by_cost = db.ranked("nt", "cost")
    assert (best["time"]["hardware"], best["time"]["tokens"], best["time"]["rank_unit"]) == ("b200", 1e9, "s")
    assert {r["rank_unit"] for r in by_cost} == {"$/Mtok"}
    values = [r["rank_value"] for r in by_cost]
    assert values == sorted(values)
    assert all(r["rank_value"] == r["expected_usd_per_million_tokens"] for r in by_cost)
