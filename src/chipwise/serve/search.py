"""Serving plan search: every candidate replica shape (TP, PP, EP, attention-DP, batch limit) of a system priced in
one vectorised pass with a steady-state estimate, the throughput-latency Pareto front, and the smallest fleet
that meets a latency SLO.

Steady state of a replica running B sequences of I prompt and O output tokens (continuous batching with chunked
prefill: each iteration also carries the prompts of the B / O requests that start per iteration):
    T = B (1 + I / O)                     tokens per iteration (capped by the token budget: B <= max_tokens / (1 + I/O))
    t(B) = t_step + G(T) + H(B) + a B (I + O/2) + b B I^2 / (2 O)       (serve.iteration)
    X(B) = B / t(B)                       output tokens/s;    TPOT ~ t(B)
With speculative decoding (k drafted tokens, tau yielded per step) a step verifies B (k + 1) tokens, carries the
prompts of the B tau / O requests that start per step, runs k drafting passes over B tokens, and t(B) above is
that step's time / tau (the time per output token of a sequence).
B is bounded by max_batch and by the KV cache: B <= kv_tokens / (I + O) (reserve admission; I + O/2 on demand).
At an arrival rate of lambda requests/s a replica runs at the smallest B with X(B) >= lambda O (Little's law); its
TTFT is the prefill of I tokens in chunks of the budget plus an M/M/1-like wait t(B) rho / (1 - rho),
rho = lambda O / X(B_max), and the p99 is taken as three times the mean (exponential tail). The estimates rank
candidates; the simulator then measures the chosen ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.serve.engine import EngineProfile, schedulers, serving_device, token_budget
from chipwise.serve.iteration import (
    Shapes,
    context_coefficient,
    eager_launches,
    lm_head_cost,
    pair_coefficient,
    prefill_pairs,
    token_costs,
)
from chipwise.serve.kvcache import replica_memory
from chipwise.serve.sim.policies import bucket
from chipwise.serve.speculation import Drafting
from chipwise.workload.model import ModelSpec

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
TAIL_FACTOR = 3.0  # p99 / mean of an exponential-like waiting time (ln 100 / 1.5)
MAX_UTILISATION = 0.95
BATCH_Z99 = 2.33  # one-sided 99th percentile of a normal variate


#: Largest scale-up domain (ranks) that is one server, across which tensor and expert parallelism may be spread
#: over the network (an HGX or MI300X node of 8 GPUs; not a 72-GPU NVLink rack or a Trainium UltraServer).
MULTI_NODE_DOMAIN = 16


def powers_of_two(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


@dataclass(frozen=True)
class Candidates:
    """Replica shapes of one system, as parallel arrays."""

    tp: IntArray
    pp: IntArray
    ep: IntArray
    adp: IntArray
    max_batch: IntArray

    def __len__(self) -> int:
        return int(self.tp.size)

    def shapes(self) -> Shapes:
        return Shapes(self.tp, self.pp, self.ep, self.adp)

    def take(self, idx: IntArray) -> Candidates:
        return Candidates(self.tp[idx], self.pp[idx], self.ep[idx], self.adp[idx], self.max_batch[idx])


def enumerate_candidates(
    model: ModelSpec,
    topo: Topology,
    ranks_limit: int | None = None,
    fixed: dict[str, int] | None = None,
    batches: tuple[int, ...] = BATCHES,
) -> Candidates:
    """TP up to the scale-up domain (powers of two), PP in {1, 2, 4} beyond it, EP in {1, TP} and attention-DP for
    MoE models, each with every batch limit; knobs in `fixed` are held. MoE models on node-sized domains (at most
    MULTI_NODE_DOMAIN ranks) also try TP and EP over two and four domains (wide expert parallelism across nodes,
    as SGLang and DeepEP deploy DeepSeek on H100/H200 nodes)."""
    fixed = fixed or {}
    limit = ranks_limit or topo.domain_ranks * 4
    rows: list[tuple[int, int, int, int, int]] = []
    moe = model.moe
    tps = powers_of_two(min(topo.domain_ranks, limit))
    if moe is not None and topo.domain_ranks <= MULTI_NODE_DOMAIN:
        tps += [topo.domain_ranks * n for n in (2, 4) if topo.domain_ranks * n <= limit]
    tps = [fixed["tp"]] if "tp" in fixed else tps
    pps = [fixed["pp"]] if "pp" in fixed else [1, 2, 4]
    for tp in tps:
        for pp in pps:
            if tp * pp > limit or pp > model.layers:
                continue
            if pp > 1 and "pp" not in fixed and tp < min(topo.domain_ranks, limit):
                continue  # pipeline stages only once tensor parallelism fills the domain
            eps = [1]
            if moe is not None and tp > 1 and moe.experts % tp == 0:
                eps = [1, tp]
            if "ep" in fixed:
                eps = [fixed["ep"]]
            for ep in eps:
                adps = [0, 1] if (moe is not None and ep == tp and tp > 1) else [0]
                if "attention_dp" in fixed:
                    adps = [int(fixed["attention_dp"])]
                for adp in adps:
                    mbs = [fixed["max_batch"]] if "max_batch" in fixed else list(batches)
                    for mb in mbs:
                        rows.append((tp, pp, ep, adp, mb))
    if not rows:
        raise InfeasibleError("no replica shape fits the plan's fixed knobs. Fix: relax tp/pp/ep.")
    a = np.asarray(rows, dtype=np.int64)
    return Candidates(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4])


@dataclass(frozen=True)
class Estimate:
    """Steady-state estimates per candidate (arrays)."""

    cand: Candidates
    fits: NDArray[np.bool_]
    kv_tokens: Array
    batch: Array  # sequences running at saturation
    step: Array  # iteration time at that batch (s)
    throughput: Array  # output tokens/s per replica at saturation
    prefill_s: Array  # latency of one prompt alone (s)
    chips: Array  # chips per replica

    def take(self, idx: IntArray) -> Estimate:
        """The estimates of the candidates at `idx`."""
        return Estimate(
            self.cand.take(idx),
            self.fits[idx],
            self.kv_tokens[idx],
            self.batch[idx],
            self.step[idx],
            self.throughput[idx],
            self.prefill_s[idx],
            self.chips[idx],
        )


def _decode_context(eng: EngineProfile, inp: float, out: float) -> float:
    """The context a decode step attends over on average: the prompt and half the answer, padded to its
    power-of-two bucket on a static-shape engine (whose compiled graphs read the whole bucket; the last bucket is
    the compiled sequence length, taken as the request's)."""
    mean = inp + out / 2.0
    return float(bucket(int(mean), largest=math.ceil(inp + out))) if eng.static_batch else mean


def _stage_time(
    model: ModelSpec, dev: Device, topo: Topology, eng: EngineProfile, weight: str, shapes: Shapes, tokens: Array
) -> Array:
    """pp stages of token-proportional work for `tokens` tokens, with the pipeline hand-offs."""
    pp = shapes.pp.astype(np.float64)
    g = token_costs(model, dev, topo, eng, weight, shapes, tokens / pp)
    stage = sum(v for k, v in g.items() if k != "pp_comm")
    return np.asarray(pp * stage + (pp - 1.0) * g["pp_comm"], dtype=np.float64)


def _step_time(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    shapes: Shapes,
    batch: Array,
    inp: float,
    out: float,
    drafting: Drafting | None = None,
) -> Array:
    """Seconds per output token of a sequence in a steady iteration of `batch` sequences (the iteration's time,
    or with speculative decoding the verification step's time / tau), the prompts of the requests that start
    per iteration spread over every iteration."""
    pp = shapes.pp.astype(np.float64)
    k, tau = (drafting.spec.draft_tokens, drafting.spec.tokens_per_step) if drafting else (0, 1.0)
    fed = batch * (k + 1.0)  # positions the target decodes (verifies)
    started = batch * tau * inp / out  # prompt tokens of the requests that start per iteration
    a = context_coefficient(model, dev, shapes, kv_precision, inp + out)
    b = pair_coefficient(model, dev, shapes, inp, kv_precision)
    t = (
        eng.host_step_s
        + eng.host_sequence_s * fed
        + _stage_time(model, dev, topo, eng, weight_precision, shapes, fed + started)
        + pp * lm_head_cost(model, dev, shapes, fed / pp)
        + a * batch * _decode_context(eng, inp, out)
        + b * started * inp / 2.0
    )
    if drafting is not None:
        d = drafting.model
        ad = context_coefficient(d, dev, shapes, kv_precision, inp + out)
        t = t + k * (
            _stage_time(d, dev, topo, eng, weight_precision, shapes, batch)
            + pp * lm_head_cost(d, dev, shapes, batch / pp)
            + ad * batch * _decode_context(eng, inp, out)
        )
        t = t + _stage_time(d, dev, topo, eng, weight_precision, shapes, started)
    return np.asarray(t / tau, dtype=np.float64)


def estimate(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    cand: Candidates,
    weight_precision: str,
    kv_precision: str,
    inp: float,
    out: float,
    max_tokens: int,
    drafting: Drafting | None = None,
) -> Estimate:
    """Price every candidate at saturation (B = min(max_batch, KV capacity, token budget))."""
    eng = eng.on_host(system.host_overhead)
    dev = serving_device(device_of(system), eng)
    topo = topology_of(system)
    shapes = cand.shapes()
    mem = replica_memory(
        model,
        dev,
        eng,
        shapes,
        weight_precision,
        kv_precision,
        max_tokens,
        cand.max_batch.astype(np.float64),
        inp + out,
    )
    per_request = inp + out if eng.admission == "reserve" else inp + out / 2.0
    b_kv = np.floor(mem.kv_tokens / max(per_request, 1.0))
    budget = max_tokens * schedulers(eng, cand.tp, cand.adp)  # each attention-DP rank's own, where the engine's are
    b_budget = np.floor(budget / (1.0 + inp / out)) if eng.mixed_batching else np.inf
    batch = np.maximum(np.minimum(np.minimum(cand.max_batch.astype(np.float64), b_kv), b_budget), 0.0)
    fits = (mem.kv_tokens >= inp + out) & (batch >= 1)
    b = np.maximum(batch, 1.0)
    chunk = float(min(max_tokens, inp)) if eng.chunked_prefill else float(inp)
    step = _step_time(model, dev, topo, eng, weight_precision, kv_precision, shapes, b, inp, out, drafting)
    # a prompt longer than the budget runs in chunks, each attending to the chunks before it (a compiled-shape
    # engine pads each to its bucket): the simulator's lone-prompt time, StepModel.prompt_alone
    chunks = math.ceil(inp / chunk)
    coef = pair_coefficient(model, dev, shapes, inp, kv_precision)
    floor = eager_launches(model, dev.chip, weight_precision, shapes) * eng.host_eager_launch_s
    device = np.zeros(b.shape)
    for start in (k * chunk for k in range(chunks)):
        run = min(chunk, inp - start)
        run = float(bucket(math.ceil(run), largest=math.ceil(inp + out))) if eng.static_batch else run
        work = _stage_time(model, dev, topo, eng, weight_precision, shapes, np.full(b.shape, run))
        work = work + coef * prefill_pairs(start, run)
        device = device + (np.maximum(work, floor) if eng.eager_launch_s > 0 else work)
    last = eng.host_sequence_s + shapes.pp * lm_head_cost(model, dev, shapes, 1.0 / shapes.pp)  # samples once
    prefill_s = (eng.host_step_s + eng.host_prefill_s) * chunks + device + last
    return Estimate(
        cand=cand,
        fits=np.asarray(fits),
        kv_tokens=np.asarray(mem.kv_tokens),
        batch=np.where(fits, batch, 0.0),
        step=step,
        throughput=np.where(fits, b / step, 0.0),
        prefill_s=np.asarray(prefill_s, dtype=np.float64),
        chips=np.asarray(cand.tp * cand.pp / dev.cores_per_chip, dtype=np.float64),
    )


@dataclass(frozen=True)
class Operating:
    """A candidate at a given per-replica load: batch, TPOT, TTFT (mean and p99 estimates), utilisation."""

    batch: Array
    tpot: Array
    tpot_p99: Array
    ttft: Array
    ttft_p99: Array
    rho: Array


def at_rate(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    est: Estimate,
    weight_precision: str,
    kv_precision: str,
    inp: float,
    out: float,
    rate_per_replica: Array,
    drafting: Drafting | None = None,
) -> Operating:
    """Where each candidate runs at `rate_per_replica` requests/s: the smallest batch that carries it (every
    compiled slot on a static-batch engine). TTFT adds two waits: for the decode step in flight (M/M/1-like in the
    replica's utilisation) and for the prompts ahead in the prefill queue (M/D/1 in the prefill utilisation
    `rate x prefill time`, which the simulator shows dominates prompt-heavy loads)."""
    dev = serving_device(device_of(system), eng)
    topo = topology_of(system)
    shapes = est.cand.shapes()
    lam = np.asarray(rate_per_replica, dtype=np.float64)
    need = lam * out  # output tokens/s
    rho = np.where(est.throughput > 0, need / np.maximum(est.throughput, 1e-12), np.inf)
    top = np.maximum(est.batch, 1.0)
    if eng.static_batch:
        b = top
    else:  # fixed point B = need * t(B), a few iterations from B = 1
        b = np.ones_like(est.batch)
        for _ in range(8):
            t = _step_time(model, dev, topo, eng, weight_precision, kv_precision, shapes, b, inp, out, drafting)
            b = np.clip(need * t, 1.0, top)
    tpot = _step_time(model, dev, topo, eng, weight_precision, kv_precision, shapes, b, inp, out, drafting)
    # a request's TPOT follows the batch it decodes in; with Poisson arrivals the batch is Poisson-like around
    # its mean, so the slowest 1% of requests decode in a batch about 2.33 standard deviations larger
    b99 = np.minimum(b + BATCH_Z99 * np.sqrt(b), top)
    tpot99 = _step_time(model, dev, topo, eng, weight_precision, kv_precision, shapes, b99, inp, out, drafting)
    r = np.minimum(rho, MAX_UTILISATION)
    rho_p = lam * est.prefill_s
    rp = np.minimum(rho_p, MAX_UTILISATION)
    wait = tpot * r / (1.0 - r) + rp * est.prefill_s / (2.0 * (1.0 - rp))
    if eng.adp_balance_timeout_iters > 0:  # attention-DP balancing: a prompt waits for one per rank (or the timeout)
        ranks = est.cand.tp.astype(np.float64)
        held = (est.cand.adp > 0) & (b >= ranks)
        gather = (ranks - 1.0) / (2.0 * np.maximum(lam, 1e-12))
        wait = wait + np.where(held, np.minimum(gather, eng.adp_balance_timeout_iters * tpot), 0.0)
    first = est.prefill_s + tpot + eng.host_request_s  # a lone prompt's first token, the front end included
    ttft = first + wait
    ttft_p99 = first + TAIL_FACTOR * wait
    over = (rho >= MAX_UTILISATION) | (rho_p >= MAX_UTILISATION)
    return Operating(
        batch=b,
        tpot=np.where(over, np.inf, tpot),
        tpot_p99=np.where(over, np.inf, tpot99),
        ttft=np.where(over, np.inf, ttft),
        ttft_p99=np.where(over, np.inf, ttft_p99),
        rho=rho,
    )


def pareto(throughput: Array, latency: Array) -> NDArray[np.int64]:
    """Indices of the points no other point beats in both higher throughput and lower latency (by latency)."""
    order = np.argsort(latency, kind="stable")
    keep: list[int] = []
    best = -math.inf
    for i in order:
        if not math.isfinite(float(latency[i])) or throughput[i] <= 0:
            continue
        if throughput[i] > best:
            keep.append(int(i))
            best = float(throughput[i])
    return np.asarray(keep, dtype=np.int64)


def best_throughput_shape(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    ranks: int,
    typical_prompt: float,
    typical_output: float,
) -> tuple[int, int, bool]:
    """(tp, ep, attention DP) of the one-stage replica shape with the most output tokens/s per chip at
    saturation within `ranks` ranks (what a throughput benchmark's submitter picks when its plan is not stated),
    at the engine's batch limit and token budget."""
    topo = topology_of(system)
    limit = min(ranks, topo.domain_ranks)
    cand = enumerate_candidates(model, topo, limit, {"pp": 1, "max_batch": eng.max_batch})
    budget = token_budget(eng, typical_prompt)
    est = estimate(model, system, eng, cand, weight_precision, kv_precision, typical_prompt, typical_output, budget)
    if not est.fits.any():
        raise InfeasibleError(
            f"{model.name} does not fit {ranks} ranks of {system.chip.id} with a usable KV cache. "
            "Fix: use more chips or a narrower precision."
        )
    i = int(np.argmax(np.where(est.fits, est.throughput / np.maximum(est.chips, 1e-12), -1.0)))
    return int(cand.tp[i]), int(cand.ep[i]), bool(cand.adp[i])
