"""Choosing a serving replica's shape and count: the steady-state estimates of every candidate shape
(serve.estimate) at the load, the SLO check, and the rate a replica sustains within it (the shapes ranked by
planner.serving_choice_rank); choose_any, the search over every replica shape with the engine's token budget."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace

import numpy as np

from chipwise.economics.rental import billed_one, rent
from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import topology_of
from chipwise.planner.serving_choice_rank import (
    chips_rank,
    idle_reason,
    load_share,
    output_per_chip_score,
    per_token_first,
    replicas_needed,
    speed_rank,
    stated_batch_first,
    stated_fallback,
)
from chipwise.planner.serving_outcome import MAX_CHECK_LOAD
from chipwise.serve.candidates import Candidates, enumerate_candidates
from chipwise.serve.decode_tail import answer_probabilities
from chipwise.serve.engine import EngineProfile, token_budget
from chipwise.serve.estimate import Estimate, estimate, held_tokens
from chipwise.serve.operating import MAX_UTILISATION, Operating, at_rate, closed_loop
from chipwise.serve.plan import ReplicaPlan, chip_count, plan_label
from chipwise.serve.quant import holds_fp8_kv, stored_bytes
from chipwise.serve.speculation import Drafting
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import DEFAULT_ROUTER
from chipwise.workload.serving_job import ServingJob

UTILISATIONS = np.asarray([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
DEFAULT_UTILISATION = 0.8  # the load a replica is sized for when no SLO is given
RATE_BISECTIONS = 4  # steps that refine a replica's highest load within the SLO, to 1/160 of its capacity


@dataclass(frozen=True)
class Choice:
    """A replica shape and how many replicas, with the estimate that chose it."""

    plan: ReplicaPlan
    replicas: int
    chips: float
    throughput: float  # output tokens/s per replica at saturation (estimate)
    tpot: float
    ttft_p99: float
    billed: float  # chips rented for the replicas: the system's rental units that host them (else as used)
    #: why the replicas leave some of the stated chips idle ('' where they fill them, or none were stated)
    idle_reason: str = ""
    #: why the batch limit is what it is, where the KV cache set it ('' where the candidate's own limit stands)
    batch_reason: str = ""
    #: the output tokens/s the replicas serve a closed loop's users (_closed_output, as the ranking has it; NaN
    #: under other loads)
    closed_output: float = math.nan


@dataclass(frozen=True)
class ShapeQuery:
    """What a replica shape search prices: model, system, engine profile, precisions, mean tokens, drafting."""

    model: ModelSpec
    system: System
    eng: EngineProfile
    weight: str
    kv: str
    inp: float
    out: float
    drafting: Drafting | None = None
    #: tokens the activation buffers hold past the budget: a request run whole without chunked prefill (0: none)
    buffers: int = 0
    #: the 99th-percentile prompt's tokens where the lengths vary (0: none past the mean), whose lone prefill sets the
    #: first tokens' tail (serve.estimate's `tail`)
    tail: float = 0.0
    #: the answer lengths at serve.decode_tail's answer_probabilities() over their mean where they vary (empty: all of
    #: one length), whose short answers widen the TPOT's tail
    answers: tuple[float, ...] = ()

    def estimate(self, cand: Candidates, max_tokens: int, decode_only: bool = False, shared: float = 0.0) -> Estimate:
        """The candidates `cand` priced at saturation (serve.estimate.estimate)."""
        q = self
        return estimate(
            q.model, q.system, q.eng, cand, q.weight, q.kv, q.inp, q.out, max_tokens, q.drafting, decode_only, shared,
            q.buffers, q.tail,
        )  # fmt: skip

    def at_rate(
        self, est: Estimate, rates: np.ndarray, fleet_rate: float = 0.0, router: str = DEFAULT_ROUTER
    ) -> Operating:
        """Where each of `est`'s candidates runs at `rates` requests/s a replica (serve.operating's)."""
        q = self
        return at_rate(
            q.model, q.system, q.eng, est, q.weight, q.kv, q.inp, q.out, rates, q.drafting, fleet_rate, router,
            np.asarray(q.answers) if q.answers else None,
        )  # fmt: skip

    def closed_loop(
        self, est: Estimate, users: np.ndarray, fleet_users: float = 0.0, router: str = DEFAULT_ROUTER
    ) -> Operating:
        """Where each of `est`'s candidates runs with `users` closed-loop users a replica (serve.operating's)."""
        q = self
        return closed_loop(
            q.model, q.system, q.eng, est, q.weight, q.kv, q.inp, q.out, users, q.drafting, fleet_users, router,
            np.asarray(q.answers) if q.answers else None,
        )  # fmt: skip


def _slo_ok(targets: Mapping[str, float], op: Operating, out: float) -> np.ndarray:
    """Each SLO target against the estimate: medians against the means, tail percentiles against the tails; the
    end-to-end latency is TTFT plus the other output tokens at TPOT. One-token answers have no TPOT to meet."""
    ok = np.ones(np.shape(op.tpot), dtype=bool)
    for key, limit in targets.items():
        metric, stat = key.split("_")[0], key.rsplit("_", 1)[-1]
        ttft, tpot = (op.ttft, op.tpot) if stat == "p50" else (op.ttft_p99, op.tpot_p99)
        if out <= 1.0 and metric == "tpot":
            continue
        later = (out - 1.0) * tpot if out > 1.0 else 0.0
        ok &= {"ttft": ttft, "tpot": tpot, "e2e": ttft + later}[metric] <= limit
    return ok


def saturated_rate(est: Estimate, out: float) -> np.ndarray:
    """Per candidate, the requests/s one replica carries with every batch slot busy: its output tokens/s at
    saturation over the tokens a request produces, and at most one prompt's own work per request (what bounds a
    prefill pool, whose requests produce one token each)."""
    return np.minimum(est.throughput / out, 1.0 / np.maximum(est.prefill_work_s, 1e-12))


def max_rate(
    query: ShapeQuery,
    est: Estimate,
    targets: Mapping[str, float],
    fleet_rate: float = 0.0,
    router: str = DEFAULT_ROUTER,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate of `est` (`query`'s): the highest request rate one replica carries within the SLO (0 if none),
    and its TPOT and p99 TTFT estimates there (`fleet_rate`: the whole load, whose replicas behind `router` pool
    their batch slots: at_rate)."""
    out = query.out
    best = np.zeros(len(est.cand))
    tpot_at = np.full(len(est.cand), np.inf)
    ttft_at = np.full(len(est.cand), np.inf)
    cap = saturated_rate(est, out)

    n = len(est.cand)

    def trials(us: np.ndarray) -> None:
        """Every candidate at each row of loads `us` (fractions of its capacity), in one vectorised call that
        broadcasts the rows of loads over the candidates (what depends on a shape alone is priced once, not once a
        row); a load that meets the SLO above the best so far becomes the best."""
        rows = us.shape[0]
        rates = us * cap
        op = query.at_rate(est, rates, fleet_rate, router)
        tpot, ttft = np.broadcast_to(op.tpot, rates.shape), np.broadcast_to(op.ttft_p99, rates.shape)
        ok = est.fits & _slo_ok(targets, op, out) & np.isfinite(tpot)
        # the loads rise row by row: per candidate the last row that meets the SLO above the best so far
        take = ok & (rates > best)
        last = rows - 1 - np.argmax(take[::-1], axis=0)
        found, cols = take.any(axis=0), np.arange(n)
        best[:] = np.where(found, rates[last, cols], best)
        tpot_at[:] = np.where(found, tpot[last, cols], tpot_at)
        ttft_at[:] = np.where(found, ttft[last, cols], ttft_at)

    if not targets:
        trials(np.full((1, n), DEFAULT_UTILISATION))
        return best, tpot_at, ttft_at
    trials(np.repeat(UTILISATIONS[:, None], n, axis=1))
    # between the highest grid load that meets the SLO and the next one up (a tenth of the capacity: up to a sixth
    # of the replicas), the loads a bisection of RATE_BISECTIONS steps would reach, all at once
    lo = np.where(cap > 0, best / np.maximum(cap, 1e-300), 0.0)
    hi = np.minimum(lo + UTILISATIONS[0], MAX_UTILISATION)
    steps = 2**RATE_BISECTIONS
    trials(lo + (hi - lo) * (np.arange(1, steps)[:, None] / steps))
    return best, tpot_at, ttft_at


