"""A serving run's latency percentile is read from the requests past it: its resolution widens towards p99, and a
figure whose moves both stay under it is noise, neither ranked nor 'capped'."""

from __future__ import annotations

import math

import pytest

from chipwise.planner.sensitivity import METRICS, RESOLUTION_REQUESTS, _moved_row, resolutions


def test_a_p99_is_read_coarser_than_a_median() -> None:
    """1,000 requests read a median to 0.3 / sqrt(1,000) = 0.95% and a p99 to 0.3 / sqrt(2 x 1,000 x 0.01) = 6.7%."""
    res = resolutions(METRICS["serve"], 1000)
    assert res["ttft_p50"] == pytest.approx(RESOLUTION_REQUESTS / math.sqrt(1000))
    assert res["ttft_p99"] == pytest.approx(RESOLUTION_REQUESTS / math.sqrt(20)) == pytest.approx(0.0671, abs=1e-4)
    assert "throughput" not in res and resolutions(METRICS["serve"], 0) == {}


def test_moves_under_the_resolution_are_neither_ranked_nor_capped() -> None:
    """TDP -10% and +10% moved a 1,000-request run's TTFT p99 by -1.8% and 0 (noise: TDP cannot reach a first token
    there): it had read elasticity +0.17 and 'capped'. A move past the resolution still is both."""
    base = {"ttft_p99": 1.0}
    noisy = _moved_row({}, {"ttft_p99": 0.982}, {"ttft_p99": 1.0}, base, 0.1, {"ttft_p99": 0.067})
    assert noisy["elasticity"]["ttft_p99"] is None and "capped" not in noisy
    real = _moved_row({}, {"ttft_p99": 0.9}, {"ttft_p99": 1.0}, base, 0.1, {"ttft_p99": 0.067})
    assert real["capped"] == {"ttft_p99": "plus"} and real["elasticity"]["ttft_p99"] == pytest.approx(1.0)


def test_a_consistent_pair_under_the_resolution_is_the_figures_own() -> None:
    """HBM bandwidth -5% and +5% moved a 1,000-request TPOT p99 by +3.2% and -2.8%, both under its 6.7%: opposite
    ways and alike in size, they are the figure's effect (the first noise rule had dropped HBM from the ranking)."""
    row = _moved_row({}, {"tpot_p99": 1.0322}, {"tpot_p99": 0.9723}, {"tpot_p99": 1.0}, 0.05, {"tpot_p99": 0.067})
    assert row["elasticity"]["tpot_p99"] == pytest.approx(-0.6, abs=0.05)
    # FLOP/s +0.03% and -1.37%: opposite ways but 45x apart, noise
    flops = _moved_row({}, {"ttft_p99": 1.0003}, {"ttft_p99": 0.9863}, {"ttft_p99": 1.0}, 0.1, {"ttft_p99": 0.067})
    assert flops["elasticity"]["ttft_p99"] is None and flops["below_resolution"] == ["ttft_p99"]
