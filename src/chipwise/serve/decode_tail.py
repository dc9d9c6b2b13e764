"""How far the slowest 1% of sequences' TPOT lies above the mean, under a Poisson load (serve.operating.at_rate).

A sequence's TPOT is the mean of the steps it decodes in. Two things set them: the batch beside it, and the prompts
of the requests that arrive while it decodes, which join its iterations. Over a life of n steps (mean n-bar) a
sequence sees A_n = A n / n-bar arrivals (A: the load's Little's-law count over a mean life), Poisson, each adding its
prompt's join time to the life and its own place in the batch for the rest of it (a third of the life in the square
mean of a uniform arrival), and starts beside the batch already there, which it outlives in part (f_init). Per step,
with j the prompts' mean share of a step and s its growth per sequence:

    var_n = j^2 V / A_n + j s + s^2 A_n / 3 + s^2 B f_init(n / n-bar) / (1 - r)

(V = 1 + CV^2 of the prompts' prefill times: a compound Poisson sum; B / (1 - r): the batch's negative-binomial
variance). The arrivals feed back: a slow life lasts longer, and more requests arrive during it, each adding to the
steps again, a gain g = j / t (the prompts' share of the step) + r / 2 (the batch's, half a life each), so the spread
is the branching sum's, 1 / (1 - g) times the Poisson one (the M/G/1 busy period's). A router that weighs `drawn`
replicas evens their loads out, leaving each 1 / drawn of the variance (serve.operating.at_rate's batch spread) and
of the feedback (it sends the requests arriving to the replicas less loaded than a slow one).

Where the answer lengths vary, short answers average over few steps and the spread widens: the 99th percentile is
the mixture's over the answer lengths (at answer_probabilities(), equal-probability quantiles), by Newton's method.

Against the simulator (scripts/estimator_vs_simulator.py's lone replicas, 44 points at 30-85% load of fixed lengths,
and 18 of lognormal ones): the TPOT p99 read 9.2% and 24.5% off it on average (almost all under) where a batch 2.33
standard deviations larger with the prompts in proportion priced it, 6.9% and 10.7% now.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from chipwise.types import Array

Z99 = float(ndtri(0.99))  # one-sided 99th percentile of a standard normal variate (2.3263...), for every such tail
ANSWER_NODES = 32  # equal-probability quantiles an answer-length distribution is read at
MAX_GAIN = 0.9  # the arrivals' feedback, at most: a tenfold spread (a gain near one is a replica at its capacity)
_NEWTON_STEPS = 8


def answer_probabilities() -> Array:
    """The probabilities the answer lengths are read at: the midpoints of ANSWER_NODES equal shares."""
    return (np.arange(ANSWER_NODES) + 0.5) / ANSWER_NODES


def outlived(x: Array) -> Array:
    """f_init: the mean square share of a life of x mean lives that the sequences decoding at its start stay for
    (their remaining lives uniform over one mean life): 1 - 2x / 3 up to one life, 1 / (3 x^2) past it."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x <= 1.0, 1.0 - 2.0 * x / 3.0, 1.0 / (3.0 * np.maximum(x, 1.0) ** 2))


def tpot_excess(
    joined: Array,
    slope: Array,
    step: Array,
    arriving: Array,
    batch: Array,
    r: Array,
    variability: Array,
    drawn: Array | float,
    answers: Array | None = None,
) -> tuple[Array, Array, Array]:
    """The TPOT's 99th-percentile excess over its mean (`q`, seconds), and the shifts that carry it at the mean
    answer, one standard deviation each before the arrivals' feedback: the relative excess of the prompts arriving
    and the sequences added to the batch (so that joined x eps_p + slope x eps_b is the linear part of one such
    deviation; serve.operating.at_rate scales them to q and evaluates the step there, where the batch limit clips).

    `joined`: the prompts' share of a step, seconds (the step less the plain decode step); `slope`: the step's growth
    a sequence; `step`: the step; `arriving`: the requests arriving over a mean life; `batch`: the mean batch; `r`:
    the batch's feedback (need x slope); `variability`: 1 + CV^2 of the prompts' prefill times; `drawn`: the
    replicas a router weighs; `answers`: the answer lengths at answer_probabilities() over their mean (None: all of
    one length), a trailing axis beside the candidates'."""
    a = np.maximum(arriving, 1e-9)
    gain = np.clip((joined / np.maximum(step, 1e-12) + r / 2.0) / drawn, 0.0, MAX_GAIN)
    amplify = 1.0 / (1.0 - gain)
    held = batch / (1.0 - np.minimum(r, MAX_GAIN))  # the batch's variance
    eps_p = np.sqrt(variability / a / drawn) * amplify
    eps_b = np.sqrt((a / 3.0 + held / 3.0) / drawn) * amplify
    x = np.ones(1) if answers is None else np.maximum(np.asarray(answers, dtype=np.float64), 1e-3)
    j, s, v, h, k, n = (
        np.asarray(y, dtype=np.float64)[..., None] for y in (joined, slope, variability, held, amplify, a)
    )
    a_x = n * x  # arrivals over each answer's life
    var = j**2 * v / a_x + j * s + s**2 * (a_x / 3.0 + h * outlived(x))
    sigmas = np.sqrt(np.maximum(var, 0.0) / np.asarray(drawn, dtype=np.float64)[..., None]) * k
    return mixture_p99(sigmas), eps_p, eps_b