#: A replica's closed-loop users are searched up to this many times its batch slots (the rest wait for a slot), to
#: one user: each round splits the interval left into USER_SPLITS (three bits of a bisection at once), for at
#: most USER_ROUNDS rounds (each leaves an eighth of the interval, plus the one user of the rounding down).
USER_LIMIT = 4.0
USER_SPLITS = 8
USER_ROUNDS = 8


def choose(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    job: ServingJob,
    weight: str,
    kv: str,
    targets: Mapping[str, float],
    fixed: Mapping[str, int],
    chips: int | None,
    max_tokens: int,
    chunked: bool,
    drafting: Drafting | None = None,
    decode_only: bool = False,
    passed_over: Collection[Shape] = (),
) -> tuple[Choice, Estimate, np.ndarray]:
    """The replica shape and count with the fewest chips that carries the job's load within the SLO (offline:
    the most output tokens/s per chip; a searched closed loop: the least cost per output token, per_token_first).
    Returns the choice, the estimates and the per-candidate max rates (open loops; zeros under a closed loop, whose
    replicas are sized by their users: max_users). `decode_only`: the decode pool of a disaggregated deployment
    (serve.estimate); `passed_over`: parallel shapes (plan_shape) left out, whose simulated run missed the SLO
    (planner.serving_pool)."""
    cand = _without(_candidates(model, system, eng, fixed, chips, drafting, decode_only), passed_over)
    if not len(cand):  # every shape passed over: none left to price (an empty estimate has no maximum)
        raise InfeasibleError(f"no replica shape on {system.chip.id} is left once {len(passed_over)} are passed over")
    inp, out = job.mean_input, job.mean_output
    # the buffers the replica is set up with (serve.build.buffer_tokens): without chunked prefill its longest request
    # runs whole, and a batch limit sized beside budget-sized buffers had read 'b3: the KV cache holds 3 requests' of
    # 131,064 tokens on an H100 whose cache, beside 16.5 GiB of buffers, holds 2
    buffers = 0 if chunked or eng.static_batch else job.max_input + job.max_output
    answers = job.answer_spread(answer_probabilities())
    query = ShapeQuery(model, system, eng, weight, kv, inp, out, drafting, buffers, job.input_quantile(0.99), answers)
    # a prefix-cache hit short of the whole prompt is a shared prefix, held once (the simulator's Replica._shared)
    shared = job.prefix_hit_rate * inp if job.prefix_hit_rate < 1.0 else 0.0
    est = query.estimate(cand, max_tokens, decode_only, shared)
    if not est.fits.any():
        raise _searched(
            _cache_short(query, est, fixed, chips) or _fits_no_shape(model, system, weight, fixed, chips, drafting),
            len(cand),
        )
    load = job.load
    lam = load.rate if load.kind == "rate" else _trace_rate(job) if load.kind == "trace" else 0.0
    # per candidate, what one replica carries within the SLO: users under a closed loop, else requests/s
    if job.load.kind == "closed":
        carried, tpot, ttft = _fitting(est, lambda e: max_users(query, e, targets, load.concurrency, job.router))
        rate = np.zeros(len(cand))
    else:
        rate, tpot, ttft = _fitting(est, lambda e: max_rate(query, e, targets, lam, job.router))
        carried = rate
    per_chip = est.chips
    # an open loop's replicas are sized at most MAX_CHECK_LOAD of their saturated rate, the most plan serve's check
    # passes a fleet at however it meets the SLO (plan fleet loads its replicas as far): sized up to 95% where a loose
    # SLO allowed it, 54 H200s had carried Llama-3.1-70B at 60 req/s (1,024/1,024) where the check takes 58, and of 38
    # random plan-serve cases (scripts/estimator_vs_simulator.py) the check settled on the estimate's count in 23,
    # now 28. The rate within the SLO (`carried`) still ranks equal rentals (load_share) and is what `choose` returns
    sized = np.minimum(carried, MAX_CHECK_LOAD * saturated_rate(est, out)) if targets and lam > 0 else carried
    need = replicas_needed(load, lam, sized, chips, per_chip)
    # the replicas fill what they rent: replicas smaller than a chip (a Trainium core or two) whole chips, and a
    # searched fleet its provider's units (a TPU v5e TP2 replica rents a 4-chip slice, which runs two)
    rented, hosts = rent(() if chips else system.rental_chips, per_chip, need)
    need = np.where(np.isfinite(need), np.maximum(need, hosts), need)
    # a compiled batch (static shapes) runs every slot each step: slots kept spare cost every request's TPOT, which
    # only a TPOT or end-to-end target keeps in check (plan serve's check then gives headroom back), and a closed
    # loop's users never fill them; there the least busy fleet does not rank first (Llama-3.1-8B on a trn2 for one
    # user had taken 386 slots, its TPOT 71 ms where one gives 15)
    spare_costs = eng.static_batch and (
        load.kind == "closed" or not any(k.startswith(("tpot", "e2e")) for k in targets)
    )
    taken = np.zeros(len(need)) if spare_costs else load_share(system, chips, load, lam, carried, need)
    total_chips = need * per_chip
    if chips and load.kind != "offline" and not np.isfinite(total_chips).any():
        need, total_chips = stated_fallback(est, chips, per_chip, total_chips, load, lam, out, targets)
    per_chip_output = load.kind == "offline" or bool(chips and not np.isfinite(total_chips).any())
    if per_chip_output:
        score = output_per_chip_score(est, per_chip, need, load, targets, out)
    else:
        # among shapes of as many chips, the faster where they would run (their share of an open loop's load):
        # TPOT, then TTFT (a larger batch cap waits less for a slot)
        fast_tpot, fast_ttft = tpot, ttft
        output = None
        if load.kind == "closed":
            output = _closed_output(query, est, need, load.concurrency, job.router)
        if load.kind in ("rate", "trace"):
            share = np.where(np.isfinite(need), lam / np.maximum(need, 1.0), 0.0)
            op = query.at_rate(est, share, lam, job.router)
            fast_tpot, fast_ttft = op.tpot, op.ttft_p99
            if targets and not chips:
                # attention-DP balancing waits longer for one prompt per rank at a lighter load: a shape that meets
                # the SLO at its most load can miss it at its share, and more replicas only lighten it further
                total_chips = np.where(_slo_ok(targets, op, out), total_chips, np.inf)
        speed = speed_rank(fast_tpot, fast_ttft, est, need, load, output)
        used = chips_rank(system, chips, per_chip, need, total_chips, rented, taken)
        score = np.where(np.isfinite(total_chips), used + 1e-6 * speed, np.inf)
        if output is not None and not chips:
            score = per_token_first(score, rented, output)
        if chips and np.isfinite(score).any():
            score = stated_batch_first(score, used, speed, need, est, eng.static_batch)
    if not np.isfinite(score).any():
        raise _searched(_meets_no_slo(query, est, chips), len(cand), est)
    i = int(np.argmin(score))
    max_batch = kv_limited_batch(est, i, cap_context(eng, load.kind, inp, out))
    plan = _replica_plan(cand, i, max_batch, max_tokens, chunked, weight, kv, drafting)
    replicas = int(need[i]) if np.isfinite(need[i]) else 1
    tpot_i, ttft_i = float(tpot[i]), float(ttft[i])
    throughput_i = float(est.throughput[i])
    capped = (est, i)  # the estimate whose candidate's batch limit the plan's is
    if load.kind == "offline":  # every replica runs saturated: its step at the saturation batch
        tpot_i = float(est.step[i])
        limits = [v for k, v in targets.items() if k.startswith("tpot")]
        finer = _finer_batch(query, est, i, max_tokens, min(limits)) if (
            limits and out > 1 and "max_batch" not in fixed
        ) else None  # fmt: skip
        if finer is not None:
            # the grid's batch limits double: between the chosen one and the next, the largest whose saturated step
            # meets the TPOT target carries more (Llama-3.1-8B offline on MI300X under 20 ms: b48 at 2,420 tok/s a
            # chip, where the grid's best was TP2 b64 at 2,071)
            fine, j = finer
            capped = (fine, j)
            plan = replace(plan, max_batch=kv_limited_batch(fine, j, cap_context(eng, load.kind, inp, out)))
            tpot_i, throughput_i = float(fine.step[j]), float(fine.throughput[j])
    if math.isfinite(tpot_i) and load.kind in ("rate", "trace", "closed"):
        # the estimates where the chosen replicas run: their share of the load, not the most each could carry
        one = est.take(np.asarray([i]))
        op = _at_their_share(query, one, job, lam, replicas)
        if np.isfinite(op.tpot[0]):
            tpot_i, ttft_i = float(op.tpot[0]), float(op.ttft_p99[0])
    closed = math.nan  # what the chosen replicas serve a closed loop's users, as the ranking has it (none: NaN)
    if load.kind == "closed":
        served = float(
            _closed_output(query, est.take(np.asarray([i])), need[i : i + 1], load.concurrency, job.router)[0]
        )
        closed = served if served > 0 else math.nan
    billed = billed_one(system.rental_chips, float(per_chip[i]), max(1, replicas))
    idle = ""
    if chips:  # why the replicas leave some of the stated chips idle, where they do
        idle = idle_reason(system, chips, cand, per_chip, need, score, per_chip_output, i, bool(targets))
    why = batch_reason(*capped, eng, job, plan.max_batch, max(1, replicas))
    return (
        Choice(plan, max(1, replicas), float(per_chip[i]), throughput_i, tpot_i, ttft_i, billed, idle, why, closed),
        est,
        rate,
    )


