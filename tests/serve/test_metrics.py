"""The throughput window's requests and input tokens, and Little's law: a split's window counts the prompts of the
requests it counts, a closed loop's counts whole request cycles, and a closed loop of fewer than six requests a user
is flagged short; Little's law's rate, latency and time in system cover one span and are of the served requests, a
run with drops included; a request exactly at its SLO target meets it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.metrics import little_law, meets, per_request, summarise, window
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
    the split read 19 prompts for 18 requests, 540.4 input tokens each. Colocated or split, 18 requests of 512 (the
    window's output tokens over a request's: 18.005 and 17.997, the window being about 18 cycles)."""
    pools = (h100_setup.pool(1, "prefill"), h100_setup.pool(1, "decode")) if split else (h100_setup.pool(1),)
    one = _closed(pools, 1, 1, 0.0).requests
    ramp = float(one["finish"][0] + 0.5 * one["first"][0])
    out = _closed(pools, 20, 1, ramp)
    s = summarise(out, chips=len(pools), ramp_s=ramp)
    lo, hi = s["window_s"]
    assert s["requests_per_s"] * (hi - lo) == pytest.approx(18.0, rel=1e-3)
    assert s["input_tokens_per_s"] == pytest.approx(I * s["requests_per_s"], rel=1e-12)
    assert s["throughput_tokens_per_s"] == pytest.approx(s["input_tokens_per_s"] + s["output_tokens_per_s"], rel=1e-12)


def test_requests_are_counted_in_whole_cycles(h100_setup: ReplicaSetup) -> None:
    """One user, 20 requests, the window opening just before the first request finishes (a ramp of 0.99 of its
    latency): counting the finishes in it counted 19 in the 18 cycles it spans, about 5% over 1 / e2e. Counted as the
    window's output tokens over a request's, requests/s is the output's rate over O and within 0.05% of 1 / e2e, and
    the prompts' rate I times it."""
    pools = (h100_setup.pool(1),)
    ones = np.ones(20, dtype=np.int64)
    one = simulate(Deployment(pools), ones[:1] * I, ones[:1] * O, ones[:1] * 0, None, 1)
    e2e = float(one.requests["finish"][0])
    ramp = 0.99 * e2e
    s = summarise(simulate(Deployment(pools), ones * I, ones * O, ones * 0, None, 1, ramp_s=ramp), 1, ramp_s=ramp)
    assert s["window_s"][0] == ramp
    assert s["requests_per_s"] == pytest.approx(s["output_tokens_per_s"] / O, rel=1e-12)
    assert s["requests_per_s"] == pytest.approx(1 / e2e, rel=5e-4)
    assert s["input_tokens_per_s"] == pytest.approx(I * s["requests_per_s"], rel=1e-12)
    assert s["goodput"]["requests_per_s"] == pytest.approx(s["requests_per_s"], rel=1e-12)  # no targets: all good


def test_a_closed_loop_of_five_requests_a_user_is_flagged_short() -> None:
    """300 requests of 64 users (4.7 each; Llama-3.1-8B, one H100, vLLM): lambda W read 59.9 against 64 in the
    system, unflagged at four requests a user; flagged, with six a user (384) advised."""
    import chipwise.api as cw

    r = cw.predict(
        {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100", "chips": 1, "precision": "bf16",
         "engine": "vllm", "input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "requests": 300,
         "plan": {"tp": 1}}
    )  # fmt: skip
    assert r["short_run"] == {"users": 64, "requests_for_steady_state": 384}
    assert r["requests_per_s"] == pytest.approx(r["output_tokens_per_s"] / 1024, rel=1e-12)


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


def _hand_closed(finish: list[float], last_admit: float, end: float) -> SimOutput:
    n = len(finish)
    requests = {"arrival": np.zeros(n), "finish": np.array(finish), "dropped": np.zeros(n)}
    return SimOutput(requests=requests, replicas=[], last_admit=last_admit, end=end, wall_s=0.0, closed_loop=True)


def test_a_closed_loop_with_no_request_finished_by_its_last_admission_is_measured_to_the_end() -> None:
    """Four users of four requests, all admitted at 30 ms (past half of the 41 ms run) and done at 41 ms: the window
    ended at the last admission, held no finished request and no token, and read 0 tok/s. It runs on to the run's
    end, as an open loop's does; one request done at 20 ms keeps the window at the last admission."""
    assert window(_hand_closed([0.041] * 4, 0.03, 0.041)) == (0.0, 0.041)
    assert window(_hand_closed([0.02] + [0.041] * 3, 0.03, 0.041)) == (0.0, 0.03)


def test_predict_closed_loop_of_as_many_users_as_requests_reads_its_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """The review's run: 32 users of 32 requests of 1,024 / 2 tokens of Qwen3-0.6B on eight Gaudi 3. Every request is
    admitted at vLLM's 30 ms request overhead and finishes at 41.2 ms, so the window to the last admission held none
    and read 0 output tok/s, 0 req/s and no cost per M tokens. Over the whole run: 64 tokens and 32 requests in the
    makespan (1,552 output tok/s, 776 req/s)."""
    data = run_json(
        capsys,
        [
            "predict",
            "{kind: serve, model: qwen3-0.6b, hardware: gaudi3, chips: 8, input_tokens: 1024, output_tokens: 2, "
            "requests: 32, concurrency: 32, plan: {tp: 1}}",
            "--json",
        ],
    )
    makespan = data["simulation"]["makespan_s"]
    assert data["simulation"]["window_s"] == pytest.approx([0.0, makespan], abs=1e-12)
    assert data["output_tokens_per_s"] == pytest.approx(32 * 2 / makespan, rel=1e-9)
    assert data["requests_per_s"] == pytest.approx(32 / makespan, rel=1e-9)
    assert data["input_tokens_per_s"] == pytest.approx(32 * 1024 / makespan, rel=1e-9)
    assert data["cost_usd_per_mtok"] is not None and data["cost_usd_per_mtok"] > 0.0


def test_a_request_exactly_at_its_target_meets_it() -> None:
    """A target is a bound the latency may reach (<=): a user who states as the SLO the TTFT a run reports, 0.5 s,
    has that request meet it; one the next float above 0.5 s misses it, as does one not served."""
    above = float(np.nextafter(0.5, 1.0))
    lat = {"ttft": np.array([0.5, above, 0.5]), "served": np.array([1.0, 1.0, 0.0])}
    assert meets({"ttft_p99": 0.5}, lat).tolist() == [1.0, 0.0, 0.0]
    lat = {"tpot": np.array([0.05, float(np.nextafter(0.05, 1.0))]), "served": np.array([1.0, 1.0])}
    assert meets({"tpot_p50": 0.05}, lat).tolist() == [1.0, 0.0]


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
    # the rate is the served share of every arrival's over the span (from the throughput window's start since
    # 2026-12: the drops, a tenth at random, leave about that share out)
    assert ll["arrival_rate_per_s"] / ll["arrivals_per_s"] == pytest.approx(served / n, rel=0.03)
    assert ll["arrivals_per_s"] == pytest.approx(n / 60.0, rel=0.05)
    assert ll["mean_in_system"] == pytest.approx(ll["arrival_rate_per_s"] * ll["mean_latency_s"], rel=0.03)
