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
    watts = math.floor(e.numbers["trn3_tdp_for_target_w"])
    assert watts == 292
    assert e.why.endswith(
        "Trn3 would need <= 292 W per chip for 4x (3.95x as it rounds), its host and switches moving with it at 0.39 "
        "of the TDP, 114 W a chip, as --set trn3.tdp moves them, its matrix units kept at today's speed: no reference "
        "power is known for the trainium3 efficiency family (efficiency.trainium3.reference_tdp 0 W) to slow them "
        "from, though a part held to 29% of its 1,000 W TDP would slow"
    )


def test_a_reference_power_slows_them_instead() -> None:
    """With a reference power of 1,000 W the cube law applies: at 292 W, ((292 - 250) / 750)^(1/3) = 38%."""
    e = _check(load_catalog(sets=["trainium3.reference_tdp=1000W"]), "1e")
    slowed = ((292 - 250) / 750) ** (1 / 3)
    assert f"{slowed:.0%}" == "38%"
    assert e.why.endswith("moves them, where its matrix units would also slow to 38% (rated at 1,000 W)")
    assert "no reference power" not in e.why
