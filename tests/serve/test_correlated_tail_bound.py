"""A percentile's upper confidence bound counts the requests past it as the correlated draws they are
(metrics.percentile_bounds, tail_correlation): queueing waits come in busy periods, so a dozen TTFTs past a p99 may be
a handful of independent events, whose bound the order statistics of independent draws set too low."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.metrics import MIN_TAIL_EVENTS, per_request, percentile_bounds, tail_correlation
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob

#: 1,200 requests whose 12 past the p99 come in four runs of three neighbours (arrivals 100-102, 400-402, ...)
RUNS = (100, 400, 700, 1000)


def _runs_of_three() -> np.ndarray:
    past = np.zeros(1200, dtype=bool)
    for start in RUNS:
        past[start : start + 3] = True
    return past


def test_the_correlation_factor_by_hand() -> None:
    """Runs of three, p = 0.01: the lag-k autocovariance (1/n)(pairs_k - 24 p + (n - k) p^2) over p (1 - p) = 11.88 /
    1,200 reads rho_1 = (8 - 0.24 + 0.1199) / 11.88 = 0.66329, rho_2 = (4 - 0.24 + 0.1198) / 11.88 = 0.32658,
    rho_3 = -0.1203 / 11.88; Geyer's pairs stop at rho_4 + rho_5 < 0, so the factor is 1 + 2 (rho_1 + rho_2 + rho_3)
    = 1 + 2 x 11.6394 / 11.88 = 2.95949, about a run's size (3). Twelve requests 100 apart read 1 (their pairs are
    negative from the first lag), and so does a sample with none past it."""
    assert tail_correlation(_runs_of_three()) == pytest.approx(1 + 2 * 11.6394 / 11.88, rel=1e-9)
    apart = np.zeros(1200, dtype=bool)
    apart[50::100] = True
    assert tail_correlation(apart) == 1.0
    assert tail_correlation(np.zeros(1200, dtype=bool)) == 1.0


def _values(past: np.ndarray) -> np.ndarray:
    """1..1,200 in arrival order, the 12 largest (1,189..1,200) where `past` is set, the others shuffled."""
    v = np.empty(1200)
    v[past] = np.arange(1189, 1201)
    v[~past] = np.random.default_rng(0).permutation(np.arange(1, 1189))
    return v


def test_a_clustered_tail_is_bounded_by_its_largest_value() -> None:
    """The p99 of 1,200 values whose 12 past it come in runs of three: 12 / 2.959 = 4.05 independent requests past it,
    under MIN_TAIL_EVENTS (10), so the bound is the largest value, 1,200, where as independent draws it read the
    6th largest, 1,195 (the value at 0-based rank ceil(1188 + 1.645 sqrt(11.88)) = 1194). The same values with their
    12 largest apart keep 1,195, and without arrival times they are taken as independent."""
    assert 12 / tail_correlation(_runs_of_three()) < MIN_TAIL_EVENTS
    clustered = _values(_runs_of_three())
    timing = {"ttft": clustered, "tpot": clustered / 1e3, "e2e": clustered}
    arrival = np.arange(1200, dtype=np.float64)
    assert percentile_bounds(timing, arrival)["ttft_p99"] == 1200.0
    assert percentile_bounds(timing, arrival)["tpot_p99"] == pytest.approx(1.2)
    assert percentile_bounds(timing)["ttft_p99"] == 1195.0
    apart = np.zeros(1200, dtype=bool)
    apart[50::100] = True
    spread = _values(apart)
    assert percentile_bounds({"ttft": spread, "tpot": spread, "e2e": spread}, arrival)["ttft_p99"] == 1195.0


def test_the_arrival_order_not_the_index_order_counts() -> None:
    """The same clustered values listed in another order, with their arrival times: the runs are runs in time."""
    clustered = _values(_runs_of_three())
    order = np.random.default_rng(1).permutation(1200)
    arrival = np.empty(1200)
    arrival[order] = np.arange(1200, dtype=np.float64)
    listed = np.empty(1200)
    listed[order] = clustered
    bounds = percentile_bounds({"ttft": listed, "tpot": listed, "e2e": listed}, arrival)
    assert bounds["ttft_p99"] == 1200.0


def test_a_run_gives_its_bounds_where_asked(vllm_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """run_job's summary carries the percentiles' upper confidence bounds only with `bounds` (the planner's checks
    read them); a prediction, a validation or a fleet's replay does not pay for them."""
    setup = ServingSetup((Pool(vllm_setup, 1),))
    job = ServingJob(llama8b, LengthDist.fixed(512), LengthDist.fixed(64), Load("rate", rate=4.0), requests=200)
    plain, out = run_job(job, setup)
    bounded, _ = run_job(job, setup, bounds=True)
    assert "percentile_bounds" not in plain
    same = set(plain) - {"simulation_wall_s"}  # the wall time aside, the run is the same
    assert {k: bounded[k] for k in same} == {k: plain[k] for k in same} and set(bounded) == {
        *plain,
        "percentile_bounds",
    }
    lat = per_request(out)
    assert bounded["percentile_bounds"] == percentile_bounds(
        {k: lat[k] for k in ("ttft", "tpot", "e2e")}, out.requests["arrival"]
    )
