"""Queueing waits of the steady-state estimate before a request's first token: behind the prompts being encoded
(an M/D/1 queue on one replica, routed over several), for a free batch slot (Erlang C), and for attention-DP
context balancing to gather a prompt for every rank."""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaincinv, gammaln, pdtr, pdtrik

from chipwise.serve.engine import EngineProfile
from chipwise.serve.estimate import Estimate
from chipwise.types import Array

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


def poisson_p99(mean: Array) -> Array:
    """The 99th percentile of a Poisson count of `mean`: the least k with P(N <= k) >= 0.99 (pdtrik inverts the
    CDF continuously in k; its ceiling is scipy.stats.poisson.ppf's, without importing scipy.stats)."""
    return np.asarray(np.ceil(pdtrik(0.99, np.maximum(np.asarray(mean, dtype=np.float64), 1e-12))), dtype=np.float64)


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


def balancing_wait(
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
