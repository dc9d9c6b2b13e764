"""Between independent draws and a tail too clustered to bound by its order statistics, a percentile's upper bound
sits at the rank whose binomial spread is widened by the tail's correlation factor f: n q + z sqrt(n q (1 - q) f)
(metrics.percentile_bounds), not at the independent draws' rank."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chipwise.serve.sim.metrics import BOUND_Z, MIN_TAIL_EVENTS, percentile_bounds, tail_correlation

#: 1,200 requests whose 120 past the p90 come in 40 runs of three neighbours, 30 apart (arrivals 15-17, 45-47, ...,
#: 1185-1187)
STARTS = range(15, 1200, 30)


def _runs_of_three() -> np.ndarray:
    past = np.zeros(1200, dtype=bool)
    for start in STARTS:
        past[start : start + 3] = True
    return past


def _values(past: np.ndarray) -> np.ndarray:
    """1..1,200 in arrival order, the 120 largest (1,081..1,200) where `past` is set, the others shuffled."""
    v = np.empty(1200)
    v[past] = np.arange(1081, 1201)
    v[~past] = np.random.default_rng(0).permutation(np.arange(1, 1081))
    return v


def test_the_p90_factor_by_hand() -> None:
    """Runs of three, p = 0.1, variance p (1 - p) = 0.09, n var = 108: no run touches either end of the first or last
    12 arrivals, so the lag-k autocovariance n rho_k 0.09 = pairs_k - 2 x 120 p + (n - k) p^2 reads rho_1 = (80 - 24 +
    11.99) / 108, rho_2 = (40 - 24 + 11.98) / 108, rho_3 = (0 - 24 + 11.97) / 108; Geyer's pairs are 1 + 67.99 / 108,
    15.95 / 108 and then rho_4 + rho_5 = (-12.04 - 12.05) / 108 < 0, so f = -1 + 2 (1 + 83.94 / 108) = 1 + 167.88 /
    108 = 2.55444."""
    assert tail_correlation(_runs_of_three()) == pytest.approx(1 + 167.88 / 108, rel=1e-9)


def test_a_p90_of_runs_of_three_takes_the_widened_rank() -> None:
    """120 past the p90 over f = 2.55444 are 46.98 independent requests, at least MIN_TAIL_EVENTS (10): the bound is the
    value at 0-based rank ceil(1080 + 1.645 sqrt(108 x 2.55444)) = ceil(1080 + 1.645 x 16.6097) = ceil(1107.32) =
    1108, 1,109, not the independent draws' ceil(1080 + 1.645 sqrt(108)) = ceil(1097.10) = 1098, 1,099. Without
    arrival times, or with the 120 largest ten apart (f = 1), it reads 1,099."""
    f = tail_correlation(_runs_of_three())
    assert f > 1.0 and 1200 * 0.1 / f >= MIN_TAIL_EVENTS
    assert math.ceil(1080 + BOUND_Z * math.sqrt(108 * f)) == 1108
    clustered = _values(_runs_of_three())
    arrival = np.arange(1200, dtype=np.float64)
    timing = {"ttft": clustered, "tpot": clustered / 1e3, "e2e": clustered}
    bounds = percentile_bounds(timing, arrival)
    assert bounds["ttft_p90"] == 1109.0
    assert bounds["tpot_p90"] == pytest.approx(1.109)
    assert percentile_bounds(timing)["ttft_p90"] == 1099.0
    apart = np.zeros(1200, dtype=bool)
    apart[5::10] = True
    assert tail_correlation(apart) == 1.0
    spread = _values(apart)
    assert percentile_bounds({"ttft": spread, "tpot": spread, "e2e": spread}, arrival)["ttft_p90"] == 1099.0
