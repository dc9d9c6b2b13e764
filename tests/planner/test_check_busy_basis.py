"""plan serve's simulated check reckons its pools' busy share on predict's basis (serving_economics.busy_shares at
the priced load, serving_outcome.priced_request_rate), so a checked option's energy and owned cost per token are
those `chipwise predict` gives the scenario it prints: the check had divided busy time by the run's makespan, its
drain counted as idle hours the load's tokens never paid for."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load


def test_a_checked_option_reads_as_predict_reads_its_scenario(catalog: Catalog) -> None:
    report = plan_serving(catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=2.0), 512, 64, verify=1,
                          pricing="owned")  # fmt: skip
    best = report["best"]
    again = cw.predict(best["scenario"])
    assert again["requests"]["issued"] == best["simulated"]["requests"] == 1200
    assert best["energy_j_per_mtok"] == pytest.approx(again["energy_j_per_mtok"], rel=1e-9)
    assert best["cost_usd_per_mtok"] == pytest.approx(again["cost_usd_per_mtok"], rel=1e-9)
    assert best["energy_j_per_hour"] == pytest.approx(again["energy_j_per_hour"], rel=1e-9)
