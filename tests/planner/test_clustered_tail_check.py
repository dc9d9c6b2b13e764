"""plan serve's check of a TTFT p99 set by a handful of busy periods: Llama-3.1-8B's 120,000-token prompts at
0.2 req/s on TP4 H100 replicas of one slot each. Each request holds its replica about 5.2 s (a 4.11 s prompt and
256 tokens of 4.3 ms), 1.04 Erlang over four replicas: about 2% of requests wait, and the p99 falls in that waiting
tail. Four replicas had been taken on 1,200 requests reading a p99 of 4.26 s against 5 s (its bound 4.63 s, the
12 past it taken as independent draws, where they came in 8 runs), while 40,000 requests (two seeds) read
5.17-5.24 s."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load

TARGETS = {"ttft_p99": 5.0, "tpot_p99": 0.03}


def test_a_tail_of_few_busy_periods_is_checked_again_and_the_fleet_meets_its_target_on_long_runs(
    catalog: Catalog,
) -> None:
    """The estimate's five replicas pass (a p99 of 4.11 s, a prompt's own time: requests seldom wait). Four, tried for
    fewer chips, hold their 12 TTFTs past the p99 as 6.2 independent ones (a correlation factor of 1.95), under
    MIN_TAIL_EVENTS, so their largest, 6.48 s, bounds the p99: the check runs them again on 4,800 requests, which
    read 5.19 s, a miss, and keeps five (20 chips), whose p99 on 4,800 requests of another seed reads 4.11 s."""
    report = plan_serving(
        catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=0.2), 120_000, 256, TARGETS,
        disaggregated=False, verify=1,
    )  # fmt: skip
    best = report["verified"][0]
    assert best["slo_met"] and best["plan"]["both"]["tp"] == 4
    assert best["plan"]["both"]["replicas"] == 5 and best["chips"] == 20
    longer = cw.predict(dict(best["scenario"], requests=4800, seed=2))
    assert longer["ttft_s"]["p99"] < 5.0
    assert longer["ttft_s"]["p99"] == pytest.approx(4.11, abs=0.01)
