"""The throughput window's input tokens and the closed loop's Little's law: a split's window counts the prompts of
the requests it counts, and Little's law's rate, latency and time in system cover one span."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.sim.run import Deployment, PoolSim, SimOutput, simulate
from cli_run import run_json

I, O = 512, 128  # noqa: E741 - prompt and output tokens, as in the docs


def _closed(pools: tuple[PoolSim, ...], n: int, users: int, ramp_s: float) -> SimOutput:
    ones = np.ones(n, dtype=np.int64)
    return simulate(Deployment(pools), ones * I, ones * O, ones * 0, None, concurrency=users, ramp_s=ramp_s)


@pytest.mark.parametrize("split", [True, False])
def test_the_window_counts_the_prompts_of_the_requests_it_counts(h100_setup: ReplicaSetup, split: bool) -> None:
    """One user, 20 requests of 512 / 128 tokens, measured from between the first request's finish and the second's
    first token to the last admission. A split's decode replica streams the last request's first token as it takes
    it, which is that admission: counted by first token its prompt fell in the window and its finish did not, and
    the split read 19 prompts for 18 requests, 540.4 input tokens each. Colocated or split, 18 requests of 512."""
    pools = (h100_setup.pool(1, "prefill"), h100_setup.pool(1, "decode")) if split else (h100_setup.pool(1),)
    one = _closed(pools, 1, 1, 0.0).requests
    ramp = float(one["finish"][0] + 0.5 * one["first"][0])
    out = _closed(pools, 20, 1, ramp)
    s = summarise(out, chips=len(pools), ramp_s=ramp)
    lo, hi = s["window_s"]
    assert s["requests_per_s"] * (hi - lo) == pytest.approx(18.0, rel=1e-9)
    assert s["input_tokens_per_s"] == pytest.approx(I * s["requests_per_s"], rel=1e-12)
    assert s["throughput_tokens_per_s"] == pytest.approx(s["input_tokens_per_s"] + s["output_tokens_per_s"], rel=1e-12)


def test_an_open_loops_prompts_are_those_of_its_finished_requests(h100_setup: ReplicaSetup) -> None:
    """Poisson arrivals at 8 req/s: the input tokens/s are the requests/s times their prompt, as the output's are
    within the window's few %."""
    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(1 / 8.0, size=600))
    n = arrivals.size
    ones = np.ones(n, dtype=np.int64)
    out = simulate(Deployment((h100_setup.pool(1),)), ones * I, ones * O, ones * 0, arrivals)
    s = summarise(out, chips=1)
    assert s["input_tokens_per_s"] == pytest.approx(I * s["requests_per_s"], rel=1e-12)
    assert s["output_tokens_per_s"] == pytest.approx(O * s["requests_per_s"], rel=0.05)


def test_a_closed_loops_littles_law_holds_over_its_steady_span(h100_setup: ReplicaSetup) -> None:
    """64 users ramped over one request's latency, 640 requests: from the first arrival the rate counted the ramp's
    arrivals and the latency every request's, while the time in system counted the ramp's emptier system, and
    lambda W read 66.3 for 64 users (62.4 in the system). From the ramp's end to the last arrival every user has a
    request in the system (64.0), and lambda W is within 3% of it."""
    pools = (h100_setup.pool(1),)
    ramp = float(_closed(pools, 1, 1, 0.0).requests["finish"][0])
    s = summarise(_closed(pools, 640, 64, ramp), chips=1, ramp_s=ramp)
    ll = s["little_law"]
    lam_w = ll["arrival_rate_per_s"] * ll["mean_latency_s"]
    assert ll["mean_in_system"] == pytest.approx(64.0, rel=1e-9)
    assert lam_w == pytest.approx(ll["mean_in_system"], rel=0.03)
    assert lam_w <= 64.0


def test_predict_little_law_on_the_reviews_closed_loop(capsys: pytest.CaptureFixture[str]) -> None:
    """The review's run: 64 users of 2,000 / 2,000 tokens on one H100 under vLLM, with 30% of its memory. The JSON's
    lambda W read 66.3 (0.5531 req/s x 119.8 s) against 63.0 in the system; over the span after the ramp, 64.0
    users are in the system and lambda W is within 0.5% of it."""
    data = run_json(
        capsys,
        [
            "predict",
            "{kind: serve, model: llama-3.1-8b, hardware: h100, chips: 1, engine: vllm, input_tokens: 2000, "
            "output_tokens: 2000, concurrency: 64, requests: 640, plan: {tp: 1, max_batch: 64, memory_fraction: 0.3}}",
            "--json",
        ],
    )
    ll = data["little_law"]
    lam_w = ll["arrival_rate_per_s"] * ll["mean_latency_s"]
    assert ll["mean_in_system"] == pytest.approx(64.0, rel=1e-9)
    assert lam_w == pytest.approx(64.0, rel=0.005)
    assert lam_w <= 64.0
    assert data["input_tokens_per_s"] == pytest.approx(2000 * data["requests_per_s"], rel=1e-12)


def test_predict_split_total_tokens_on_the_reviews_one_user(capsys: pytest.CaptureFixture[str]) -> None:
    """The review's split: Llama-3.1-70B, one user, 20 requests of 4,096 / 256 tokens, prefill on 8 H100s and decode
    on 8 H200s. It read 2,345.5 input tok/s at 0.5425 req/s (4,324 a request) and 2,484 total tok/s; the window's
    18 requests bring 4,096 each and 0.5425 x 4,352 = 2,361 total tok/s."""
    data = run_json(
        capsys,
        [
            "predict",
            "{kind: serve, model: llama-3.1-70b, hardware: h100, chips: 16, precision: fp8, input_tokens: 4096, "
            "output_tokens: 256, concurrency: 1, requests: 20, plan: {disaggregated: true, prefill: {tp: 8, "
            "replicas: 1}, decode: {hardware: h200, tp: 8, replicas: 1}}}",
            "--json",
        ],
    )
    rate = data["requests_per_s"]
    assert data["input_tokens_per_s"] == pytest.approx(4096 * rate, rel=1e-12)
    assert data["throughput_tokens_per_s"] == pytest.approx(4352 * rate, rel=1e-3)
