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
B is bounded by max_batch and by the KV cache: B <= kv_tokens / (I + O) (reserve admission; I + O/2 on demand:
held_tokens).
t(B) is the mean over iterations that carry prompt tokens and iterations that do not (_step_time): an
iteration's time is not linear in its tokens, so spreading the prompts evenly would under-estimate it.
At an arrival rate of lambda requests/s a replica runs at the smallest B with X(B) >= lambda O (Little's law); its
TTFT is the prefill of I tokens in chunks of the budget plus the waits for the iteration in flight, the prompts
ahead (M/D/1) and a free batch slot (M/D/c), each with a mean and a 99th percentile (at_rate). The estimates
rank candidates; the simulator then measures the chosen ones (scripts/estimator_vs_simulator.py compares them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.special import digamma, gammaincinv, gammaln, pdtr

from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.serve.engine import (
    EngineProfile,
    budgets,
    decode_graph_batch,
    prompt_chunk,
    serving_device,
    token_budget,
)
from chipwise.serve.iteration import (
    Shapes,
    context_coefficient,
    eager_launches,
    host_sequence_time,
    lm_heads,
    micro_batches,
    pair_coefficient,
    prefill_pairs,
    rank_imbalance,
    token_costs,
)
from chipwise.serve.kvcache import replica_memory
from chipwise.serve.sim.policies import bucket
from chipwise.serve.speculation import Drafting
from chipwise.types import Array, IntArray
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import DEFAULT_ROUTER

BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
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
    balance: IntArray  # 0: attention DP with the engine's context balancing off (else 1, the engine's own)

    def __len__(self) -> int:
        return int(self.tp.size)

    def shapes(self) -> Shapes:
        return Shapes(self.tp, self.pp, self.ep, self.adp)

    def take(self, idx: IntArray) -> Candidates:
        return Candidates(
            self.tp[idx], self.pp[idx], self.ep[idx], self.adp[idx], self.max_batch[idx], self.balance[idx]
        )


def enumerate_candidates(
    model: ModelSpec,
    topo: Topology,
    ranks_limit: int | None = None,
    fixed: dict[str, int] | None = None,
    batches: tuple[int, ...] = BATCHES,
    balancing: bool = False,
) -> Candidates:
    """TP up to the scale-up domain (powers of two) where it splits the attention heads, PP in {1, 2, 4} beyond it,
    EP in {1, TP} and attention-DP for MoE models (with the engine's context balancing on and off, where it has it:
    `balancing`), each with every batch limit; knobs in `fixed` are held. MoE models on node-sized domains (at most
    MULTI_NODE_DOMAIN ranks) also try TP and EP over two and four domains (wide expert parallelism across nodes,
    as SGLang and DeepEP deploy DeepSeek on H100/H200 nodes)."""
    fixed = fixed or {}
    limit = ranks_limit or topo.domain_ranks * 4
    rows: list[tuple[int, int, int, int, int, int]] = []
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
            # a searched tp splits the attention heads as a stated plan must (ModelSpec tp_problem), unless
            # attention DP keeps the attention whole on every rank
            splits_heads = "tp" in fixed or not model.attention.tp_problem(tp)
            for ep in eps:
                adps = [0, 1] if (moe is not None and ep == tp and tp > 1) else [0]
                if "attention_dp" in fixed:
                    adps = [int(fixed["attention_dp"])]
                for adp in adps:
                    if not (adp or splits_heads):
                        continue
                    bals = [1, 0] if adp and balancing else [1]
                    if adp and "adp_balance" in fixed:
                        bals = [int(fixed["adp_balance"])]
                    mbs = [fixed["max_batch"]] if "max_batch" in fixed else list(batches)
                    for bal in bals:
                        for mb in mbs:
                            rows.append((tp, pp, ep, adp, mb, bal))
    if not rows:
        raise InfeasibleError("no replica shape fits the plan's fixed knobs. Fix: relax tp/pp/ep.")
    a = np.asarray(rows, dtype=np.int64)
    return Candidates(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5])


@dataclass(frozen=True)
class PromptIterations:
    """How the prompts of a steady load reach a candidate's iterations (arrays over the candidates)."""

    unit: Array  # tokens of the prompts that arrive together: one (one per rank, ADP-balanced), padded
    cap: Array  # most prompt tokens one iteration takes (the token budget)
    padding: Array  # tokens run per prompt token (a compiled-shape engine pads each prompt to its bucket)
    floor: Array  # least time of an iteration that carries prompt tokens on an eager engine (its launches)
    max_tokens: float  # the engine's token budget, each of a pipeline's micro-batches its own (engine.budgets)
    encoded: float = 1.0  # the share of each prompt the replica encodes: none in a disaggregated decode pool

    def take(self, idx: IntArray) -> PromptIterations:
        return PromptIterations(
            self.unit[idx], self.cap[idx], self.padding[idx], self.floor[idx], self.max_tokens, self.encoded
        )


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
    prompts: PromptIterations
    prefill_work_s: Array  # what one more prompt adds to an iteration that encodes prompts (no launch floor)
    shared: float = 0.0  # prompt tokens every request shares (a prefix-cache hit), held once a replica

    def prefix_held(self, i: int) -> float:
        """KV tokens candidate `i` holds for the shared prefix: one copy per attention-DP rank (each its own cache)."""
        return (int(self.cand.tp[i]) if self.cand.adp[i] > 0 else 1) * self.shared

    #: the device, topology and shapes the load searches price these candidates on, by the ids of the system and
    #: engine (with those objects, so the ids stay theirs): one Shapes keeps its priced terms over every search
    priced: dict[tuple[int, int], tuple[System, EngineProfile, Device, Topology, Shapes]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def on(self, system: System, eng: EngineProfile) -> tuple[Device, Topology, Shapes]:
        """The serving device, topology and shapes of these candidates on `system` under `eng`, made once."""
        key = (id(system), id(eng))
        held = self.priced.get(key)
        if held is None:
            held = (system, eng, serving_device(device_of(system), eng), topology_of(system), self.cand.shapes())
            self.priced[key] = held
        return held[2], held[3], held[4]

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
            self.prompts.take(idx),
            self.prefill_work_s[idx],
            self.shared,
        )


def held_tokens(admission: str, inp: float, out: float) -> float:
    """The KV-cache tokens a request holds over its life, by which a cache seats a batch: its whole context where
    the engine reserves it at admission (`reserve`: TensorRT-LLM's GUARANTEED_NO_EVICT), its prompt and half its
    answer on average where blocks are taken as tokens come (`on_demand`: vLLM, SGLang, whose running requests stand
    at every point of their answers)."""
    return inp + out if admission == "reserve" else inp + out / 2.0


def _decode_context(eng: EngineProfile, inp: float, out: float) -> float:
    """The context a decode step attends over on average: the prompt and half the answer, padded to its
    power-of-two bucket on a static-shape engine (whose compiled graphs read the whole bucket; the last bucket is
    the compiled sequence length, taken as the request's)."""
    mean = inp + out / 2.0
    return float(bucket(int(mean), largest=math.ceil(inp + out))) if eng.static_batch else mean


def _stage_time(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight: str,
    shapes: Shapes,
    tokens: Array,
    micro: Array | None = None,
) -> Array:
    """pp stages of token-proportional work for `tokens` tokens in `micro` micro-batches (pp: a filled pipeline),
    with the pipeline hand-offs: each micro-batch passes every stage, so the iteration takes pp G(tokens / micro)."""
    pp = shapes.pp.astype(np.float64)
    g = token_costs(model, dev, topo, eng, weight, shapes, tokens / (pp if micro is None else micro))
    stage = sum(v for k, v in g.items() if k != "pp_comm")
    return np.asarray(pp * stage + (pp - 1.0) * g["pp_comm"], dtype=np.float64)


def _passes(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight: str,
    shapes: Shapes,
    chunks: Array,
    pairs: Array,
    coef: Array,
) -> Array | None:
    """Prompt chunks of `chunks` tokens and `pairs` prefill pairs (`coef` seconds a pair, a stage's share) passing
    the pipeline's stages in turn (StepModel.pass_time): what an iteration that carries one takes at least. None
    where no shape has more than one stage (the bound is the iteration itself)."""
    if not (shapes.pp > 1).any():
        return None
    pp = shapes.pp.astype(np.float64)
    return np.asarray(_stage_time(model, dev, topo, eng, weight, shapes, pp * chunks) + pp * coef * pairs)


def _runs(rows: Array, micro: Array, iterations: int) -> Array:
    """The micro-batches of each of `rows`: `micro` for the first `iterations` (whole iterations), one for the rest
    (a prompt's piece passing the stages alone)."""
    runs = np.ones(rows.shape)
    runs[:iterations] = micro
    return runs


def prompt_share(started: Array | float, group: Array | float, room: Array | float) -> Array:
    """The share of iterations that prompts join when `started` prompt tokens start per iteration as a Poisson
    stream of groups of `group` tokens, each group needing ceil(group / room) iterations (`room`: the prompt
    tokens an iteration takes beside its decode tokens): p = 1 - e^-x, x = started / group ceil(group / room)."""
    return np.asarray(-np.expm1(-started / group * np.ceil(group / room)), dtype=np.float64)


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
    prompts: PromptIterations,
    drafting: Drafting | None = None,
    active: Array | None = None,
    packed: bool = False,
    others: bool = False,
) -> Array:
    """Seconds per output token of a sequence in a steady iteration of `batch` sequences (the iteration's time,
    or with speculative decoding the verification step's time / tau), averaged over the iterations that carry the
    prompts of the requests that start and those that do not.

    The S = B tau I / O prompt tokens that start per iteration arrive as a Poisson stream of prompts of u tokens
    (R of them at once where attention-DP ranks balance their prompts), each needing ceil(u / room) iterations
    (room: the budget left beside the decode tokens): a share p = 1 - e^-x, x = S / u ceil(u / room), of the
    iterations is joined by S / p prompt tokens (padded to buckets on a compiled-shape engine). With mixed batching
    they ride in the decode iteration, which on an eager engine then takes at least its launches; otherwise they run
    in prompt iterations of their own while the decoding sequences wait. A prompt longer than the room runs as full
    chunks and a remainder, each at least the launch floor. A saturated replica's prompts queue and fill the room
    instead (`packed`: a share S / room of the iterations). An iteration's time is not linear in its tokens (a small
    decode batch streams the weights once, a prompt is compute-bound), so spreading the prompts evenly over every
    iteration under-estimates the mean the simulator measures (by 15-55% at 30-85% load for a 70B model on one GPU).
    `active`: the sequences generating, where fewer than the `batch` slots an iteration runs (a compiled-shape engine
    runs every slot). `others`: the iterations one sequence decodes in, which carry the prompts of the others only
    (its own ran before its first token): the TPOT it sees, where the replica's time per token counts every prompt
    (one sequence alone decodes at the plain step: Llama-3.1-70B on a TP8 PP4 H200 replica of one slot read 42 ms
    where it decodes at 15 ms, with its 128K-token prompt spread over its own iterations)."""
    pp = shapes.pp.astype(np.float64)
    k, tau = (drafting.spec.draft_tokens, drafting.spec.tokens_per_step) if drafting else (0, 1.0)
    fed = batch * (k + 1.0)  # positions the target decodes (verifies)
    # prompt tokens that start per iteration
    sequences = batch if active is None else active
    started = (np.maximum(sequences - 1.0, 0.0) if others else sequences) * tau * inp / out * prompts.encoded
    a = context_coefficient(model, dev, shapes, kv_precision, inp + out, k + 1.0)
    b = pair_coefficient(model, dev, shapes, inp, kv_precision)
    # the micro-batches an iteration runs: pp where the batch fills the pipeline, else one a sequence, each passing
    # every stage in turn (a lone sequence decodes no faster on two stages, and waits for the hand-off between them);
    # the attention terms price pp at once, so pp / micro times them where fewer run (iteration.stage_share)
    micro = micro_batches(pp, batch)
    spread = pp / micro
    decode = (
        eng.host_step_s
        + host_sequence_time(eng, shapes, fed)
        + lm_heads(model, dev, shapes, fed, batch)
        + a * spread * batch * _decode_context(eng, inp, out)
    )
    padded = started * prompts.padding  # what the iterations run (a compiled-shape engine pads to buckets)
    per_micro = prompts.max_tokens * budgets(eng, shapes.tp, shapes.adp)
    cap = np.minimum(prompts.cap, micro * per_micro)  # each micro-batch with its own token budget
    mixing = eng.mixes(shapes.adp)  # iterations that carry prompts advance the decodes too
    room = np.where(mixing, np.maximum(cap - fed, 1.0), cap)  # prompt tokens per iteration
    group = prompts.unit / prompts.padding  # the prompt tokens that arrive together, which the budget counts
    # the share of iterations joined by prompts: a group of them needs ceil(group / room) iterations (the last one a
    # remainder) as they arrive; queued prompts (packed) fill the room
    pieces = np.ceil(group / room)
    arriving = prompt_share(started, group, room)
    share = np.minimum(started / room, 1.0) if packed else arriving
    iters = np.where(mixing, share, np.maximum(share, started / cap))
    tokens = padded / np.maximum(iters, 1e-12)
    # a group longer than the room runs as full chunks and a remainder, each at least the launch floor: their mean
    chunked = (pieces > 1) & (not packed)
    last = np.where(chunked, (group - (pieces - 1.0) * room) * prompts.padding, tokens)
    first = np.where(chunked, room * prompts.padding, tokens)
    base = np.where(mixing, fed, 0.0)
    # with attention DP a prompt's piece runs on one rank: the heaviest carries at least one piece
    ranks = np.where(shapes.adp > 0, shapes.tp, 1).astype(np.float64)
    rank_cap = prompt_chunk(eng, prompts.max_tokens, shapes.tp, shapes.adp)
    piece = np.minimum(inp, rank_cap) * prompts.padding
    sent = np.stack(np.broadcast_arrays(first, last))  # prompt tokens of a full iteration and of the last, at once
    heavy = ranks * np.maximum(sent / ranks, np.minimum(piece, sent))
    # one prompt's piece passes the pipeline's stages in turn, whatever else its iteration carries (StepModel.pass_time)
    single = np.minimum(sent, piece)
    piped = bool((shapes.pp > 1).any())
    passes = [single[0], single[1]] if piped else []
    # one pass: decode alone, with prompts (a last piece that is the whole group, as unchunked ones are, is priced
    # once), in the iteration's micro-batches, and the pieces' passes through the stages, one micro-batch each
    if chunked.any():
        rows = np.stack(np.broadcast_arrays(fed, base + first, base + last, *passes))
        plain, full, rest, *passed = _stage_time(
            model, dev, topo, eng, weight_precision, shapes, rows, _runs(rows, micro, 3)
        )
    else:
        rows = np.stack(np.broadcast_arrays(fed, base + first, *passes[:1]))
        plain, full, *passed = _stage_time(model, dev, topo, eng, weight_precision, shapes, rows, _runs(rows, micro, 2))
        rest, passed = full, passed * 2
    if eng.graph_max_batch > 0 and eng.eager_launch_s > 0:
        # past the largest batch the engine replays in a CUDA graph a decode step launches eagerly (eager_decode_floor)
        eager = sequences > decode_graph_batch(eng, dev.chip.hbm_capacity, shapes.tp)
        launches = prompts.floor - a * sequences * _decode_context(eng, inp, out)
        plain = np.where(eager, np.maximum(plain, launches), plain)
    if chunked.any():
        lost_full, lost_rest = rank_imbalance(model, dev, weight_precision, shapes, base + sent, base + heavy)
    else:
        lost_full = lost_rest = rank_imbalance(model, dev, weight_precision, shapes, base + sent[0], base + heavy[0])
    full = full + lost_full + spread * b * np.maximum(first, heavy[0]) * inp / 2.0
    rest = rest + lost_rest + spread * b * np.maximum(last, heavy[1]) * inp / 2.0
    if piped:
        full = np.maximum(full, passed[0] + pp * b * single[0] * inp / 2.0)
        rest = np.maximum(rest, passed[1] + pp * b * single[1] * inp / 2.0)
    full, rest = np.maximum(full, prompts.floor), np.maximum(rest, prompts.floor)
    joined = np.where(chunked, ((pieces - 1.0) * full + rest) / pieces, full)
    t = np.where(
        mixing, decode + (1.0 - iters) * plain + iters * joined, decode + plain + iters * (eng.host_step_s + joined)
    )
    t = t + iters * eng.host_prefill_s
    if drafting is not None:
        d = drafting.model
        ad = context_coefficient(d, dev, shapes, kv_precision, inp + out)
        t = t + k * (
            _stage_time(d, dev, topo, eng, weight_precision, shapes, batch, micro)
            + lm_heads(d, dev, shapes, batch, batch)
            + ad * spread * batch * _decode_context(eng, inp, out)
        )
        t = t + _stage_time(d, dev, topo, eng, weight_precision, shapes, started, micro)
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
    decode_only: bool = False,
    shared: float = 0.0,
) -> Estimate:
    """Price every candidate at saturation (B = min(max_batch, KV capacity, token budget)). `shared`: prompt tokens
    every request shares with the others (a prefix-cache hit short of the whole prompt), which a replica holds once
    (once per attention-DP rank), as the simulator does. `decode_only`: as a
    disaggregated decode pool's replica, which receives its requests' KV caches and encodes no prompt (its TTFT
    share is only the waits for a step and a slot)."""
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
        drafting.model if drafting else None,
    )
    shared = 0.0 if decode_only else min(shared, inp)  # a decode pool receives each prompt's cache whole
    own = inp - shared
    per_request = held_tokens(eng.admission, own, out)
    ranks = np.where(cand.adp > 0, cand.tp, 1).astype(np.float64)  # attention-DP ranks, each its own KV cache
    b_kv = np.floor(np.maximum(mem.kv_tokens - ranks * shared, 0.0) / max(per_request, 1.0))
    budget = max_tokens * budgets(eng, cand.tp, cand.adp, cand.pp)  # each rank's and micro-batch's own (engine.budgets)
    # sequences a token budget keeps decoding beside their prompts' share; at least one: a prompt longer than the
    # budget (an 8K prompt for a 1-token answer) is encoded over several iterations, not refused
    steady = budget / (1.0 + (0.0 if decode_only else inp / out))
    b_budget = np.where(eng.mixes(cand.adp), np.maximum(np.floor(steady), 1.0), np.inf)
    batch = np.maximum(np.minimum(np.minimum(cand.max_batch.astype(np.float64), b_kv), b_budget), 0.0)
    fits = (mem.kv_tokens >= inp + out) & (batch >= 1)
    b = np.maximum(batch, 1.0)
    ones = np.ones(b.shape)
    # one prompt's chunk: the budget, or one attention-DP rank's share of a shared one (engine.prompt_chunk)
    chunk = (np.minimum(prompt_chunk(eng, max_tokens, cand.tp, cand.adp), inp) if eng.chunked_prefill else inp) * ones
    padded = _buckets(chunk, inp + out) if eng.static_batch else chunk
    floor = eager_launches(model, dev.chip, weight_precision, shapes) * eng.host_eager_launch_s
    # attention-DP context balancing holds prompts until every rank has one: they join iterations R at a time
    grouped = np.where((cand.adp > 0) & (cand.balance > 0) & (eng.adp_balance_timeout_iters > 0), cand.tp, 1)
    unit = inp * padded / chunk * grouped
    # an engine that encodes one prompt a pass (context_batch 1) prices each pass as one prompt, however many a step
    # takes in turn
    cap = np.minimum(budget, inp) * ones if eng.context_batch == 1 else budget * ones
    prompts = PromptIterations(unit, cap, padded / chunk * ones, floor * ones, max_tokens, 0.0 if decode_only else 1.0)
    step = _step_time(
        model, dev, topo, eng, weight_precision, kv_precision, shapes, b, inp, out, prompts, drafting, packed=True
    )
    # a prompt longer than the budget runs in chunks, each attending to the chunks before it (a compiled-shape
    # engine pads each to its bucket): the simulator's lone-prompt time, StepModel.prompt_alone
    chunks = np.ceil(inp / chunk)
    coef = pair_coefficient(model, dev, shapes, inp, kv_precision)
    device = np.zeros(b.shape)
    work = np.zeros(b.shape)
    for k in range(int(chunks.max())):
        start = k * chunk
        left = np.clip(inp - start, 0.0, chunk)  # this chunk's tokens (none once a shape's prompt is done)
        run = _buckets(left, inp + out) if eng.static_batch else left
        pairs = prefill_pairs(start, run)
        piece = _stage_time(model, dev, topo, eng, weight_precision, shapes, run) + coef * pairs
        # alone, one rank encodes it (attention DP): the others wait for its attention
        alone = piece + rank_imbalance(model, dev, weight_precision, shapes, run, ranks * run)
        alone = alone + coef * (ranks - 1.0) * pairs
        # ... and it passes the pipeline's stages in turn
        passed = _passes(model, dev, topo, eng, weight_precision, shapes, run, pairs, coef)
        alone = alone if passed is None else np.maximum(alone, passed)
        alone = np.maximum(alone, floor) if eng.eager_launch_s > 0 else alone
        work = work + np.where(left > 0, piece, 0.0)  # queued prompts spread over the attention-DP ranks
        device = device + np.where(left > 0, alone, 0.0)
    last = eng.host_sequence_s + lm_heads(model, dev, shapes, 1.0, 1.0)  # samples once
    prefill_s = (eng.host_step_s + eng.host_prefill_s) * chunks + device + last
    if decode_only:
        prefill_s, device, work = np.zeros(b.shape), np.zeros(b.shape), np.zeros(b.shape)
    return Estimate(
        cand=cand,
        fits=np.asarray(fits),
        kv_tokens=np.asarray(mem.kv_tokens),
        batch=np.where(fits, batch, 0.0),
        step=step,
        throughput=np.where(fits, b / step, 0.0),
        prefill_s=np.asarray(prefill_s, dtype=np.float64),
        chips=np.asarray(cand.tp * cand.pp / dev.cores_per_chip, dtype=np.float64),
        prompts=prompts,
        prefill_work_s=np.asarray(prefill_s - device + work, dtype=np.float64),
        shared=shared,
    )


