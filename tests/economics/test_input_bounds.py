"""Plausibility bounds on the site and owned-fleet figures a user gives: a PUE of 1e6, electricity at $1e9/kWh and a
depreciation life of 1e-9 years had each priced a chip-hour (at $96,545, $1.6 billion and $4.8 billion), exit 0."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.schema import Figure
from chipwise.catalog.terms import node
from chipwise.economics.energy import MAX_PUE, check_pue, site_for
from chipwise.economics.tco import PLAUSIBLE, owned_tco
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from cli_run import run_error, run_json


def _value(fig: Figure) -> float:
    """A catalog figure in its own unit (USD/kWh, years)."""
    return float(fig.value)


@pytest.mark.parametrize("pue", [3.0001, 1e6, 1e9])
def test_a_pue_past_any_datacenter_is_refused(pue: float) -> None:
    with pytest.raises(ChipwiseError, match=r"is more than 3, past any surveyed datacenter.*Fix: give a PUE >= 1"):
        check_pue(pue)


@pytest.mark.parametrize("pue", [1.0, 1.56, MAX_PUE])
def test_a_pue_within_the_bound_stands(catalog: Catalog, hw: Hardware, pue: float) -> None:
    assert site_for(catalog, hw.system("h100-sxm"), pue=pue).pue.value == pue


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["tco", "h100-sxm", "--pue", "1e6"], "PUE 1e+06 is more than 3"),
        (["plan", "train", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--pue", "1e9"], "PUE 1e+09 is more"),
        (["tco", "h100-sxm", "--electricity", "1e9"], "electricity price 1e+09 USD/kWh is outside 0 to 5 USD/kWh"),
        (["tco", "h100-sxm", "--electricity", "5.01"], "ERCOT's wholesale offer cap"),
        (["tco", "h100-sxm", "--depreciation-years", "1e-9"], "depreciation life 1e-09 years is outside 0.5 to 30"),
        (["tco", "h100-sxm", "--depreciation-years", "0"], "depreciation life 0 years is outside 0.5 to 30"),
        (["tco", "h100-sxm", "--depreciation-years", "31"], "Fix: give one in [0.5, 30], e.g. 5."),
    ],
)
def test_absurd_site_and_tco_figures_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert needle in run_error(capsys, argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--pue", "3", "--electricity", "5", "--depreciation-years", "0.5"],
        ["--electricity", "0", "--depreciation-years", "30"],
    ],
)
def test_figures_at_the_bounds_stand(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert run_json(capsys, ["tco", "h100-sxm", *argv, "--json"])["usd_per_chip_hour"] > 0


def test_the_api_refuses_the_same(catalog: Catalog, hw: Hardware) -> None:
    with pytest.raises(ChipwiseError, match="depreciation life 100 years is outside"):
        owned_tco(catalog, hw.system("h100-sxm"), overrides={"depreciation_years": 100})
    with pytest.raises(ChipwiseError, match="PUE 10 is more than 3"):
        owned_tco(catalog, hw.system("h100-sxm"), pue=10)


def test_the_catalogs_own_figures_lie_within_the_bounds(catalog: Catalog) -> None:
    """The bounds refuse slips, never a figure the catalog itself holds (PUE, electricity prices, depreciation)."""
    pues = [_value(v) for v in (node(catalog, "datacenter", "pue") or {}).values()]
    assert pues and all(1.0 <= p <= MAX_PUE for p in pues)
    prices = [_value(v) for v in (node(catalog, "datacenter", "electricity_usd_per_kwh") or {}).values()]
    electricity = PLAUSIBLE["electricity_usd_per_kwh"]
    assert prices and all(electricity.low <= p <= electricity.high for p in prices)
    life = PLAUSIBLE["depreciation_years"]
    assert life.low <= _value(node(catalog, "datacenter", "depreciation_years")) <= life.high
