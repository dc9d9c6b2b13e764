"""`catalog show --json` gives a calendar year no SI value: launch_year 2022 had been 'si: 63809467200.0', 2022
years in seconds."""

from __future__ import annotations

from chipwise.catalog import load_catalog
from chipwise.interfaces.cli.catalog_cmd import chip_json


def test_a_launch_year_has_no_si_value() -> None:
    figures = chip_json(load_catalog(), "h100-sxm")["figures"]
    assert (figures["launch_year"]["value"], figures["launch_year"]["unit"]) == (2022.0, "year")
    assert "si" not in figures["launch_year"]
    assert figures["tdp"]["si"] == 700.0
