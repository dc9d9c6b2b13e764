"""Claim 3 on a small workload prints its costs in the unit that suits them (catalog.units.usd, the formatter the
tables use): Llama-3.1-8B on 64 chips for 1B tokens had read 'Trn3 $0M; saving vs h100-sxm $0M'."""

from __future__ import annotations

from chipwise.catalog import Catalog
from chipwise.catalog.units import usd
from chipwise.planner.claim_costs import claim3_training_cost
from chipwise.planner.claim_runs import ClaimRuns, ClaimWorkload


def test_usd_picks_the_unit() -> None:
    assert [usd(v) for v in (2.5e12, 6.88e6, 35_000.0, 412.0, 2.16)] == ["$2.50T", "$6.88M", "$35k", "$412", "$2.16"]


def test_a_small_runs_costs_are_no_zero_millions(catalog: Catalog) -> None:
    runs = ClaimRuns(catalog, ClaimWorkload(model="llama-3.1-8b", chips=64, tokens=1e9, precision="bf16"))
    a, b = claim3_training_cost(runs).checks
    assert "$0M" not in a.computed + b.computed
    trn3 = runs.train("llama-3.1-8b", "trn3-ultraserver", 64, "bf16", 1e9, "on-demand")
    assert isinstance(trn3, dict) and trn3["expected_cost_usd"] < 1e6
    assert a.computed.startswith(f"expected on-demand cost, Trn3 {usd(trn3['expected_cost_usd'])} (bf16); saving vs ")
