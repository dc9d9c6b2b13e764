"""Review 67's simulator findings: a trace replayed with `requests: N` is the first N requests (their load, lengths
and price), and Little's law's three terms are of the served requests, a run with drops included."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.arrivals import arrival_times, offered_request_rate
from chipwise.serve.sim.metrics import little_law, per_request, summarise
from chipwise.serve.sim.run import Deployment, SimOutput, simulate
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serving_job import serving_job
from cli_run import run_json

SCENARIO = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100\nchips: 1\nprecision: fp8\nplan: {tp: 1}\n"


def _burst(tmp_path: Path) -> Path:
    """200 requests: the first 100 at 0, 0.01, ..., 0.99 s (100 req/s) of 512 in / 128 out, then 100 more 1 s apart
    (to 100 s) of 1,024 in / 256 out."""
    rows = [f"{i / 100:.2f},512,128" for i in range(100)] + [f"{i - 99},1024,256" for i in range(100, 200)]
    path = tmp_path / "burst.csv"
    path.write_text("arrival_s,input_tokens,output_tokens\n" + "\n".join(rows) + "\n")
    return path


def test_a_trace_replayed_in_part_is_its_first_requests(tmp_path: Path, catalog: Catalog) -> None:
    """requests: 100 of the 200 replays the first 100, which arrive at 100 / (0.99 + 0.01) = 100 req/s (the trace's
    own n / (last + mean gap)) with 512 / 128 tokens; the whole trace's 200 / (100 + 100 / 199) = 1.990 req/s and
    768 / 192 tokens had been read for them."""
    trace = _burst(tmp_path)
    model = load_model(catalog, "llama-3.1-8b")
    job = serving_job(model, load_scenario(SCENARIO + f"trace: {trace}\nrequests: 100\n"))
    assert job.requests == 100 and job.trace is not None and job.trace.arrival.size == 100
    assert offered_request_rate(job) == pytest.approx(100.0, rel=1e-12)
    assert (job.mean_input, job.mean_output, job.max_input, job.max_output) == (512.0, 128.0, 512, 128)
    assert (job.input.mean, job.output.mean, job.input.maximum) == (512.0, 128.0, 512)
    times = arrival_times(job, 100, np.random.default_rng(0))
    assert times is not None and times[-1] == pytest.approx(0.99)
    whole = serving_job(model, load_scenario(SCENARIO + f"trace: {trace}\n"))
    assert offered_request_rate(whole) == pytest.approx(200 / (100 + 100 / 199), rel=1e-12)
    assert (whole.mean_input, whole.mean_output) == (768.0, 192.0)
    # more requests than the trace holds cycle it whole, at its own rate
    more = serving_job(model, load_scenario(SCENARIO + f"trace: {trace}\nrequests: 400\n"))
    assert more.trace is not None and more.trace.arrival.size == 200
    assert offered_request_rate(more) == offered_request_rate(whole)


def test_predict_prices_a_part_replayed_trace_on_its_own_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The review's case: 100 req/s on one H100 that sustains 93.5 is 107% of it, over capacity, and priced on the
    tokens the run delivered; the whole trace's 1.96 req/s had read 2.1% load and $7.58 per M output tokens
    ($6.88/h over 252 tok/s) for a run that delivered ~7,000 tok/s."""
    path = tmp_path / "sc.yaml"
    path.write_text(SCENARIO + f"trace: {_burst(tmp_path)}\nrequests: 100\n")
    data = run_json(capsys, ["predict", str(path), "--json"])
    assert data["load"]["utilisation"] == pytest.approx(100.0 / data["load"]["capacity_requests_per_s"], rel=1e-9)
    assert data["load"]["utilisation"] > 1.0
    assert data["priced_output_tokens_per_s"] == pytest.approx(data["output_tokens_per_s"], rel=1e-9)
    assert data["load"]["input_tokens_mean"] == 512.0 and data["load"]["output_tokens_mean"] == 128.0


def _by_hand() -> SimOutput:
    """Five requests arriving 1 s apart, each 0.5 s in the system, but the second, dropped (no finish)."""
    nan = math.nan
    requests = {
        "arrival": np.array([0.0, 1.0, 2.0, 3.0, 4.0]),
        "started": np.array([0.0, nan, 2.0, 3.0, 4.0]),
        "first": np.array([0.1, nan, 2.1, 3.1, 4.1]),
        "finish": np.array([0.5, nan, 2.5, 3.5, 4.5]),
        "input": np.full(5, 512.0),
        "output": np.full(5, 128.0),
        "preempted": np.zeros(5),
        "dropped": np.array([0.0, 1.0, 0.0, 0.0, 0.0]),
        "replica": np.array([0.0, -1.0, 0.0, 0.0, 0.0]),
    }
    return SimOutput(
        requests=requests, replicas=[], last_admit=4.0, end=4.5, wall_s=0.0, closed_loop=False, roles=["both"]
    )


def test_littles_law_leaves_a_dropped_request_out_by_hand() -> None:
    """Over the span 0-4 s the four served requests arrive at (5 - 1) gaps x 4/5 served / 4 s = 0.8 req/s, spend
    W = 0.5 s each, and are in the system 0.5 + 0.5 + 0.5 + 0 (the last arrives at the span's end) = 1.5 s of 4:
    L = 0.375. The dropped one had been counted in the system from 1 s to the span's end, L = 4.5 / 4 = 1.125, and
    in the rate, 1.0 req/s."""
    out = _by_hand()
    ll = little_law(out, per_request(out)["e2e"], 0.0)
    assert ll["arrival_rate_per_s"] == pytest.approx(0.8, rel=1e-12)
    assert ll["mean_latency_s"] == pytest.approx(0.5, rel=1e-12)
    assert ll["mean_in_system"] == pytest.approx(0.375, rel=1e-12)


def test_littles_law_balances_on_a_run_with_drops(h100_setup: ReplicaSetup) -> None:
    """600 arrivals over 60 s, a tenth of them 9,000-token prompts that an 8,000-token cache drops on admission:
    L = lambda W over the served requests (the drops, counted in the system until the span's end, had read L ~20x
    lambda W)."""
    rng = np.random.default_rng(2)
    n = 600
    arrivals = np.sort(rng.uniform(0.0, 60.0, n))
    inputs = np.where(rng.random(n) < 0.1, 9000, 512).astype(np.int64)
    pool = replace(h100_setup.pool(1), kv_tokens=8000)
    out = simulate(Deployment((pool,)), inputs, np.full(n, 128, dtype=np.int64), np.zeros(n, np.int64), arrivals)
    s = summarise(out, chips=1)
    assert s["requests"]["dropped"] == int((inputs > 8000).sum()) > 30
    ll = s["little_law"]
    served = s["requests"]["finished"]
    assert ll["arrival_rate_per_s"] == pytest.approx((n - 1) / n * served / (arrivals[-1] - arrivals[0]), rel=1e-12)
    assert ll["mean_in_system"] == pytest.approx(ll["arrival_rate_per_s"] * ll["mean_latency_s"], rel=0.03)