def choose_any(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    job: ServingJob,
    weight: str,
    kv: str,
    targets: Mapping[str, float],
    drafting: Drafting | None = None,
    decode_only: bool = False,
    fixed: Mapping[str, int] | None = None,
) -> tuple[Choice, Estimate, np.ndarray]:
    """`choose` over every replica shape (those with the `fixed` settings), with the engine's token budget and
    chunking."""
    budget = token_budget(eng, job.max_input, memory_bytes=system.chip.hbm_capacity)
    chunked = eng.chunked_prefill
    return choose(
        model, system, eng, job, weight, kv, targets, fixed or {}, None, budget, chunked, drafting, decode_only
    )


def _candidates(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    fixed: Mapping[str, int],
    chips: int | None,
    drafting: Drafting | None,
    decode_only: bool,
) -> Candidates:
    """The replica shapes choose prices on `system`: within the stated `chips` (else as wide as the search goes),
    with the `fixed` knobs, attention-DP balancing searched where the engine balances and the replica encodes
    prompts; with a draft model, only the tps that split its heads too."""
    topo_ranks = (chips * system.chip.cores_per_chip) if chips else None
    balancing = eng.adp_balance_timeout_iters > 0 and not decode_only  # a decode pool encodes no prompt to hold
    cand = enumerate_candidates(model, topology_of(system), topo_ranks, dict(fixed), balancing=balancing)
    if drafting is not None and drafting.spec.method == "draft" and "tp" not in fixed:
        # a draft model runs at its target's tp (planner.serving_inputs.check_drafter_tp): the searched tp splits its
        # heads too, where qwen2.5-7b drafting for qwen2.5-72b on 8 H100 had been searched to tp 8 and then refused
        heads = drafting.model.attention
        splitting = [tp for tp in np.unique(cand.tp) if not heads.tp_problem(int(tp))]  # a few tps, not every shape
        cand = cand.take(np.flatnonzero((cand.adp > 0) | np.isin(cand.tp, splitting)))
    return cand


