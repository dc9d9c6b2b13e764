"""A rented training fleet is billed in its provider's rental units in the mode, as plan serve bills a serving one
(stop 61, review A #1): EC2 Capacity Blocks sell whole 8-GPU p5 and 16-chip trn2 instances, so 12 chips rent 16."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.training import plan_training


def _rows(catalog: Catalog, hardware: list[str], chips: int, pricing: str) -> dict[str, dict]:
    report = plan_training(catalog, "llama-3.1-8b", chips, hardware, tokens=1e10, pricing=pricing)
    return {r["hardware"]: r for r in report["results"]}


def test_capacity_block_training_rents_whole_instances(catalog: Catalog) -> None:
    """12 H100s and 12 Trainium2 chips in Capacity Blocks had cost 12 x price x T ($2,157 and $1,252), 25% under
    the two p5.48xlarge and the one trn2.48xlarge AWS sells for them: 16 chips each."""
    rows = _rows(catalog, ["h100-sxm", "trn2"], 12, "capacity-block")
    for hw_id, price in (("h100-sxm", 41.528 / 8), ("trn2", 35.7608 / 16)):
        r = rows[hw_id]
        assert r["billed_chips"] == 16
        assert r["price_usd_per_chip_hour"] == pytest.approx(price, rel=1e-3)
        assert r["cost_usd"] == pytest.approx(price * 16 * r["time_to_train_s"] / 3600, rel=1e-9)
        # the 4 chips the units hold past the job's stand in for its 2% spares (0.24 chips): none paid on top
        assert r["expected_cost_usd"] == pytest.approx(price * 16 * r["expected_time_to_train_s"] / 3600, rel=1e-9)


def test_whole_units_cost_no_more_than_their_chips_and_per_chip_modes_stay_per_chip(catalog: Catalog) -> None:
    """16 H100s in Capacity Blocks fill two instances: billed 16, spares paid on top as before (16.32 chips). On
    demand, where single H100s and Trainium2 chips are rented (trn2.3xlarge), 12 are billed as 12; owned chips are
    bought one by one."""
    full = _rows(catalog, ["h100-sxm"], 16, "capacity-block")["h100-sxm"]
    assert full["billed_chips"] == 16
    assert full["expected_cost_usd"] == pytest.approx(
        full["price_usd_per_chip_hour"] * 16 * 1.02 * full["expected_time_to_train_s"] / 3600, rel=1e-9
    )
    for pricing in ("on-demand", "owned"):
        for r in _rows(catalog, ["h100-sxm", "trn2"], 12, pricing).values():
            assert r["billed_chips"] == 12, (pricing, r["hardware"])
            assert r["cost_usd"] == pytest.approx(
                r["price_usd_per_chip_hour"] * 12 * r["time_to_train_s"] / 3600, rel=1e-9
            )


def test_a_tpu_fleet_rents_whole_hosts(catalog: Catalog) -> None:
    """A TPU v5p slice is whole 4-chip hosts in every mode (rental.chips [4]): 6 chips had been billed as 6."""
    r = _rows(catalog, ["tpu-v5p"], 6, "on-demand")["tpu-v5p"]
    assert r["billed_chips"] == 8
    assert r["cost_usd"] == pytest.approx(4.2 * 8 * r["time_to_train_s"] / 3600, rel=1e-9)
