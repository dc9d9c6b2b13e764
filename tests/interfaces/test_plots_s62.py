"""Serving figures label their latency axes with the figures drawn, not the percentile asked for: a plan serve
report's points are its estimate, a mean TPOT and a p99 TTFT, which had been drawn under 'p50'; and $/Mtok is per
million output tokens."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from chipwise.interfaces import plots


def _plan_serve_report() -> dict[str, Any]:
    """The keys of a `plan_serve` report these figures read: trn2's estimate is the review's (TPOT mean step 32.2 ms,
    TTFT p99 310 ms), its chip's front the estimate's (a plain mean TPOT a point)."""
    return {
        "kind": "plan-serve",
        "model": "llama-3.1-8b",
        "results": [
            {
                "hardware": "trn2",
                "chips": 2,
                "plan": {"tp": 4, "max_batch": 64, "replicas": 2},
                "estimate": {"tpot_s": 0.0322, "ttft_p99_s": 0.3103, "output_tokens_per_s": 1280.0},
                "cost_usd_per_mtok": 1.1849,
            }
        ],
        "pareto": {"trn2": [{"tpot_s": 0.0098, "output_tokens_per_s_per_chip": 12.7},
                            {"tpot_s": 0.0483, "output_tokens_per_s_per_chip": 1340.0}]},
    }  # fmt: skip


def _texts(svg: str) -> list[str]:
    return re.findall(r"(time (?:per output token|to first token)[^<]*|\$ per million[^<]*)", svg)


def test_a_plan_serve_reports_axes_name_its_mean_tpot_and_p99_ttft(tmp_path: Path) -> None:
    report = _plan_serve_report()
    for percentile in ("p50", "p99"):  # whatever is asked for, what is drawn is the estimate's mean and p99
        svg = plots.serving_throughput_latency(report, tmp_path / "t.svg", percentile=percentile).read_text()
        assert _texts(svg) == ["time per output token, mean (ms)", "time to first token, p99 (s)"]
        assert "Points: each option's steady-state estimate from the search" in svg
    svg = plots.serving_cost_latency(report, tmp_path / "c.svg").read_text()
    assert set(_texts(svg)) == {"time per output token, mean (ms)", "$ per million output tokens",
                                "$ per million output tokens vs TPOT"}  # fmt: skip
    row = plots.serving_rows(report)[0]
    assert plots.latency_at(row["tpot_s"]) == (0.0322, "mean")
    assert plots.latency_at(row["ttft_s"], "p50") == (0.3103, "p99")


def test_axes_name_each_figure_drawn(tmp_path: Path) -> None:
    """Predictions side by side at p99: gpu-a's point has it, its curve only p50, so the axis says both; a plain
    number names no figure; a statistic of a point not drawn (no throughput) is not named."""
    point = {
        "hardware": "gpu-a",
        "tpot_s": {"p50": 0.02, "p99": 0.05},
        "output_tokens_per_s_per_chip": 900.0,
        "ttft_s": {"p90": 0.4},
        "cost_usd_per_mtok": 1.2,
        "pareto": [{"tpot_s": {"p50": 0.01}, "output_tokens_per_s_per_chip": 300.0, "cost_usd_per_mtok": 3.0}],
    }
    undrawn = {"hardware": "gpu-b", "tpot_s": {"mean": 0.03}, "ttft_s": {"mean": 0.2}}
    plain = {"hardware": "npu-c", "tpot_s": 0.03, "ttft_s": 0.5, "output_tokens_per_s": 4000.0, "chips": 8}
    svg = plots.serving_throughput_latency({"results": [point, undrawn]}, tmp_path / "a.svg", "p99").read_text()
    assert _texts(svg) == ["time per output token, p99 / p50 (ms)", "time to first token, p90 (s)"]
    svg = plots.serving_throughput_latency({"results": [plain]}, tmp_path / "b.svg", "p99").read_text()
    assert _texts(svg) == ["time per output token (ms)", "time to first token (s)"]
    svg = plots.serving_cost_latency({"results": [point]}, tmp_path / "c.svg").read_text()
    assert "time per output token, p50 (ms)" in _texts(svg)


@pytest.mark.parametrize(("value", "want"), [(0.5, (0.5, "")), ({"p90": 2.0}, (2.0, "p90")), (None, None)])
def test_latency_at_says_which_figure_it_read(value: Any, want: tuple[float, str] | None) -> None:
    got = plots.latency_at(value, "p99")
    assert got == want if want else got[1] == "" and got[0] != got[0]  # NaN
