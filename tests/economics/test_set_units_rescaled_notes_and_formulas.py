"""A grid intensity given in kgCO2e/kWh, and one given 1000x off with a unit, refused as a bare number is; a
commitment carried to a file's on-demand rate without the built-in note's other 'today's rate'; the TCO's energy
formula as the idle draw is reckoned."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.catalog.units import parse_quantity, to_si
from chipwise.economics.pricing import price_per_chip_hour
from chipwise.economics.tco import owned_tco
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware, hardware

GRID = "datacenter.grid_intensity.us-east-1"


def test_kg_per_kwh_is_a_unit() -> None:
    """CCF's SERC factor 0.000379069 t/kWh is 0.379 kgCO2e/kWh, 379 g: 0.379 / 3.6e6 kg a joule."""
    assert parse_quantity("0.379kgCO2e/kWh") == (0.379, "kgCO2e/kWh")
    assert to_si(0.379, "kgCO2e/kWh") == pytest.approx(to_si(379, "gCO2e/kWh")) == pytest.approx(0.379 / 3.6e6)


def test_a_bare_grid_figure_is_told_the_unit_that_keeps_its_size() -> None:
    """The fix for a bare 0.379 had been '0.379gCO2e/kWh', accepted and 1000x small (0.148 kg where 148 kg)."""
    with pytest.raises(ChipwiseError) as err:
        load_catalog(sets=[f"{GRID}=0.379"])
    assert str(err.value).endswith(f"Fix: give its unit, e.g. {GRID}=0.379kgCO2e/kWh.")


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ("0.379gCO2e/kWh", f"e.g. {GRID}=0.379kgCO2e/kWh."),  # kg meant: 0.001x the catalog's 379
        ("379000gCO2e/kWh", f"e.g. {GRID}=379gCO2e/kWh."),  # 1000x: no other unit is nearer
    ],
)
def test_a_grid_figure_1000x_off_with_a_unit_is_a_slip(value: str, fix: str) -> None:
    with pytest.raises(ChipwiseError) as err:
        load_catalog(sets=[f"{GRID}={value}"])
    text = str(err.value)
    assert "379 gCO2e/kWh, past 300x of it: surely a unit slip" in text and text.endswith(fix)
    assert "\n" not in text


@pytest.mark.parametrize("value", ["0.379kgCO2e/kWh", "379gCO2e/kWh", "928gCO2e/kWh", "8gCO2e/kWh", "0gCO2e/kWh"])
def test_any_grid_of_the_catalogs_range_is_taken(value: str) -> None:
    """eu-north-1's 8 to af-south-1's 928 gCO2e/kWh (116x) are grids, and 0 a market-based what-if."""
    from chipwise.catalog.terms import term

    number, unit = parse_quantity(value)
    grid = term(load_catalog(sets=[f"{GRID}={value}"]), "datacenter", "grid_intensity", "us-east-1")
    assert grid.value == pytest.approx(to_si(number, unit))


def test_a_commitment_carried_to_a_files_rate_gives_one_todays_rate(tmp_path: Path) -> None:
    """A file's p5 on-demand price of 40 USD/h (2025-01): the footnote had given the rate applied, 52 x 40 / 98.32 =
    21.16, and beside it the built-in note's 'today's rate', 29.11 USD/h (3.64 a GPU-hour)."""
    path = tmp_path / "neg.yaml"
    path.write_text(
        "prices:\n  - {system: p5.48xlarge, provider: aws, region: us-east-1, mode: on-demand, value: 40, "
        'unit: USD/h, date: "2025-01", status: spec, source: [EFA_NOTE]}\n'
    )
    cat = load_catalog(files=[str(path)])
    q = price_per_chip_hour(cat, hardware(cat).system("p5.48xlarge"), "reserved-1y")
    assert q is not None and q.usd_per_chip_hour == pytest.approx(52 * 40 / 98.32 / 8)
    assert "= 21.16 USD/h" in q.derivation and "29.11" not in q.derivation and "3.64" not in q.derivation
    assert q.derivation.endswith(f"today's on-demand rate is {path}'s, so the entry's own note, carried to the rate "
                                 "it replaced, is left out")  # fmt: skip
    # the built-in rate moved the built-in way: its note, whose 29.11 is the rate applied, stays
    base = price_per_chip_hour(load_catalog(), hardware(load_catalog()).system("p5.48xlarge"), "reserved-1y")
    assert base is not None and "the entry: secondary source quotes '~52 USD/h'" in base.derivation


def test_the_energy_formula_names_the_idle_draw_it_reckons(catalog: Catalog, hw: Hardware) -> None:
    """It had read 'P_it(load) = (TDP + host share) x load + network W' beside an idle 320.75 W = 700 x 0.11 + 575 x
    0.25 + 100 (the host at its own idle share, not the accelerator's)."""
    tco = owned_tco(catalog, hw.system("h100-sxm"))
    assert tco.inputs.power.idle_w == pytest.approx(700 * 0.11 + 575 * 0.25 + 100)
    text = tco.formulas["energy"]
    assert "P_it(idle) = TDP x idle fraction + host share x host idle fraction + network W" in text
    assert "P_it(busy) = (TDP + host share) x busy fraction + network W" in text and "P_it(load)" not in text