def _buckets(tokens: Array, largest: float) -> Array:
    """The buckets a compiled-shape engine pads each entry's tokens to (policies.bucket); none for none."""
    top = math.ceil(largest)
    values, where = np.unique(np.asarray(tokens, dtype=np.float64), return_inverse=True)
    padded = np.asarray([float(bucket(math.ceil(t), largest=top)) if t > 0 else 0.0 for t in values])
    return np.asarray(padded[where].reshape(np.shape(tokens)), dtype=np.float64)


@dataclass(frozen=True)
class Operating:
    """A candidate at a given per-replica load: batch, TPOT, TTFT (mean and p99 estimates), utilisation."""

    batch: Array
    tpot: Array
    tpot_p99: Array
    ttft: Array
    ttft_p99: Array
    rho: Array


#: A router that draws replicas at random (power_of_two) cannot tell which one is encoding a prompt: a routed prompt
#: finds its replica encoding at a share of a lone replica's rate, 1 - (1 - ROUTED_FLOOR) exp(-L / ROUTED_REQUESTS) at
#: L requests held per replica (two draws of equal load take the first, so even lightly held replicas collide),
#: fitted to what `scripts/router_share.py` measures of it over 4-64 replicas at 5-50% prefill load: 0.41-0.66 at
#: L = 0.5, 0.58-0.73 at one, 0.72-0.87 at two, 0.82-0.92 at four, 0.89-0.98 at eight, 0.93-1.0 at sixteen.
ROUTED_FLOOR = 0.42
ROUTED_REQUESTS = 2.75


