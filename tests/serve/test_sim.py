"""The discrete-event simulator: hand-checked single requests, Little's law, conservation, percentile order,
agreement with the closed-form iteration model, preemption, disaggregation and closed loops."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, TypedDict, Unpack

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.engine import engine_profile
from chipwise.serve.iteration import IterationInputs, Shapes, iteration_breakdown, prefill_pairs
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.metrics import per_request, percentile_bounds, summarise
from chipwise.serve.sim.policies import bucket
from chipwise.serve.sim.run import Deployment, PoolSim, SimOutput, simulate
from chipwise.serve.sim.steps import step_model
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model

I, O = 512, 128  # noqa: E741 - prompt and output tokens, as in the docs


def _run(
    setup: ReplicaSetup,
    arrivals: list[float] | None,
    n: int | None = None,
    inp: int = I,
    out: int = O,
    replicas: int = 1,
    kv_tokens: int | None = None,
    concurrency: int = 0,
) -> SimOutput:
    count = n if n is not None else (len(arrivals) if arrivals is not None else 1)
    pool = setup.pool(replicas)
    if kv_tokens is not None:
        pool = replace(pool, kv_tokens=kv_tokens)
    arr = None if arrivals is None else np.asarray(arrivals, dtype=np.float64)
    ones = np.ones(count, dtype=np.int64)
    return simulate(Deployment((pool,)), ones * inp, ones * out, ones * 0, arr, concurrency=concurrency)


def test_single_request_by_hand(h100_setup: ReplicaSetup) -> None:
    """TTFT = queue (none) + one prefill iteration; TPOT = the mean of O - 1 decode steps at batch 1: the k = 127
    steps at contexts 513 ... 639 take k x decode_base(1) + a (k x 513 + k (k - 1) / 2), over k (3.797 ms for
    Llama 3.1 8B fp8 on one H100; over O = 128 they would read 3.767 ms). The metrics (per_request, summarise)
    must report that TPOT and TTFT, not only the raw first/finish times."""
    st_ = h100_setup.steps
    out = _run(h100_setup, [0.0])
    r = out.requests
    prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    assert r["first"][0] - r["arrival"][0] == pytest.approx(prefill, rel=1e-12)
    k = O - 1
    decode = k * st_.decode_base(1) + st_.a * (k * (I + 1) + k * (k - 1) / 2)
    assert (r["finish"][0] - r["first"][0]) / (O - 1) == pytest.approx(decode / k, rel=1e-12)
    assert float(per_request(out)["tpot"][0]) == pytest.approx(decode / k, rel=1e-12)
    summary = summarise(out, chips=1)
    assert summary["tpot_s"]["mean"] == pytest.approx(decode / k, rel=1e-12)
    assert summary["ttft_s"]["mean"] == pytest.approx(prefill, rel=1e-12)
    # the run's iterations: one prefill and k decode steps, busy for all of them
    assert summary["iteration_mean_s"]["both"] == pytest.approx((prefill + decode) / (k + 1), rel=1e-12)


def test_front_end_latency_adds_to_ttft_only(h100_setup: ReplicaSetup) -> None:
    """A serving front end (vLLM's API server: 30 ms, engines.vllm.request_overhead) delays when the scheduler
    sees a request: TTFT = front end + prefill, and decoding is untouched."""
    st_ = h100_setup.steps
    ones = np.ones(1, dtype=np.int64)
    deployment = Deployment((h100_setup.pool(1),), front_latency_s=0.030)
    r = simulate(deployment, ones * I, ones * O, ones * 0, np.zeros(1)).requests
    prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    assert r["first"][0] - r["arrival"][0] == pytest.approx(0.030 + prefill, rel=1e-12)
    base = _run(h100_setup, [0.0]).requests
    assert r["finish"][0] - r["first"][0] == pytest.approx(base["finish"][0] - base["first"][0], rel=1e-12)


def test_simulator_agrees_with_closed_form_at_batch_one(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """The simulated TPOT of one request equals the mean of serve.iteration's decode steps over its context."""
    s = h100_setup
    out = _run(s, [0.0])
    r = out.requests
    tpot_sim = (r["finish"][0] - r["first"][0]) / (O - 1)
    contexts = I + 1 + np.arange(O - 1, dtype=np.float64)
    work = IterationInputs(np.ones_like(contexts), np.ones_like(contexts), contexts, np.zeros_like(contexts))
    p = s.plan
    steps = iteration_breakdown(
        llama8b,
        s.dev,
        s.topo,
        s.engine,
        p.weight_precision,
        p.kv_precision,
        Shapes.of(p.tp),
        work,
        s.typical_context,
        s.typical_prompt,
    )
    assert tpot_sim == pytest.approx(float(np.mean(sum(steps.values()))), rel=1e-9)
    prefill = iteration_breakdown(
        llama8b,
        s.dev,
        s.topo,
        s.engine,
        p.weight_precision,
        p.kv_precision,
        Shapes.of(p.tp),
        IterationInputs(np.asarray(float(I)), np.asarray(1.0), np.asarray(0.0), prefill_pairs(0, I)),
        s.typical_context,
        s.typical_prompt,
    )
    assert r["first"][0] == pytest.approx(float(sum(prefill.values())), rel=1e-9)


def test_arrival_during_a_decode_run_waits_for_the_iteration_in_flight(h100_setup: ReplicaSetup) -> None:
    st_ = h100_setup.steps
    t_prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    base, a = st_.decode_base(1), st_.a
    t_arrive = t_prefill + 2.5 * (base + a * (I + 1))  # in the third decode step of request 0
    out = _run(h100_setup, [0.0, t_arrive])
    r = out.requests
    # request 0 finishes three decode steps (the third is running when request 1 arrives) ...
    done3 = t_prefill + 3 * base + a * (3 * (I + 1) + 3)
    # ... then one mixed iteration: request 0 decodes (context I + 4), request 1 prefills
    mixed = st_.time(1 + I, 2, I + 4.0, float(prefill_pairs(0, I)))
    assert r["first"][1] - r["arrival"][1] == pytest.approx(done3 + mixed - t_arrive, rel=1e-9)


def test_two_requests_at_once_share_one_prefill_iteration(h100_setup: ReplicaSetup) -> None:
    st_ = h100_setup.steps
    out = _run(h100_setup, [0.0, 0.0])
    both = st_.time(2 * I, 2, 0.0, 2 * float(prefill_pairs(0, I)))
    assert np.allclose(out.requests["first"], both, rtol=1e-12)


def test_littles_law_on_a_steady_run(h100_setup: ReplicaSetup) -> None:
    rng = np.random.default_rng(1)
    lam = 8.0
    arrivals = np.cumsum(rng.exponential(1 / lam, size=3000)).tolist()
    s = summarise(_run(h100_setup, arrivals), chips=1)
    ll = s["little_law"]
    assert ll["mean_in_system"] == pytest.approx(ll["arrival_rate_per_s"] * ll["mean_latency_s"], rel=0.05)
    # below saturation the output throughput is the offered load
    assert s["output_tokens_per_s"] == pytest.approx(lam * O, rel=0.05)


def test_every_request_finishes_or_is_reported_dropped(h100_setup: ReplicaSetup) -> None:
    n = 40
    inputs = np.asarray([I if i % 4 else 5000 for i in range(n)], dtype=np.int64)  # every 4th cannot fit
    pool = replace(h100_setup.pool(1), kv_tokens=4096)
    out = simulate(Deployment((pool,)), inputs, np.full(n, O), np.zeros(n, dtype=np.int64), np.zeros(n))
    s = summarise(out, chips=1)
    assert s["requests"]["finished"] + s["requests"]["dropped"] == n
    assert s["requests"]["dropped"] == n // 4
    assert np.isfinite(out.requests["finish"][inputs == I]).all()


def test_on_demand_admission_preempts_and_recomputes(vllm_setup: ReplicaSetup) -> None:
    """vLLM admits on the prompt, so a small cache fills during decode: the newest request is preempted, and
    every request still finishes with all its tokens."""
    n = 24
    pool = replace(vllm_setup.pool(1), kv_tokens=6 * (I + O))
    out = simulate(Deployment((pool,)), np.full(n, I), np.full(n, O), np.zeros(n, dtype=np.int64), np.zeros(n))
    s = summarise(out, chips=1)
    assert s["requests"]["preemptions"] > 0
    assert s["requests"]["finished"] == n
    assert s["kv_cache_utilisation"]["peak"] <= 1.0 + 1e-9


def test_reserve_admission_never_preempts(h100_setup: ReplicaSetup) -> None:
    n = 24
    out = _run(h100_setup, [0.0] * n, kv_tokens=6 * (I + O + 64))
    s = summarise(out, chips=1)
    assert s["requests"]["preemptions"] == 0 and s["requests"]["finished"] == n


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), rate=st.floats(1.0, 60.0))
def test_percentiles_are_ordered(h100_setup: ReplicaSetup, seed: int, rate: float) -> None:
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, size=200)).tolist()
    s = summarise(_run(h100_setup, arrivals), chips=1)
    for metric in ("ttft_s", "tpot_s", "e2e_s"):
        v = s[metric]
        assert v["p50"] <= v["p90"] + 1e-12 <= v["p99"] + 2e-12


