"""A training run's failures are those of the chips it runs on: the 1M-trn3 plan (then on 917,504 chips) had been
charged the failures of all 1,000,000 (533 a day where the job sees 489); the idle ones stay paid for, and stand in
for the spares. It now runs on 524,288 (the plan that trains soonest, not the plan of the fastest step). A fleet
with no price in its mode runs at the provider asked for, not at the system's."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.training import plan_training
from chipwise.reliability.goodput import reliability_inputs
from chipwise.reliability.rates import interruption_rate


def test_the_million_chip_plan_fails_on_the_chips_it_uses(catalog: Catalog, hw: Hardware) -> None:
    (r,) = plan_training(catalog, "llama-3.1-405b", 1_000_000, ["trn3"], tokens=15e12)["results"]
    used = r["chips_used"]
    assert used == 524_288 and r["reliability"]["chips"] == used and r["reliability"]["hosts"] == used / 4
    inputs = reliability_inputs(catalog, hw.system("trn3-ultraserver"))
    per_day = float(interruption_rate(inputs.rates, used, inputs.chips_per_host.value)) * 86400
    assert r["failures_per_day"] == pytest.approx(per_day) == pytest.approx(391.71, abs=0.01)  # 4 ranks a chip
    # in-memory; 0.5607 at the FSDP plan of before its rings stepped through every member (NCCL's tuning.cc); 0.6626
    # with software faults per chip
    assert r["goodput"] == pytest.approx(0.5586, abs=1e-4)
    # was 4.26 days, 3.97, 3.33, 3.305 (software faults per chip, FSDP's latency once a step), 4.209 (the rings' steps)
    assert r["expected_time_to_train_s"] / 86400 == pytest.approx(4.698, abs=0.005)
    # was $551M, $516.9M, $503.5M, $421.8M, $418.8M, $533.4M
    assert r["expected_cost_usd"] == pytest.approx(595.4e6, rel=1e-3)
    # the 475,712 idle chips, paid for for the whole expected time, stand in for the spares (2% of those used)
    price = r["price_usd_per_chip_hour"]
    assert r["expected_cost_usd"] == pytest.approx(price * 1_000_000 * r["expected_time_to_train_s"] / 3600)
    assert "half_goodput_chips" not in r  # goodput over a half: no smaller fleet to suggest


def test_an_unpriced_fleet_runs_at_the_provider_asked_for(catalog: Catalog) -> None:
    """RunPod sells no reserved-1y H100: the '-' row's energy had been reckoned at AWS's site (PUE 1.15, us-east-1),
    the system's, where a priced RunPod fleet runs in colocation (PUE 1.42, country-usa)."""
    (r,) = plan_training(
        catalog, "llama-3.1-8b", 64, ["h100-sxm"], tokens=1e11, pricing="reserved-1y", provider="runpod"
    )["results"]
    assert r["price_usd_per_chip_hour"] is None and "runpod" in r["price_note"]
    assert (r["pue"], r["region"]) == (1.42, "country-usa")