#: A replica's parallel shape, without its batch limit: (tp, pp, ep, attention DP, its balancing), as 0/1 flags
Shape = tuple[int, int, int, int, int]


def plan_shape(plan: ReplicaPlan) -> Shape:
    """A replica plan's parallel shape (Shape), as `choose` leaves shapes out."""
    return plan.tp, plan.pp, plan.ep, int(plan.attention_dp), int(plan.adp_balance)


def _without(cand: Candidates, shapes: Collection[Shape]) -> Candidates:
    """The candidates of parallel shapes other than `shapes` (every batch limit of those left out)."""
    if not shapes:
        return cand
    out = np.zeros(len(cand), dtype=bool)
    for tp, pp, ep, adp, balance in shapes:  # a few shapes, each over every candidate at once
        out |= (cand.tp == tp) & (cand.pp == pp) & (cand.ep == ep) & (cand.adp == adp) & (cand.balance == balance)
    return cand.take(np.flatnonzero(~out))


def _fits_no_shape(
    model: ModelSpec,
    system: System,
    weight: str,
    fixed: Mapping[str, int],
    chips: int | None,
    drafting: Drafting | None = None,
) -> InfeasibleError:
    """The error where the model fits no replica shape: within the stated chips, or the search's widest shapes. With
    attention DP fixed, a request must fit one rank's share of the cache (estimate.fits), so dropping it is a fix. A
    draft model held beside the target is named, and a smaller one (or none) offered: Llama 3.1 70B in fp8 with an
    8B draft on one H100 had been told only to use more chips or quantise, the draft never named."""
    adp = bool(fixed.get("attention_dp"))
    draft = drafting is not None and drafting.spec.method == "draft"
    beside = f" beside its draft model {drafting.model.name}" if draft and drafting is not None else ""
    smaller = "use a smaller draft model (or EAGLE, MTP, or no drafting), " if draft else ""
    # the model as the user named it ('llama3.1-405b = llama-3.1-405b'), as the answers name it: the preset id alone
    # had read 'llama-3.1-405b (bf16) fits no replica shape' for llama3.1-405b asked for
    return InfeasibleError(
        f"{model.display} ({weight}){beside} fits no replica shape on {system.chip.id}"
        + (f" with max_batch {fixed['max_batch']:,}" if "max_batch" in fixed else "")
        + (" with attention DP (each rank caches its own requests whole)" if adp else "")
        + (
            f" within {chip_count(chips)}. Fix: "
            + ("lower max_batch, " if "max_batch" in fixed else "")
            + ("drop attention_dp, " if adp else "")
            + smaller
            + "use more chips, or quantise the weights or the KV cache."
            if chips
            # a search sizes the replicas itself: its widest shapes did not hold the model
            else f" (up to {topology_of(system).domain_ranks * 4} ranks). Fix: "
            + ("lower max_batch, " if "max_batch" in fixed else "")
            + ("drop attention_dp, " if adp else "")
            + smaller
            + "quantise the weights or the KV cache (--precision, --kv-precision), or use a chip with more "
            "memory."
        )
    )