def closed_excess(joined: Array, arriving: Array, variability: Array, answers: Array | None = None) -> Array:
    """The TPOT's 99th-percentile excess over its mean (seconds) under closed-loop users (serve.operating's
    closed_loop). The users hold the batch, so it neither grows with the arrivals nor feeds back; what varies is
    the prompts that join a sequence's life: those of the other users finishing meanwhile. Over a life of x mean
    lives a sequence sees A x of them (`arriving`: A over a mean life), a sum of prompts of relative variance
    CV_p^2 = `variability` - 1 each, in a count of index of dispersion D(x): the users' cycles are a renewal
    process whose count over a window is Poisson-like (D = 1) where the window is short and CV_a^2 (the answers'
    squared coefficient of variation) where it is long; D(x) = CV_a^2 + (1 - CV_a^2)(1 - x) up to one life, so
    that equal answers (each other user finishing exactly once a life) leave D(1) = 0. Per step:

        var_x = j^2 (CV_p^2 + D(x)) / (A x)

    (j: `joined`, the prompts' share of a step), and the 99th percentile is the mixture's over the answer lengths
    (`answers` at answer_probabilities() over their mean; None: all of one length), as tpot_excess's. Requests of
    one length have no spread: every sequence decodes beside the same prompts, as the simulation reads them. Against
    the simulation (scripts/estimator_vs_simulator.py's closed loops at half and nine tenths of the batch slots, 12
    points of lognormal lengths) the TPOT p99 read 18.9% under it on average where it was priced at the mean step,
    3.4% now; the 30 points of fixed lengths read 1.2% either way."""
    x = np.ones(1) if answers is None else np.maximum(np.asarray(answers, dtype=np.float64), 1e-3)
    cv_a2 = max(float(np.mean(x * x)) - 1.0, 0.0)
    dispersion = cv_a2 + (1.0 - min(cv_a2, 1.0)) * np.maximum(1.0 - x, 0.0)
    j, v, n = (np.asarray(y, dtype=np.float64)[..., None] for y in (joined, variability, arriving))
    var = j**2 * (np.maximum(v - 1.0, 0.0) + dispersion) / np.maximum(n * x, 1e-9)
    return np.where(var.max(axis=-1) > 0.0, mixture_p99(np.sqrt(var)), 0.0)


def mixture_p99(sigmas: Array) -> Array:
    """The 99th percentile of an equal mixture of zero-mean normals of standard deviations `sigmas` (last axis):
    the q with F(q) = mean(Phi(q / sigma)) = 0.99, by Newton's method from Z99 times the smallest sigma. F is
    increasing and concave there, so each step stays below the root and closes on it (to 1e-7 in _NEWTON_STEPS
    for sigmas up to 30 times apart; a bisection to that precision took three times as long)."""
    s = np.maximum(np.asarray(sigmas, dtype=np.float64), 1e-15)
    if s.shape[-1] == 1:
        return np.asarray(Z99 * s[..., 0], dtype=np.float64)
    inv = 1.0 / s
    q = Z99 * s.min(axis=-1)
    for _ in range(_NEWTON_STEPS):
        z = q[..., None] * inv
        short = np.mean(ndtr(z), axis=-1) - 0.99
        slope = np.mean(np.exp(-0.5 * z * z) * inv, axis=-1) / math.sqrt(2.0 * math.pi)
        q = q - short / slope
    return np.asarray(q, dtype=np.float64)
