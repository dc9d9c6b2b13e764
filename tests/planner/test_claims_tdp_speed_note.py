"""Claims 1d and 1e say what a Trn3 held to the TDP they solve for does to its speed: its matrix units slow where its
efficiency family gives a reference power, and where it gives none (trainium3's reference_tdp 0 W) the text says its
speed is kept for that reason (1e had read 'Trn3 would need <= 292 W per chip for 4x' with no word of it)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.loader import load_catalog
from chipwise.planner.claim_hardware import claim1_trn3_ultraserver
from chipwise.planner.claim_runs import ClaimRuns


def _check(catalog: Catalog, cid: str) -> Any:
    return next(c for c in claim1_trn3_ultraserver(ClaimRuns(catalog)).checks if c.id == cid)


@pytest.fixture(scope="module")
def e(catalog: Catalog) -> Any:
    return _check(catalog, "1e")


def test_1e_says_the_speed_is_kept_for_want_of_a_reference_power(e: Any) -> None:
    """Tokens per joule go as 1 / TDP (the Trn3 host, 0.547 of it, moves with it): 4x (3.95x) needs 1,000 W x the
    ratio / 3.95 = 262 W for today's 1.037x, with 0.547 x 262 = 143 W of host a chip."""
    ratio = e.numbers["tokens_per_joule_ratio"]
    assert e.numbers["trn3_tdp_for_target_w"] == pytest.approx(1000 * ratio / 3.95)
    watts = math.floor(e.numbers["trn3_tdp_for_target_w"])
    assert watts == 262
    assert e.why.endswith(
        "Trn3 would need <= 262 W per chip for 4x (3.95x as it rounds), its host and network moving with it at 0.55 "
        "of the TDP, 143 W a chip, as --set trn3.tdp moves them, at today's speed: chipwise knows no power at which "
        "trainium3's efficiencies were measured (efficiency.trainium3.reference_tdp is 0 W), so it does not slow the "
        "chip, though a real part held to 26% of its 1,000 W TDP would likely run slower"
    )


def test_a_reference_power_slows_them_instead() -> None:
    """With a reference power of 1,000 W the cube law applies: at 262 W, (262 - 250) / 750 = 0.016 of the dynamic
    share is below its 0.05 floor (perf.device.power_scale), so 0.05^(1/3) = 37%."""
    e = _check(load_catalog(sets=["trainium3.reference_tdp=1000W"]), "1e")
    assert math.floor(e.numbers["trn3_tdp_for_target_w"]) == 262
    slowed = max((262 - 250) / 750, 0.05) ** (1 / 3)
    assert f"{slowed:.0%}" == "37%"
    assert e.why.endswith("moves them, where its matrix units would also slow to 37% (rated at 1,000 W)")
    assert "no reference power" not in e.why