def _cache_short(
    query: ShapeQuery, est: Estimate, fixed: Mapping[str, int], chips: int | None
) -> InfeasibleError | None:
    """The error where the weights fit some shape but no shape's KV cache holds one request (estimate.fits), naming
    the request and the largest cache; None where the weights fit none (_fits_no_shape). Llama-3.1-70B fp8 on one
    H100 with 120,000-token prompts had read 'fits no replica shape ... Fix: use more chips, or quantise the weights
    or the KV cache', as if the weights did not fit (they do: TP1 holds 34,816 tokens at 1,024) and its KV cache
    already fp8; it now reads that no shape's cache holds one 120,064-token request, TP1's the largest."""
    if not (est.kv_tokens > 0).any():
        return None
    ranks = np.where(est.cand.adp > 0, est.cand.tp, 1)
    held = est.kv_tokens / ranks  # with attention DP each rank caches its own requests whole
    c, j = est.cand, int(np.argmax(held))
    shape = (int(c.tp[j]), int(c.pp[j]), int(c.ep[j]), bool(c.adp[j]), int(c.max_batch[j]))
    label = plan_label(*shape, adp_balance=bool(c.balance[j]))
    adp = bool(fixed.get("attention_dp"))
    smaller = _smaller_kv(query)
    fixes = (
        ["lower max_batch"] * ("max_batch" in fixed)
        + ["drop attention_dp"] * adp
        + ["use more chips (a higher tp or pp)" if chips else "use a chip with more memory"]
        + [f"quantise the KV cache to {smaller}"] * bool(smaller)
    )
    return InfeasibleError(
        f"{query.model.display} ({query.weight}) fits no replica shape on {query.system.chip.id}"
        + (f" with max_batch {fixed['max_batch']:,}" if "max_batch" in fixed else "")
        + (f" within {chip_count(chips)}" if chips else f" (up to {topology_of(query.system).domain_ranks * 4} ranks)")
        + f": the weights fit, but no shape's KV cache holds one {query.inp + query.out:,.0f}-token request (the "
        f"largest, {label}'s, holds {float(held[j]):,.0f} tokens{' a rank' if c.adp[j] else ''}). Fix: "
        + ", ".join(fixes)
        + ", or shorten the requests."
    )