def test_closed_loop_keeps_the_users_in_the_system(h100_setup: ReplicaSetup) -> None:
    users = 16
    out = _run(h100_setup, None, n=400, concurrency=users)
    s = summarise(out, chips=1)
    assert s["requests"]["finished"] == 400
    assert s["little_law"]["mean_in_system"] == pytest.approx(users, rel=0.05)


def test_more_replicas_behind_the_router_share_the_load(h100_setup: ReplicaSetup) -> None:
    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(1 / 30.0, size=600)).tolist()
    one = summarise(_run(h100_setup, arrivals), chips=1)
    two = summarise(_run(h100_setup, arrivals, replicas=2), chips=2)
    assert two["tpot_s"]["mean"] < one["tpot_s"]["mean"]
    served = np.bincount(_run(h100_setup, arrivals, replicas=2).requests["replica"].astype(int))
    assert abs(int(served[0]) - int(served[1])) < 0.2 * len(arrivals)


@pytest.mark.parametrize("windowed", [False, True])
def test_disaggregated_prefill_and_decode_pools(h100_setup: ReplicaSetup, windowed: bool) -> None:
    """Decode starts after the KV transfer, in the decode pool, which streams the client's first token as it takes
    the request (the engines' split front ends stream the decode side's answer), so TTFT counts the transfer; the
    other O - 1 tokens take a decode step each. With half the layers windowed at 100 tokens, those send their
    window only."""
    st_ = h100_setup.steps
    transfer_latency, per_token = 1e-3, 2e-6
    deployment = Deployment(
        (h100_setup.pool(1, "prefill"), h100_setup.pool(1, "decode")),
        transfer_latency_s=transfer_latency,
        transfer_s_per_token=per_token,
        transfer_windows=((0.5, 100.0),) if windowed else (),
    )
    ones = np.ones(1, dtype=np.int64)
    out = simulate(deployment, ones * I, ones * O, ones * 0, np.zeros(1))
    r = out.requests
    prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    arrived = prefill + transfer_latency + per_token * ((I + 100) / 2 if windowed else I)
    assert r["first"][0] == pytest.approx(arrived, rel=1e-12)
    k = O - 1
    decode = k * st_.decode_base(1) + st_.a * (k * (I + 1) + k * (k - 1) / 2)
    assert r["finish"][0] == pytest.approx(arrived + decode, rel=1e-9)
    assert [rep["role"] for rep in out.replicas] == ["prefill", "decode"]


@pytest.mark.parametrize("senders", [1, 2])
def test_kv_transfers_queue_on_their_links(h100_setup: ReplicaSetup, senders: int) -> None:
    """Two prompts whose caches take 10 s each to move: from one prefill replica, or from two into one decode
    replica, they move one after the other, so the second reaches its decode replica 20 s after the first prompt
    is encoded (with a fixed delay per transfer, both arrived after 10 s, and a link at 140% of its capacity
    read as meeting a 3 s TTFT)."""
    transfer = 10.0
    deployment = Deployment(
        (h100_setup.pool(senders, "prefill"), h100_setup.pool(1, "decode")), transfer_s_per_token=transfer / I
    )
    twos = np.full(2, 1, dtype=np.int64)
    r = simulate(deployment, twos * I, twos * O, twos * 0, np.zeros(2)).requests
    if senders == 2:
        assert sorted(r["replica"].tolist()) == [2.0, 2.0]  # both decoded on the one decode replica
    # the first tokens come from the decode replica, each after its cache arrived: 10 s and 20 s
    assert sorted(r["first"].round(-1).tolist()) == [transfer, 2 * transfer]
    assert r["finish"].min() < 2 * transfer


def test_the_router_counts_the_kv_sends_a_prefill_replica_has_queued(h100_setup: ReplicaSetup) -> None:
    """Prompts encode in milliseconds and each cache takes a second to send: a router that counted requests alone
    saw every prefill replica idle and sent every prompt to the first, whose one link then took 30 s for 30 of
    them; counting the sends still queued spreads them over the three links, about 10 s."""
    deployment = Deployment((h100_setup.pool(3, "prefill"), h100_setup.pool(3, "decode")), transfer_s_per_token=1 / I)
    n = 30
    ones = np.ones(n, dtype=np.int64)
    out = simulate(deployment, ones * I, ones * 4, ones * 0, np.arange(n, dtype=np.float64) * 0.1)
    assert 9.5 < out.requests["finish"].max() < 12.0


def test_static_batch_engines_pay_for_every_slot(h100_setup: ReplicaSetup) -> None:
    static = replace(h100_setup.pool(1), policy=replace(h100_setup.policy(), static_batch=True, max_batch=32))
    ones = np.ones(1, dtype=np.int64)
    dyn = _run(h100_setup, [0.0]).requests
    stat = simulate(Deployment((static,)), ones * I, ones * O, ones * 0, np.zeros(1)).requests
    assert stat["finish"][0] - stat["first"][0] > dyn["finish"][0] - dyn["first"][0]


def test_pool_sim_is_a_plain_record(h100_setup: ReplicaSetup) -> None:
    pool = h100_setup.pool(3, "decode")
    assert isinstance(pool, PoolSim) and pool.replicas == 3 and pool.role == "decode"


def test_static_batch_decode_reads_every_slot_at_its_bucket(h100_setup: ReplicaSetup) -> None:
    """A compiled token-generation step runs all slots over the power-of-two bucket of the context."""
    slots = 32
    static = replace(h100_setup.pool(1), policy=replace(h100_setup.policy(), static_batch=True, max_batch=slots))
    ones = np.ones(1, dtype=np.int64)
    r = simulate(Deployment((static,)), ones * I, ones * 2, ones * 0, np.zeros(1)).requests
    st_ = h100_setup.steps
    step = st_.decode_base(slots) + st_.a * slots * 1024  # context 513 -> bucket 1024
    assert r["finish"][0] - r["first"][0] == pytest.approx(step, rel=1e-9)


