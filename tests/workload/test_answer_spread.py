"""ServingJob.answer_spread: the answer lengths the TPOT tail's mixture is read at (serve.decode_tail), from a
distribution or a trace, and none where every answer is of one length."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.serve.decode_tail import ANSWER_NODES, answer_probabilities
from chipwise.workload.lengths import LengthDist, read_length
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob
from chipwise.workload.traces import Trace


@pytest.fixture(scope="module")
def llama8b(catalog: Catalog) -> ModelSpec:
    return load_model(catalog, "llama-3.1-8b")


def _job(llama8b: ModelSpec, out: LengthDist, trace: Trace | None = None) -> ServingJob:
    return ServingJob(llama8b, LengthDist.fixed(1000), out, Load("rate", rate=1.0), 100, trace=trace)


def test_answers_of_one_length_give_no_spread(llama8b: ModelSpec) -> None:
    assert _job(llama8b, LengthDist.fixed(200)).answer_spread(answer_probabilities()) == ()


def test_a_distribution_gives_its_quantiles_over_its_mean(llama8b: ModelSpec) -> None:
    """Uniform answers over [100, 300]: the quantile at p is 100 + 200 p, over the mean of 200; a lognormal's
    quantiles rise and average one."""
    uniform = read_length("uniform:min=100,max=300", "--output-tokens", "")
    p = answer_probabilities()
    spread = _job(llama8b, uniform).answer_spread(p)
    assert spread == pytest.approx(tuple((100.0 + 200.0 * p) / 200.0))
    lognormal = read_length("lognormal:mean=400,std=300,max=2000", "--output-tokens", "")
    drawn = np.asarray(_job(llama8b, lognormal).answer_spread(p))
    assert drawn.size == ANSWER_NODES and np.all(np.diff(drawn) >= 0.0)
    assert float(np.mean(drawn)) == pytest.approx(1.0, rel=0.02)


def test_a_trace_gives_its_answers_quantiles(llama8b: ModelSpec) -> None:
    """A trace's answers of 100, 200, 300 and 400 tokens: numpy's quantiles over their mean of 250; a trace whose
    answers are all of one length, none."""
    arrival = np.arange(4, dtype=np.float64)
    inputs = np.full(4, 1000, dtype=np.int64)
    answers = np.asarray([100, 200, 300, 400], dtype=np.int64)
    trace = Trace(arrival, inputs, answers, "t.csv")
    p = answer_probabilities()
    assert _job(llama8b, LengthDist.fixed(1), trace).answer_spread(p) == pytest.approx(
        tuple(np.quantile(answers, p) / 250.0)
    )
    same = Trace(arrival, inputs, np.full(4, 300, dtype=np.int64), "t.csv")
    assert _job(llama8b, LengthDist.fixed(1), same).answer_spread(p) == ()


def test_quantiles_read_the_sorted_sample_as_numpy_does() -> None:
    """LengthDist.quantiles interpolates the sorted fixed-seed sample linearly, numpy's default, at every share at
    once: the same lengths np.quantile reads from the unsorted draws, ends included."""
    lognormal = read_length("lognormal:mean=400,std=300,max=2000", "--output-tokens", "")
    shares = np.asarray([0.0, 0.013, 0.25, 0.5, 0.99, 1.0])
    assert lognormal.quantiles(shares) == pytest.approx(np.quantile(lognormal._draws, shares), rel=1e-12)
    assert lognormal.quantile(0.99) == pytest.approx(float(np.quantile(lognormal._draws, 0.99)), rel=1e-12)
    assert LengthDist.fixed(300).quantiles(shares).tolist() == [300.0] * 6
