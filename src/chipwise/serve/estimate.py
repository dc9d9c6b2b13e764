"""Steady-state estimate of every candidate replica shape at saturation, in one vectorised pass: the batch its KV
cache, batch limit and token budget allow, the step time there (serve.steady_step), its throughput, and one
prompt's prefill alone.

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
t(B) is the mean over iterations that carry prompt tokens and iterations that do not (serve.steady_step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from numpy.typing import NDArray

from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.serve.candidates import Candidates
from chipwise.serve.decode_tail import Z99
from chipwise.serve.engine import EngineProfile, budgets, prompt_chunk, serving_device
from chipwise.serve.iteration import (
    Shapes,
    eager_launches,
    lm_heads,
    pair_coefficient,
    prefill_pairs,
    rank_imbalance,
)
from chipwise.serve.kvcache import replica_memory
from chipwise.serve.sim.policies import bucket
from chipwise.serve.speculation import Drafting
from chipwise.serve.steady_step import PromptIterations, stage_time, step_time
from chipwise.types import Array, IntArray
from chipwise.workload.model import ModelSpec


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
    #: latency of one prompt of the 99th-percentile length alone, where the lengths vary (None: the mean's)
    tail_prefill_s: Array | None = None

    @property
    def prefill_p99_s(self) -> Array:
        """One prompt alone at the 99th-percentile length: the mean prompt's where the lengths do not vary."""
        return self.prefill_s if self.tail_prefill_s is None else self.tail_prefill_s

    @property
    def prefill_variability(self) -> Array:
        """1 + the squared coefficient of variation of a prompt's prefill, what a queue of prompts waits longer for
        than one of equal prompts (Pollaczek-Khinchine: an M/G/1 queue's wait over an M/D/1's): the prefill times
        taken as lognormal through the mean prompt's and the 99th-percentile one's (ln(p99 / mean) = Z99 s -
        s^2 / 2), 1 where the lengths do not vary."""
        if self.tail_prefill_s is None:
            return np.ones_like(self.prefill_s)
        ratio = np.log(np.maximum(self.tail_prefill_s, self.prefill_s) / np.maximum(self.prefill_s, 1e-12))
        sigma = Z99 - np.sqrt(np.maximum(Z99**2 - 2.0 * ratio, 0.0))
        return np.asarray(np.exp(np.square(sigma)), dtype=np.float64)

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
            None if self.tail_prefill_s is None else self.tail_prefill_s[idx],
        )