def test_the_compiled_sequence_length_is_the_last_bucket(h100_setup: ReplicaSetup) -> None:
    """NxD Inference's ladder: powers of two below 2^round(log2 max), then the compiled length itself; a context
    of 513 runs in a bucket of 600 when the graphs were compiled for 600 tokens, never below the tokens it holds."""
    assert (bucket(10000), bucket(10000, largest=11500), bucket(12000, largest=11500)) == (16384, 11500, 12000)
    assert (bucket(10000, largest=12288), bucket(5000, largest=10000), bucket(1500, largest=4096)) == (
        12288,
        10000,
        2048,
    )
    assert bucket(100, largest=600) == 128
    slots = 32
    policy = replace(h100_setup.policy(), static_batch=True, max_batch=slots, largest_bucket=600)
    ones = np.ones(1, dtype=np.int64)
    r = simulate(Deployment((replace(h100_setup.pool(1), policy=policy),)), ones * I, ones * 2, ones * 0, np.zeros(1))
    st_ = h100_setup.steps
    step = st_.decode_base(slots) + st_.a * slots * 600
    assert r.requests["finish"][0] - r.requests["first"][0] == pytest.approx(step, rel=1e-9)


def test_closed_loop_ramp_spreads_the_first_requests(h100_setup: ReplicaSetup) -> None:
    ones = np.ones(40, dtype=np.int64)
    out = simulate(Deployment((h100_setup.pool(1),)), ones * I, ones * O, ones * 0, None, concurrency=8, ramp_s=4.0)
    arrivals = out.requests["arrival"]
    # each user's first request arrives at its ramp slot (a finished user may re-issue before a later slot)
    for slot in np.arange(8) * 0.5:
        assert np.any(np.isclose(arrivals, slot))
    assert np.sum(arrivals < 0.5) < 8  # not every user starts at once


def test_latency_window_keeps_only_the_steady_requests(h100_setup: ReplicaSetup) -> None:
    out = _run(h100_setup, [0.0, 0.0, 0.0, 5.0, 5.0])
    whole = summarise(out, chips=1.0)
    late = summarise(out, chips=1.0, latency_window=(1.0, 10.0))
    assert whole["requests"] == late["requests"]  # counts and throughput are unchanged
    # fewer than eight requests in the window: the statistics fall back to every request
    assert late["ttft_s"]["mean"] == pytest.approx(whole["ttft_s"]["mean"])
    many = _run(h100_setup, [0.0] * 8 + [20.0 + i for i in range(8)])
    steady = summarise(many, chips=1.0, latency_window=(10.0, 100.0))
    assert steady["ttft_s"]["mean"] < summarise(many, chips=1.0)["ttft_s"]["mean"]


def test_prefill_overhead_is_paid_by_each_prompt_iteration(h100_setup: ReplicaSetup) -> None:
    """engines.*.prefill_overhead (Neuron's separately compiled context-encoding graph) adds its fixed time to the
    iteration that encodes the prompt, and to no decode step: TTFT grows by exactly 5 ms, TPOT not at all."""
    base = _run(h100_setup, [0.0]).requests
    pool = h100_setup.pool(1)
    slow = replace(pool, steps=replace(pool.steps, prefill_fixed=0.005))
    ones = np.ones(1, dtype=np.int64)
    r = simulate(Deployment((slow,)), ones * I, ones * O, ones * 0, np.zeros(1)).requests
    assert r["first"][0] - base["first"][0] == pytest.approx(0.005, rel=1e-9)
    assert r["finish"][0] - r["first"][0] == pytest.approx(base["finish"][0] - base["first"][0], rel=1e-12)


def test_decode_first_runs_the_token_generation_step_before_the_prompt(h100_setup: ReplicaSetup) -> None:
    """Two prompts at t = 0, one encoded per iteration, no fused batches. Alternating engines encode B right after
    A (B's first token at P + P); optimum-neuron's runner runs the decode step of A first and then B's context
    encoding in the same engine step (B's first token at P + D + P, and A has its second token by then)."""
    st_ = h100_setup.steps
    pol = replace(h100_setup.policy(), mixed_batching=False, prefill_batch=1)
    prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    decode = st_.decode_base(1) + st_.a * (I + 1)  # A's first decode step: I prompt tokens + 1 sampled token
    ones = np.ones(2, dtype=np.int64)
    for first, expected in ((False, 2 * prefill), (True, 2 * prefill + decode)):
        pool = replace(h100_setup.pool(1), policy=replace(pol, decode_first=first))
        r = simulate(Deployment((pool,)), ones * I, ones * O, ones * 0, np.zeros(2)).requests
        assert float(r["first"][0]) == pytest.approx(prefill, rel=1e-12)
        assert float(r["first"][1]) == pytest.approx(expected, rel=1e-12)
        # alternating: A and B then decode in lock-step and finish together; decode-first: A is one token ahead
        assert (float(r["finish"][1]) > float(r["finish"][0])) == first


def test_a_context_graph_of_one_sequence_encodes_a_steps_prompts_in_turn(h100_setup: ReplicaSetup) -> None:
    """Two prompts at t = 0 that one step takes together. An engine that runs an iteration's prompt tokens in one
    pass prices 2I tokens at once (a small model's weights read once); a context graph compiled for one sequence
    (NxD continuous batching, context_batch 1) runs two passes of I, one after the other, each with its fixed
    cost, and both first tokens come when the step ends."""
    st_ = h100_setup.steps
    pol = replace(h100_setup.policy(), mixed_batching=False, prefill_batch=0, max_tokens=2 * I)
    one = st_.prompt_time(I, 1, 0.0, float(prefill_pairs(0, I)), 0, 0.0, I, float(prefill_pairs(0, I)))
    together = st_.prompt_time(2 * I, 2, 0.0, 2 * float(prefill_pairs(0, I)), 0, 0.0, I, float(prefill_pairs(0, I)))
    ones = np.ones(2, dtype=np.int64)
    for batch, expected in ((0, together), (1, 2 * one)):
        pool = replace(h100_setup.pool(1), policy=replace(pol, context_batch=batch))
        r = simulate(Deployment((pool,)), ones * I, ones * O, ones * 0, np.zeros(2)).requests
        assert float(r["first"][0]) == float(r["first"][1]) == pytest.approx(expected + st_.prefill_fixed * (batch + 1))
    assert 2 * one > together  # the weights are read once a pass


