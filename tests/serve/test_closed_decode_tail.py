"""The TPOT's tail under closed-loop users (serve.decode_tail's closed_excess, serve.operating's closed_loop): by
hand, none where every request has one length, and against the simulation where the lengths are drawn; and the
first token's tail there, the prompts arriving during the iteration in flight sharing the next one (a Poisson
count's 99th percentile, serve.queueing's poisson_p99)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import pdtr

from chipwise.catalog import load_catalog
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.decode_tail import Z99, answer_probabilities, closed_excess, mixture_p99
from chipwise.serve.engine import EngineProfile
from chipwise.serve.estimate import Estimate, estimate
from chipwise.serve.operating import closed_loop
from chipwise.serve.queueing import poisson_p99
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.workload import load_model
from chipwise.workload.lengths import LengthDist, read_length
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob

from .test_search import _one_shape

ONE = np.asarray([1.0])
#: closed_loop's arguments before the users: model, system, engine profile, estimate, precisions, mean lengths
LoopArgs = tuple[ModelSpec, System, EngineProfile, Estimate, str, str, float, float]


def _q(joined: float, arriving: float, variability: float, answers: np.ndarray | None = None) -> float:
    return float(closed_excess(joined * ONE, arriving * ONE, variability * ONE, answers)[0])


def test_requests_of_one_length_have_no_tail() -> None:
    """Equal prompts (variability 1) and equal answers: every other user finishes once a life, the same prompts
    join every sequence."""
    assert _q(0.02, 50.0, 1.0) == 0.0


def test_drawn_prompts_by_hand() -> None:
    """Equal answers (D(1) = 0), prompts of CV^2 0.5: var = j^2 0.5 / A = 4e-6, so 2.326 x 2 ms = 4.65 ms."""
    assert _q(0.02, 50.0, 1.5) == pytest.approx(Z99 * np.sqrt(0.02**2 * 0.5 / 50.0), rel=1e-12)
    assert _q(0.02, 50.0, 1.5) == pytest.approx(4.652e-3, rel=1e-3)


def test_drawn_answers_by_hand() -> None:
    """Answers of half and one and a half mean lives: CV_a^2 = (0.25 + 2.25) / 2 - 1 = 0.25, so the short life's
    dispersion is 0.25 + 0.75 x 0.5 = 0.625 and the long one's 0.25; the tail is the mixture's of the two."""
    answers = np.asarray([0.5, 1.5])
    j, a = 0.02, 50.0
    sigmas = np.asarray([[j * np.sqrt(0.625 / (a * 0.5)), j * np.sqrt(0.25 / (a * 1.5))]])
    assert _q(j, a, 1.0, answers) == pytest.approx(float(mixture_p99(sigmas)[0]), rel=1e-12)
    assert _q(j, a, 1.0, answers) > _q(j, a, 1.0)  # wider than equal answers' none


def _replica(
    name: str, chip: str, engine: str, max_batch: int, inp: LengthDist, out: LengthDist
) -> tuple[ModelSpec, LoopArgs, ReplicaSetup]:
    """A TP1 bf16 replica of `max_batch` slots (test_search's _one_shape), its estimate at the lengths' means (the
    prompts' tail where drawn), the closed_loop arguments before the users, and its simulated setup."""
    cat = load_catalog()
    model, system = load_model(cat, name), hardware(cat).system(chip)
    lengths = (inp.expected, out.expected)
    eng, cand, replica = _one_shape(cat, model, system, engine, "bf16", (1, max_batch), lengths, 9000)
    est = estimate(model, system, eng, cand, "bf16", "bf16", *lengths, eng.max_tokens, tail=inp.quantile(0.99))
    return model, (model, system, eng, est, "bf16", "bf16", *lengths), replica


def test_the_closed_loop_tail_against_the_simulation() -> None:
    """Llama-3.1-70B on one MI355X (TP1, 128 slots) with 64 users of lognormal prompts (1,000 tokens, std 750) and
    answers (200, std 150): the simulated TPOT p99 is 107.7 ms, 24% above its 86.7 ms median; the estimate had read
    the mean step (86.7 ms) as its p99 too, and reads 105.2 ms now. The TTFT p99 (simulated 924 ms) reads 781 ms,
    653 ms where a prompt waited for the iteration in flight alone."""
    inp = read_length("lognormal:mean=1000,std=750,max=8000", "input tokens", "")
    out = read_length("lognormal:mean=200,std=150,max=1000", "output tokens", "")
    model, args, replica = _replica("llama-3.1-70b", "mi355x", "vllm", 128, inp, out)
    job = ServingJob(model, inp, out, Load("closed", concurrency=64), 1500)
    op = closed_loop(*args, np.asarray([64.0]), answers=np.asarray(job.answer_spread(answer_probabilities())))
    sim = run_job(job, ServingSetup((Pool(replica, 1),)), seed=0, steady_latencies=True)[0]
    tpot = sim["tpot_s"]
    assert tpot["p99"] > 1.15 * tpot["p50"]
    assert op.ttft_p99[0] == pytest.approx(sim["ttft_s"]["p99"], rel=0.2)
    assert op.tpot_p99[0] == pytest.approx(tpot["p99"], rel=0.08)
    assert op.tpot[0] < 0.85 * tpot["p99"]  # the mean step, which it had read as the p99 too


def test_fixed_lengths_keep_the_mean_step_as_the_tail() -> None:
    """A closed loop of one length: the estimate's p99 is its mean step, as the simulated one is its median."""
    _, args, _ = _replica("llama-3.1-8b", "h100-sxm", "trtllm", 256, LengthDist.fixed(1000), LengthDist.fixed(1000))
    op = closed_loop(*args, np.asarray([110.0]))
    assert op.tpot_p99[0] == op.tpot[0]


@pytest.mark.parametrize(("mean", "p99"), [(0.005, 0), (0.05, 1), (0.47, 3), (1.0, 4), (7.0, 14), (100.0, 124)])
def test_the_poisson_percentile(mean: float, p99: int) -> None:
    """The least k with P(N <= k) >= 0.99: e.g. 7 prompts expected, 14 at the tail."""
    assert float(poisson_p99(np.asarray([mean]))[0]) == p99
    assert pdtr(p99, mean) >= 0.99 and (p99 == 0 or pdtr(p99 - 1, mean) < 0.99)
