"""plan lifecycle's serving energy and CO2e an hour are plan serve's: busy power for the fleet's simulated busy
share of the hour, idle power for the rest."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.lifecycle import plan_lifecycle
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}


def test_lifecycle_serving_energy_is_plan_serves(catalog: Catalog) -> None:
    """Llama-3.1-8B at 0.1 req/s (1,024 in, 256 out) on one H100 of a p5: the lifecycle had said 4,222,800 J an hour
    (1,020 W x 3,600 s x PUE 1.15, busy all hour), 3x plan serve's energy_j_per_mtok x 0.1 x 256 x 3,600 / 1e6
    Mtok/h (~1.39 MJ at its ~14% busy share)."""
    r = plan_lifecycle(catalog, "llama-3.1-8b", 10e9, 0.1, 1.0, ["h100-sxm"], train_chips=8, slo=SLO)
    serve = r["best"]["serve"]
    ps = plan_serving(catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=0.1), 1024, 256, slo=SLO,
                      precision="fp8")  # fmt: skip
    (best,) = [v for v in ps["verified"] if v["system"] == serve["system"] and v["chips"] == serve["chips"]][:1]
    assert (serve["system"], serve["chips"]) == ("p5.48xlarge", 1)
    per_hour = best["energy_j_per_mtok"] * 0.1 * 256 * 3600 / 1e6
    assert serve["energy_j_per_hour"] == pytest.approx(per_hour, rel=0.01)
    assert serve["energy_j_per_hour"] < 0.5 * 1020 * 3600 * 1.15  # not busy all hour
    # CO2e at us-east-1's grid, 379 g/kWh
    assert serve["co2e_kg_per_hour"] == pytest.approx(serve["energy_j_per_hour"] / 3.6e6 * 0.379, rel=1e-3)