def test_host_sampling_charges_every_sampled_slots_logits(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """CPU sampling: each returned row's whole-vocabulary logits go to the host (5.26 ns a logit) and the CPU
    sampler passes over each sampled one (16.4 ns a logit). A 32-sequence step of Llama 3.1 8B (vocabulary
    128,256) pays 32 x 128256 x 21.66 ns = 88.9 ms more, one sequence's 2.78 ms."""
    s = h100_setup
    eng = replace(s.engine, host_sampling=True, host_logits_s_per_logit=5.26e-9, host_sampling_s_per_logit=16.4e-9)
    on_host = step_model(llama8b, s.dev, s.topo, eng, s.plan, s.typical_context, s.typical_prompt, s.plan.max_tokens)
    assert llama8b.vocab == 128256
    extra = on_host.seq_time(32) - s.steps.seq_time(32)
    assert extra == pytest.approx(32 * 128256 * 21.66e-9, rel=1e-9)
    assert extra == pytest.approx(0.0889, abs=1e-4)
    assert on_host.decode_base(1) - s.steps.decode_base(1) == pytest.approx(128256 * 21.66e-9, rel=1e-9)
    assert on_host.host_sample == pytest.approx(128256 * 16.4e-9, rel=1e-9) and s.steps.host_sample == 0.0


def test_a_compiled_graph_samples_its_live_sequences_on_the_host(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """A compiled token-generation graph of 8 slots returns all 8 rows of logits, and a host sampler samples the
    live sequences' only: one request alone decodes at the 8-slot step less 7 rows' sampling, 8 together at the
    full step (optimum-neuron's CPU sampling: 23.7 ms a step with one user of 32 slots, 67.8 ms with 21.9)."""
    s = h100_setup
    eng = replace(s.engine, host_sampling=True, host_logits_s_per_logit=5.26e-9, host_sampling_s_per_logit=16.4e-9)
    plan = replace(s.plan, max_batch=8)
    steps = step_model(llama8b, s.dev, s.topo, eng, plan, s.typical_context, s.typical_prompt, plan.max_tokens)
    pol = replace(s.policy(), static_batch=True, max_batch=8, largest_bucket=4096)
    pool = PoolSim(steps, pol, s.kv_tokens, 1, "both")
    outs = 200

    def tpot(users: int) -> float:
        ones = np.ones(users, dtype=np.int64)
        r = simulate(Deployment((pool,)), 100 * ones, outs * ones, 0 * ones, np.zeros(users)).requests
        return float(np.mean((r["finish"] - r["first"]) / (outs - 1)))

    assert tpot(8) - tpot(1) == pytest.approx(7 * steps.host_sample, rel=0.02)
    assert steps.host_sample == pytest.approx(128256 * 16.4e-9, rel=1e-9)


class HeldPrompts(TypedDict, total=False):
    """The scheduler knobs that hold prompts back: attention-DP balancing and batch waiting."""

    adp_ranks: int
    adp_timeout_iters: int
    batch_wait_iters: int
    batch_wait_tokens: int


def _ttft_of_late_arrivals(setup: ReplicaSetup, late: int, **policy: Unpack[HeldPrompts]) -> np.ndarray:
    """Four long requests decode from t = 0; `late` more arrive together at t = 0.5 s (scheduler `policy` changes)."""
    pool = replace(setup.pool(1), policy=replace(setup.policy(), **policy))
    n = 4 + late
    outs = np.full(n, 4000, dtype=np.int64)
    arr = np.concatenate([np.zeros(4), np.full(late, 0.5)])
    r = simulate(Deployment((pool,)), np.full(n, I, dtype=np.int64), outs, np.zeros(n, dtype=np.int64), arr).requests
    return np.asarray(r["first"][4:] - r["arrival"][4:])


def _first_tokens_of_late_arrivals(setup: ReplicaSetup, late: float, **policy: Unpack[HeldPrompts]) -> np.ndarray:
    """Four long requests decode from t = 0; one more arrives at `late` s: every request's first-token time."""
    pool = replace(setup.pool(1), policy=replace(setup.policy(), **policy))
    outs = np.full(5, 4000, dtype=np.int64)
    arr = np.array([0.0, 0.0, 0.0, 0.0, late])
    r = simulate(Deployment((pool,)), np.full(5, I, dtype=np.int64), outs, np.zeros(5, dtype=np.int64), arr).requests
    return np.asarray(r["first"])


@pytest.mark.parametrize("late", [0.5, 0.7])
def test_attention_dp_balancing_holds_a_lone_prompt_until_the_counters_next_timeout(
    h100_setup: ReplicaSetup, late: float
) -> None:
    """Four prompts at t = 0 go one to each of 4 ranks, encoded together in iteration 0, then the ranks all generate
    from iteration 1 on, over S = 4 I + 4 (i - 1) + c cached tokens at iteration i. A fifth prompt arriving during
    iteration j joins iteration j + 1 without balancing; with it, the balancing counter, which counts every
    iteration since it last let prompts in (at iteration 0, one of prompts alone), holds it until it reaches a
    multiple of the 20-iteration timeout (TensorRT-LLM _balance_adp_requests): it joins iteration 20 ceil((j + 1) /
    20)."""
    st_ = h100_setup.steps
    free = _first_tokens_of_late_arrivals(h100_setup, late)
    held = _first_tokens_of_late_arrivals(h100_setup, late, adp_ranks=4, adp_timeout_iters=20)
    assert held[:4] == pytest.approx(free[:4], rel=1e-12)
    base, a, context = st_.decode_base(4), st_.a, 4.0 * (I + 1)

    def start(i: int) -> float:  # decode iteration i >= 1 starts when the four prompts have their first token
        m = np.arange(1, i)
        return float(free[0]) + float(np.sum(base + a * (context + 4.0 * (m - 1))))

    arriving = max(i for i in range(1, 400) if start(i) <= late)  # the decode iteration in flight at the arrival
    joined = 20 * -(-(arriving + 1) // 20)
    assert joined > arriving + 1  # the hold is real: the timeout is not the next iteration
    mixed = float(free[4]) - start(arriving + 1)  # the iteration that carries the prompt beside the four decodes
    assert float(held[4]) == pytest.approx(start(joined) + mixed, rel=1e-4)


@settings(max_examples=20, deadline=None)
@given(
    ranks=st.sampled_from([2, 4, 8]),
    timeout=st.integers(1, 60),
    seed=st.integers(0, 10_000),
    closed=st.booleans(),
    preempting=st.booleans(),
)
def test_attention_dp_balancing_loses_no_request(
    h100_setup: ReplicaSetup,
    vllm_setup: ReplicaSetup,
    ranks: int,
    timeout: int,
    seed: int,
    closed: bool,
    preempting: bool,
) -> None:
    """Conservation and causality under attention-DP balancing, open or closed loops, with a cache small enough to
    preempt (on-demand admission) or not: every request finishes, and none before it arrives (the per-rank
    bookkeeping follows requests through preemption and back)."""
    rng = np.random.default_rng(seed)
    n = 48
    inp = rng.integers(16, 1024, n)
    out = rng.integers(2, 200, n)
    setup = vllm_setup if preempting else h100_setup
    pool = replace(setup.pool(1), policy=replace(setup.policy(), adp_ranks=ranks, adp_timeout_iters=timeout))
    if preempting:
        pool = replace(pool, kv_tokens=4 * 1224)
    arrivals = None if closed else np.cumsum(rng.exponential(0.05, n))
    r = simulate(Deployment((pool,)), inp, out, np.zeros(n, np.int64), arrivals, 12 if closed else 0).requests
    assert np.all(np.isfinite(r["finish"])) and not np.any(r["dropped"])
    assert np.all(r["first"] >= r["arrival"]) and np.all(r["finish"] >= r["first"])


def test_attention_dp_places_a_request_on_the_least_loaded_rank(h100_setup: ReplicaSetup) -> None:
    """TensorRT-LLM places a fetched request on a rank below the expected count (the ceiling of the requests over
    the ranks, or the most any rank holds) with the fewest prompt tokens, then requests: in a saturated closed loop,
    the rank whose request just finished."""
    from chipwise.serve.sim.replica import Replica
    from chipwise.serve.sim.requests import RequestTable

    table = RequestTable(np.array([100, 300, 200, 50, 10]), np.ones(5, dtype=np.int64), np.zeros(5, dtype=np.int64))
    pol = replace(h100_setup.policy(), adp_ranks=4, adp_timeout_iters=20, max_batch=8)
    r = Replica(0, None, h100_setup.steps, pol, table, 10**6, "both", None)  # type: ignore[arg-type]
    for rid in range(4):
        r._enqueue(rid)
    assert [r.rank_of[i] for i in range(4)] == [0, 1, 2, 3]  # an empty replica: the next rank each time
    r.rank_load = [2, 2, 1, 2]  # rank 2's other request finished: the only rank below the expected 2
    r._enqueue(4)
    assert r.rank_of[4] == 2
    r.rank_load, r.rank_tokens = [1, 1, 1, 1], [100, 300, 200, 50]
    r._enqueue(4)
    assert r.rank_of[4] == 3  # all at the expected count's ceiling: the fewest prompt tokens


def test_attention_dp_balancing_releases_a_prompt_for_every_rank_at_once(h100_setup: ReplicaSetup) -> None:
    free = _ttft_of_late_arrivals(h100_setup, 4)
    balanced = _ttft_of_late_arrivals(h100_setup, 4, adp_ranks=4, adp_timeout_iters=20)
    assert balanced == pytest.approx(free, rel=1e-9)


def _with_recv_interval(setup: ReplicaSetup, interval: int) -> PoolSim:
    return replace(setup.pool(1), policy=replace(setup.policy(), recv_interval=interval))


def test_a_scheduler_polling_every_ten_decode_iterations_takes_an_arrival_at_the_next_poll(
    h100_setup: ReplicaSetup,
) -> None:
    """SGLang's --scheduler-recv-interval 10: request 1 arrives in the third decode step of request 0, the
    scheduler polls after the tenth (the prompt iteration of request 0 was followed by a poll), so request 1's
    prompt is encoded with request 0's eleventh token."""
    st_ = h100_setup.steps
    t_prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    base, a = st_.decode_base(1), st_.a
    t_arrive = t_prefill + 2.5 * (base + a * (I + 1))
    ones = np.ones(2, dtype=np.int64)
    deployment = Deployment((_with_recv_interval(h100_setup, 10),))
    r = simulate(deployment, ones * I, ones * O, ones * 0, np.asarray([0.0, t_arrive])).requests
    done10 = t_prefill + 10 * base + a * (10 * (I + 1) + 45)
    mixed = st_.time(1 + I, 2, I + 11.0, float(prefill_pairs(0, I)))
    assert r["first"][1] - r["arrival"][1] == pytest.approx(done10 + mixed - t_arrive, rel=1e-9)
    # polling every iteration, the same arrival waits only for the step in flight
    every = _run(h100_setup, [0.0, t_arrive]).requests
    assert every["first"][1] < r["first"][1]


def test_an_idle_scheduler_takes_a_request_at_once_whatever_its_recv_interval(h100_setup: ReplicaSetup) -> None:
    ones = np.ones(1, dtype=np.int64)
    deployment = Deployment((_with_recv_interval(h100_setup, 30),))
    r = simulate(deployment, ones * I, ones * O, ones * 0, np.asarray([0.25])).requests
    base = _run(h100_setup, [0.25]).requests
    assert r["first"][0] == pytest.approx(base["first"][0], rel=1e-12)
    assert r["finish"][0] == pytest.approx(base["finish"][0], rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=2, max_value=40), st.integers(min_value=0, max_value=10_000))
def test_a_recv_interval_delays_first_tokens_and_loses_no_request(
    h100_setup: ReplicaSetup, interval: int, seed: int
) -> None:
    """Conservation and causality with a polling scheduler: every request finishes, none before it arrives,
    and at 16 users a closed loop's mean TTFT is no shorter than with a poll every iteration."""
    rng = np.random.default_rng(seed)
    n = 64
    inp = rng.integers(64, 1024, n)
    out = rng.integers(16, 256, n)
    closed = {}
    for k in (1, interval):
        r = simulate(Deployment((_with_recv_interval(h100_setup, k),)), inp, out, np.zeros(n, np.int64), None, 16)
        req = r.requests
        assert np.all(np.isfinite(req["finish"])) and not np.any(req["dropped"])
        assert np.all(req["first"] >= req["arrival"]) and np.all(req["finish"] >= req["first"])
        closed[k] = float(np.mean(req["first"] - req["arrival"]))
    assert closed[interval] >= closed[1] * 0.999


def test_batch_waiting_holds_a_prompt_until_its_timeout_or_a_full_batch(h100_setup: ReplicaSetup) -> None:
    """TensorRT-LLM batch_wait_timeout_iters 30, batch_wait_max_tokens_ratio 0.8: one 512-token prompt beside four
    generating sequences is far from 0.8 x max_tokens, so it waits 30 decode iterations; prompts enough to fill the
    batch go at once (the four long requests' own start differs: the second pair of their prompts was held); with
    nothing generating there is nothing to wait for."""
    wait: HeldPrompts = {"batch_wait_iters": 30, "batch_wait_tokens": int(0.8 * h100_setup.plan.max_tokens)}
    free = _ttft_of_late_arrivals(h100_setup, 1)[0]
    held = _ttft_of_late_arrivals(h100_setup, 1, **wait)[0]
    assert held - free == pytest.approx(30 * h100_setup.steps.decode_base(4), rel=0.25)
    enough = math.ceil(0.8 * h100_setup.plan.max_tokens / I)
    waited = _ttft_of_late_arrivals(h100_setup, enough, **wait) - _ttft_of_late_arrivals(h100_setup, enough)
    assert np.all(np.abs(waited) < h100_setup.steps.decode_base(4))  # at most the phase of the step in flight
    alone = replace(h100_setup.policy(), batch_wait_iters=30, batch_wait_tokens=8000)
    ones = np.ones(1, dtype=np.int64)
    r = simulate(Deployment((replace(h100_setup.pool(1), policy=alone),)), ones * I, ones * O, ones * 0, np.zeros(1))
    assert r.requests["first"][0] == pytest.approx(_run(h100_setup, [0.0]).requests["first"][0], rel=1e-12)


def test_replicas_count_every_output_token_once(h100_setup: ReplicaSetup) -> None:
    """The output tokens the replicas report generating add up to the requests' outputs, and a window over the
    whole run counts them all."""
    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(1 / 20.0, size=400)).tolist()
    out = _run(h100_setup, arrivals, replicas=2)
    made = sum(float(rep["emit_v"][-1]) for rep in out.replicas)
    assert made == pytest.approx(400 * O, rel=1e-12)
    s = summarise(out, chips=2, basis="run")
    lo, hi = s["window_s"]
    assert s["output_tokens_per_s"] * (hi - lo) == pytest.approx(400 * O, rel=1e-9)


def test_a_short_open_loop_never_reports_more_than_it_was_offered(h100_setup: ReplicaSetup) -> None:
    """Arrivals that end before the first requests do: the window's tokens are those generated in it (spreading
    each request's tokens evenly over its life counted the fast start of the early requests late, 17% above the
    offered load in a 20-second run of 10-second requests), and the run says it is not steady."""
    lam, n = 60.0, 300  # 5 s of arrivals; a request takes several seconds at this load
    arrivals = (np.arange(n) / lam).tolist()
    out = _run(h100_setup, arrivals, inp=2000, out=1000)
    s = summarise(out, chips=1)
    assert s["output_tokens_per_s"] <= lam * 1000 * 1.001
    assert not s["steady_state"]
    rng = np.random.default_rng(1)
    steady = summarise(_run(h100_setup, np.cumsum(rng.exponential(1 / 8.0, size=3000)).tolist()), chips=1)
    assert steady["steady_state"]


def test_an_offline_run_is_measured_whole(h100_setup: ReplicaSetup) -> None:
    """Every prompt arrives at t = 0, as an offline benchmark issues them: its throughput is every output token over
    the whole run, from the first arrival to the last finish, as trtllm-bench and MLPerf Offline time it. Requests
    of one length run in waves, and the window it used to cut inside the run (from the first finish to the last
    admission) read four waves 20% low; the whole run's rate is the same at two waves as at ten."""
    out = _run(h100_setup, [0.0] * 640, inp=1024, out=256)
    s = summarise(out, chips=1)
    lo, hi = s["window_s"]
    assert lo == 0.0 and hi == pytest.approx(float(np.nanmax(out.requests["finish"])))
    assert s["output_tokens_per_s"] == pytest.approx(640 * 256 / hi, rel=1e-9)
    slots = h100_setup.plan.max_batch
    rates = [summarise(_run(h100_setup, [0.0] * (waves * slots), inp=1024, out=256), chips=1) for waves in (2, 10)]
    assert rates[0]["output_tokens_per_s"] == pytest.approx(rates[1]["output_tokens_per_s"], rel=0.03)


def test_requests_of_one_instant_start_in_one_iteration(h100_setup: ReplicaSetup) -> None:
    """Four prompts arriving together (an offline run, a trace's duplicated times) are all queued before the replica
    they wake steps, as a closed loop's four users are: one prefill iteration, the same TTFT for each and TPOT as at
    concurrency 4. Each arrival had scheduled the next before issuing itself, so the first step saw two of them and
    the other two joined one prefill later (TTFT p90 +100%, throughput -23%)."""
    at_once = _run(h100_setup, [0.0] * 4, inp=100, out=10)
    closed = _run(h100_setup, None, n=4, inp=100, out=10, concurrency=4)
    first = at_once.requests["first"]
    assert np.all(first == first[0])
    assert first.tolist() == pytest.approx(closed.requests["first"].tolist(), rel=1e-12)
    assert at_once.requests["finish"].tolist() == pytest.approx(closed.requests["finish"].tolist(), rel=1e-12)


def test_kv_occupancy_is_recorded_at_most_full() -> None:
    """The occupancy a replica records adds an average (half a block of rounding per sequence) to the tokens it
    holds; at a full cache that read 100.8%. A full cache reads 100%, where it starts and where a run ends."""
    from types import SimpleNamespace

    from chipwise.serve.sim.replica import Replica

    policy = SimpleNamespace(block=16, adp_ranks=1, max_batch=1)
    r = Replica(0, None, SimpleNamespace(tau=1.0), policy, None, 1000, "both", None)  # type: ignore[arg-type]
    r.S, r.n_dec = 990.0, 10  # 990 tokens held by 10 sequences, plus 10 half blocks of 8: 1,070 of 1,000
    r._record(0.0, growth=5.0)
    r.S, r.n_dec = 400.0, 2
    r._record(1.0)
    start, end = r.occupancy()
    assert start.tolist() == [1.0, pytest.approx((400 + 2 * 8) / 1000)] and end.tolist() == [1.0, start[1]]


def test_request_rates_and_goodput_are_counted_over_the_throughput_window(h100_setup: ReplicaSetup) -> None:
    """requests_per_s divided the finished requests by the whole run, drain included (6.6 req/s at 8.2 arriving,
    63% load), and goodput with it; Little's law counted the time in system over the drain too (it read 0.8).
    Below capacity every rate is the arrivals', within the window's few %."""
    rng = np.random.default_rng(3)
    lam = 8.0
    s = summarise(_run(h100_setup, np.cumsum(rng.exponential(1 / lam, size=2000)).tolist()), chips=1, targets={})
    assert s["requests_per_s"] == pytest.approx(lam, rel=0.05)
    assert s["goodput"]["requests_per_s"] == pytest.approx(s["requests_per_s"], rel=1e-9)  # no targets: all good
    assert s["goodput"]["output_tokens_per_s"] == pytest.approx(s["output_tokens_per_s"], rel=1e-9)
    ll = s["little_law"]
    assert ll["mean_in_system"] == pytest.approx(ll["arrival_rate_per_s"] * ll["mean_latency_s"], rel=0.03)


def test_percentile_bounds_by_hand() -> None:
    """1,200 values 1..1200: the p99's 95% upper bound is the value at rank ceil(1188 + 1.645 sqrt(11.88)) = 1194
    (0-based), 1195; the p90's at ceil(1080 + 1.645 sqrt(108)) = 1098, 1099. NaNs (unfinished) are left out."""
    v = np.arange(1, 1201, dtype=np.float64)
    timing = {"ttft": np.append(v, np.nan), "tpot": v / 1e3, "e2e": v}
    b = percentile_bounds(timing)
    assert b["ttft_p99"] == 1195.0 and b["ttft_p90"] == 1099.0 and b["tpot_p99"] == pytest.approx(1.195)
    assert np.isnan(percentile_bounds({"ttft": np.array([np.nan]), "tpot": v, "e2e": v})["ttft_p99"])


def test_a_decode_batch_past_the_captured_graphs_launches_eagerly(catalog: Catalog, hw: Hardware) -> None:
    """SGLang replays decode steps in CUDA graphs up to --cuda-graph-max-bs (512 on 8 H200 at TP8); a batch of 600
    launches its kernels from the host, one by one, and a step takes at least their time, in the simulator and in
    the estimate. A plan that captures larger batches (graph_batch) does not."""
    model = load_model(catalog, "llama-3.1-70b")
    h200 = hw.system("h200")
    plan = ReplicaPlan(tp=8, max_batch=1024, max_tokens=8192, weight_precision="fp8", kv_precision="fp8")
    eager = setup_replica(catalog, model, h200, "sglang", plan, 200.0, 200.0).steps
    graphed = setup_replica(catalog, model, h200, "sglang", replace(plan, graph_batch=1024), 200.0, 200.0).steps
    assert (eager.graph_batch, graphed.graph_batch) == (512, 1024) and eager.eager_floor > 0
    context = 600 * 300.0
    floor = eager.fixed + eager.seq_time(600) + eager.eager_floor
    assert eager.eager_decode_floor(600, context) + eager.a_decode(600) * context == pytest.approx(floor)
    assert eager.eager_decode_floor(512, context) == graphed.eager_decode_floor(600, context) == 0.0
    assert floor > eager.decode_base(600) + eager.a_decode(600) * context  # the launches dominate the step


def test_a_token_count_past_a_small_budget_is_priced_not_halved(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """A static engine pads a 9-token prompt to its 128-token bucket, past a 10-token budget (batch 1): the table
    prices 128 tokens as the iteration model does (a weight read and then some), where interpolating the coarse
    grid from its 0 at 0 tokens gave half of 256 tokens' time (OPT-30B on 4 inf2: 38.1 ms, where 128 tokens take
    49.6)."""
    s = h100_setup
    plan = replace(s.plan, max_batch=1, max_tokens=10)
    small = step_model(llama8b, s.dev, s.topo, s.engine, plan, s.typical_context, s.typical_prompt, 10)
    full = step_model(llama8b, s.dev, s.topo, s.engine, plan, s.typical_context, s.typical_prompt, 4096)
    for t in (11, 128, 200, 256):
        assert small.token_time(t) == pytest.approx(full.token_time(t), rel=1e-12)
    assert small.token_time(128) > 0.6 * small.token_time(256)  # the weights are read once, whatever the tokens


def test_the_run_counts_its_iterations(
    h100_setup: ReplicaSetup, vllm_setup: ReplicaSetup, catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """One request: one iteration encodes its 512-token prompt and samples its first token, then O - 1 = 127
    decode-only iterations; on Neuron (compiled for 4,096-token sequences) a 300-token prompt runs its 512-token
    bucket."""
    for basis in ("run", "steady"):
        ran = summarise(_run(h100_setup, [0.0]), chips=1, basis=basis)["iterations"]["both"]
        assert ran == pytest.approx({"prompt": 1.0, "prompt_tokens": float(I), "decode": float(O - 1)})
    plan = ReplicaPlan(tp=8, max_batch=4)
    inf2 = setup_replica(catalog, llama8b, hw.system("inf2"), "neuron", plan, 300.0, 64.0, 4096)
    ran = summarise(_run(inf2, [0.0], inp=300, out=64), chips=4, basis="run")["iterations"]["both"]
    assert ran == pytest.approx({"prompt": 1.0, "prompt_tokens": 512.0, "decode": 63.0})
    # two replicas of a steady open loop: per replica, iterations with prompts carry the prompts that arrived
    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(1 / 6.0, size=1200)).tolist()
    s = summarise(_run(vllm_setup, arrivals, replicas=2), chips=2)
    ran = s["iterations"]["both"]
    lo, hi = s["window_s"]
    assert ran["prompt_tokens"] == pytest.approx(6.0 * (hi - lo) * I / 2, rel=0.1)
    assert 0 < ran["prompt"] < ran["decode"]


def test_ttft_splits_into_the_wait_to_start_and_the_prompts_iterations(h100_setup: ReplicaSetup) -> None:
    """Two prompts at t = 0 on an engine that encodes one per iteration: A starts at once, B waits for A's
    iteration (P); TTFT = wait + its own iteration. A lone request waits for nothing."""
    st_ = h100_setup.steps
    prefill = st_.time(I, 1, 0.0, float(prefill_pairs(0, I)))
    pol = replace(h100_setup.policy(), mixed_batching=False, prefill_batch=1)
    pool = replace(h100_setup.pool(1), policy=pol)
    ones = np.ones(2, dtype=np.int64)
    out = simulate(Deployment((pool,)), ones * I, ones * O, ones * 0, np.zeros(2))
    r = out.requests
    assert r["started"].tolist() == pytest.approx([0.0, prefill], rel=1e-12)
    s = summarise(out, chips=1, basis="run")
    assert s["ttft_wait_s"]["mean"] == pytest.approx(prefill / 2, rel=1e-12)
    assert s["ttft_wait_s"]["mean"] < s["ttft_s"]["mean"]
    alone = summarise(_run(h100_setup, [0.0]), chips=1, basis="run")
    assert alone["ttft_wait_s"]["mean"] == 0.0 and alone["ttft_s"]["mean"] > 0


def test_an_unmixed_engine_runs_a_prompt_while_its_decodes_wait(h100_setup: ReplicaSetup) -> None:
    """Without mixed batching (SGLang's default), an arriving prompt runs in an iteration of its own, holding no
    decode token, after the decode iteration in flight."""
    unmixed = replace(h100_setup, engine=replace(h100_setup.engine, mixed_batching=False))
    st_ = h100_setup.steps
    pairs = float(prefill_pairs(0, I))
    t_prefill = st_.time(I, 1, 0.0, pairs)
    base, a = st_.decode_base(1), st_.a
    t_arrive = t_prefill + 2.5 * (base + a * (I + 1))
    r = _run(unmixed, [0.0, t_arrive]).requests
    done3 = t_prefill + 3 * base + a * (3 * (I + 1) + 3)
    assert r["first"][1] - r["arrival"][1] == pytest.approx(done3 + t_prefill - t_arrive, rel=1e-9)


def test_on_demand_admission_leaves_the_decodes_next_tokens_room(vllm_setup: ReplicaSetup) -> None:
    """A prompt is admitted only where the running batch's next decode step still fits beside it (vLLM schedules
    its running requests' next tokens before new ones): without mixed batching a prompt admitted into the last
    free blocks would be preempted by that step, re-admitted and prefilled again (139 preemptions of 48 requests
    here when admission looked at the prompt alone, 32 now)."""
    unmixed = replace(vllm_setup, engine=replace(vllm_setup.engine, mixed_batching=False))
    n, out_tokens = 48, 4 * O
    pool = replace(unmixed.pool(1), kv_tokens=10 * (I + out_tokens))
    inputs, outputs = np.full(n, I), np.full(n, out_tokens)
    out = simulate(Deployment((pool,)), inputs, outputs, np.zeros(n, dtype=np.int64), np.zeros(n))
    s = summarise(out, chips=1)
    assert s["requests"]["finished"] == n
    assert 0 < s["requests"]["preemptions"] <= n
    assert s["kv_cache_utilisation"]["peak"] <= 1.0 + 1e-9


def test_sglang_runs_prompts_unmixed_by_default(catalog: Catalog) -> None:
    """SGLang mixes prompt chunks into decode iterations only with --enable-mixed-chunk; vLLM V1 and TensorRT-LLM
    always do."""
    sglang = engine_profile(catalog, "sglang", "hopper")
    assert not sglang.mixed_batching and not sglang.mixes(False)
    assert engine_profile(catalog, "vllm", "hopper").mixed_batching
    assert engine_profile(catalog, "trtllm", "blackwell").mixed_batching
    # under attention DP each SGLang rank schedules its own requests: one rank's prompts ride the pass in which the
    # other ranks decode
    assert sglang.mixes(True) and list(sglang.mixes(np.array([0, 1]))) == [False, True]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("burstiness", [4.0, 8.0])
def test_bursty_arrivals_offer_the_rate_asked_for(seed: int, burstiness: float) -> None:
    """Gamma gaps of shape 1/16 or 1/64 average slowly: 2,000 of them at 12 req/s offered 9.3-17.0 req/s by seed,
    so a bursty run compared with a Poisson one compared two loads. The gaps are scaled to the rate; the bursts
    keep their shape (the gaps' spread relative to their mean)."""
    from chipwise.serve.sim.arrivals import open_loop_times
    from chipwise.workload.load import Load

    t = open_loop_times(Load("rate", rate=12.0, burstiness=burstiness), 2000, np.random.default_rng(seed))
    gaps = np.diff(t)
    assert 1999 / t[-1] == pytest.approx(12.0, rel=1e-9)
    assert gaps.std() / gaps.mean() > 0.7 * burstiness


def _kv(out: SimOutput) -> dict[str, Any]:
    kv: dict[str, Any] = summarise(out, chips=1)["kv_cache_utilisation"]
    return kv


def test_the_kv_peak_is_a_decode_runs_last_step_not_its_midpoint(vllm_setup: ReplicaSetup) -> None:
    """A decode run was recorded once, at its midpoint: one user's 20,000-token answers read a peak of 41.6% of a
    26,480-token cache, and the series stayed flat, where each answer's last step holds 21,000 tokens (79.3%).
    The run is recorded from its first step's occupancy to its last's: the peak is that, the mean still the
    midpoint's, and the series drawn climbs to it."""
    half = vllm_setup.policy().block // 2  # the half block of rounding a sequence holds on average
    cap = 26_480
    out = _run(vllm_setup, None, n=3, inp=1000, out=20_000, kv_tokens=cap, concurrency=1)
    kv = _kv(out)
    assert kv["peak"] == pytest.approx((1000 + 20_000 + half) / cap, rel=1e-9)  # 79.3%
    assert kv["mean"] == pytest.approx((1000 + 1 + 21_000 + 2 * half) / 2 / cap, rel=0.01)  # 41.6%, as before
    series = kv["series"]
    assert max(series["utilisation"]) == series["peak"] == kv["peak"]
    assert min(series["utilisation"][1:]) < 0.05  # each answer starts from its prompt
    # 12 answers of 2,048 tokens at once fill 99.0% of the cache at their last steps (the midpoint read 52.6%): two
    # of them, encoded an iteration ahead, finish a token before the other ten reach their last
    batch = _run(vllm_setup, [0.0] * 12, inp=128, out=2048, kv_tokens=26_464)
    assert int(batch.requests["preempted"].sum()) == 0
    assert _kv(batch)["peak"] == pytest.approx(12 * (128 + 2048 + half) / 26_464, abs=12 / 26_464)


def test_a_decode_run_cut_short_ends_its_kv_record_where_it_was_cut(vllm_setup: ReplicaSetup) -> None:
    """A run cut by an arrival ends at the iteration in flight: its record ends at the cache held then, not at
    where the whole run would have grown to (which overstated the mean, and drew a spike the cache never held)."""
    out = _run(vllm_setup, [0.0, 1.0], inp=1000, out=20_000, kv_tokens=100_000)
    rep = out.replicas[0]
    t, v, e = rep["util_t"], rep["util_v"], rep["util_e"]
    cut = int(np.searchsorted(t, 1.0)) - 1  # the run in flight when the second request arrived
    assert e[cut] > v[cut] and e[cut] <= v[cut + 1]  # grown to what the next record holds (plus its prompt)
    assert e[cut] < 0.05


def test_a_long_runs_kv_series_reaches_its_peak(h100_setup: ReplicaSetup) -> None:
    """Down-sampled to UTIL_POINTS points, the series keeps each stretch's lowest start and highest end, so that
    the curve reaches the peak its title gives (every 50th record missed it)."""
    from chipwise.serve.sim.metrics import UTIL_POINTS

    rng = np.random.default_rng(5)
    kv = _kv(_run(h100_setup, np.cumsum(rng.exponential(1 / 30.0, size=1500)).tolist()))
    series = kv["series"]
    assert len(series["t_s"]) <= UTIL_POINTS and series["t_s"] == sorted(series["t_s"])
    assert max(series["utilisation"]) == series["peak"] == kv["peak"]


def test_a_ramped_closed_loop_is_measured_after_its_ramp(h100_setup: ReplicaSetup) -> None:
    """The window started after the users' ramp only when the ramp was under half of it: 40 requests of 8 users
    ramped over 4 s read 1,115 output tok/s over a window whose first 4 s were the ramp, where the steady state
    delivers 1,873. Measured from the ramp's end it is within a few % of a long run's; a run whose last admission
    comes before the ramp ends is measured with it, and is not steady."""

    def ramped(n: int) -> dict[str, Any]:
        ones = np.ones(n, dtype=np.int64)
        out = simulate(Deployment((h100_setup.pool(1),)), ones * I, ones * O, ones * 0, None, concurrency=8, ramp_s=4.0)
        summary: dict[str, Any] = summarise(out, chips=1, ramp_s=4.0)
        return summary

    short, long = ramped(40), ramped(400)
    assert short["window_s"][0] == long["window_s"][0] == 4.0 and short["steady_state"] and long["steady_state"]
    assert short["output_tokens_per_s"] == pytest.approx(long["output_tokens_per_s"], rel=0.05)
    within = ramped(8)
    assert within["window_s"][0] == 0.0 and within["steady_state"] is False


def test_goodput_counts_the_requests_its_rate_does(h100_setup: ReplicaSetup) -> None:
    """The goodput fraction counted every request, the fill's too, and its rate only those that finished in the
    throughput window: 10.2% of 24.6 req/s where 2.23 req/s met the SLO. Both count the window's requests now,
    so the rate is the fraction of the requests' rate, and goodput's tokens the same share of the output's."""
    rng = np.random.default_rng(7)
    out = _run(h100_setup, np.cumsum(rng.exponential(1 / 40.0, size=3000)).tolist())
    r = out.requests
    ttft = np.sort(r["first"] - r["arrival"])
    s = summarise(out, chips=1, targets={"ttft_p99": float(ttft[len(ttft) // 2])})  # about half meet it
    good = s["goodput"]
    assert 0.3 < good["fraction"] < 0.7
    assert good["requests_per_s"] == pytest.approx(good["fraction"] * s["requests_per_s"], rel=1e-12)
    lo, hi = s["window_s"]
    done = (r["finish"] >= lo) & (r["finish"] <= hi)
    assert good["output_tokens_per_s"] <= s["output_tokens_per_s"] and int(done.sum()) < 3000


def _shared_prefix_run(setup: ReplicaSetup, cached: int, kv_tokens: int, n: int = 12) -> SimOutput:
    ones = np.ones(n, dtype=np.int64)
    pool = replace(setup.pool(1), kv_tokens=kv_tokens)
    return simulate(Deployment((pool,)), ones * 4000, ones * 200, ones * cached, np.zeros(n))


@pytest.mark.parametrize("engine", ["vllm", "trtllm"])
def test_a_shared_prefix_is_held_once_per_replica(
    vllm_setup: ReplicaSetup, h100_setup: ReplicaSetup, engine: str
) -> None:
    """A prefix-cache hit saved the prefill but held the whole prompt per request: twelve requests of 4,000-token
    prompts that share 3,000 (a system prompt, prefix_hit_rate 0.75) and 200-token answers took 4,200 tokens each
    of a 20,000-token cache, so the last waited for the first to finish. Engines keep one reference-counted copy
    of shared prefix blocks: each holds its 1,000 own prompt tokens and its answer, the replica the 3,000 once, and
    all twelve are admitted before any finishes (on-demand and reserve admission alike). The cache empties when
    they are done."""
    setup = vllm_setup if engine == "vllm" else h100_setup
    block = setup.policy().block
    out = _shared_prefix_run(setup, 3000, 20_000)
    assert out.last_admit < np.min(out.requests["finish"]) and int(out.requests["preempted"].sum()) == 0
    prefix = -(-3000 // block) * block
    held = (prefix + 12 * (1000 + 200 + block // 2)) / 20_000
    assert _kv(out)["peak"] == pytest.approx(held, abs=24 / 20_000)  # encoded over 3 iterations: 2 tokens apart
    assert out.replicas[0]["util_v"][-1] == 0.0
    # a whole prompt served from the cache (a prompt pool's repeat) is that prompt's own: held whole, as is a prompt
    # with no hit
    for cached in (4000, 0):
        alone = _shared_prefix_run(setup, cached, 20_000)
        assert alone.last_admit > np.min(alone.requests["finish"])


def test_a_split_decode_replica_holds_each_prompts_cache_whole(h100_setup: ReplicaSetup) -> None:
    """A decode replica receives a prompt's cache whole and keeps it so: only a replica that encodes prompts
    shares their prefix."""
    ones = np.ones(6, dtype=np.int64)
    pools = (h100_setup.pool(1, "prefill"), replace(h100_setup.pool(1, "decode"), kv_tokens=60_000))
    out = simulate(Deployment(pools), ones * 4000, ones * 200, ones * 3000, np.zeros(6))
    decode = next(rep for rep in out.replicas if rep["role"] == "decode")
    assert max(decode["util_v"]) * 60_000 >= 4000 + 200  # at least one request held whole
    assert np.all(np.isfinite(out.requests["finish"]))
