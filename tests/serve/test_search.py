"""The steady-state serving estimator: saturation throughput and the operating point at a given rate, and the pipelined
step of a batch too small to fill the stages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from scipy.special import gammaincinv, pdtr

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware
from chipwise.hardware.objects import System
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.serving import small_all_reduce
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.candidates import Candidates, enumerate_candidates
from chipwise.serve.decode_tail import Z99, answer_probabilities
from chipwise.serve.engine import EngineProfile, engine_profile, serving_device
from chipwise.serve.estimate import Estimate, estimate
from chipwise.serve.iteration import Shapes, token_costs
from chipwise.serve.operating import MAX_UTILISATION, Operating, at_rate, batch_slots, closed_loop
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.queueing import ROUTED_FLOOR, ROUTED_REQUESTS, erlang_c, prompt_wait
from chipwise.serve.search import best_throughput_shape, pareto
from chipwise.serve.sim.run import Deployment, simulate
from chipwise.types import Array
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model

INP, OUT = 2048.0, 256.0


@pytest.fixture(scope="module")
def h100(hw: Hardware) -> System:
    return hw.system("h100-sxm")


@pytest.fixture(scope="module")
def est(catalog: Catalog, h100: System, llama8b: ModelSpec) -> Estimate:
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(64,))
    return estimate(llama8b, h100, eng, cand, "fp8", "fp8", INP, OUT, 8192)


def test_ttft_is_the_prefill_and_three_waits(catalog: Catalog, h100: System, llama8b: ModelSpec, est: Estimate) -> None:
    """TTFT = prefill + front end + half the step in flight + the wait behind the prompts being encoded (the rest of
    their iteration, R = busy P / 2, over 1 - the utilisation by the prompts' own work W) + the wait for one of 64
    batch slots (Erlang C, halved for fixed holding times); the p99 takes a whole step, the launch floor's share of
    the prompt iteration in flight (P - W) and Kingman's tail of the queue of work."""
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    lam = 0.5 * est.throughput / OUT
    op = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    p, w = est.prefill_s, est.prefill_work_s
    assert np.all(w <= p)
    busy, loaded = lam * p, lam * w
    queue = busy * p / (2 * (1 - loaded))
    queue99 = (p - w) + w / (2 * (1 - loaded)) * np.log(100 * busy)  # the launch floor's share, then the work
    hold = p + OUT * op.tpot
    c, a = 64.0, lam * hold
    slot = erlang_c(np.asarray(c), a) / (2 * (c - a) / hold)
    front = eng.host_request_s
    assert op.ttft == pytest.approx(p + front + op.tpot / 2 + queue + slot, rel=1e-9)
    assert op.ttft_p99 == pytest.approx(p + front + op.tpot + queue99, rel=1e-6)  # C < 1%: no slot tail


def test_erlang_c_by_hand() -> None:
    """One server: C = A. Two servers at A = 1: B = 1/5 and C = 2 B / (2 - A (1 - B)) = 1/3. 64 servers agree with
    Erlang B's recursion B_k = A B_(k-1) / (k + A B_(k-1))."""
    assert erlang_c(np.asarray([1.0]), np.asarray([0.3])) == pytest.approx([0.3])
    assert erlang_c(np.asarray([2.0]), np.asarray([1.0])) == pytest.approx([1.0 / 3.0])
    assert erlang_c(np.asarray([4.0]), np.asarray([0.0])) == pytest.approx([0.0])
    for a in (40.0, 55.0, 60.0):
        b = 1.0
        for k in range(1, 65):
            b = a * b / (k + a * b)
        exact = 64 * b / (64 - a * (1 - b))
        assert erlang_c(np.asarray([64.0]), np.asarray([a]))[0] == pytest.approx(exact, rel=1e-9)


def test_a_routed_prompt_waits_for_one_prompt_at_most() -> None:
    """The prompt queue by hand. One replica: the M/D/1 mean busy S / (2 (1 - loaded)) and Kingman's tail. 16
    replicas each holding 30 requests behind two random draws (power_of_two), whose counts hide which one encodes:
    a prompt meets one at the lone replica's rate (busy), but waits for a residual of that one prompt,
    S (1 - 0.01 / busy) / (1 - loaded) at the tail, the lone replica's tail weighing 1/16^2. Behind a least-loaded
    router, which takes tied replicas in turn, it waits only when all 16 encode: Erlang C at 16 x 0.2, nothing."""
    s, w, busy, loaded = 2.0, 2.0, 0.2, 0.2

    def waits(router: str, replicas: float) -> tuple[Array, Array]:
        """prompt_wait behind `router` over `replicas` that each hold 30 requests, at the figures above."""
        n, held, shared, service, work, load = np.asarray([replicas, 30.0, busy, s, w, loaded])
        return prompt_wait(router, n, held, shared, service, work, load)

    one = waits("least_loaded", 1.0)
    kingman = w / (2 * (1 - loaded)) * np.log(100 * busy)
    assert one[0] == pytest.approx(busy * s / (2 * (1 - loaded)))
    assert one[1] == pytest.approx(kingman)
    assert waits("power_of_two", 1.0) == pytest.approx(one)
    many = waits("power_of_two", 16.0)
    hidden = 1 - (1 - ROUTED_FLOOR) * np.exp(-30.0 / ROUTED_REQUESTS)
    p = hidden * busy + (1 - hidden) * float(erlang_c(np.asarray(16.0), np.asarray(16 * busy)))
    assert p == pytest.approx(busy, rel=1e-4)
    assert many[0] == pytest.approx(p * s / (2 * (1 - loaded)))
    assert many[1] == pytest.approx(kingman / 256 + 255 / 256 * w * (1 - 0.01 / p) / (1 - loaded))
    assert many[1] < one[1]
    turns = waits("least_loaded", 16.0)
    assert turns[0] < 1e-6 and turns[1] == pytest.approx(kingman / 256)
    assert waits("round_robin", 16.0) == pytest.approx(turns)


def _one_shape(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    precision: str,
    shape: tuple[int, int],
    lengths: tuple[float, float],
    longest: int,
) -> tuple[EngineProfile, Candidates, ReplicaSetup]:
    """One replica shape (TP, batch limit) of `engine` at `precision` (weights and KV cache): the engine's profile,
    the shape as the search's one candidate, and the replica the simulator runs (prompt and answer `lengths`, its
    buffers sized for requests of `longest` tokens)."""
    tp, batch = shape
    eng = engine_profile(catalog, engine, system.chip.family)
    cand = enumerate_candidates(model, topology_of(system), None, {"tp": tp, "pp": 1, "ep": 1, "max_batch": batch})
    plan = ReplicaPlan(tp=tp, max_batch=batch, weight_precision=precision, kv_precision=precision)
    return eng, cand, setup_replica(catalog, model, system, engine, plan, *lengths, longest)


def _against_simulation(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    precision: str,
    shape: tuple[int, int],
    lengths: tuple[int, int],
    share: float,
    replicas: int = 1,
    requests: int = 1500,
) -> tuple[Operating, dict[str, Any], Operating]:
    """One replica shape (TP, batch limit) at `share` of its capacity per replica: the estimate for `replicas` of
    them behind a router (their whole load pooled), the simulation of that fleet under fixed lengths, and the
    estimate of a lone replica at the same load."""
    from chipwise.serve.simulate import Pool, ServingSetup, run_job
    from chipwise.workload.lengths import LengthDist
    from chipwise.workload.load import Load
    from chipwise.workload.serving_job import ServingJob

    inp, out = lengths
    eng, cand, replica = _one_shape(catalog, model, system, engine, precision, shape, (inp, out), inp + out)
    est = estimate(model, system, eng, cand, precision, precision, float(inp), float(out), eng.max_tokens)
    lam = share * min(float(est.throughput[0]) / out, 1.0 / float(est.prefill_work_s[0]))
    args = (model, system, eng, est, precision, precision, float(inp), float(out), np.asarray([lam]))
    op = at_rate(*args, None, replicas * lam if replicas > 1 else 0.0)
    load = Load("rate", rate=replicas * lam)
    job = ServingJob(model, LengthDist.fixed(inp), LengthDist.fixed(out), load, requests=requests)
    sim, _ = run_job(job, ServingSetup((Pool(replica, replicas),)), seed=0)
    return op, sim, at_rate(*args)


def test_a_fleets_prompt_queue_agrees_with_the_simulator(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B on four TP8 H200 replicas of 64 slots, 16K-token prompts at 30% of their capacity, behind a
    least-loaded router: a prompt waits behind another when all four replicas are encoding one (Erlang C, 2.8%),
    for what is left of it. The p99 TTFT estimate is 1.18 s, on the safe side of the simulated one: 0.87 s over
    800 requests, 0.96 s over 3,000 (its residual is stretched by the prompts' load, which the fleets at 85% of
    their capacity need). The lone replica's queue read it 2.2x high, and `plan serve` had bought 1,440 chips for
    128K-token prompts where 480 meet the SLO."""
    model = load_model(catalog, "llama-3.1-70b")
    op, sim, lone = _against_simulation(
        catalog, model, hw.system("h200"), "trtllm", "fp8", (8, 64), (16384, 256), 0.3, replicas=4, requests=800
    )
    assert sim["ttft_s"]["p99"] < op.ttft_p99[0] < 1.4 * sim["ttft_s"]["p99"]
    assert lone.ttft_p99[0] > 2.0 * sim["ttft_s"]["p99"]


def test_one_slot_decodes_without_its_own_prompt(catalog: Catalog, h100: System, llama8b: ModelSpec) -> None:
    """A replica of one slot runs a request's prompt, then its tokens: its TPOT is the plain decode step, no share
    of a prompt in it (8K-token prompts for 100-token answers read 21% over the step the simulator decodes at)."""
    op, sim, _ = _against_simulation(catalog, llama8b, h100, "trtllm", "fp8", (1, 1), (8192, 100), 0.2, requests=60)
    assert op.tpot[0] == pytest.approx(sim["tpot_s"]["p50"], rel=0.05)


def test_the_estimate_agrees_with_the_simulator(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B on one MI355X (vLLM, 128 slots), 1,000 / 200 tokens at 60% of its estimated capacity: the
    iterations that carry a whole prompt take ~150 ms against ~45 ms for decode alone, so the mean step is well
    above the step with the prompts spread evenly (the estimate was 36% under the simulated TPOT before it
    averaged the two kinds). TPOT within 5%, TTFT mean and p99 within 15%."""
    model = load_model(catalog, "llama-3.1-70b")
    op, sim, _ = _against_simulation(catalog, model, hw.system("mi355x"), "vllm", "bf16", (1, 128), (1000, 200), 0.6)
    assert op.tpot[0] == pytest.approx(sim["tpot_s"]["p50"], rel=0.05)
    assert op.ttft[0] == pytest.approx(sim["ttft_s"]["mean"], rel=0.15)
    assert op.ttft_p99[0] == pytest.approx(sim["ttft_s"]["p99"], rel=0.15)


def test_tail_tpot_is_a_larger_batch(catalog: Catalog, h100: System, llama8b: ModelSpec, est: Estimate) -> None:
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    op = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, 0.5 * est.throughput / OUT)
    assert np.all(op.tpot_p99 > op.tpot)
    # the p99 batch is 2.33 standard deviations above the mean batch, capped at the saturation batch: near
    # saturation it is the saturation batch, so the tail TPOT is the saturated step (whose prompts fill the budget
    # rather than arrive at random), less the prompt of the sequence itself (its iterations carry the other three's)
    small = estimate(llama8b, h100, eng, replace(est.cand, max_batch=np.full(len(est.cand), 4)), "fp8", "fp8", INP,
                     OUT, 8192)  # fmt: skip
    busy = at_rate(llama8b, h100, eng, small, "fp8", "fp8", INP, OUT, 0.9 * small.throughput / OUT)
    assert np.all(busy.batch + Z99 * np.sqrt(busy.batch) >= small.batch)
    assert np.all(busy.tpot_p99 <= small.step)
    assert busy.tpot_p99 == pytest.approx(small.step, rel=0.03)


def test_a_saturated_prefill_queue_is_over_capacity(
    catalog: Catalog, h100: System, llama8b: ModelSpec, est: Estimate
) -> None:
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    lam = MAX_UTILISATION / est.prefill_s  # prompts alone fill the replica
    op = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    assert np.all(np.isinf(op.ttft_p99)) and np.all(np.isinf(op.tpot))


def test_static_batch_decodes_every_slot(catalog: Catalog, h100: System, llama8b: ModelSpec, est: Estimate) -> None:
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    static = replace(eng, static_batch=True)
    lam = 0.05 * est.throughput / OUT
    dynamic = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    fixed = at_rate(llama8b, h100, static, est, "fp8", "fp8", INP, OUT, lam)
    assert np.all(fixed.batch == est.batch) and np.all(dynamic.batch < est.batch)
    assert np.all(fixed.tpot > dynamic.tpot)


def test_attention_dp_balancing_adds_the_gather_wait(catalog: Catalog, h100: System) -> None:
    """With attention DP over R ranks all busy, a prompt waits for R - 1 more: (R - 1) / (2 rate) on average, and at
    the tail the 99th percentile of R - 1 Poisson gaps (Gamma(3): 8.41 mean gaps); the balancing counter releases
    prompts every 60 steps, so the mean is at most 30 steps and the tail at most 60."""
    from chipwise.workload.presets import load_model

    moe = load_model(catalog, "qwen3-30b-a3b")
    eng = replace(engine_profile(catalog, "trtllm", h100.chip.family), eager_launch_s=0.0)  # no launch floor
    cand = enumerate_candidates(model=moe, topo=topology_of(h100), fixed={"tp": 4, "ep": 4}, batches=(256,))
    est = estimate(moe, h100, eng, cand, "fp8", "fp8", INP, OUT, 8192)
    lam = 0.6 * est.throughput / OUT
    on = at_rate(moe, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    off = at_rate(moe, h100, replace(eng, adp_balance_timeout_iters=0), est, "fp8", "fp8", INP, OUT, lam)
    adp = est.cand.adp > 0
    assert adp.any() and (~adp).any()
    # every rank is busy with the probability that the Poisson-like batch holds at least R = 4 sequences
    busy = np.where(adp, 1.0 - pdtr(3.0, on.batch), 0.0)
    gather = np.minimum(3.0 / (2.0 * lam), 30 * on.tpot)
    assert on.ttft - off.ttft == pytest.approx(busy * gather, rel=1e-9, abs=1e-12)
    level = np.clip(1.0 - 0.01 / np.maximum(busy, 1e-12), 0.0, 0.99)
    tail = np.where(busy > 0.01, np.minimum(gammaincinv(3.0, level) / lam, 60 * on.tpot), 0.0)
    assert on.ttft_p99 - off.ttft_p99 == pytest.approx(tail, rel=1e-9, abs=1e-12)
    assert (busy[adp] > 0.99).all()  # loaded: the tail is the 99th percentile of 3 Poisson gaps, 8.41 mean gaps
    assert gammaincinv(3.0, 0.99) == pytest.approx(8.406, rel=1e-3)
    # a mean batch just under R = 4: the gather was left out (a DeepSeek-V3 replica of 8 ranks at a mean of 7.5
    # read a p99 TTFT of 0.41 s where it ran at 2.9 s); every rank is busy 46% of the time
    from chipwise.serve.queueing import balancing_wait

    n = len(est.cand)
    mean, p99 = balancing_wait(eng, est, np.full(n, 3.5), np.full(n, 1.0), np.full(n, 1.0), poisson=True)
    assert 1.0 - pdtr(3.0, 3.5) == pytest.approx(0.4634, rel=1e-3)
    assert mean[adp] == pytest.approx(0.4634 * 1.5, rel=1e-3) and (mean[~adp] == 0.0).all()
    assert p99[adp] == pytest.approx(gammaincinv(3.0, 1.0 - 0.01 / 0.4634), rel=1e-3)


def test_an_unstated_plan_is_the_shape_with_the_most_throughput_per_chip(catalog: Catalog, hw: Hardware) -> None:
    """Llama 2 70B in fp16 on H100s: TP2 holds the weights but leaves ~28K tokens of KV cache per replica, so a
    throughput submitter's shape is wider; the chosen shape is the best of every fitting one-stage shape."""
    model = load_model(catalog, "llama-2-70b")
    system = hw.system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", "hopper")
    tp, ep, adp = best_throughput_shape(model, system, eng, "bf16", "bf16", 32, 292.0, 292.0)
    assert tp > 2 and ep == 1 and not adp
    cand = enumerate_candidates(model, topology_of(system), 8, {"pp": 1, "max_batch": eng.max_batch})
    est = estimate(model, system, eng, cand, "bf16", "bf16", 292.0, 292.0, 8192)
    per_chip = est.throughput / est.chips
    assert per_chip[list(cand.tp).index(tp)] == pytest.approx(per_chip[est.fits].max())


def test_moe_models_spread_tensor_and_expert_parallelism_over_nodes(
    catalog: Catalog, hw: Hardware, h100: System, llama8b: ModelSpec
) -> None:
    """DeepSeek does not fit one 8-GPU H100 node in fp8: TP/EP 16 over two nodes is a candidate and prices, with
    each all-reduce paying the cross-node latency; a dense model and a 72-GPU NVLink domain keep TP in the domain."""
    deepseek = load_model(catalog, "deepseek-v3")
    topo = topology_of(h100)
    tps = set(enumerate_candidates(deepseek, topo).tp.tolist())
    assert {16, 32} <= tps and max(enumerate_candidates(llama8b, topo).tp.tolist()) == 8
    gb200 = hw.system("gb200")
    assert max(enumerate_candidates(deepseek, topology_of(gb200)).tp.tolist()) == 64
    plan = ReplicaPlan(tp=16, ep=16, attention_dp=True, max_batch=64, max_tokens=8192, weight_precision="fp8")
    setup = setup_replica(catalog, deepseek, h100, "sglang", plan, 1024.0, 1024.0)
    assert setup.chips == 16 and setup.kv_tokens > 0
    with pytest.raises(InfeasibleError, match="without filling them"):
        setup_replica(catalog, deepseek, h100, "sglang", replace(plan, tp=12, ep=1, attention_dp=False), 1024.0, 1024.0)
    eng = engine_profile(catalog, "sglang", h100.chip.family)
    near, far = eng.collective_latency_s, eng.network_collective_latency_s
    assert float(small_all_reduce(0.0, 8, topo, near, far)) == pytest.approx(near)
    assert float(small_all_reduce(0.0, 16, topo, near, far)) == pytest.approx(far) and far > 5 * near


def test_an_eager_engine_estimates_a_short_prompt_at_its_launch_time(
    catalog: Catalog, h100: System, llama8b: ModelSpec
) -> None:
    """The estimator's TTFT term agrees with the simulator's steps: a 64-token prompt on SGLang costs its launches."""
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(64,))
    eager = estimate(llama8b, h100, engine_profile(catalog, "sglang", h100.chip.family), cand, "bf16", "bf16",
                     64.0, 64.0, 8192)  # fmt: skip
    compiled = estimate(llama8b, h100, engine_profile(catalog, "vllm", h100.chip.family), cand, "bf16", "bf16",
                        64.0, 64.0, 8192)  # fmt: skip
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=8192, weight_precision="bf16", kv_precision="bf16")
    steps = setup_replica(catalog, llama8b, h100, "sglang", plan, 64.0, 64.0).steps
    assert float(eager.prefill_s[0]) == pytest.approx(steps.fixed + steps.seq_time(1) + steps.eager_floor, rel=1e-6)
    assert float(compiled.prefill_s[0]) < 0.5 * float(eager.prefill_s[0])


