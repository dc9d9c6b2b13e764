"""plan hetero's $/hour bills what its cost bills: whole rental units."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.hetero import plan_hetero_training


def test_the_hourly_price_bills_whole_rental_units(catalog: Catalog) -> None:
    """12 Trainium2 rent one 16-chip trn2.48xlarge: 16 x $2.73 = $43.68 an hour, the rate the run's cost is charged
    at (the column had read 12 x $2.73 = $32.76, and the mix's $115.32 against its cost's $126.24 an hour)."""
    r = plan_hetero_training(catalog, "llama-3.1-8b", {"trn2": 12, "h100-sxm": 12}, tokens=1e10)
    alone = {a["hardware"]: a for a in r["alone"]}
    trn2 = alone["trn2"]
    assert trn2["billed_chips"] == 16 and trn2["usd_per_hour"] == pytest.approx(16 * 2.73)
    for row in (trn2, alone["h100-sxm"], r["mixed"]):
        assert row["usd_per_hour"] == pytest.approx(row["cost_usd"] / (row["time_to_train_s"] / 3600), rel=1e-9)