def _smaller_kv(query: ShapeQuery) -> str:
    """The next smaller KV-cache precision the engine holds on the chip ('' where none): fp8 below 16-bit where the
    engine holds an fp8 cache there, fp4 (NVFP4) on NVIDIA's Blackwell chips alone (planner.serving_inputs)."""
    chip = query.system.chip
    if stored_bytes(query.kv) > 1.0 and holds_fp8_kv(query.eng.engine, chip):
        return "fp8"
    if query.kv != "fp4" and chip.vendor == "nvidia" and "fp4" in chip.flops:
        return "fp4"
    return ""


def _replica_plan(
    cand: Candidates,
    i: int,
    max_batch: int,
    max_tokens: int,
    chunked: bool,
    weight: str,
    kv: str,
    drafting: Drafting | None,
) -> ReplicaPlan:
    """Candidate `i`'s shape as a replica plan, with its batch limit `max_batch` and the search's settings."""
    return ReplicaPlan(
        tp=int(cand.tp[i]),
        pp=int(cand.pp[i]),
        ep=int(cand.ep[i]),
        attention_dp=bool(cand.adp[i]),
        adp_balance=bool(cand.balance[i]),
        max_batch=max_batch,
        max_tokens=max_tokens,
        chunked_prefill=chunked,
        weight_precision=weight,
        kv_precision=kv,
        speculation=drafting.spec if drafting else None,
    )


def _meets_no_slo(query: ShapeQuery, est: Estimate, chips: int | None) -> InfeasibleError:
    """The error where no replica shape meets the SLO at the load (with the stated chips), with what the fastest
    shapes reach."""
    return InfeasibleError(
        f"no replica shape on {query.system.chip.id} meets the SLO at this load"
        + (f" with {chips} chips" if chips else "")
        + _fastest(query, est)
        + ". Fix: relax the SLO, lower the load, or add chips."
    )


def _at_their_share(query: ShapeQuery, one: Estimate, job: ServingJob, lam: float, replicas: int) -> Operating:
    """The chosen candidate (`one`, its estimate alone) where its `replicas` run: each at its share of the job's
    closed-loop users or of its arrival rate `lam`, the whole load pooled behind the job's router."""
    load = job.load
    if load.kind == "closed":
        users = np.asarray([load.concurrency / max(1, replicas)])
        return query.closed_loop(one, users, load.concurrency, job.router)
    share_i = np.asarray([lam / max(1, replicas)])
    return query.at_rate(one, share_i, lam, job.router)


def _closed_output(query: ShapeQuery, est: Estimate, need: np.ndarray, users: float, router: str) -> np.ndarray:
    """Per candidate, the output tokens/s its `need` replicas serve with `users` closed-loop users shared among them
    (closed_loop's request rate, rho of the saturated throughput, times the output tokens); 0 where it cannot carry
    them or does not fit. Replicas beyond the users serve none: closed_loop seats at least one user a replica, so
    one user over four TP1 replicas of a trn2 chip had read four users' output (Llama-3.1-8B, 1,000 / 500 tokens:
    it had read 125 tok/s; it now reads the one user's 31, where one TP4 replica serves that user 67)."""
    carries = np.isfinite(need) & est.fits
    replicas = np.where(carries, np.maximum(need, 1.0), 1.0)
    op = query.closed_loop(est, users / replicas, users, router)
    output = np.minimum(replicas, users) * op.rho * np.maximum(est.throughput, 1e-12)
    return np.where(carries & np.isfinite(output), output, 0.0)