def test_a_long_prompt_is_estimated_as_the_simulator_encodes_it(
    catalog: Catalog, h100: System, llama8b: ModelSpec
) -> None:
    """A 32K-token prompt runs as four 8K chunks, each attending to the chunks before it: the estimator's prefill
    time is the simulator's lone-prompt time (StepModel.prompt_alone), not four independent 8K prefills."""
    prompt, chunk = 32768, 8192
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(8,))
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    est = estimate(llama8b, h100, eng, cand, "fp8", "fp8", float(prompt), 64.0, chunk)
    plan = ReplicaPlan(tp=1, max_batch=8, max_tokens=chunk, weight_precision="fp8", kv_precision="fp8")
    steps = setup_replica(catalog, llama8b, h100, "trtllm", plan, float(prompt), 64.0).steps
    alone = steps.prompt_alone(prompt, chunk)
    assert float(est.prefill_s[0]) == pytest.approx(alone, rel=1e-9)
    by_hand = sum(
        steps.prompt_time(chunk, int(s + chunk == prompt), 0.0, chunk * s + chunk * (chunk + 1) / 2)
        + steps.prefill_fixed
        for s in range(0, prompt, chunk)
    )
    assert alone == pytest.approx(by_hand, rel=1e-12)
    independent = 4 * (steps.prompt_time(chunk, 1, 0.0, chunk * (chunk + 1) / 2) + steps.prefill_fixed)
    assert alone > 1.3 * independent  # attention to the earlier chunks is most of a 32K prompt's work


