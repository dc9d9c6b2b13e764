"""The serving front end's time (vLLM's OpenAI server, engines.vllm.request_overhead: 30 ms a request) is part of
TTFT but not of TTFT's wait to start, which is queueing for a slot, the KV cache or the scheduler: it is reported
apart (`ttft_front_end_s`), and the simulated timeline, TTFT with it, is as before."""

from __future__ import annotations

import numpy as np
import pytest

import chipwise.api as cw
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob


def _idle_run(setup: ReplicaSetup, model: ModelSpec) -> tuple[dict[str, object], dict[str, np.ndarray]]:
    """50 requests at 0.01 req/s: each finds the replica idle, and nothing queues."""
    job = ServingJob(model, LengthDist.fixed(1024), LengthDist.fixed(256), Load("rate", rate=0.01), 50)
    summary, out = run_job(job, ServingSetup((Pool(setup, 1),)))
    return summary, out.requests


def test_an_idle_vllm_replica_waits_nothing_past_its_front_end(vllm_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """The wait's p50 had read 30.0 ms (the front end's), where no request queued; it reads 0 now, the 30 ms
    reported apart, and TTFT still holds them: its p50 is the front end's 30 ms plus the prompt's iteration."""
    summary, r = _idle_run(vllm_setup, llama8b)
    wait, ttft = summary["ttft_wait_s"], summary["ttft_s"]
    assert isinstance(wait, dict) and isinstance(ttft, dict)
    assert summary["ttft_front_end_s"] == pytest.approx(0.030)
    assert wait["p50"] == 0.0 and wait["p90"] == 0.0
    # TTFT holds the front end: 30 ms, then the prompt's own iteration, 31.1 ms, at once (61.1 ms, as before)
    served = np.isfinite(r["finish"])
    own = float(np.median((r["first"] - r["started"])[served]))
    assert own == pytest.approx(0.0311, abs=1e-4)
    assert ttft["p50"] == pytest.approx(0.030 + own, abs=1e-9)


def test_an_engine_without_a_front_end_reports_none(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    summary, _ = _idle_run(h100_setup, llama8b)
    assert summary["ttft_front_end_s"] == 0.0
    wait = summary["ttft_wait_s"]
    assert isinstance(wait, dict) and wait["p50"] == 0.0


def test_predict_prints_the_front_end_apart(capsys: pytest.CaptureFixture[str]) -> None:
    """The serving table's wait row says it is past the front end, and a row of its own gives the front end's time
    (the prediction carries it where planner.serving_predict.SIMULATED_FIGURES forwards `ttft_front_end_s`)."""
    from chipwise.interfaces.cli.serve_views import print_serving

    r = cw.predict(
        "{kind: serve, model: llama-3.1-8b, hardware: h100, chips: 1, precision: bf16, engine: vllm, "
        "input_tokens: 1024, output_tokens: 256, arrival_rate: 0.01, requests: 50, plan: {tp: 1}}"
    )
    assert r["ttft_wait_s"]["p50"] == 0.0  # it had read 30.0 ms
    print_serving(r)
    cells = " ".join(
        line.split("│")[2].strip() for line in capsys.readouterr().out.splitlines() if line.count("│") >= 3
    )
    assert "0 / 0 / 4.28 ms (to the prompt's first iteration, past the front end)" in cells
    assert "30.0 ms a request (the engine's HTTP server and tokenising, before its scheduler sees the request)" in cells