def _finer_batch(
    query: ShapeQuery, est: Estimate, i: int, max_tokens: int, tpot_limit: float
) -> tuple[Estimate, int] | None:
    """Candidate `i`'s shape with batch limits between its own and the next grid step (eighths of it) estimated,
    and the one that carries the most whose saturated step meets `tpot_limit`; None where none carries more."""
    c = est.cand
    finer = np.unique(np.ceil(int(c.max_batch[i]) * (1.0 + np.arange(1, 8) / 8.0))).astype(np.int64)
    n = finer.size

    def same(x: np.ndarray) -> np.ndarray:
        return np.full(n, int(x[i]), dtype=np.int64)

    variants = Candidates(same(c.tp), same(c.pp), same(c.ep), same(c.adp), finer, same(c.balance))
    fine = query.estimate(variants, max_tokens, shared=est.shared)
    ok = fine.fits & (fine.step <= tpot_limit) & (fine.throughput > est.throughput[i])
    return (fine, int(np.argmax(np.where(ok, fine.throughput, -np.inf)))) if ok.any() else None


def _fastest(query: ShapeQuery, est: Estimate) -> str:
    """What the fastest shapes reach with a request at a time: the least TPOT p99 and TTFT p99 (an SLO below them
    no load and no chip count meets)."""
    trickle = np.full(len(est.cand), 1e-9)
    op = query.at_rate(est, trickle)
    tpot = np.where(est.fits, op.tpot_p99, np.inf)
    ttft = np.where(est.fits, op.ttft_p99, np.inf)
    if not (np.isfinite(tpot).any() and np.isfinite(ttft).any()):
        return ""
    reach = f"TPOT {_ms(tpot.min())} and TTFT {_ms(ttft.min())}"
    return f" (the fastest shapes reach {reach}, one request at a time)"


def _ms(seconds: float) -> str:
    """Milliseconds with three significant figures and no exponent: '48.4 ms', '1,080 ms'."""
    ms = 1e3 * float(seconds)
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.3g} ms"


def _searched(exc: InfeasibleError, shapes: int, est: Estimate | None = None) -> InfeasibleError:
    """The error with the number of replica shapes priced before it (plan serve's 'searched N shapes' counts them),
    and their estimates where they fit but miss the SLO (a chip's Pareto front does not depend on it)."""
    exc.searched = shapes
    exc.estimate = est
    return exc