def test_attention_dp_ranks_schedule_their_own_token_budgets_where_the_engine_does(
    catalog: Catalog, hw: Hardware
) -> None:
    """TensorRT-LLM (and vLLM's data-parallel engine cores) give each attention-DP rank its own max_num_tokens, so a
    DEP8 replica's iteration carries 8 x 8,192 tokens; SGLang divides --chunked-prefill-size over the ranks, so its
    replica carries 8,192, 1,024 for each rank's prompts. Sixteen 4,096-token prompts arriving together are encoded
    in one iteration on TensorRT-LLM (16 x 4,096 = 8 x 8,192); on SGLang each rank's two take eight of 1,024
    tokens, the first prompts ending in the fourth, the others in the eighth."""
    deepseek = load_model(catalog, "deepseek-v3")
    b200 = hw.system("b200")
    plan = ReplicaPlan(tp=8, ep=8, attention_dp=True, max_batch=64, max_tokens=8192, weight_precision="fp8")
    first_tokens: dict[str, list[float]] = {}
    for engine, budget in (("trtllm", 8 * 8192), ("sglang", 8192), ("vllm", 8 * 8192)):
        setup = setup_replica(catalog, deepseek, b200, engine, plan, 4096.0, 64.0)
        assert setup.token_budget == budget and setup.policy().max_tokens == budget, engine
        pool = setup.pool(1)
        pool = replace(pool, policy=replace(pool.policy, adp_ranks=1))  # no attention-DP balancing hold
        ones = np.ones(16, dtype=np.int64)
        out = simulate(Deployment((pool,)), ones * 4096, ones * 4, ones * 0, np.zeros(16))
        first_tokens[engine] = sorted(set(np.round(out.requests["first"], 9).tolist()))
    # all sixteen start in the first iteration, and end in it or need several more
    assert len(first_tokens["trtllm"]) == len(first_tokens["vllm"]) == 1 and len(first_tokens["sglang"]) == 2
    assert first_tokens["sglang"][-1] > first_tokens["trtllm"][-1]
    tp8 = setup_replica(catalog, deepseek, b200, "trtllm", replace(plan, attention_dp=False), 4096.0, 64.0)
    assert tp8.token_budget == 8192


