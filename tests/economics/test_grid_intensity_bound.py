"""A grid's carbon intensity has a plausibility bound, 2,000 g CO2e/kWh (catalog.fields.RANGES), as a PUE has 1 to 3
and electricity $5/kWh: 5,000 g/kWh for us-east-1 had been taken and priced 13x its carbon."""

from __future__ import annotations

import pytest

from chipwise.catalog.loader import load_catalog
from chipwise.catalog.terms import term
from chipwise.errors import ChipwiseError


def test_a_grid_past_2000_g_is_refused_in_one_line() -> None:
    with pytest.raises(ChipwiseError) as caught:
        load_catalog(sets=["datacenter.grid_intensity.us-east-1=5000gCO2e/kWh"])
    line = str(caught.value)
    assert "datacenter.grid_intensity.us-east-1 = 5000 gCO2e/kWh is not in [0, 2000] gCO2e/kWh" in line
    assert "Fix: give a value in that range." in line and "\n" not in line


def test_a_new_region_in_kg_for_g_is_refused() -> None:
    """A region of the user's own has no catalog figure for --set's unit-slip check to compare with: 3 kgCO2e/kWh,
    3,000 g, is refused by the bound alone."""
    with pytest.raises(ChipwiseError, match="3000 gCO2e/kWh is not in"):
        load_catalog(sets=["datacenter.grid_intensity.my-site=3kgCO2e/kWh"])


def test_the_dirtiest_real_grids_are_taken() -> None:
    """1,900 g/kWh, past any grid in the catalog (af-south-1's 928 g), is still taken: 1.9 kg/kWh."""
    catalog = load_catalog(sets=["datacenter.grid_intensity.us-east-1=1900gCO2e/kWh"])
    assert term(catalog, "datacenter", "grid_intensity", "us-east-1").value * 3.6e6 == pytest.approx(1.9)
