"""The tco total's formula names its terms as their rows are named: it had read 'space' beside a 'colocation' row."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.tco import owned_tco
from chipwise.hardware import hardware


@pytest.mark.parametrize("facility", ["colocation", "owned"])
def test_the_totals_formula_names_the_rows_terms(catalog: Catalog, facility: str) -> None:
    tco = owned_tco(catalog, hardware(catalog).system("h100-sxm"), facility=facility)
    terms = [k for k in tco.formulas if k not in ("capex", "usd_per_chip_hour")]
    assert tco.formulas["usd_per_chip_hour"].startswith(f"({' + '.join(terms)}) per calendar hour")