def test_a_closed_loop_estimate_agrees_with_the_steady_simulation(catalog: Catalog, hw: Hardware) -> None:
    """64 steady users of Llama-3.1-8B on one H200 (vLLM), 2,000 / 500 tokens: the users hold the batch and set the
    step (closed_loop), against the simulation of users started out of step (run_job's steady latencies): TPOT and
    output tokens/s within 5%, TTFT within 20%."""
    from chipwise.serve.simulate import Pool, ServingSetup, run_job
    from chipwise.workload.lengths import LengthDist
    from chipwise.workload.load import Load
    from chipwise.workload.serving_job import ServingJob

    model = load_model(catalog, "llama-3.1-8b")
    system = hw.system("h200")
    eng = engine_profile(catalog, "vllm", system.chip.family)
    cand = enumerate_candidates(model, topology_of(system), None, {"tp": 1, "pp": 1, "ep": 1, "max_batch": 256})
    est = estimate(model, system, eng, cand, "bf16", "bf16", 2000.0, 500.0, eng.max_tokens)
    op = closed_loop(model, system, eng, est, "bf16", "bf16", 2000.0, 500.0, np.asarray([64.0]))
    plan = ReplicaPlan(tp=1, max_batch=256, weight_precision="bf16", kv_precision="bf16")
    replica = setup_replica(catalog, model, system, "vllm", plan, 2000.0, 500.0, 2500)
    job = ServingJob(model, LengthDist.fixed(2000), LengthDist.fixed(500), Load("closed", concurrency=64), 1200)
    sim, _ = run_job(job, ServingSetup((Pool(replica, 1),)), seed=0, steady_latencies=True)
    assert op.tpot[0] == pytest.approx(sim["tpot_s"]["p50"], rel=0.05)
    assert op.rho[0] * est.throughput[0] == pytest.approx(sim["output_tokens_per_s"], rel=0.05)
    assert op.ttft[0] == pytest.approx(sim["ttft_s"]["mean"], rel=0.2)
    # beyond the batch slots the surplus users wait for one before their first token
    crowded = closed_loop(model, system, eng, est, "bf16", "bf16", 2000.0, 500.0, 2.0 * est.batch)
    assert crowded.ttft[0] > 10.0 * op.ttft[0] and crowded.tpot[0] > op.tpot[0]


def test_closed_loop_users_behind_two_random_draws_meet_encoding_replicas(catalog: Catalog, hw: Hardware) -> None:
    """32 users on eight H200 replicas of Llama-3.1-8B (vLLM, 16 slots), 16,000-token prompts and 200-token answers.
    A least-loaded router sends a user's next request to the replica its last one left, which is not encoding a
    prompt: the first token is the prompt's own prefill, as one replica alone reads it (simulated p99 0.80 s). Two
    random draws send it to replicas that may be encoding (prompt_wait over the eight): simulated p99 2.27 s, the
    estimate within 16% of it (1.95 s, then 1.93 s once stop 93's steps carried the prompts arriving together)."""
    from chipwise.serve.simulate import Pool, ServingSetup, run_job
    from chipwise.workload.lengths import LengthDist
    from chipwise.workload.load import Load
    from chipwise.workload.serving_job import ServingJob

    model = load_model(catalog, "llama-3.1-8b")
    system = hw.system("h200")
    eng = engine_profile(catalog, "vllm", system.chip.family)
    inp, out = 16000, 200
    cand = enumerate_candidates(model, topology_of(system), None, {"tp": 1, "pp": 1, "ep": 1, "max_batch": 16})
    est = estimate(model, system, eng, cand, "bf16", "bf16", float(inp), float(out), eng.max_tokens)
    replica = setup_replica(
        catalog, model, system, "vllm", ReplicaPlan(tp=1, max_batch=16), float(inp), float(out), inp + out
    )
    job = ServingJob(model, LengthDist.fixed(inp), LengthDist.fixed(out), Load("closed", concurrency=32), 2400)
    args = (model, system, eng, est, "bf16", "bf16", float(inp), float(out), np.asarray([4.0]), None, 32.0)
    alone = closed_loop(*args[:-2])
    for router in ("least_loaded", "power_of_two"):
        op = closed_loop(*args, router)
        sim, _ = run_job(job, ServingSetup((Pool(replica, 8),), router), seed=0, steady_latencies=True)
        if router == "least_loaded":
            assert op.ttft_p99[0] == alone.ttft_p99[0]
            assert sim["ttft_s"]["p99"] == pytest.approx(alone.ttft_p99[0], rel=0.05)
        else:
            assert sim["ttft_s"]["p99"] > 3.0 * alone.ttft_p99[0]
            assert op.ttft_p99[0] == pytest.approx(sim["ttft_s"]["p99"], rel=0.16)


