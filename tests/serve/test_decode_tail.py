"""The TPOT's tail under a Poisson load (serve.decode_tail): the variance of a sequence's mean step by hand, the
arrivals' feedback, a router's evening out and the mixture over drawn answer lengths."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from chipwise.serve.decode_tail import (
    ANSWER_NODES,
    Z99,
    answer_probabilities,
    mixture_p99,
    outlived,
    tpot_excess,
)

#: a step of 40 ms, 20 of them the prompts joining it, growing 0.1 ms a sequence; 50 arrivals over a mean life
#: beside a mean batch of 50, the batch's feedback r = 0.1
CASE = {"joined": 0.020, "slope": 1e-4, "step": 0.040, "arriving": 50.0, "batch": 50.0, "r": 0.1}


def _excess(variability: float = 1.0, drawn: float = 1.0, answers: np.ndarray | None = None) -> float:
    args = {k: np.asarray([v]) for k, v in CASE.items()}
    q, _, _ = tpot_excess(**args, variability=np.asarray([variability]), drawn=drawn, answers=answers)
    return float(q[0])


def test_the_excess_by_hand() -> None:
    """var = j^2 V / A + j s + s^2 (A / 3 + B / (1 - r) / 3) = 8e-6 + 2e-6 + 3.52e-7 s^2, a standard deviation of
    3.22 ms a step; the arrivals feed back with gain 20 / 40 + 0.1 / 2 = 0.55, so the slowest 1% run
    2.326 x 3.22 / 0.45 = 16.6 ms above the mean."""
    j, s, a, b, r = CASE["joined"], CASE["slope"], CASE["arriving"], CASE["batch"], CASE["r"]
    var = j**2 / a + j * s + s**2 * (a / 3.0 + b / (1.0 - r) / 3.0)
    assert var == pytest.approx(1.0352e-5, rel=1e-4)
    assert _excess() == pytest.approx(Z99 * np.sqrt(var) / (1.0 - 0.55), rel=1e-12)
    assert _excess() == pytest.approx(0.01663, rel=1e-3)


def test_unequal_prompts_and_a_router_move_the_excess_as_they_should() -> None:
    """Prompts of unequal lengths (V = 1 + CV^2 = 2) widen the spread; a router weighing four replicas divides its
    variance and the arrivals' feedback by four."""
    j, s, a, b, r = CASE["joined"], CASE["slope"], CASE["arriving"], CASE["batch"], CASE["r"]
    assert _excess(variability=2.0) > _excess()
    var = (j**2 / a + j * s + s**2 * (a / 3.0 + b / (1.0 - r) / 3.0)) / 4.0
    assert _excess(drawn=4.0) == pytest.approx(Z99 * np.sqrt(var) / (1.0 - 0.55 / 4.0), rel=1e-12)


def test_answers_of_one_length_read_as_none() -> None:
    """A mixture of one answer length, ANSWER_NODES times over, is that length's normal tail."""
    assert _excess(answers=np.ones(ANSWER_NODES)) == pytest.approx(_excess(), rel=1e-6)


def test_drawn_answers_widen_the_tail() -> None:
    """Short answers average fewer steps: a lognormal spread of answers (CV 0.75, read at the midpoints of
    ANSWER_NODES equal shares) puts the slowest 1% more than a tenth further above the mean than answers of one
    length."""
    p = answer_probabilities()
    sigma2 = np.log1p(0.75**2)
    answers = np.exp(np.sqrt(sigma2) * ndtri(p) - sigma2 / 2.0)
    assert _excess(answers=answers) > 1.1 * _excess()
    assert p.size == ANSWER_NODES and p[0] == pytest.approx(0.5 / ANSWER_NODES)


def test_the_mixture_percentile_by_hand() -> None:
    """An equal mixture of normals of standard deviations 1 and 3: q with (Phi(q) + Phi(q / 3)) / 2 = 0.99, 6.161;
    one normal: 2.326 standard deviations."""
    exact = brentq(lambda q: (ndtr(q) + ndtr(q / 3.0)) / 2.0 - 0.99, 0.0, 20.0)
    assert float(mixture_p99(np.asarray([1.0, 3.0]))) == pytest.approx(exact, rel=1e-6)
    assert exact == pytest.approx(6.1612, abs=1e-4)
    assert mixture_p99(np.asarray([[2.0], [0.5]])).tolist() == pytest.approx([2.0 * Z99, 0.5 * Z99])


def test_the_share_a_life_spends_beside_the_batch_it_started_with() -> None:
    """Remaining lives uniform over one mean life: a life of one mean life shares a third of it (in the mean square),
    of half a one 1 - 1/3 = 2/3, of two 1 / 12, of none all of it; the two branches meet at one life."""
    assert outlived(np.asarray([0.0, 0.5, 1.0, 2.0])).tolist() == pytest.approx([1.0, 2.0 / 3.0, 1.0 / 3.0, 1.0 / 12.0])
    assert float(outlived(np.asarray(1.0 + 1e-9))) == pytest.approx(1.0 / 3.0)
