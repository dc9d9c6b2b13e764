"""Where each candidate replica shape runs under a load: the batch of generating sequences that an open-loop rate or
closed-loop users keep (a fixed point of the steady step time), and the TPOT and TTFT there, each with a mean and a
99th percentile.

At an arrival rate of lambda requests/s a replica runs at the smallest B with X(B) >= lambda O (Little's law); its
TTFT is the prefill of I tokens in chunks of the budget plus the waits for the iteration in flight, the prompts
ahead (M/D/1) and a free batch slot (M/D/c), each with a mean and a 99th percentile (at_rate, serve.queueing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from chipwise.hardware.objects import System
from chipwise.serve.decode_tail import Z99, closed_excess, tpot_excess
from chipwise.serve.engine import EngineProfile
from chipwise.serve.estimate import Estimate
from chipwise.serve.queueing import balancing_wait, poisson_p99, prompt_wait, slot_wait
from chipwise.serve.speculation import Drafting
from chipwise.serve.steady_step import step_time
from chipwise.types import Array
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import DEFAULT_ROUTER

MAX_UTILISATION = 0.95


@dataclass(frozen=True)
class Operating:
    """A candidate at a given per-replica load: batch, TPOT, TTFT (mean and p99 estimates), utilisation."""

    batch: Array
    tpot: Array
    tpot_p99: Array
    ttft: Array
    ttft_p99: Array
    rho: Array


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
    """The steady step time of each candidate as a function of the sequences generating (step_time): a
    compiled-shape engine's iterations run all its `slots`, any other engine's only those sequences."""
    dev, topo, shapes = est.on(system, eng)

    def step(active: Array, others: Array | None = None) -> Array:
        batch = slots if eng.static_batch else active
        args = (model, dev, topo, eng, weight_precision, kv_precision, shapes, batch, inp, out, est.prompts)
        return step_time(*args, drafting, active, others=others)

    return step


def _fixed_point(g: Callable[[Array], Array], top: Array, evals: int = 8, g_one: Array | None = None) -> Array:
    """The batch b in [1, top] with b = g(b), `g` increasing (the sequences a load keeps generating): the root of
    f(b) = g(b) - b bracketed by [1, top] and found by regula falsi with the Illinois step, `evals` evaluations of
    g in all. Plain iteration from b = 1 closes only a factor g'(b) of the gap a step (after eight steps at g' = 0.9,
    43% of it is left, and the TPOT read there was up to 34% fast); this is exact for an affine g and superlinear
    for a smooth one. b = 1 where g(1) <= 1; top where g(top) >= top (no load below saturation carries it).
    `g_one`: g(1), where the caller has it."""
    lo = np.ones_like(top)
    hi = np.asarray(top, dtype=np.float64)
    f_lo, f_hi = (g(lo) if g_one is None else g_one) - lo, g(hi) - hi
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
    answers: Array | None = None,
) -> Operating:
    """Where each candidate runs at `rate_per_replica` requests/s: the smallest batch of generating sequences that
    carries it (a static-batch engine's iterations still run every compiled slot). A prompt's TTFT is its lone
    prefill and the front end, plus three waits: for the iteration in flight (half a step on average, a whole one
    at the tail), for the prompts ahead of it (prompt_wait: an M/D/1 queue in the utilisation by the prompts' own
    work), and for a free batch slot when all are taken (slot_wait: Erlang C over the batch limit, each request
    holding its slot for its prefill and its output tokens' steps); attention-DP balancing adds its gather
    (balancing_wait). With `fleet_rate` (the whole load, requests/s) the fleet's fleet_rate / rate_per_replica
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
    at_one = need * step(np.ones_like(top))  # the sequences a load keeps generating at a batch of one
    b = _fixed_point(lambda x: np.clip(need * step(x), 1.0, top), top, g_one=np.clip(at_one, 1.0, top))  # B = need t(B)
    # replicas sharing the load; a replica offered nothing shares it with none (dividing by a floor instead read
    # some 1e305 slots, Erlang C overflowed on the way to its zero wait, and a fleet rate of 1e9/s overflowed)
    pooled = (
        np.maximum(np.divide(fleet_rate, lam, out=np.ones_like(lam), where=lam > 0), 1.0) if fleet_rate > 0 else 1.0
    )
    # a request finds a free slot among the replicas its router weighs: all of them, or the two it draws
    drawn = np.minimum(pooled, 2.0) if router == "power_of_two" else pooled
    # the prompts that join a sequence's iterations: those of the requests arriving meanwhile (need t(B) sequences'
    # worth a step: B itself, or below one at a light load, where B stays one), at most what the other slots take
    arriving = np.minimum(np.where(b > 1.0, b, at_one), top - 1.0)
    t_b = step(b, others=arriving)
    # the batch a sequence decodes in is larger than the mean batch: the sequences form a birth-death chain whose
    # step grows by `slope` a sequence, so their count is negative-binomial (Kelly's symmetric queues: whatever the
    # output lengths), and a sequence sees B + (1 + r) / (1 - r) on average (the size-biased mean, r = need x slope).
    # (over scripts/estimator_vs_simulator.py's 44 replica points the mean TPOT went 4.6% -> 3.7% off the simulation:
    # Llama-3.1-8B on an H100 at 30% load of 16,000-token prompts 8.7 -> 9.5 ms, simulated 9.8). A router that weighs
    # n replicas evens their batches out, leaving each 1 / n of that spread
    b_hi = np.minimum(b + Z99 * np.sqrt(b), top)
    slope = np.where(b_hi > b, (step(b_hi, others=arriving) - t_b) / np.maximum(b_hi - b, 1e-12), 0.0)
    r = np.clip(need * slope, 0.0, MAX_UTILISATION)
    b_seq = np.minimum(b + (1.0 + r) / (1.0 - r) / drawn, top)
    tpot = t_b + slope * (b_seq - b)
    # the slowest 1% of sequences: those whose lives more prompts join and beside a larger batch, the arrivals
    # feeding back (serve.decode_tail); the shifts that carry that excess at the mean answer are priced whole, the
    # batch limit clipping them (a compiled batch's arrivals join only as its slots free)
    plain = step(b, others=np.zeros_like(b))
    joined = np.maximum(t_b - plain, 0.0)
    excess, eps_p, eps_b = tpot_excess(joined, slope, t_b, arriving, b, r, est.prefill_variability, drawn, answers)
    linear = joined * eps_p + slope * eps_b
    scale = np.where(linear > 0.0, excess / np.maximum(linear, 1e-15), 0.0)
    b99 = np.minimum(b_seq + scale * eps_b, top)
    tpot99 = step(b99, others=np.minimum(arriving * (1.0 + scale * eps_p), top - 1.0))
    rho_p = lam * est.prefill_work_s  # the prompts' own work: what a queue of them takes
    busy = np.minimum(lam * est.prefill_s, 1.0)  # share of the time an iteration encodes prompts
    hold = est.prefill_s + max(out - 1.0, 0.0) * tpot  # how long a request holds a batch slot
    prompt_load = np.minimum(rho_p, MAX_UTILISATION)
    # requests a replica holds, among which random draws land on one encoding a prompt more often; a replica of one
    # slot takes a second request only when every replica holds one, a wait for a slot (below), not behind a prompt
    held = np.where(top > 1.0, lam * hold, 0.0)
    replicas = np.asarray(pooled, dtype=np.float64)
    queue, queue99 = prompt_wait(router, replicas, held, busy, est.prefill_s, est.prefill_work_s, prompt_load)
    # a replica of one slot takes a prompt only with that slot free, so it is encoding no other: the prompt ahead is
    # the wait for a slot (below), not a second wait beside it. Llama 4 Scout's 10.4M-token prompts at 0.001 req/s on
    # two GB200 TP8 replicas of one slot had read a p99 TTFT of 9,867 s (the lone prompt's 1,310 s, 4,773 s behind
    # the prompts and 3,784 s for a slot, one queue twice) where the simulation reads 4,324 s
    # prompts of varying lengths queue longer than equal ones (Estimate.prefill_variability)
    spread = np.where(top > 1.0, est.prefill_variability, 0.0)
    queue, queue99 = queue * spread, queue99 * spread
    slots = top * drawn
    # one-token answers (a prefill pool's) leave with their prompt: the prompt queue is all their wait
    holds = out > 1.0
    offered = np.minimum(lam * drawn * hold, MAX_UTILISATION * slots)
    held, held99 = slot_wait(slots, offered, hold) if holds else (np.zeros_like(hold), np.zeros_like(hold))
    iteration = tpot * (drafting.spec.tokens_per_step if drafting else 1.0)  # a drafting step yields tau tokens
    wait = iteration / 2.0 + queue + held  # the iteration in flight when it arrives, then the queues
    wait99 = iteration + queue99 + held99
    gather, gather99 = balancing_wait(eng, est, b, lam, iteration, poisson=True)
    wait, wait99 = wait + gather, wait99 + gather99
    first = est.prefill_s + eng.host_request_s  # a lone prompt's first token, the front end included
    ttft = first + wait
    ttft_p99 = _tail_first(est, first, wait, wait99)
    over = (rho >= MAX_UTILISATION) | (rho_p >= MAX_UTILISATION) | (holds & (lam * hold >= MAX_UTILISATION * top))
    return Operating(
        batch=np.broadcast_to(top, b.shape) if eng.static_batch else b,
        tpot=np.where(over, np.inf, tpot),
        tpot_p99=np.where(over, np.inf, tpot99),
        ttft=np.where(over, np.inf, ttft),
        ttft_p99=np.where(over, np.inf, ttft_p99),
        rho=rho,
    )


def _tail_first(est: Estimate, first: Array, wait: Array, wait99: Array) -> Array:
    """The first tokens' 99th percentile: a lone prompt's `first` token and its waits (mean `wait`, tail `wait99`).
    Where the prompt lengths vary, the prompt's own prefill has a tail too (the 99th-percentile prompt's,
    Estimate.prefill_p99_s), independent of the waits: the two tails add as independent spreads do (in quadrature).
    Priced at the mean prompt alone (and its queue as one of equal prompts: Estimate.prefill_variability), six
    replicas under lognormal lengths at 30-85% load read 42% under their simulated p99 on average, 10% now
    (scripts/estimator_vs_simulator.py)."""
    spread = est.prefill_p99_s - est.prefill_s
    combined = first + wait + np.sqrt(np.square(wait99 - wait) + np.square(spread))
    return np.where(spread > 0.0, combined, first + wait99)


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
    answers: Array | None = None,
) -> Operating:
    """Where each candidate runs with `users` closed-loop users per replica, out of step as a deployment's steady
    users are (serve.simulate.phase_ramp), each issuing its next request when its last one ends. The users hold
    the batch: the B = U O t / (F + O t) of them decoding (F: the first token's latency) set the step time t, so
    a loaded replica runs slower steps rather than queueing (its throughput B / t levels off where prompts make the
    steps compute-bound). A prompt waits for the iteration in flight (half a step on average, a whole one at the
    tail; attention-DP balancing adds the gather of one prompt per rank): a least-loaded router or a round robin
    sends a user's next request to the replica its last one left, which is not encoding a prompt. Two random draws
    (`router` power_of_two, over the fleet_users / users replicas) send it to one that may be: prompt_wait over
    them. Users beyond the batch slots wait for one: (U - slots) / rate before their first token. `answers`: the
    answer lengths at serve.decode_tail's answer_probabilities() over their mean (None: all of one length), whose
    short answers widen the TPOT's tail (closed_excess)."""
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
    # a user's cycle: the wait for the iteration in flight, the first token (its prompt), then O - 1 tokens at t each
    # (a slot is held as long: at_rate's hold); O steps had counted the first token twice
    rate = seated / (first + iteration / 2.0 + max(out - 1.0, 0.0) * t)
    gather, gather99 = balancing_wait(eng, est, b, rate, iteration, poisson=False)
    wait, wait99 = iteration / 2.0 + gather, iteration + gather99
    if router == "power_of_two" and fleet_users > 0:
        replicas = np.maximum(fleet_users / np.maximum(u, 1.0), 1.0)
        busy = np.minimum(rate * est.prefill_s, 1.0)
        loaded = np.minimum(rate * est.prefill_work_s, MAX_UTILISATION)
        queue, queue99 = prompt_wait(router, replicas, seated, busy, est.prefill_s, est.prefill_work_s, loaded)
        wait, wait99 = wait + queue * est.prefill_variability, wait99 + queue99 * est.prefill_variability
    queued = np.maximum(u - top, 0.0) / rate  # the users without a slot
    # drawn lengths keep the users out of step, so their prompts come as a Poisson stream (many users' cycles
    # superposed); those arriving during the iteration in flight share the next one with this prompt, each adding its
    # work: at the tail, the 99th percentile of their count. Users of one length run in lock-step instead
    drawn = est.prefill_variability > 1.0 if answers is None else np.ones(np.shape(rate), dtype=bool)
    wait99 = wait99 + np.where(drawn, poisson_p99(rate * iteration) * est.prefill_work_s, 0.0)
    fits = est.fits
    # the slowest 1% of sequences: those whose lives more (or longer) prompts join (serve.decode_tail), the other
    # users' requests starting as their last ones end, rate x a life of them
    joined = np.maximum(t - step(b, others=np.zeros_like(b)), 0.0)
    arriving = rate * max(out - 1.0, 0.0) * t
    tpot99 = t + closed_excess(joined, arriving, est.prefill_variability, answers)
    return Operating(
        batch=np.broadcast_to(top, b.shape) if eng.static_batch else b,
        tpot=np.where(fits, t, np.inf),
        tpot_p99=np.where(fits, tpot99, np.inf),
        ttft=np.where(fits, first + wait + queued, np.inf),
        ttft_p99=np.where(fits, _tail_first(est, first, wait, wait99) + queued, np.inf),
        rho=rate * out / np.maximum(est.throughput, 1e-12),
    )