def test_a_prompt_over_the_budget_runs_as_a_chunk_and_a_remainder(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B on one GB300 with 8,192-token prompts and an 8,192-token budget: a prompt joins a full chunk
    (~390 ms of work) and a remainder of a few tokens that still takes the Grace host's launch floor (960
    launches at 112.5 us: 108 ms; 80 layers of 6 attention and 4 MLP kernels and TensorRT-LLM's two unfused fp8
    quantises, the O and down projections' inputs written by the kernels before them). Averaging the two chunks'
    tokens before applying the floor (then 213 ms) charged
    ~200 ms where they took ~300 ms on average, 31 ms of TPOT against 40 simulated at 0.95 req/s; each chunk at
    its own floor, within 10%."""
    from chipwise.serve.simulate import Pool, ServingSetup, run_job
    from chipwise.workload.lengths import LengthDist
    from chipwise.workload.load import Load
    from chipwise.workload.serving_job import ServingJob

    model = load_model(catalog, "llama-3.1-70b")
    system = hw.system("gb300")
    eng = engine_profile(catalog, "trtllm", system.chip.family)
    cand = enumerate_candidates(model, topology_of(system), None, {"tp": 1, "pp": 1, "ep": 1, "max_batch": 128})
    est = estimate(model, system, eng, cand, "fp8", "fp8", 8192.0, 512.0, eng.max_tokens)
    assert float(est.prompts.floor[0]) == pytest.approx(960 * 69e-6 * (1.0 + 0.36 * (system.host_overhead - 1.0)))
    op = at_rate(model, system, eng, est, "fp8", "fp8", 8192.0, 512.0, np.asarray([0.95]))
    plan = ReplicaPlan(tp=1, max_batch=128, weight_precision="fp8", kv_precision="fp8")
    replica = setup_replica(catalog, model, system, "trtllm", plan, 8192.0, 512.0, 8704)
    job = ServingJob(model, LengthDist.fixed(8192), LengthDist.fixed(512), Load("rate", rate=0.95), 1500)
    sim, _ = run_job(job, ServingSetup((Pool(replica, 1),)), seed=0)
    assert op.tpot[0] == pytest.approx(sim["tpot_s"]["p50"], rel=0.1)


def test_the_user_search_reaches_its_limit(catalog: Catalog, h100: System, llama8b: ModelSpec, est: Estimate) -> None:
    """With a TPOT target the users beyond the batch slots only wait, so a replica serves up to USER_LIMIT x its
    slots; the bisection reaches that limit itself (it stopped one short, which cost a second replica)."""
    from chipwise.planner.serving_choice import USER_LIMIT, ShapeQuery, max_users

    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    seats, tpot, _ = max_users(ShapeQuery(llama8b, h100, eng, "fp8", "fp8", INP, OUT), est, {"tpot_p99": 1.0})
    assert seats[0] == USER_LIMIT * est.batch[0] and np.isfinite(tpot[0])


def test_a_closed_loop_seats_the_plans_slots(catalog: Catalog, h100: System, llama8b: ModelSpec) -> None:
    """vLLM admits on demand, so its saturation estimate and the plan the search makes (kv_limited_batch) both seat
    kv / (I + O/2) requests (estimate.held_tokens; the plan had capped at kv / (I + O), and a closed loop of the
    estimate's batch had left a quarter of its users waiting). Users beyond those slots wait for one."""
    eng = engine_profile(catalog, "vllm", h100.chip.family)
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(2048,))
    est = estimate(llama8b, h100, eng, cand, "bf16", "bf16", 4096.0, 4096.0, 8192)
    slots = np.floor(est.kv_tokens[0] / 6144.0)
    assert est.batch[0] == slots == batch_slots(est)[0]
    seated = closed_loop(llama8b, h100, eng, est, "bf16", "bf16", 4096.0, 4096.0, est.batch)
    crowded = closed_loop(llama8b, h100, eng, est, "bf16", "bf16", 4096.0, 4096.0, 2.0 * est.batch)
    assert crowded.ttft[0] > 10.0 * seated.ttft[0]


def test_the_batch_fixed_point_is_solved_not_approached() -> None:
    """B = need t(B) for an affine step t(B) = t0 + s B has B* = need t0 / (1 - need s). At need s = 0.9 eight plain
    iterations from B = 1 leave 0.9^8 = 43% of the gap (the TPOT read there was up to a third fast); the bracketed
    solve is exact for an affine map, and keeps B = 1 and B = top where the load needs no more or no less."""
    from chipwise.serve.operating import _fixed_point

    t0, s = 0.02, 1e-4
    need = np.array([0.9 / s, 0.5 / s, 10.0, 1e6])  # g' = 0.9, 0.5; a trickle; more than saturation carries
    top = np.full(4, 1e5)

    def g(b: np.ndarray) -> np.ndarray:
        return np.clip(need * (t0 + s * b), 1.0, top)

    b = _fixed_point(g, top)
    exact = need[:2] * t0 / (1.0 - need[:2] * s)
    assert b[:2] == pytest.approx(exact, rel=1e-9)
    assert (b[2], b[3]) == (1.0, 1e5)
    plain = np.ones(4)
    for _ in range(8):
        plain = g(plain)
    assert plain[0] < 0.6 * exact[0]  # what the plain iteration read


def test_max_rate_equals_its_grid_and_bisection_one_load_at_a_time(
    catalog: Catalog, h100: System, llama8b: ModelSpec
) -> None:
    """The search prices every candidate at all grid loads in one vectorised call, then at the loads a four-step
    bisection would try; the answer is the one a load-at-a-time search gives: per candidate the highest load that
    meets the SLO, to 1/160 of its capacity."""
    from chipwise.planner.serving_choice import RATE_BISECTIONS, UTILISATIONS, ShapeQuery, _slo_ok, max_rate

    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(16, 64, 256))
    est = estimate(llama8b, h100, eng, cand, "fp8", "fp8", INP, OUT, 8192)
    targets = {"ttft_p99": 0.5, "tpot_p99": 0.02}
    best, _, _ = max_rate(ShapeQuery(llama8b, h100, eng, "fp8", "fp8", INP, OUT), est, targets)
    cap = np.minimum(est.throughput / OUT, 1.0 / est.prefill_work_s)
    for i in range(len(cand)):
        one = est.take(np.array([i]))

        def ok(u: float, one: Estimate = one, i: int = i) -> bool:
            op = at_rate(llama8b, h100, eng, one, "fp8", "fp8", INP, OUT, np.array([u * cap[i]]))
            return bool((one.fits & _slo_ok(targets, op, OUT) & np.isfinite(op.tpot))[0])

        lo = max((u for u in UTILISATIONS if ok(float(u))), default=0.0)
        hi = min(lo + UTILISATIONS[0], MAX_UTILISATION)
        for _ in range(RATE_BISECTIONS):
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        assert best[i] == pytest.approx(lo * cap[i], rel=1e-9)
    assert (best > 0).any() and (best < 0.95 * cap).any()


def test_searched_tensor_parallelism_splits_the_attention_heads(catalog: Catalog, hw: Hardware) -> None:
    """A TPU v7 pod's domain holds thousands of ranks, but Llama 3.1 70B has 64 attention heads and 8 KV heads: the
    search offers no tp a stated plan would refuse (TP128 and up), while DeepSeek-V3 under attention DP, whose
    attention each rank runs whole, still spreads past its 128 heads."""
    llama = load_model(catalog, "llama-3.1-70b")
    cand = enumerate_candidates(llama, topology_of(hw.system("tpu-v7")))
    assert max(cand.tp.tolist()) == 64
    assert all(not llama.attention.tp_problem(int(tp)) for tp in cand.tp)
    deepseek = load_model(catalog, "deepseek-v3")
    wide = enumerate_candidates(deepseek, topology_of(hw.system("tpu-v7")))
    assert (wide.tp[wide.adp == 0] <= 128).all() and (wide.tp[wide.adp == 1] > 128).any()