def prompt_waits(router: str, replicas: Array, held: Array, busy: Array) -> Array:
    """Probability that a routed prompt finds its replica encoding another, among `replicas` that each hold `held`
    requests on average and encode prompts a share `busy` of the time (= busy on one replica). A least-loaded
    router that takes tied replicas in turn, and a round robin, send two prompts to one replica only when every
    replica is encoding one (Erlang C over them): the replica that took the last prompt is the last in turn among
    those equally loaded. Two random draws (power_of_two) land on an encoding replica at a share of the lone
    replica's rate (ROUTED_FLOOR, above)."""
    n = np.maximum(replicas, 1.0)
    hidden = 1.0 - (1.0 - ROUTED_FLOOR) * np.exp(-held / ROUTED_REQUESTS) if router == "power_of_two" else 0.0
    return hidden * busy + (1.0 - hidden) * erlang_c(n, n * busy)  # = busy on one replica


def prompt_wait(
    router: str, replicas: Array, held: Array, busy: Array, service: Array, work: Array, loaded: Array
) -> tuple[Array, Array]:
    """Mean and 99th-percentile wait behind the prompts being encoded, on one replica or on `replicas` of them
    behind a `router`, each holding `held` requests on average.

    One replica: a prompt that arrives while prompts are being encoded (probability `busy`) waits for the rest of
    that iteration (on average half its `service` time S); the prompts queued ahead of it then go with it into the
    next iteration, each adding its own `work` W (`loaded`: the utilisation by that work alone). That is
    R / (1 - loaded), R = busy S / 2: an M/D/1 queue where a prompt's work is all its time (Pollaczek-Khinchine),
    and a single residual where a floor of kernel launches dominates. The tail is the floor's share of the
    iteration in flight, S - W, plus Kingman's heavy-traffic tail of the queue of work, busy exp(-2 (1 - loaded) t / W).

    Routed: a prompt waits with probability P = prompt_waits(...) and then seldom finds more than the one prompt
    ahead, so it waits for a residual of it, uniform over S: a tail of S (1 - 0.01 / P), stretched by the queue's
    load as the mean is. A fleet of few replicas stacks prompts more often: the tail weighs the lone replica's by
    1 / replicas^2. Against the simulated fleets of `scripts/estimator_vs_simulator.py` (seven shapes, 1K-100K-token
    prompts, 4 and 16 replicas at 30-85% of capacity, least-loaded) the p99 TTFT reads |error| 23% and 22% (mean
    +17% and +5%), where the lone replica's queue read 58% and 85% (up to +386% on 100K-token prompts)."""
    n = np.maximum(replicas, 1.0)
    waits = prompt_waits(router, n, held, busy)
    mean = waits * service / (2.0 * (1.0 - loaded))
    floor = np.maximum(service - work, 0.0)
    kingman = floor + work / (2.0 * (1.0 - loaded)) * np.log(np.maximum(100.0 * busy, 1.0))
    residual = floor + work * np.maximum(1.0 - 0.01 / np.maximum(waits, 1e-12), 0.0) / (1.0 - loaded)
    lone = 1.0 / n**2
    tail = np.where(busy > 0.01, kingman, 0.0) * lone + np.where(waits > 0.01, residual, 0.0) * (1.0 - lone)
    return mean, tail