def max_users(
    query: ShapeQuery,
    est: Estimate,
    targets: Mapping[str, float],
    fleet_users: float = 0.0,
    router: str = DEFAULT_ROUTER,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate of `est` (`query`'s): the most closed-loop users one replica serves within the SLO (0 if not
    one; at most USER_LIMIT x its batch slots, the surplus waiting for a slot), and its TPOT and p99 TTFT there
    (closed_loop, `fleet_users` of them behind `router`), by an eight-way search. With no SLO, one per batch slot:
    users beyond would only queue."""
    top = np.maximum(est.batch, 1.0)
    fleet = (fleet_users, router)
    if not targets:
        op = query.closed_loop(est, top, *fleet)
        seated = np.where(est.fits & np.isfinite(op.tpot), top, 0.0)
        return seated, op.tpot, op.ttft_p99
    n = len(est.cand)
    lo, hi = np.zeros(n), USER_LIMIT * top + 1.0  # lo: the most users known to meet the SLO; hi: the fewest to miss
    tiled = est.take(np.tile(np.arange(n), USER_SPLITS - 1))
    for _ in range(USER_ROUNDS):
        if (hi - lo <= 1.0).all():
            break
        # USER_SPLITS - 1 user counts splitting (lo, hi) evenly, all in one vectorised call over the tiled candidates
        users = np.maximum(np.floor(lo + (hi - lo) * (np.arange(1, USER_SPLITS)[:, None] / USER_SPLITS)), 1.0)
        op = query.closed_loop(tiled, users.ravel(), *fleet)
        ok = (tiled.fits & _slo_ok(targets, op, query.out) & np.isfinite(op.tpot)).reshape(users.shape)
        lo = np.maximum(lo, np.where(ok, users, 0.0).max(axis=0))
        hi = np.minimum(hi, np.where(~ok & (users > lo), users, np.inf).min(axis=0))
    op = query.closed_loop(est, np.maximum(lo, 1.0), *fleet)
    found = lo >= 1
    return lo, np.where(found, op.tpot, np.inf), np.where(found, op.ttft_p99, np.inf)


Search = Callable[[Estimate], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _fitting(est: Estimate, search: Search) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A per-candidate search (max_rate, max_users) over the candidates that fit only, the others carrying nothing
    (0, and no TPOT or TTFT): a third to half of a MoE model's shapes do not fit, and each costs the search as much
    as one that does."""
    fit = np.flatnonzero(est.fits)
    n = len(est.cand)
    if fit.size == n:
        return search(est)
    found, tpot, ttft = np.zeros(n), np.full(n, np.inf), np.full(n, np.inf)
    if fit.size:
        found[fit], tpot[fit], ttft[fit] = search(est.take(fit))
    return found, tpot, ttft


def kv_limited_batch(est: Estimate, i: int, context: float) -> int:
    """The candidate's batch cap, lowered to the requests its KV cache holds at `context` tokens each (a shared
    prefix held once, Estimate.shared): a larger cap only makes an engine admit requests it must then preempt (and
    recompute), as operators set max_num_seqs. `context`: what a request holds over its life (estimate.held_tokens:
    an on-demand engine's at their mean context; capped at the whole one, Llama-3.1-8B on an H100 under vLLM seated
    202 of 256 users, whose TTFT rose to 8 s, where vLLM's own cap seats them all without a preemption)."""
    return int(max(1, min(int(est.cand.max_batch[i]), _cache_holds(est, i, context))))


def cap_context(eng: EngineProfile, load_kind: str, inp: float, out: float) -> float:
    """The tokens a searched batch cap seats each request at. A closed loop's requests in flight are its users,
    staggered through their answers: an on-demand engine's cache seats them at their mean context
    (estimate.held_tokens). An open load's rise and fall with its arrivals: a cap at the mean lets a burst fill the
    cache and preempt, and the whole-context cap is the admission control that keeps a step short under a TPOT
    target (MI355X, 60 req/s of 256 / 1,024 tokens: 22 chips at b310, where the mean context's b512 checked at 25)."""
    return held_tokens(eng.admission, inp, out) if load_kind == "closed" else inp + out


def _cache_holds(est: Estimate, i: int, context: float) -> int:
    """The requests candidate `i`'s KV cache holds at `context` tokens each, a shared prefix held once."""
    return math.floor(max(float(est.kv_tokens[i]) - est.prefix_held(i), 0.0) / max(context - est.shared, 1.0))


def batch_reason(est: Estimate, i: int, eng: EngineProfile, job: ServingJob, max_batch: int, replicas: int) -> str:
    """Why a searched batch limit is what it is: the requests the KV cache holds, at which context and why, whether
    they or the candidate's own limit set it, and a closed loop's users against the slots ('b274: the KV cache holds
    274 requests at their mean 1,536 tokens (on-demand admission: ...); 256 users'). A cap at the whole context on
    an on-demand engine had lifted Llama-3.1-8B's TTFT on an H100 from 82 ms to 8.5 s between 128 and 256 users,
    unexplained."""
    held = cap_context(eng, job.load.kind, job.mean_input, job.mean_output)
    holds = _cache_holds(est, i, held)
    if eng.admission == "reserve":
        how = (
            f"their whole {held:,.0f} tokens (reserve admission: {eng.engine} holds a request's context from its start)"
        )
    elif job.load.kind == "closed":
        how = f"their mean {held:,.0f} tokens (on-demand admission: {eng.engine} takes blocks as tokens come)"
    else:
        how = f"their whole {held:,.0f} tokens (an open load's requests in flight rise with its bursts)"
    text = f"b{max_batch}: " + (
        f"the KV cache holds {holds:,} request{'s' * (holds != 1)} at {how}"
        if max_batch >= holds
        else f"the search's limit for this load, within the {holds:,} requests the KV cache holds at {how}"
    )
    if est.shared > 0:
        text += f", a shared {est.shared:,.0f}-token prefix held once"
    if job.load.kind == "closed":
        users, slots = int(job.load.concurrency), max_batch * max(1, replicas)
        # no more of them wait than there are requests to send (1,000 users of 10 requests had "598 waiting"), and
        # the users counted are those that send one (512 users of 400 requests on 89 slots had read '512 users, 311
        # of them waiting'; it now reads '400 of the 512 users send a request, 311 of them waiting')
        sending = min(users, job.requests)
        text += f"; {users:,} users" if sending >= users else f"; {sending:,} of the {users:,} users send a request"
        text += f" over {replicas} replicas" if replicas > 1 else ""
        waiting = sending - slots
        text += f", {waiting:,} of them waiting for a slot" if waiting > 0 else ""
    return text


def _trace_rate(job: ServingJob) -> float:
    t = job.trace
    if t is None or t.arrival.size < 2 or t.arrival[-1] <= 0:
        return 1.0
    return float((t.arrival.size - 1) / t.arrival[-1])