def test_a_prompt_longer_than_the_token_budget_for_a_one_token_answer_fits(
    catalog: Catalog, h100: System, llama8b: ModelSpec
) -> None:
    """An 8,192-token prompt for a 1-token answer (embedding, classification, prefill-only jobs) under an 8,192-token
    budget: no sequence is left decoding beside the prompts, yet the shape fits and serves one request at a time."""
    eng = engine_profile(catalog, "trtllm", "hopper")
    cand = enumerate_candidates(llama8b, topology_of(h100), 1, {"max_batch": 64})
    est = estimate(llama8b, h100, eng, cand, "bf16", "bf16", 8192.0, 1.0, 8192)
    assert est.fits.all() and (est.batch >= 1).all() and (est.throughput > 0).all()


def test_a_replica_offered_nothing_shares_no_slots(catalog: Catalog) -> None:
    """Qwen3-235B at 1,000 req/s on B200s: shapes given no share of the load had the fleet's slots pooled over
    fleet_rate / 1e-300 replicas, and Erlang C overflowed (a RuntimeWarning on stderr) on the way to a zero wait."""
    import warnings

    from chipwise.planner.serving_plan import plan_serving
    from chipwise.workload.load import Load

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = plan_serving(
            catalog, "qwen3-235b-a22b", ["b200"], Load("rate", rate=1000.0), 1000, 200,
            {"ttft_p99": 2.0, "tpot_p99": 0.05}, verify=0,
        )  # fmt: skip
    assert report["results"]


def test_a_fleet_of_a_billion_requests_a_second_pools_without_overflow(
    catalog: Catalog, h100: System, llama8b: ModelSpec, est: Estimate
) -> None:
    """`plan serve --rate 1e9` printed an overflow warning: the pooled replica count divided the fleet rate by a
    1e-300 floor for shapes offered nothing (1e9 / 1e-300 > 1.8e308). A shape offered nothing pools with none, and
    one offered a share pools with fleet / share replicas."""
    import warnings

    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    lam = np.where(np.arange(est.throughput.size) == 0, 0.0, 0.5 * est.throughput / OUT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        op = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam, None, 1e9)
        alone = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    assert np.all(np.isfinite(op.ttft))
    assert np.all(op.ttft[1:] <= alone.ttft[1:])  # pooling a fleet's slots and encoders never waits longer


def test_the_load_searches_price_an_estimate_on_one_device_and_shapes(
    catalog: Catalog, h100: System, llama8b: ModelSpec
) -> None:
    """Every load search of one estimate on one system and engine reuses its device, topology and shapes, so what a
    Shapes prices once (token_costs' terms) is priced once per estimate, not once per search; the answers are those
    of a fresh estimate, to the bit."""
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(16, 64))
    est = estimate(llama8b, h100, eng, cand, "fp8", "fp8", INP, OUT, 8192)
    first = est.on(h100, eng)
    assert est.on(h100, eng) == first and first[2] is est.on(h100, eng)[2]
    lam = 0.5 * est.throughput / OUT
    a = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    terms = len(first[2].memo)
    b = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, lam)
    assert len(first[2].memo) == terms > 0  # nothing priced again
    fresh = estimate(llama8b, h100, eng, cand, "fp8", "fp8", INP, OUT, 8192)
    c = at_rate(llama8b, h100, eng, fresh, "fp8", "fp8", INP, OUT, lam)
    for x, y, z in ((a.tpot, b.tpot, c.tpot), (a.ttft_p99, b.ttft_p99, c.ttft_p99)):
        assert np.array_equal(x, y) and np.array_equal(x, z)
    assert est.take(np.array([0])).on(h100, eng)[2] is not first[2]  # a subset has shapes of its own


@pytest.mark.parametrize("prompt", [1024, 20000])
def test_a_lone_prompt_gains_nothing_from_pipeline_stages(
    catalog: Catalog, hw: Hardware, llama70b: ModelSpec, prompt: int
) -> None:
    """A prompt's chunk is one micro-batch: it passes the pp stages in turn, so alone it takes the whole model's
    time (plus the hand-offs), not 1/pp of it. It had read 68.9 / 39.1 / 24.3 ms at PP1 / PP2 / PP4 for Llama-3.1-70B
    on MI300X, and `plan serve` chose PP4 to meet a 100 ms TTFT. The simulator (StepModel.prompt_alone) and the
    estimate (serve.estimate) agree. Each micro-batch is scheduled in a max_tokens budget of its own, so a full
    pipeline of several requests' chunks still carries pp times one stage's work (MLPerf Llama-3.1-405B Offline on
    B200 TP2 PP2 read -34% with the bound and one budget a round, -7.5% with a budget a micro-batch)."""
    system = hw.system("mi300x")
    eng = engine_profile(catalog, "vllm", system.chip.family)
    chunk = 8192
    alone, steps = {}, {}
    for pp in (1, 2, 4):
        plan = ReplicaPlan(tp=8, pp=pp, max_batch=32, max_tokens=chunk)
        setup = setup_replica(catalog, llama70b, system, "vllm", plan, float(prompt), 256.0)
        assert setup.token_budget == pp * chunk and setup.policy().rank_tokens == (chunk if pp > 1 else 0)
        steps[pp] = setup.steps
        alone[pp] = steps[pp].prompt_alone(prompt, chunk)
        cand = enumerate_candidates(llama70b, topology_of(system), None, {"tp": 8, "pp": pp, "ep": 1, "max_batch": 32})
        est = estimate(llama70b, system, eng, cand, "bf16", "bf16", float(prompt), 256.0, chunk)
        assert float(est.prefill_s[0]) == pytest.approx(alone[pp], rel=1e-6)
    assert alone[1] <= alone[2] <= alone[4] < 1.1 * alone[1]
    # a round of pp chunks (one per micro-batch, each scheduled in a budget of its own) takes about one chunk's
    # pass: the pipeline is full
    full = steps[4].prompt_time(4 * 1024, 4, 0.0, 4 * 1024 * 1025 / 2, largest=1024, largest_pairs=1024 * 1025 / 2)
    one = steps[4].prompt_time(1024, 1, 0.0, 1024 * 1025 / 2, largest=1024, largest_pairs=1024 * 1025 / 2)
    assert full < 1.5 * one


# The estimate's pipelined step of a batch too small to fill the stages (serve.steady_step.step_time): its micro-batches
# pass every stage in turn, so a second stage adds its hand-off and takes nothing off a lone sequence's token.


PP = (1, 2, 4)


def _hand_offs(catalog: Catalog, hw: Hardware, model: ModelSpec, chip: str, engine: str) -> list[float]:
    """What PP1, PP2 and PP4 hand on for one token: pp - 1 hand-offs of its activations."""
    system = hw.system(chip)
    eng = engine_profile(catalog, engine, system.chip.family).on_host(system.host_overhead)
    shapes = Shapes.of(np.full(len(PP), 8), np.asarray(PP))
    dev = serving_device(device_of(system), eng)
    one = token_costs(model, dev, topology_of(system), eng, "bf16", shapes, 1.0)["pp_comm"]
    return [float(v) for v in one * (np.asarray(PP) - 1.0)]