def erlang_c(servers: Array, offered: Array) -> Array:
    """Probability that an arrival waits in an M/M/c queue of c = `servers` with `offered` load A = lambda S < c
    (Erlang C), from Erlang B = P(N = c) / P(N <= c) for N ~ Poisson(A): C = c B / (c - A (1 - B)). Broadcasts."""
    c = np.asarray(servers, dtype=np.float64)
    a = np.maximum(np.asarray(offered, dtype=np.float64), 1e-300)
    pmf = np.exp(c * np.log(a) - a - gammaln(c + 1.0))
    blocking = pmf / np.maximum(pdtr(c, a), 1e-300)
    waits = c * blocking / np.maximum(c - a * (1.0 - blocking), 1e-12)
    return np.asarray(np.where(np.asarray(offered) > 0, np.clip(waits, 0.0, 1.0), 0.0), dtype=np.float64)


def slot_wait(slots: Array, offered: Array, hold: Array) -> tuple[Array, Array]:
    """Mean and 99th-percentile wait for a batch slot, `slots` of them each held `hold` seconds per request at
    `offered` load A: the M/M/c wait (Erlang C, then exponential at rate (c - A) / hold) scaled for a nearly fixed
    holding time (requests of one length) by Allen and Cunneen's (1 + c_s^2) / 2 = 1/2."""
    waits = erlang_c(slots, offered)
    rate = 2.0 * np.maximum(slots - offered, 1e-12) / np.maximum(hold, 1e-12)
    tail = np.where(waits > 0.01, np.log(np.maximum(100.0 * waits, 1.0)) / rate, 0.0)
    return waits / rate, tail


