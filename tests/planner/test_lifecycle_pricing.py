"""plan lifecycle priced in a mode and a region: both sides as plan train and plan serve price them. It had priced
both on demand at each offer's own region, and taken neither --pricing nor --region."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.units import SECONDS_PER_HOUR, SECONDS_PER_MONTH
from chipwise.errors import ChipwiseError
from chipwise.planner.lifecycle import plan_lifecycle
from chipwise.planner.serving_plan import plan_serving
from chipwise.planner.training import plan_training
from chipwise.workload.load import Load

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}
#: p5.48xlarge's 1-year reservation: 52 x 55.04 / 98.32 / 8 = $3.6387 a GPU-hour (test_fleet_pricing)
H100_RESERVED_1Y = 52 * 55.04 / 98.32 / 8


def _lifecycle(catalog: Catalog, pricing: str = "on-demand", region: str | None = None) -> dict[str, Any]:
    return plan_lifecycle(
        catalog, "llama-3.1-8b", 1e11, 5.0, 6.0, ["h100-sxm"], train_chips=64, slo=SLO, pricing=pricing,
        region=region,
    )  # fmt: skip


def test_a_reserved_pair_is_plan_trains_and_plan_serves_own_figures(catalog: Catalog) -> None:
    """Under reserved-1y in us-east-1 the pair's cost, energy and carbon are plan train's expected figures for the
    run plus plan serve's checked fleet's an hour over six months (4,383 h), each at the reservation's rate."""
    r = _lifecycle(catalog, pricing="reserved-1y", region="us-east-1")
    assert (r["pricing"], r["region"]) == ("reserved-1y", "us-east-1")
    assert "reserved-1y reservation is paid every hour of its 8,766 h term" in r["reservation"]
    train = plan_training(
        catalog, "llama-3.1-8b", 64, ["h100-sxm"], tokens=1e11, objective="cost", pricing="reserved-1y",
        region="us-east-1",
    )["results"][0]  # fmt: skip
    serve = plan_serving(
        catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=5.0), 1024, 256, slo=SLO, precision="fp8",
        pricing="reserved-1y", region="us-east-1",
    )["best"]  # fmt: skip
    assert train["price_usd_per_chip_hour"] == pytest.approx(H100_RESERVED_1Y, rel=1e-9)
    assert serve["cost_usd_per_hour"] == pytest.approx(serve["billed_chips"] * H100_RESERVED_1Y, rel=1e-9)
    hours = 6.0 * SECONDS_PER_MONTH / SECONDS_PER_HOUR
    assert hours == pytest.approx(4383.0)
    best = r["best"]
    assert best["train"]["cost"] == pytest.approx(train["expected_cost_usd"], rel=1e-9)
    assert best["serve"]["usd_per_hour"] == pytest.approx(serve["cost_usd_per_hour"], rel=1e-9)
    assert best["cost_usd"] == pytest.approx(train["expected_cost_usd"] + serve["cost_usd_per_hour"] * hours)
    assert best["energy_j"] == pytest.approx(train["expected_energy_j"] + serve["energy_j_per_hour"] * hours)
    assert best["co2e_kg"] == pytest.approx(train["expected_co2e_kg"] + serve["co2e_kg_per_hour"] * hours)
    # less than on demand: $6.88 a GPU-hour both sides
    assert best["cost_usd"] < _lifecycle(catalog)["best"]["cost_usd"]


def test_a_region_reckons_both_sides_carbon_at_its_grid(catalog: Catalog) -> None:
    """Asked for us-east-2 (411 g CO2e/kWh), both sides' carbon is reckoned there, where p5's offer region,
    us-east-1, reads 379 g."""
    for region, grams in (("us-east-2", 411), (None, 379)):
        best = _lifecycle(catalog, region=region)["best"]
        for side in (best["train"], best["serve"]):
            assert side["carbon"] / (side["energy"] / 3.6e6) * 1e3 == pytest.approx(grams, abs=0.5)


@pytest.mark.parametrize(
    ("pricing", "region", "message"),
    [
        ("on-demand", "us-east-9", "unknown region 'us-east-9'"),
        ("cheap", None, "unknown pricing mode 'cheap'"),
    ],
)
def test_an_unknown_region_or_mode_stops_before_the_search(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, pricing: str, region: str | None, message: str
) -> None:
    from chipwise.planner import lifecycle

    def searched(*args: object, **kwargs: object) -> None:
        raise AssertionError("searched")

    monkeypatch.setattr(lifecycle, "plan_training", searched)
    with pytest.raises(ChipwiseError, match=message):
        _lifecycle(catalog, pricing, region)
