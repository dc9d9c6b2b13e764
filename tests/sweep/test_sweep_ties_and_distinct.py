"""A sweep's best point among points tied on its figure, and the count of a sweep that lists a point twice.

Serving cost is priced on the tokens offered, so every deployment that carries one load costs the same to the last
digit: the best by cost had been the first of them by point id (sglang in one what-if, vllm in another, where
trtllm had the lowest TTFT p99), and the tie was not said. A sweep listing a point twice had said '8 points listed'
of a sweep of 4 distinct points.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.sweep_cmd import _best_table
from chipwise.sweep import Store, load_sweep, run_sweep

WriteSweep = Callable[..., Path]

#: three engines carrying 8 req/s of 1024/256 tokens on 2 H100 (a p5.48xlarge's 55.04 $/h for 8: 13.76 $/h)
ENGINES = """\
name: tie
base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 2, precision: fp8, input_tokens: 1024,
       output_tokens: 256, arrival_rate: 8, requests: 400, slo: {ttft_p99_s: 2, tpot_p99_s: 0.05}}
grid: {engine: [trtllm, vllm, sglang]}
"""


@pytest.fixture(scope="module")
def by_cost(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The three points ranked by cost, and the best per what-if."""
    folder = tmp_path_factory.mktemp("tie")
    (folder / "tie.yaml").write_text(ENGINES, encoding="utf-8")
    run_sweep(load_sweep(folder / "tie.yaml"), folder / "t.duckdb", workers=1)
    with Store(folder / "t.duckdb", read_only=True) as db:
        return db.ranked("tie", "cost", 10), db.best_per_what_if("tie")


def test_points_tied_on_cost_rank_by_their_ttft(by_cost: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """13.76 $/h over 8 x 256 x 3,600 = 7,372,800 tokens an hour offered: 1.8663194 $/M for every engine; among them
    the lowest TTFT p99 first, each tied with the 2 others."""
    ranked, _ = by_cost
    assert [r["cost_usd_per_mtok"] for r in ranked] == pytest.approx([13.76 / 7.3728] * 3, rel=1e-9)
    assert len({r["cost_usd_per_mtok"] for r in ranked}) == 1  # tied to the last digit
    ttfts = [r["ttft_p99_s"] for r in ranked]
    assert ttfts == sorted(ttfts)
    assert [r["tied_with"] for r in ranked] == [2, 2, 2]


def test_the_best_by_cost_is_the_fastest_of_the_tied(
    by_cost: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    ranked, best = by_cost
    cheapest = next(r for r in best if r["best_by"] == "cost")
    fastest = next(r for r in best if r["best_by"] == "time")
    assert cheapest["id"] == fastest["id"] == ranked[0]["id"]
    assert cheapest["tied_with"] == 2 and fastest["tied_with"] == 0  # three TTFT p99s, none alike


def test_the_best_table_says_a_tie() -> None:
    """The best by cost tied with 5 others is marked † and named under the table; the untied best by time is not."""
    row = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 2, "what_if": "baseline",
           "scenario": {"engine": "trtllm"}, "plan": {"tp": 1, "max_batch": 750, "replicas": 2},
           "output_tokens_per_s": 2047.0, "ttft_p99_s": 0.0495, "tpot_p99_s": 0.00496, "slo_met": True,
           "cost_usd_per_mtok": 1.8663194444}  # fmt: skip
    rows = [{**row, "best_by": "time", "tied_with": 0}, {**row, "best_by": "cost", "tied_with": 5}]
    console = Console(width=200, record=True)
    console.print(_best_table("tie", rows, ["engine"]))
    lines = console.export_text().splitlines()
    assert any(line.startswith("cost† baseline") for line in lines)
    assert any(line.startswith("time  baseline") for line in lines)
    assert lines[-1] == (
        "† cost baseline: tied on $/M out with 5 other points; the tie goes to the lowest TTFT p99, then TPOT p99"
    )


def test_a_point_listed_twice_is_counted_once_on_stderr(
    write_sweep: WriteSweep, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """chips [8, 8.0, 16] x 2 models x 2 what-ifs lists 12 points, 8 of them distinct: the run had said 12 only."""
    sweep = write_sweep(edits=[("chips: [8, 16, 32]", "chips: [8, 8.0, 16]")])
    assert run(["sweep", str(sweep), "--store", str(tmp_path / "s.duckdb"), "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(
        "small: 12 points listed in the sweep file\nsmall: 8 distinct points (a point listed twice runs once)\n"
    )
    assert "small: ran 8 of 8 points" in captured.out
    calls: list[tuple[int, int, int]] = []
    run_sweep(load_sweep(sweep), tmp_path / "t.duckdb", workers=1, progress=lambda *a: calls.append(a))
    assert calls[:3] == [(0, 12, 0), (0, 8, 0), (0, 8, 0)] and calls[-1] == (8, 8, 0)


def test_a_sweep_without_a_repeat_says_its_count_once(
    write_sweep: WriteSweep, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["sweep", str(write_sweep()), "--store", str(tmp_path / "s.duckdb"), "--workers", "1"]) == 0
    assert "distinct" not in capsys.readouterr().err