def _balancing_wait(
    eng: EngineProfile, est: Estimate, batch: Array, rate: Array, step: Array, poisson: bool
) -> tuple[Array, Array]:
    """Mean and 99th-percentile wait of attention-DP context balancing (serve.sim.replica): once every rank is
    busy, prompts are let in when each rank has one, or when a counter of iterations reaches the engine's timeout;
    the counter restarts then and runs whether prompts wait or not, so a lone prompt waits half the timeout on
    average and at most all of it. Open-loop arrivals are placed on the least-loaded ranks, so R of them cover the
    R ranks: a prompt waits for half of the R - 1 others on average, (R - 1) / (2 rate), and for all of them at the
    tail, the 99th percentile of R - 1 Poisson gaps (a Gamma quantile). Under Poisson arrivals the sequences
    generating are Poisson around their mean `batch`, so every rank is busy (at least R of them) with probability
    P = P(N >= R): the mean wait is P times the busy one, and the p99 the busy waits' 1 - 0.01 / P quantile (none
    below P = 1%). A closed loop's users hold every rank full, so each new prompt goes to the rank whose request
    just finished, a rank at random: covering the R ranks takes R H_R prompts (the coupon collector), and the
    wait is half of the others' gaps on average and all of them at the tail. Switched on at a mean batch of R, a
    DeepSeek-V3 replica of 8 ranks at a mean of 7.5 read a p99 TTFT of 0.41 s where it runs at 2.9 s."""
    zero = np.zeros(np.broadcast(batch, rate).shape)
    if eng.adp_balance_timeout_iters <= 0:
        return zero, zero
    ranks = est.cand.tp.astype(np.float64)
    others = np.maximum(ranks - 1.0, 0.0)
    held = (est.cand.adp > 0) & (est.cand.balance > 0) & (others > 0)
    r = np.maximum(rate, 1e-12)
    timeout = eng.adp_balance_timeout_iters * step
    if not poisson:
        on = held & (batch >= ranks)
        harmonic = digamma(ranks + 1.0) + np.euler_gamma  # H_R
        gaps = np.maximum(ranks * harmonic - 1.0, 0.0) / r
        return np.where(on, np.minimum(gaps / 2.0, timeout / 2.0), 0.0), np.where(on, np.minimum(gaps, timeout), 0.0)
    busy = np.where(held, 1.0 - pdtr(np.maximum(ranks - 1.0, 0.0), np.maximum(batch, 1e-12)), 0.0)
    level = np.clip(1.0 - 0.01 / np.maximum(busy, 1e-12), 0.0, 0.99)
    tail = np.where(busy > 0.01, gammaincinv(np.maximum(others, 1.0), level) / r, 0.0)
    return busy * np.minimum(others / (2.0 * r), timeout / 2.0), np.minimum(tail, timeout)


