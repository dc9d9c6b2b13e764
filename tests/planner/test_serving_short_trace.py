"""A trace replayed at its own times is an open loop: one that ends before the batch has filled is flagged as too
short, with the requests a steady state needs at the trace's offered rate, as an arrival rate's run is."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import chipwise.api as cw


def _trace(path: Path, gaps_s: float, n: int) -> str:
    rows = ["arrival_s,input_tokens,output_tokens"] + [f"{i * gaps_s:.3f},1024,1024" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _predict(trace: str, **extra: Any) -> dict[str, Any]:
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "trace": trace}
    return cw.predict({**scenario, "plan": {"tp": 1}, **extra})


def test_a_trace_shorter_than_its_fill_is_flagged_with_its_slo(tmp_path: Path) -> None:
    """30 requests of 1,024 / 1,024 tokens, one every 0.4 s (2.5 req/s over 11.6 s): each takes longer than half
    the span, so the figures are of the batch filling. The trace had no flag and its SLO read 'met' outright,
    while the same load given as an arrival rate was flagged."""
    slo = {"ttft_p99_s": 1, "tpot_p99_s": "50ms"}
    result = _predict(_trace(tmp_path / "short.csv", 0.4, 30), slo=slo)
    short = result["short_run"]
    assert short["arrival_span_s"] == 11.6
    # three request latencies (7.67 s) of arrivals at the trace's offered rate (30 over 11.6 s and a mean gap: 2.5/s)
    assert short["requests_for_steady_state"] == math.ceil(3.0 * short["request_latency_s"] * 2.5) == 58
    assert result["slo_caveat"] == "the run is too short to judge (its figures are of the batch filling)"


def test_a_two_row_trace_is_flagged_rather_than_read_as_zero_requests_per_second(tmp_path: Path) -> None:
    """Two requests 0.2 s apart read 0 input tok/s and 0 req/s over a 0.1 s window, with no word. Flagged; and a
    window that holds no finished request runs on to the run's end (serve.sim.metrics.window): the two
    requests over the 6.4 s from the fill's end to the last finish."""
    result = _predict(_trace(tmp_path / "two.csv", 0.2, 2))
    start, end = result["simulation"]["window_s"]
    assert start == 0.1 and end == result["simulation"]["makespan_s"]
    # 0.31: the requests the window's output tokens make (1,024 each), those of the first made before 0.1 s aside
    assert result["requests_per_s"] == pytest.approx(result["output_tokens_per_s"] / 1024, rel=1e-12)
    assert result["requests_per_s"] == pytest.approx(2 / (end - start), rel=0.01)
    assert result["short_run"]["arrival_span_s"] == 0.2
    # at the trace's 5 req/s (two over 0.2 s and a mean gap), three latencies of 6.30 s
    assert result["short_run"]["requests_for_steady_state"] == 95


def test_a_long_enough_trace_is_not_flagged(tmp_path: Path) -> None:
    """The same trace replayed for 200 requests (it repeats, a span later) reaches its steady state."""
    result = _predict(_trace(tmp_path / "short.csv", 0.4, 30), requests=200)
    assert "short_run" not in result
