"""Where a serving deployment's time goes, by component, priced as the simulator's step tables price it: the steady
decode iteration at the batch a simulated run kept (where_time_goes, steady_breakdown), and one mean prompt
encoded alone on an idle replica (prefill_alone, prefill_breakdown)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.iteration import COMPONENTS, IterationInputs, Shapes, iteration_breakdown
from chipwise.serve.sim.policies import bucket
from chipwise.serve.sim.steps import prompt_chunks
from chipwise.serve.simulate import ServingSetup
from chipwise.serve.steady_step import prompt_share
from chipwise.types import Array
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob


def where_time_goes(
    setup: ServingSetup, model: ModelSpec, job: ServingJob, summary: Mapping[str, Any]
) -> dict[str, Any]:
    """A simulated deployment's time by component, as `chipwise predict` and `validate --explain` report it: the
    steady iteration of the run `summary` describes (steady_breakdown) and its largest part, the batch it is priced
    at and the mean of the decode pool's simulated iterations beside it (TPOT weighs each iteration by the sequences
    it carried, so the fuller ones weigh more: I002's steady iteration reads 105 ms at its mean batch where its
    mean TPOT read 120, and nothing had said why), and one mean prompt encoded alone (prefill_alone,
    prefill_breakdown)."""
    first = setup.pools[0].setup
    breakdown = steady_breakdown(setup, model, job, summary)
    return {
        "breakdown": breakdown,
        "steady_batch": _steady_batch(setup, summary),
        "iteration_mean_s": (summary.get("iteration_mean_s") or {}).get(setup.pools[-1].role, math.nan),
        "tpot_mean_s": float(summary["tpot_s"]["mean"]),
        "dominated_by": max(breakdown, key=lambda k: breakdown[k]),
        "prefill_one_prompt": prefill_alone(first, job.mean_input, job.prefix_hit_rate),
        "prefill_breakdown": prefill_breakdown(first, model, job.mean_input, job.prefix_hit_rate),
    }


def steady_breakdown(
    setup: ServingSetup, model: ModelSpec, job: ServingJob, summary: Mapping[str, Any]
) -> dict[str, float]:
    """Where a simulated run's steady decode iteration goes: the decode pool's iteration (_breakdown) at the batch
    the run kept generating (Little's law over its tokens: output tokens/s x mean TPOT per replica); a split's
    decode pool carries no prompts."""
    decode = setup.pools[-1]
    b = _steady_batch(setup, summary)
    # the simulated share of iterations that carried prompts, and the prompt tokens each ran
    ran = (summary.get("iterations") or {}).get(decode.role)
    mix = None
    if ran and ran["prompt"] + ran["decode"] > 0:
        mix = (ran["prompt"] / (ran["prompt"] + ran["decode"]), ran["prompt_tokens"] / max(ran["prompt"], 1e-9))
    return _breakdown(decode.setup, model, b, job.mean_input, job.mean_output, len(setup.pools) == 1, mix)


def _steady_batch(setup: ServingSetup, summary: Mapping[str, Any]) -> float:
    """The sequences a decode replica kept generating over the run (Little's law over its tokens: output tokens/s x
    mean TPOT per replica), at most its batch limit (the mean TPOT is a request's, not a token's, and 256 users at
    b256 had read 258); 1 where the run read none."""
    pool = setup.pools[-1]
    batch = summary["output_tokens_per_s"] * summary["tpot_s"]["mean"] / max(1, pool.replicas)
    return float(min(batch, pool.setup.plan.max_batch)) if math.isfinite(batch) else 1.0


def _breakdown(
    setup: ReplicaSetup,
    model: ModelSpec,
    batch: float,
    inp: float,
    out: float,
    prompts: bool = True,
    mix: tuple[float, float] | None = None,
) -> dict[str, float]:
    """Seconds of one mean steady iteration at `batch` sequences, by component: the decode iterations alone and
    those a prompt joins (its chunk of the token budget), weighed as they come: as simulated (`mix`: the share of
    iterations that carried prompts and the prompt tokens each ran), or else as the estimate has it
    (serve.steady_step.prompt_share; prompt tokens spread evenly over every iteration made each of DeepSeek-R1's
    iterations load every expert, and its breakdown summed to 39 ms where it decodes at 12 ms); with speculative
    decoding the verification step (k + 1 positions per sequence) and its drafting passes; past the engine's
    CUDA-graph batch the host's kernel launches beyond the device work (`host_launches`). Without `prompts` (a
    split's decode pool) no prompt joins, and the sequences still read their prompts' KV cache. An engine that does
    not mix prompts into decode iterations runs them alone while the decodes wait, so each decode step carries its
    share of those iterations (prompt iterations per decode iteration). With pipeline stages an iteration that
    carries a prompt's chunk takes at least the chunk's pass through them in turn; where it does, its parts are that
    pass's (_passes), the decode micro-batches riding the stages the chunk is not on."""
    p = setup.plan
    b = max(1.0, batch)
    steps = setup.steps
    # a static engine's token-generation graph runs every compiled slot over the bucket of the batch's mean context
    static = setup.engine.static_batch
    slots = float(p.max_batch) if static else b
    mean_context = inp + out / 2.0
    per_slot = bucket(int(mean_context) + 1, largest=setup.policy().largest_bucket) if static else mean_context
    fed = slots * (steps.draft_tokens + 1)  # verified positions
    started = b * steps.tau * inp / out if prompts else 0.0  # prompt tokens per iteration
    # an engine that does not mix prompts into decode iterations (SGLang's default) runs them alone, with the whole
    # budget, while the decodes wait: each decode step then carries its share of the prompt iterations between steps
    decoding = bool(setup.engine.mixes(p.attention_dp))
    fed_with = fed if decoding else 0.0  # the decode positions an iteration carrying prompts also runs
    room = max(float(setup.token_budget) - fed_with, 1.0)
    if mix is not None:  # as simulated
        joined, chunk = mix if prompts else (0.0, 0.0)
    else:
        joined = float(prompt_share(started, inp, room)) if started > 0 else 0.0  # the share of iterations prompts join
        chunk = started / joined if joined > 0 else 0.0  # prompt tokens such an iteration carries
    # the weights of a decode-only iteration and of one carrying prompts in a mean decode step
    w_plain, w_mixed = (1.0 - joined, joined) if decoding else (1.0, joined / max(1.0 - joined, 1e-9))

    live = np.asarray(b * (steps.draft_tokens + 1)) if static else None  # the compiled slots' live sequences

    def parts(prompt: float, decodes: float) -> dict[str, float]:
        context, pairs = np.asarray(slots * per_slot if decodes else 0.0), np.asarray(prompt * inp / 2.0)
        work = IterationInputs(
            np.asarray(decodes + prompt), np.asarray(decodes), context, pairs, steps.draft_tokens + 1.0, live
        )
        return {k: float(v) for k, v in _iteration_parts(setup, model, work).items()}

    plain = parts(0.0, fed)
    mixed = parts(chunk, fed_with) if joined > 0 else plain
    # an iteration that carries a prompt, or a decode batch past the largest the engine replays in a CUDA graph,
    # launches its kernels from the host one by one and takes at least their host time; a prompt's chunk passes a
    # pipeline's stages in turn (StepModel.prompt_time, eager_decode_floor)
    n = round(b)
    decode_launches = steps.eager_decode_floor(n, b * mean_context) - steps.decode_base(n) if not static else 0.0
    base = steps.fixed + steps.seq_time(round(fed_with)) - sum(mixed.values())
    prompt_launches = base + steps.eager_floor
    stages = base + steps.pass_time(round(chunk), chunk * inp / 2.0) if steps.pp > 1 and joined > 0 else 0.0
    if stages > 0:
        # the chunk's pass through every stage in turn sets the iteration, the decodes' micro-batches riding the
        # stages it is not on: its parts are the chunk's work on all the stages (_passes). The pipelined round's
        # parts had been shown with the rest as 'waits': Llama-3.1-70B fp8 on 8 H100s at TP2 x PP4, 4,000-token
        # prompts at 2 req/s, had read 'waits' 15.9 of a 42.2 ms mean iteration and GEMMs 15.4; GEMMs now read 26.5
        alone = IterationInputs(
            np.asarray(chunk), np.asarray(fed_with), np.asarray(0.0), np.asarray(chunk * inp / 2.0),
            steps.draft_tokens + 1.0, live,
        )  # fmt: skip
        mixed = {k: float(v) for k, v in _passes(setup, model, alone).items()}
    out_parts = {k: w_plain * plain[k] + w_mixed * mixed[k] for k in COMPONENTS}
    launches = w_plain * max(0.0, decode_launches) + w_mixed * max(0.0, prompt_launches - max(0.0, stages))
    if launches > 0:
        out_parts["host_launches"] = launches
    if steps.drafter is not None:
        # the drafter's pass over a prompt's chunk rides the iterations that carry one, weighted as theirs (the
        # simulator's Replica._step); unweighted, every step had carried a whole draft prefill
        out_parts["drafting"] = steps.draft_time(round(b), b * mean_context) + w_mixed * steps.draft_prefill(
            round(chunk)
        )
    return out_parts


def _iteration_parts(setup: ReplicaSetup, model: ModelSpec, work: IterationInputs) -> dict[str, Array]:
    """serve.iteration.iteration_breakdown of the replica's iterations carrying `work`, as its step tables price
    them (a static engine's compiled slots given: serve.sim.steps._token_table)."""
    p = setup.plan
    shapes = Shapes.of(p.tp, p.pp, p.ep, int(p.attention_dp))
    found = iteration_breakdown(
        model, setup.dev, setup.topo, setup.engine, p.weight_precision, p.kv_precision, shapes, work,
        setup.typical_context, setup.typical_prompt, float(p.max_batch), setup.typical_cached,
    )  # fmt: skip
    return {k: found[k] for k in COMPONENTS}


def _passes(setup: ReplicaSetup, model: ModelSpec, work: IterationInputs) -> dict[str, Array]:
    """The parts of iterations whose prompt chunk (`work`'s tokens and pairs) passes a pipeline's pp stages in turn,
    as StepModel.pass_time prices it: each stage's layers over the whole chunk one after another, pp G(c) with its
    pp - 1 hand-offs and pp b Q, beside the sampled rows and the engine's fixed costs. _iteration_parts prices
    pp G(c / pp), the chunk split into micro-batches that fill the pipeline: a pp-th of the work its pass does."""
    pp = float(setup.plan.pp)
    return _iteration_parts(setup, model, replace(work, tokens=pp * work.tokens, pairs=pp * work.pairs))


def _prompt_args(setup: ReplicaSetup, prompt: float, hit: float) -> tuple[int, int, bool, int, int]:
    """(tokens, chunk, static, largest bucket, cached) of one mean prompt encoded alone, as StepModel.prompt_alone
    and serve.sim.steps.prompt_chunks take them; a prefix-cache `hit` rate leaves that share of it cached (floored,
    as the simulator does)."""
    tokens = max(1, round(prompt))
    cached = min(math.floor(tokens * hit), tokens - 1)
    chunk = setup.prompt_chunk if setup.plan.chunked_prefill else tokens
    return tokens, chunk, setup.engine.static_batch, setup.policy().largest_bucket, cached


def prefill_alone(setup: ReplicaSetup, prompt: float, hit: float = 0.0) -> dict[str, float]:
    """One mean prompt encoded alone on an idle replica, in the engine's chunks: its seconds, the device work, and
    the host time of its kernel launches (per prompt iteration) where the engine runs them eagerly. A prefix-cache
    `hit` rate leaves that share of the prompt cached: attended to, not encoded. The device work is the prompt's
    time with no host launches to wait for, as prefill_breakdown prices it: the sum of its device rows (the last
    chunk's LM head and sampling, each iteration's fixed cost, a drafter's pass and the waits included; the layers
    alone had read 0.33 ms short of the rows shown beside it)."""
    steps = setup.steps
    args = _prompt_args(setup, prompt, hit)
    return {
        "seconds": steps.prompt_alone(*args),
        "device_s": replace(steps, eager_floor=0.0).prompt_alone(*args),
        "host_launches_s": steps.eager_floor * len(prompt_chunks(*args)),
    }


def prefill_full(setup: ReplicaSetup, prompt: float, hit: float = 0.0) -> float:
    """Seconds a replica takes to encode one mean prompt on each of its attention-DP ranks at once (prefill_alone's
    prompt, as many as it has ranks: one where it has none), the iterations carrying a chunk of each."""
    return float(setup.steps.prompts_together(setup.steps.ranks, *_prompt_args(setup, prompt, hit)))


def prefill_breakdown(setup: ReplicaSetup, model: ModelSpec, prompt: float, hit: float = 0.0) -> dict[str, float]:
    """Where prefill_alone's seconds go, by component (serve.iteration.COMPONENT_LABELS), priced as the step
    tables price each of the prompt's iterations (a static engine's padded bucket included: _iteration_parts): the
    token-proportional work of every layer, its prefill attention pairs, the last chunk's LM head and sampling, and
    the engine's fixed costs of each iteration under `overhead`; with pipeline stages, each chunk's work on every
    stage it passes in turn (_passes) with its hand-offs. What the prompt waits beyond its own work is `waits` (the
    other attention-DP ranks) and `host_launches` (an engine that runs prompts eagerly, its kernels launched from the
    host for longer than the device works)."""
    steps = setup.steps
    args = _prompt_args(setup, prompt, hit)
    runs = prompt_chunks(*args)
    encoded, run, last, pairs = (np.array(column, dtype=np.float64) for column in zip(*runs, strict=True))
    work = IterationInputs(run, last, np.zeros_like(run), pairs)
    parts = _iteration_parts(setup, model, work)
    if steps.pp > 1:
        # a lone prompt's chunk passes the stages in turn (StepModel.prompt_time), each doing its layers' share of
        # the work: its parts are that pass's (_passes). Priced as one pipelined pass (a pp-th of the layers' work)
        # the rest had read 'waits': Llama-3.1-70B fp8 at TP2 x PP4 on 8 H100s, a 4,000-token prompt had read 196.7
        # ms of waits and 48.6 ms of GEMMs in 272.5 ms; it now reads GEMMs 183.3 ms (67%) and no waits
        passed = _passes(setup, model, work)
        longer = sum(passed.values()) >= sum(parts.values())
        parts = {k: np.where(longer, passed[k], v) for k, v in parts.items()}
    out = {k: float(v.sum()) for k, v in parts.items()}
    out["overhead"] += len(runs) * steps.prefill_fixed
    if steps.drafter is not None:  # the drafter encodes the prompt too
        out["drafting"] = sum(steps.draft_prefill(int(c)) for c in encoded)
    device, total = replace(steps, eager_floor=0.0).prompt_alone(*args), steps.prompt_alone(*args)
    for key, extra in (("waits", device - sum(out.values())), ("host_launches", total - device)):
        if extra > 0.005 * total:
            out[key] = extra
    return out