def held_tokens(admission: str, inp: float, out: float) -> float:
    """The KV-cache tokens a request holds over its life, by which a cache seats a batch: its whole context where
    the engine reserves it at admission (`reserve`: TensorRT-LLM's GUARANTEED_NO_EVICT), its prompt and half its
    answer on average where blocks are taken as tokens come (`on_demand`: vLLM, SGLang, whose running requests stand
    at every point of their answers)."""
    return inp + out if admission == "reserve" else inp + out / 2.0


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
    return np.asarray(stage_time(model, dev, topo, eng, weight, shapes, pp * chunks) + pp * coef * pairs)


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
    buffers: int = 0,
    tail: float = 0.0,
) -> Estimate:
    """Price every candidate at saturation (B = min(max_batch, KV capacity, token budget)). `buffers`: tokens of the
    largest iteration the activation buffers hold past the budget (serve.build.buffer_tokens: a request run whole
    without chunked prefill; 0: the budget). `shared`: prompt tokens
    every request shares with the others (a prefix-cache hit short of the whole prompt), which a replica holds once
    (once per attention-DP rank), as the simulator does. `decode_only`: as a
    disaggregated decode pool's replica, which receives its requests' KV caches and encodes no prompt (its TTFT
    share is only the waits for a step and a slot). `tail`: the 99th-percentile prompt's tokens where the lengths
    vary (above `inp`), whose lone prefill is priced too (Estimate.prefill_p99_s)."""
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
        max(max_tokens, buffers),
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
    fits = (mem.kv_tokens / ranks >= inp + out) & (batch >= 1)  # an attention-DP rank holds a request whole
    b = np.maximum(batch, 1.0)
    ones = np.ones(b.shape)
    # one prompt's chunk: the budget, or one attention-DP rank's share of a shared one (engine.prompt_chunk)
    chunk_cap = prompt_chunk(eng, max_tokens, cand.tp, cand.adp) if eng.chunked_prefill else np.full(b.shape, np.inf)
    chunk = np.minimum(chunk_cap, inp) * ones
    padded = _buckets(chunk, inp + out) if eng.static_batch else chunk
    floor = eager_launches(model, dev.chip, weight_precision, shapes, eng.engine) * eng.host_eager_launch_s
    # attention-DP context balancing holds prompts until every rank has one: they join iterations R at a time
    grouped = np.where((cand.adp > 0) & (cand.balance > 0) & (eng.adp_balance_timeout_iters > 0), cand.tp, 1)
    unit = inp * padded / chunk * grouped
    # an engine that encodes one prompt a pass (context_batch 1) prices each pass as one prompt, however many a step
    # takes in turn
    cap = np.minimum(budget, inp) * ones if eng.context_batch == 1 else budget * ones
    prompts = PromptIterations(unit, cap, padded / chunk * ones, floor * ones, max_tokens, 0.0 if decode_only else 1.0)
    step = step_time(
        model, dev, topo, eng, weight_precision, kv_precision, shapes, b, inp, out, prompts, drafting, packed=True
    )
    # a prompt longer than the budget runs in chunks, each attending to the chunks before it (a compiled-shape
    # engine pads each to its bucket): the simulator's lone-prompt time, StepModel.prompt_alone
    args = (model, dev, topo, eng, weight_precision, kv_precision, shapes, out, chunk_cap, ranks, floor)
    lone = partial(_lone_prompt, *args)
    prefill_s, device, work = lone(inp)
    # where the lengths vary, the 99th-percentile prompt alone too (the first tokens' tail: prefill_p99_s)
    tail_prefill = lone(tail)[0] if tail > inp and not decode_only else None
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
        tail_prefill_s=tail_prefill,
    )


def _lone_prompt(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    shapes: Shapes,
    out: float,
    cap: Array,
    ranks: Array,
    floor: Array,
    inp: float,
) -> tuple[Array, Array, Array]:
    """One prompt of `inp` tokens encoded alone on an idle replica of each shape, in chunks of at most `cap` tokens,
    each attending to the chunks before it (padded to its bucket on a compiled-shape engine; one attention-DP rank
    encodes it while the others wait for its attention, `ranks` of them; each at least the eager launch `floor`):
    its seconds to the first token, the device's share of them, and the work a queued prompt adds (spread over the
    ranks, no launch floor)."""
    chunk = np.minimum(cap, inp)
    chunks = np.ceil(inp / chunk)
    # the estimate encodes every prompt whole (no prefix-cache hit: the simulated check counts those), so its pairs
    # are the whole prompt's, and b their share (pair_coefficient with nothing cached)
    coef = pair_coefficient(model, dev, shapes, inp, kv_precision)
    device = np.zeros(np.shape(chunk))
    work = np.zeros(np.shape(chunk))
    for k in range(int(chunks.max())):
        start = k * chunk
        left = np.clip(inp - start, 0.0, chunk)  # this chunk's tokens (none once a shape's prompt is done)
        run = _buckets(left, inp + out) if eng.static_batch else left
        pairs = prefill_pairs(start, run)
        piece = stage_time(model, dev, topo, eng, weight_precision, shapes, run) + coef * pairs
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
    seconds = (eng.host_step_s + eng.host_prefill_s) * chunks + device + last
    return np.asarray(seconds, dtype=np.float64), device, work


def _buckets(tokens: Array, largest: float) -> Array:
    """The buckets a compiled-shape engine pads each entry's tokens to (policies.bucket); none for none."""
    top = math.ceil(largest)
    values, where = np.unique(np.asarray(tokens, dtype=np.float64), return_inverse=True)
    padded = np.asarray([float(bucket(math.ceil(t), largest=top)) if t > 0 else 0.0 for t in values])
    return np.asarray(padded[where].reshape(np.shape(tokens)), dtype=np.float64)