def _tp8(
    catalog: Catalog,
    hw: Hardware,
    model: ModelSpec,
    chip: str,
    engine: str,
    inp: float,
    out: float,
    max_batch: int = 1,
    decode_only: bool = False,
) -> Estimate:
    """TP8 PP1, PP2 and PP4 replicas of `model` on `chip`, bf16, with room for `max_batch` sequences."""
    system = hw.system(chip)
    eng = engine_profile(catalog, engine, system.chip.family)
    n = len(PP)
    one = np.ones(n, dtype=np.int64)
    cand = Candidates(8 * one, np.asarray(PP), one, 0 * one, max_batch * one, one)
    return estimate(model, system, eng, cand, "bf16", "bf16", inp, out, 8192, decode_only=decode_only)


def test_a_lone_decode_pays_the_hand_offs_and_gains_nothing(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """Llama 3.1 8B on H100 TP8, one sequence in a decode pool (no prompt to encode): each extra stage adds one
    hand-off of a token's 8 KiB of activations (4,096 x 2 bytes) to the next node, about 10 us, and nothing else
    (the stages' weights, all-reduces and per-layer costs add up to one stage's). The token was priced as half a
    token on each of two stages: PP2 read 8.2 us above PP1, 2 us short of its hand-off."""
    est = _tp8(catalog, hw, llama8b, "h100-sxm", "trtllm", 1024.0, 256.0, decode_only=True)
    assert est.batch.tolist() == [1.0, 1.0, 1.0]
    hands = _hand_offs(catalog, hw, llama8b, "h100-sxm", "trtllm")
    assert hands[1] > 5e-6
    assert (est.step - est.step[0]).tolist() == pytest.approx(hands, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(
    ("model", "chip", "engine", "inp", "out"),
    [
        ("llama-3.1-8b", "h100-sxm", "trtllm", 1024.0, 256.0),  # the front that had opened with TP8 PP2
        ("llama-3.1-8b", "mi300x", "vllm", 1024.0, 256.0),
        ("llama-3.1-8b", "trn2", "neuron", 8192.0, 64.0),  # the prompt iterations' fixed costs over a larger budget
        ("gpt-oss-120b", "h100-sxm", "trtllm", 8192.0, 64.0),
    ],
)
def test_a_second_stage_never_prices_one_sequence_faster(
    catalog: Catalog, hw: Hardware, model: str, chip: str, engine: str, inp: float, out: float
) -> None:
    """With its prompts, one sequence's step on TP8 PP2 and PP4 is at least PP1's plus a token's hand-offs, so
    the Pareto front opens with PP1, not with a 16-chip TP8 PP2 point at half its tokens/s per chip. A prompt
    iteration of one sequence is one micro-batch with one token budget: it was priced as a filled pipeline of two
    budgets (16,384 tokens where one micro-batch takes 8,192), each stage working on half, which put PP2 5.2 us
    below PP1 on H100 (2.520 against 2.525 ms; now 2.536), and 3.7 ms below it on trn2 for 8K-token prompts
    (15.6 against 19.4 ms)."""
    spec = load_model(catalog, model)
    est = _tp8(catalog, hw, spec, chip, engine, inp, out)
    assert est.fits.all()
    hands = _hand_offs(catalog, hw, spec, chip, engine)
    assert est.step[1] >= est.step[0] + 0.9 * hands[1]
    assert est.step[2] >= est.step[1] + 0.9 * (hands[2] - hands[1])
    tput = est.throughput / est.chips
    assert pareto(tput, est.step).tolist() == [0]  # PP1 is faster and twice as productive a chip


def test_a_filled_pipeline_is_priced_as_before(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """At 64 sequences every stage runs PP micro-batches, each with its own budget, and overlaps them: PP2 and
    PP4 step faster than PP1 (5.31, 4.16 and 3.68 ms, as before)."""
    est = _tp8(catalog, hw, llama8b, "h100-sxm", "trtllm", 1024.0, 256.0, max_batch=64)
    assert est.batch.tolist() == [64.0, 64.0, 64.0]
    assert est.step[2] < est.step[1] < est.step[0]


def test_prompts_that_arrive_together_share_their_chunks_iterations(
    catalog: Catalog, hw: Hardware, llama70b: ModelSpec
) -> None:
    """Llama-3.1-70B on a Gaudi 3 TP8 replica (vLLM, a 2,048-token budget) at 85% of its capacity, 2,000-token
    prompts: each runs as a chunk of the room beside the decodes and a remainder, and prompts arriving meanwhile
    share those iterations, so a joined iteration carries the iterations' share of every prompt's tokens. Pricing
    a lone prompt's two chunks (1,000 tokens a joined iteration on average, where the simulated ones ran 1,542)
    dropped a third of the prompt work: the TPOT estimate read 25.5 ms where the simulation runs 38.7 (now 34.9)."""
    op, sim, _ = _against_simulation(
        catalog, llama70b, hw.system("gaudi3"), "vllm", "bf16", (8, 512), (2000, 400), 0.85
    )
    assert op.tpot[0] == pytest.approx(sim["tpot_s"]["p50"], rel=0.12)


def test_the_prompt_tokens_a_step_starts_are_all_encoded(catalog: Catalog, hw: Hardware) -> None:
    """However the prompts join the iterations (chunked or whole, arriving alone or together), the share of the
    iterations they join times the prompt tokens a joined one carries is the prompt tokens that start a step: a
    2,000-token prompt over a 1,898-token room is a full chunk and a remainder, and at 750 tokens a step
    (x = 750 / 2,000 x 2 = 0.75 joined iterations a step, 1 - e^-0.75 = 0.528 of them once they overlap) a joined
    iteration carries 1,420 tokens on average, not the lone prompt's 1,000."""
    from chipwise.serve.steady_step import PromptIterations, _prompt_joins

    eng = engine_profile(catalog, "vllm", hw.system("gaudi3").chip.family)
    assert eng.chunked_prefill and bool(eng.mixes(np.zeros(1, dtype=np.int64)))
    shapes = Shapes.of(1)
    one = np.ones(1)
    prompts = PromptIterations(2000.0 * one, 2048.0 * one, one, 0.0 * one, 2048.0)
    started = np.asarray([750.0])
    joins = _prompt_joins(eng, shapes, prompts, started, np.asarray([150.0]), one, packed=False)
    share = 1.0 - np.exp(-0.75)
    assert joins.share[0] == pytest.approx(share)
    assert bool(joins.chunked[0]) and joins.pieces[0] == 2.0
    carried = (joins.first[0] + joins.last[0]) / 2.0
    assert carried == pytest.approx(750.0 / share)
    assert joins.share[0] * carried == pytest.approx(750.0)


def test_a_lone_sequence_decodes_beside_the_prompts_that_arrive(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """Poisson arrivals come at the load's rate whoever is decoding: at 30% of an H100's load of Llama-3.1-8B with
    16,000-token prompts (fp8) the mean batch is under one sequence, and the estimate had priced its iterations with
    no prompt (the batch less the sequence itself: 4.2 ms) where the simulated ones carry those that arrive (5.7;
    the estimate now 5.7)."""
    op, sim, _ = _against_simulation(
        catalog, llama8b, hw.system("h100-sxm"), "trtllm", "fp8", (1, 256), (16000, 256), 0.3
    )
    assert op.tpot[0] == pytest.approx(sim["tpot_s"]["p50"], rel=0.1)


def test_a_routed_fleet_evens_out_its_batches(catalog: Catalog, hw: Hardware, llama70b: ModelSpec) -> None:
    """A least-loaded router over 20 GB300 replicas of Llama-3.1-70B (8,192 / 512 tokens, fp8) evens their batches
    out, so the slowest requests decode in barely larger batches than the mean: a lone replica's spread had read a
    TPOT p99 of 39.9 ms where the fleet runs 34.8 (now 33.2; a lone replica's 42.4)."""
    op, sim, lone = _against_simulation(
        catalog, llama70b, hw.system("gb300"), "trtllm", "fp8", (1, 128), (8192, 512), 0.55, replicas=20, requests=2000
    )
    assert op.tpot_p99[0] == pytest.approx(sim["tpot_s"]["p99"], rel=0.1)
    assert lone.tpot_p99[0] > op.tpot_p99[0]


def _under_lognormal_lengths(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    precision: str,
    shape: tuple[int, int],
    means: tuple[int, int],
    share: float,
) -> tuple[Callable[..., Operating], Estimate, Estimate, dict[str, Any], Any]:
    """One replica shape (TP, batch limit) at `share` of its capacity under lognormal prompts and answers of `means`
    (a standard deviation of three quarters of each, at most 8 and 5 times it): the estimate at a load (a function
    of the Estimate, passing at_rate's keywords on), the estimate with the 99th-percentile prompt and with the mean
    one alone, the simulation of 3,000 requests and its job."""
    from chipwise.serve.simulate import Pool, ServingSetup, run_job
    from chipwise.workload.lengths import read_length
    from chipwise.workload.load import Load
    from chipwise.workload.serving_job import ServingJob

    mean_in, mean_out = means
    inp = read_length(f"lognormal:mean={mean_in},std={0.75 * mean_in:g},max={8 * mean_in}", "--input-tokens", "")
    out = read_length(f"lognormal:mean={mean_out},std={0.75 * mean_out:g},max={5 * mean_out}", "--output-tokens", "")
    lengths = (inp.expected, out.expected)
    eng, cand, replica = _one_shape(catalog, model, system, engine, precision, shape, lengths, 9 * mean_in)
    args = (model, system, eng, cand, precision, precision, inp.expected, out.expected, eng.max_tokens)
    est, mean_only = estimate(*args, tail=inp.quantile(0.99)), estimate(*args)
    rate = share * float(est.throughput[0]) / out.expected

    def at(e: Estimate, **kw: Any) -> Operating:
        return at_rate(
            model, system, eng, e, precision, precision, inp.expected, out.expected, np.asarray([rate]), **kw
        )

    job = ServingJob(model, inp, out, Load("rate", rate=rate), 3000)
    sim, _ = run_job(job, ServingSetup((Pool(replica, 1),)))
    return at, est, mean_only, sim, job


def test_drawn_prompt_lengths_lengthen_the_first_tokens_tail(
    catalog: Catalog, hw: Hardware, llama70b: ModelSpec
) -> None:
    """Llama-3.1-70B on an H100 TP4 replica (TensorRT-LLM, 128 slots) at 60% of its capacity, lognormal prompts of
    1,000 tokens on average (std 750, at most 8,000) and answers of 200 (std 150, at most 1,000): the 99th-percentile
    prompt's own prefill (169 ms, the mean prompt's 66) and a queue of unequal prompts set the first tokens' tail.
    Priced at the mean prompt alone, the estimate read a TTFT p99 of 280 ms where the simulation reads 352; 346
    now."""
    at, est, mean_only, sim, _ = _under_lognormal_lengths(
        catalog, llama70b, hw.system("h100-sxm"), "trtllm", "fp8", (4, 128), (1000, 200), 0.6
    )
    assert est.prefill_p99_s[0] > 2.0 * est.prefill_s[0] and mean_only.tail_prefill_s is None
    ops = [at(e) for e in (est, mean_only)]
    assert ops[0].ttft_p99[0] == pytest.approx(sim["ttft_s"]["p99"], rel=0.1)
    assert ops[1].ttft_p99[0] < 0.85 * sim["ttft_s"]["p99"]
    assert ops[0].tpot[0] == ops[1].tpot[0]  # the tail prompt moves the first token only


def test_a_queue_of_unequal_prompts_waits_by_pollaczek_khinchine(est: Estimate) -> None:
    """Prefill times lognormal with sigma 0.5 (a 99th percentile exp(2.326 x 0.5 - 0.125) times the mean): a queue
    of them waits 1 + CV^2 = e^0.25 times as long as one of equal prompts; equal prompts, once."""
    ratio = np.exp(Z99 * 0.5 - 0.125)
    drawn = replace(est, tail_prefill_s=est.prefill_s * ratio)
    assert drawn.prefill_variability == pytest.approx(np.exp(0.25))
    assert np.all(est.prefill_variability == 1.0) and np.all(est.prefill_p99_s == est.prefill_s)


@pytest.mark.parametrize(
    ("system", "model", "shape", "lengths"),
    [("h200", "llama-3.1-70b", (2, 256), (2000, 500)), ("b200", "llama-3.1-8b", (1, 256), (4000, 300))],
)
def test_the_slowest_sequences_are_those_the_prompts_join(
    catalog: Catalog, hw: Hardware, system: str, model: str, shape: tuple[int, int], lengths: tuple[int, int]
) -> None:
    """At 90% of a replica's capacity (TensorRT-LLM, fp8, fixed lengths) the slowest 1% of sequences are those whose
    lives more prompts joined, and each such life lasts longer, so more arrive in it (serve.decode_tail). A batch
    drawn 2.33 standard deviations larger, with the prompts in proportion, had read the TPOT p99 18% (Llama-3.1-70B
    on H200 TP2: 61.5 ms against 74.9 simulated) and 24% (Llama-3.1-8B on B200: 18.4 against 24.0) under the
    simulation; now 77.8 and 24.5."""
    spec = load_model(catalog, model)
    op, sim, _ = _against_simulation(catalog, spec, hw.system(system), "trtllm", "fp8", shape, lengths, 0.9)
    assert op.tpot_p99[0] == pytest.approx(sim["tpot_s"]["p99"], rel=0.1)


def test_drawn_answer_lengths_widen_the_tpot_tail(catalog: Catalog, hw: Hardware, llama70b: ModelSpec) -> None:
    """Llama-3.1-70B on a Gaudi 3 TP8 replica (vLLM, 512 slots) at 60% of its capacity, lognormal prompts of 2,000
    tokens (std 1,500, at most 16,000) and answers of 400 (std 300, at most 2,000): short answers average few steps,
    so their TPOT spreads wider. The estimate had read the TPOT p99 at 23.4 ms against 29.5 simulated; priced as a
    mixture over the answer lengths it reads 27.2 (25.7 as if every answer were of the mean length)."""
    at, est, _, sim, job = _under_lognormal_lengths(
        catalog, llama70b, hw.system("gaudi3"), "vllm", "bf16", (8, 512), (2000, 400), 0.6
    )
    answers = np.asarray(job.answer_spread(answer_probabilities()))
    assert answers.size == 32 and float(np.mean(answers)) == pytest.approx(1.0, rel=0.02)
    drawn, mean_only = at(est, answers=answers), at(est)
    assert drawn.tpot_p99[0] == pytest.approx(sim["tpot_s"]["p99"], rel=0.12)
    assert drawn.tpot_p99[0] > mean_only.tpot_p99[0] and drawn.tpot[0] == mean_only.tpot[0]