def _stepper(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    est: Estimate,
    weight_precision: str,
    kv_precision: str,
    inp: float,
    out: float,
    slots: Array,
    drafting: Drafting | None,
) -> Callable[..., Array]:
    """The steady step time of each candidate as a function of the sequences generating (_step_time): a
    compiled-shape engine's iterations run all its `slots`, any other engine's only those sequences."""
    dev, topo, shapes = est.on(system, eng)

    def step(active: Array, others: bool = False) -> Array:
        batch = slots if eng.static_batch else active
        args = (model, dev, topo, eng, weight_precision, kv_precision, shapes, batch, inp, out, est.prompts)
        return _step_time(*args, drafting, active, others=others)

    return step


def _fixed_point(g: Callable[[Array], Array], top: Array, evals: int = 8) -> Array:
    """The batch b in [1, top] with b = g(b), `g` increasing (the sequences a load keeps generating): the root of
    f(b) = g(b) - b bracketed by [1, top] and found by regula falsi with the Illinois step, `evals` evaluations of
    g in all. Plain iteration from b = 1 closes only a factor g'(b) of the gap a step (after eight steps at g' = 0.9,
    43% of it is left, and the TPOT read there was up to 34% fast); this is exact for an affine g and superlinear
    for a smooth one. b = 1 where g(1) <= 1; top where g(top) >= top (no load below saturation carries it)."""
    lo = np.ones_like(top)
    hi = np.asarray(top, dtype=np.float64)
    f_lo, f_hi = g(lo) - lo, g(hi) - hi
    for _ in range(evals - 2):
        x = np.where(f_lo > f_hi, (lo * f_hi - hi * f_lo) / np.where(f_lo > f_hi, f_hi - f_lo, -1.0), lo)
        x = np.clip(x, lo, hi)
        f_x = g(x) - x
        above = f_x < 0.0  # the root lies below x
        # Illinois: halve the value kept at the end that did not move, so that end moves next time
        f_lo = np.where(above, f_lo / 2.0, f_x)
        f_hi = np.where(above, f_x, f_hi / 2.0)
        lo, hi = np.where(above, lo, x), np.where(above, x, hi)
    b = np.where(f_lo > f_hi, (lo * f_hi - hi * f_lo) / np.where(f_lo > f_hi, f_hi - f_lo, -1.0), lo)
    return np.where(f_hi >= 0.0, hi, np.clip(b, lo, hi))


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
    fleet_rate: float = 0.0,
    router: str = DEFAULT_ROUTER,
) -> Operating:
    """Where each candidate runs at `rate_per_replica` requests/s: the smallest batch of generating sequences that
    carries it (a static-batch engine's iterations still run every compiled slot). A prompt's TTFT is its lone
    prefill and the front end, plus three waits: for the iteration in flight (half a step on average, a whole one
    at the tail), for the prompts ahead of it (prompt_wait: an M/D/1 queue in the utilisation by the prompts' own
    work), and for a free batch slot when all are taken (slot_wait: Erlang C over the batch limit, each request
    holding its slot for its prefill and its output tokens' steps); attention-DP balancing adds its gather
    (_balancing_wait). With `fleet_rate` (the whole load, requests/s) the fleet's fleet_rate / rate_per_replica
    replicas behind a `router` pool their slots and their prompt encoding: a least-loaded router sends a request to
    a replica with a free slot, and not encoding a prompt while one is free, so both waits are Erlang C over all of
    them (what lets replicas of a few slots, Neuron's compiled batches, run loaded, and long prompts share the
    fleet's encoders); two random draws find an encoding replica more often (prompt_waits), and a free slot only
    among the two."""
    lam = np.asarray(rate_per_replica, dtype=np.float64)
    need = lam * out  # output tokens/s
    rho = np.where(est.throughput > 0, need / np.maximum(est.throughput, 1e-12), np.inf)
    top = np.maximum(est.batch, 1.0)
    step = _stepper(model, system, eng, est, weight_precision, kv_precision, inp, out, top, drafting)
    b = _fixed_point(lambda x: np.clip(need * step(x), 1.0, top), top)  # B = need t(B)
    tpot = step(b, others=True)
    # a request's TPOT follows the batch it decodes in; with Poisson arrivals the batch is Poisson-like around
    # its mean, so the slowest 1% of requests decode in a batch about 2.33 standard deviations larger
    b99 = np.minimum(b + BATCH_Z99 * np.sqrt(b), top)
    tpot99 = step(b99, others=True)
    # replicas sharing the load; a replica offered nothing shares it with none (dividing by a floor instead read
    # some 1e305 slots, Erlang C overflowed on the way to its zero wait, and a fleet rate of 1e9/s overflowed)
    pooled = (
        np.maximum(np.divide(fleet_rate, lam, out=np.ones_like(lam), where=lam > 0), 1.0) if fleet_rate > 0 else 1.0
    )
    rho_p = lam * est.prefill_work_s  # the prompts' own work: what a queue of them takes
    busy = np.minimum(lam * est.prefill_s, 1.0)  # share of the time an iteration encodes prompts
    hold = est.prefill_s + max(out - 1.0, 0.0) * tpot  # how long a request holds a batch slot
    prompt_load = np.minimum(rho_p, MAX_UTILISATION)
    # requests a replica holds, among which random draws land on one encoding a prompt more often; a replica of one
    # slot takes a second request only when every replica holds one, a wait for a slot (below), not behind a prompt
    held = np.where(top > 1.0, lam * hold, 0.0)
    replicas = np.asarray(pooled, dtype=np.float64)
    queue, queue99 = prompt_wait(router, replicas, held, busy, est.prefill_s, est.prefill_work_s, prompt_load)
    # a request finds a free slot among the replicas its router weighs: all of them, or the two it draws
    drawn = np.minimum(pooled, 2.0) if router == "power_of_two" else pooled
    slots = top * drawn
    # one-token answers (a prefill pool's) leave with their prompt: the prompt queue is all their wait
    holds = out > 1.0
    offered = np.minimum(lam * drawn * hold, MAX_UTILISATION * slots)
    held, held99 = slot_wait(slots, offered, hold) if holds else (np.zeros_like(hold), np.zeros_like(hold))
    iteration = tpot * (drafting.spec.tokens_per_step if drafting else 1.0)  # a drafting step yields tau tokens
    wait = iteration / 2.0 + queue + held  # the iteration in flight when it arrives, then the queues
    wait99 = iteration + queue99 + held99
    gather, gather99 = _balancing_wait(eng, est, b, lam, iteration, poisson=True)
    wait, wait99 = wait + gather, wait99 + gather99
    first = est.prefill_s + eng.host_request_s  # a lone prompt's first token, the front end included
    ttft = first + wait
    ttft_p99 = first + wait99
    over = (rho >= MAX_UTILISATION) | (rho_p >= MAX_UTILISATION) | (holds & (lam * hold >= MAX_UTILISATION * top))
    return Operating(
        batch=np.broadcast_to(top, b.shape) if eng.static_batch else b,
        tpot=np.where(over, np.inf, tpot),
        tpot_p99=np.where(over, np.inf, tpot99),
        ttft=np.where(over, np.inf, ttft),
        ttft_p99=np.where(over, np.inf, ttft_p99),
        rho=rho,
    )


