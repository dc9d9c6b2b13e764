"""A trace's arrivals are the load itself: its goodput counts every request, and its throughput is its steady
window's or, where more, the whole run's, so that a final burst, finished after the last arrival, is counted
(serve.sim.metrics.trace_window); a run of the same arrivals that is not a trace's keeps its steady window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.planner.serving_deployment import build_deployment
from chipwise.planner.serving_outcome import keeps_up, served_tokens
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.simulate import run_job
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import serving_job
from scenario_kinds import serve_scenario

TARGETS = {"ttft_p99": 2.0, "tpot_p99": 0.05}


def _late_burst(path: Path) -> str:
    """1,000 requests a second apart (0 to 999 s), then 1,000 more over the trace's last second (1,000-1,001 s),
    each of 1,024 input and 256 output tokens."""
    times = np.concatenate([np.arange(1000.0), 1000.0 + np.arange(1000) * 1.001e-3])
    path.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{t:.4f},1024,256\n" for t in times))
    return str(path)


def _run(catalog: Catalog, trace: str) -> tuple[Any, Any]:
    """The job of a trace replayed on one H100 (Llama-3.1-8B, bf16) and its simulated run."""
    sc = serve_scenario(
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: bf16, trace: " + trace + "}",
        catalog,
    )
    model = load_model(catalog, sc.model)
    job = serving_job(model, sc)
    setup = build_deployment(catalog, model, sc, job, TARGETS)[0]
    return job, run_job(job, setup, targets=TARGETS)[1]


def test_a_trace_ending_in_a_burst_counts_the_burst(catalog: Catalog, tmp_path: Path) -> None:
    """One H100 serves the trace's 2,000 x 256 output tokens by the run's end at 1,054 s: over that and the trace's
    mean gap (1,001 s / 1,999, as its offered rate counts it) 486 output tok/s, where its steady window, 15-1,001
    s, had read 256 (the first thousand's rate); 2,000 requests, 1.90 req/s. 999 of the 2,000 meet the SLO (the
    burst's queue waits past the 2 s TTFT target), 49.95%, where the window's 1,000 had read 100.0%."""
    job, out = _run(catalog, _late_burst(tmp_path / "late.csv"))
    steady = summarise(out, chips=1.0, targets=TARGETS)  # arrivals not a trace's: its steady window
    assert steady["output_tokens_per_s"] == pytest.approx(255.8, abs=0.1)
    assert steady["goodput"]["fraction"] == 1.0
    summary = summarise(out, chips=1.0, targets=TARGETS, trace=True)
    makespan, gap = summary["makespan_s"], 1001.0 / 1999
    assert makespan == pytest.approx(1054.0, abs=0.5) and summary["window_s"] == [-gap, makespan]
    assert summary["output_tokens_per_s"] == pytest.approx(2000 * 256 / (makespan + gap), rel=1e-9)
    assert summary["output_tokens_per_s"] == pytest.approx(485.6, abs=0.1)
    assert summary["requests_per_s"] == pytest.approx(2000 / (makespan + gap), rel=1e-9)
    assert summary["throughput_tokens_per_s"] == pytest.approx(2000 * (1024 + 256) / (makespan + gap), rel=1e-9)
    assert summary["goodput"]["fraction"] == 999 / 2000
    assert summary["goodput"]["requests_per_s"] == pytest.approx(999 / (makespan + gap), rel=1e-9)
    # the load, 2,000 requests a pass of 1,001.5 s (its last arrival and a mean gap), 511.2 output tok/s: kept up
    # with (486 is 95% of it; the window's 256 had read 50%, and priced the run at $7.47 per M, not $3.74)
    offered = 2000 / (1001.0 + gap)
    assert keeps_up(job, {**summary, "capacity_utilisation": 0.11})
    assert served_tokens(job, {**summary, "capacity_utilisation": 0.11}) == pytest.approx(
        (offered * 256, offered * 1280), rel=1e-9
    )
    assert not keeps_up(job, {**steady, "capacity_utilisation": 0.11})


def test_a_steady_trace_keeps_its_steady_window(catalog: Catalog, tmp_path: Path) -> None:
    """2,000 requests 0.1 s apart read their steady window (from one median latency to the last arrival, 199.9 s),
    whose 2,560 output tok/s the whole run's fill and drain would read low; every request meets the SLO."""
    trace = tmp_path / "steady.csv"
    rows = "".join(f"{i / 10:.1f},1024,256\n" for i in range(2000))
    trace.write_text("arrival_s,input_tokens,output_tokens\n" + rows)
    out = _run(catalog, str(trace))[1]
    steady = summarise(out, chips=1.0, targets=TARGETS)
    summary = summarise(out, chips=1.0, targets=TARGETS, trace=True)
    assert summary["window_s"] == steady["window_s"] and summary["window_s"][1] == 199.9
    assert summary["output_tokens_per_s"] == steady["output_tokens_per_s"]
    assert summary["output_tokens_per_s"] == pytest.approx(2560, rel=0.01)
    assert summary["output_tokens_per_s"] > 2000 * 256 / summary["makespan_s"]
    assert summary["goodput"]["fraction"] == 1.0


def test_a_traces_goodput_counts_requests_outside_its_throughput_window() -> None:
    """Where a trace's steady window wins its throughput, the requests that finished outside it (a fill before it,
    a drain after it) still count in its goodput: its requests are the load. A steady run counts those the window
    does. Four requests, finished at 1, 5, 6 and 12 s, one dropped that arrived at 0.5 s; window 4-10 s."""
    from chipwise.serve.sim.metrics import _goodput_basis

    served = np.array([True, True, True, True, False])
    r = {
        "finish": np.array([1.0, 5.0, 6.0, 12.0, np.nan]),
        "arrival": np.array([0.0, 0.2, 3.0, 9.0, 0.5]),
        "dropped": np.array([0.0, 0.0, 0.0, 0.0, 1.0]),
    }
    done, dropped = _goodput_basis(served, r, 4.0, 10.0, trace=True)
    assert done.tolist() == [True, True, True, True, False] and dropped.tolist() == [False] * 4 + [True]
    done, dropped = _goodput_basis(served, r, 4.0, 10.0)
    assert done.tolist() == [False, True, True, False, False] and not dropped.any()
