"""The steady iteration of candidate replica shapes, in one vectorised pass over them: the seconds per output token
of a sequence where B sequences decode and the prompts of the requests that start join some of the iterations
(chunked prefill, mixed batching or prompt iterations of their own; speculative decoding's drafting passes).

The step time is the mean over iterations that carry prompt tokens and iterations that do not (step_time): an
iteration's time is not linear in its tokens, so spreading the prompts evenly would under-estimate it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from chipwise.perf.device import Device, Topology
from chipwise.serve.engine import EngineProfile, budgets, decode_graph_batch, prompt_chunk
from chipwise.serve.iteration import (
    Shapes,
    context_coefficient,
    eager_launches,
    host_sequence_time,
    lm_heads,
    micro_batches,
    pair_coefficient,
    rank_imbalance,
    token_costs,
)
from chipwise.serve.sim.policies import bucket
from chipwise.serve.speculation import Drafting
from chipwise.types import Array, IntArray
from chipwise.workload.model import ModelSpec


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


def _decode_context(eng: EngineProfile, inp: float, out: float) -> float:
    """The context a decode step attends over on average: the prompt and half the answer, padded to its
    power-of-two bucket on a static-shape engine (whose compiled graphs read the whole bucket; the last bucket is
    the compiled sequence length, taken as the request's)."""
    mean = inp + out / 2.0
    return float(bucket(int(mean), largest=math.ceil(inp + out))) if eng.static_batch else mean


def stage_time(
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


def step_time(
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
    others: Array | None = None,
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
    runs every slot). `others`: the iterations one sequence decodes in, which carry the prompts of the requests that
    arrive meanwhile, as many a step as `others` sequences' worth (its own ran before its first token): the TPOT it
    sees, where the replica's time per token counts every prompt. Poisson arrivals come at the load's rate whoever
    is decoding, so `others` is the load's Little's-law count, not the batch less the sequence: at 30% of an H100's
    load of Llama-3.1-8B with 16,000-token prompts a lone sequence had decoded at the plain 6.6 ms where the
    simulated one, joined by the prompts that arrive, reads 9.8 ms; and no more than the other slots hold (a replica
    of one slot takes no prompt while its sequence decodes: Llama-3.1-70B on a TP8 PP4 H200 replica of one slot had
    read 42 ms where it decodes at 15 ms, with its 128K-token prompt spread over its own iterations)."""
    pp = shapes.pp.astype(np.float64)
    k, tau = (drafting.spec.draft_tokens, drafting.spec.tokens_per_step) if drafting else (0, 1.0)
    fed = batch * (k + 1.0)  # positions the target decodes (verifies)
    # prompt tokens that start per iteration
    sequences = batch if active is None else active
    started = (sequences if others is None else others) * tau * inp / out * prompts.encoded
    a = context_coefficient(model, dev, shapes, kv_precision, inp + out, k + 1.0)
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
    joins = _prompt_joins(eng, shapes, prompts, started, fed, micro, packed)
    plain, full, rest = _iteration_times(
        model, dev, topo, eng, weight_precision, kv_precision, shapes, inp, prompts, joins, fed, micro, spread
    )
    if eng.graph_max_batch > 0 and eng.uncaptured_launch_s > 0:
        # past the largest batch the engine replays in a CUDA graph a decode step launches eagerly (eager_decode_floor),
        # at the decode step's own launch time: a prompt iteration's floor (prompts.floor) is 0 on an engine that
        # captures its prompts too (vLLM's piecewise graphs), whose larger decode batches launch all the same
        floor = eager_launches(model, dev.chip, weight_precision, shapes, eng.engine) * eng.host_decode_launch_s
        # a rank's capture size against a rank's share of the batch under attention DP (StepModel.eager_decode_floor)
        ranks = np.where((shapes.adp > 0) & (shapes.tp > 1), shapes.tp, 1)
        eager = np.ceil(sequences / ranks) > decode_graph_batch(eng, dev.chip.hbm_capacity, shapes.tp)
        launches = floor - a * sequences * _decode_context(eng, inp, out)
        plain = np.where(eager, np.maximum(plain, launches), plain)
    iters, pieces = joins.share, joins.pieces
    joined = np.where(joins.chunked, ((pieces - 1.0) * full + rest) / pieces, full)
    t = np.where(
        joins.mixing,
        decode + (1.0 - iters) * plain + iters * joined,
        decode + plain + iters * (eng.host_step_s + joined),
    )
    t = t + iters * eng.host_prefill_s
    if drafting is not None:
        # k drafting passes over the batch, then one over the prompt tokens that start
        decode_pass, prompt_pass = _draft_passes(
            drafting.model, dev, topo, eng, weight_precision, kv_precision, shapes, batch, started, inp, out, micro
        )
        t = t + k * decode_pass
        t = t + prompt_pass
    return np.asarray(t / tau, dtype=np.float64)


@dataclass(frozen=True)
class _PromptJoins:
    """How the prompts that start join a steady load's iterations (arrays over the candidates)."""

    mixing: NDArray[np.bool_]  # they ride in the decode iterations (else in prompt iterations of their own)
    share: Array  # the share of the iterations they join
    pieces: Array  # the iterations one group of prompts needs
    chunked: NDArray[np.bool_]  # a group runs as full chunks and a remainder (several pieces)
    first: Array  # prompt tokens an iteration that a group joins runs (padded): a full chunk where chunked
    last: Array  # and the group's last iteration: the remainder where chunked
    base: Array  # decode tokens an iteration that prompts join carries beside them


def _prompt_joins(
    eng: EngineProfile,
    shapes: Shapes,
    prompts: PromptIterations,
    started: Array,
    fed: Array,
    micro: Array,
    packed: bool,
) -> _PromptJoins:
    """How the `started` prompt tokens of each iteration join the iterations of `fed` decode tokens in `micro`
    micro-batches (step_time): a group of u tokens that arrive together needs ceil(u / room) iterations (room: the
    budget left beside the decode tokens, each micro-batch with a budget of its own), a share p = 1 - e^-x of the
    iterations as the groups arrive (prompt_share), S / room where queued prompts fill the room (`packed`); a group
    longer than the room runs as full chunks and a remainder."""
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
    # a group longer than the room runs as full chunks and a remainder, each at least the launch floor: their mean.
    # Groups that arrive while one is running share its iterations, so a joined iteration carries started / share
    # tokens on average, more than a lone group's group / pieces: the last piece takes the overlap's tokens beside
    # the remainder (at most the room). A lone group's pieces alone had dropped 1 - share / x of the prompt work:
    # Llama-3.1-70B at 10 req/s of 2,000 / 400 tokens on a Gaudi 3 TP8 replica read a 26 ms TPOT where the
    # simulator, whose iterations carried 1,542 prompt tokens each, ran 38 ms and missed a 50 ms p99
    chunked = (pieces > 1) & (not packed)
    joined = np.minimum(started / np.maximum(iters, 1e-12), room)  # unpadded prompt tokens of a joined iteration
    overlap = np.maximum(pieces * joined, group) - (pieces - 1.0) * room  # the last piece's tokens, chunked
    last = np.where(chunked, overlap * prompts.padding, tokens)
    first = np.where(chunked, room * prompts.padding, tokens)
    base = np.where(mixing, fed, 0.0)
    return _PromptJoins(mixing, iters, pieces, chunked, first, last, base)


def _iteration_times(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    shapes: Shapes,
    inp: float,
    prompts: PromptIterations,
    joins: _PromptJoins,
    fed: Array,
    micro: Array,
    spread: Array,
) -> tuple[Array, Array, Array]:
    """Seconds of an iteration of `fed` decode tokens alone (plain) and of the full and the last iterations a group
    of prompts joins (full, rest), in `micro` micro-batches (`spread`: pp / micro), with their prompt attention. A
    prompt's piece runs on one attention-DP rank, so the heaviest rank carries at least one piece; it passes a
    pipeline's stages in turn, whatever else its iteration carries; an iteration that carries prompt tokens takes
    at least the launch floor."""
    pp = shapes.pp.astype(np.float64)
    b = pair_coefficient(model, dev, shapes, inp, kv_precision)  # whole prompts' pairs, as the estimate encodes them
    first, last, base, chunked = joins.first, joins.last, joins.base, joins.chunked
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
        plain, full, rest, *passed = stage_time(
            model, dev, topo, eng, weight_precision, shapes, rows, _runs(rows, micro, 3)
        )
    else:
        rows = np.stack(np.broadcast_arrays(fed, base + first, *passes[:1]))
        plain, full, *passed = stage_time(model, dev, topo, eng, weight_precision, shapes, rows, _runs(rows, micro, 2))
        rest, passed = full, passed * 2
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
    return plain, full, rest


def _draft_passes(
    draft: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    shapes: Shapes,
    batch: Array,
    started: Array,
    inp: float,
    out: float,
    micro: Array,
) -> tuple[Array, Array]:
    """Seconds of a speculative step's drafting passes of the `draft` model, in `micro` micro-batches: one decode pass
    over the `batch` (its stages, LM heads and attention over the context), and the pass over the `started` prompt
    tokens."""
    spread = shapes.pp.astype(np.float64) / micro
    ad = context_coefficient(draft, dev, shapes, kv_precision, inp + out)
    decode_pass = (
        stage_time(draft, dev, topo, eng, weight_precision, shapes, batch, micro)
        + lm_heads(draft, dev, shapes, batch, batch)
        + ad * spread * batch * _decode_context(eng, inp, out)
    )
    return decode_pass, stage_time(draft, dev, topo, eng, weight_precision, shapes, started, micro)