def batch_slots(est: Estimate) -> Array:
    """Per candidate, the batch slots of the plan the search makes: the saturation batch, already within the
    requests its KV cache holds at their held tokens (held_tokens; a shared prefix held once), as
    serving_choice.kv_limited_batch caps a closed loop's plan; at least one."""
    return np.maximum(est.batch, 1.0)


def closed_loop(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    est: Estimate,
    weight_precision: str,
    kv_precision: str,
    inp: float,
    out: float,
    users: Array,
    drafting: Drafting | None = None,
    fleet_users: float = 0.0,
    router: str = DEFAULT_ROUTER,
) -> Operating:
    """Where each candidate runs with `users` closed-loop users per replica, out of step as a deployment's steady
    users are (serve.simulate.phase_ramp), each issuing its next request when its last one ends. The users hold
    the batch: the B = U O t / (F + O t) of them decoding (F: the first token's latency) set the step time t, so
    a loaded replica runs slower steps rather than queueing (its throughput B / t levels off where prompts make the
    steps compute-bound). A prompt waits for the iteration in flight (half a step on average, a whole one at the
    tail; attention-DP balancing adds the gather of one prompt per rank): a least-loaded router or a round robin
    sends a user's next request to the replica its last one left, which is not encoding a prompt. Two random draws
    (`router` power_of_two, over the fleet_users / users replicas) send it to one that may be: prompt_wait over
    them. Users beyond the batch slots wait for one: (U - slots) / rate before their first token."""
    top = batch_slots(est)
    u = np.asarray(users, dtype=np.float64)
    seated = np.clip(u, 1.0, top)
    first = est.prefill_s + eng.host_request_s
    step = _stepper(model, system, eng, est, weight_precision, kv_precision, inp, out, top, drafting)
    b = seated
    t = step(b)
    for _ in range(8):  # the decoding share of the users, a few iterations from all of them
        b = np.maximum(seated * out * t / (first + out * t), 1.0)
        t = step(b)
    iteration = t * (drafting.spec.tokens_per_step if drafting else 1.0)  # t is per token: a step yields tau
    rate = seated / (first + iteration / 2.0 + out * t)
    gather, gather99 = _balancing_wait(eng, est, b, rate, iteration, poisson=False)
    wait, wait99 = iteration / 2.0 + gather, iteration + gather99
    if router == "power_of_two" and fleet_users > 0:
        replicas = np.maximum(fleet_users / np.maximum(u, 1.0), 1.0)
        busy = np.minimum(rate * est.prefill_s, 1.0)
        loaded = np.minimum(rate * est.prefill_work_s, MAX_UTILISATION)
        queue, queue99 = prompt_wait(router, replicas, seated, busy, est.prefill_s, est.prefill_work_s, loaded)
        wait, wait99 = wait + queue, wait99 + queue99
    queued = np.maximum(u - top, 0.0) / rate  # the users without a slot
    fits = est.fits
    return Operating(
        batch=np.broadcast_to(top, b.shape) if eng.static_batch else b,
        tpot=np.where(fits, t, np.inf),
        tpot_p99=np.where(fits, t, np.inf),
        ttft=np.where(fits, first + wait + queued, np.inf),
        ttft_p99=np.where(fits, first + wait99 + queued, np.inf),
        rho=rate * out / np.maximum(est.throughput, 1e-12),
    )


def pareto(throughput: Array, latency: Array) -> NDArray[np.int64]:
    """Indices of the points no other point beats in both higher throughput and lower latency (by latency). Points
    of infinite latency (do not fit) or no throughput are not on the front; of those that are, a point is on it
    when its throughput exceeds the best of every point of lower latency (the earlier, on a tie)."""
    tp = np.asarray(throughput, dtype=np.float64)
    order = np.argsort(latency, kind="stable")
    tp_o = tp[order]
    ok = np.isfinite(np.asarray(latency, dtype=np.float64)[order]) & (tp_o > 0.0)
    ahead = np.maximum.accumulate(np.concatenate(([-np.inf], np.where(ok, tp_o, -np.inf))))[:-1]
    return order[ok & (tp_o > ahead)].astype(np.int64)


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
    cand = enumerate_candidates(model, topo, limit, {"pp": 1, "max_batch": eng.max_batch})  # the engine's balancing
    budget = token_budget(eng, typical_prompt, memory_bytes=system.chip.hbm_capacity)
    est = estimate(model, system, eng, cand, weight_precision, kv_precision, typical_prompt, typical_output, budget)
    if not est.fits.any():
        raise InfeasibleError(
            f"{model.name} does not fit {ranks} ranks of {system.chip.id} with a usable KV cache. "
            "Fix: use more chips or a narrower precision."
        )
    i = int(np.argmax(np.where(est.fits, est.throughput / np.maximum(est.chips, 1e-12), -1.0)))
    return int(cand.tp[i]), int(cand.ep[i]), bool(cand.adp[i])
