"""The plausibility bounds of the owned-fleet figures hold however a figure arrives: a tco option, or `--set` (through
which plan train, predict and plan serve take them; an operations fraction of 5, a 0.01-year life or $1000/kWh had
been priced there, and a 500% spare fleet paid for). Utilisation, colocation and every capex part are bounded too
(--utilisation 1e-9 had printed '0.0%: $1,530,133,773 per chip-hour', --server 1e12 $27M)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.terms import node
from chipwise.economics.tco import OVERRIDES, PLAUSIBLE, owned_tco
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from cli_run import run_error, run_json

PLAN = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1e10", "--chips", "8", "--hardware", "h100-sxm"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["tco", "h100-sxm", "--set", "datacenter.opex.operations_fraction_of_capex_per_year=5"],
            "error: operations fraction 5 is outside 0 to 1 (of capex a year: above 1 is more than the fleet costs to "
            "buy each year, not a plausible staff, support and spares budget); "
            "datacenter.opex.operations_fraction_of_capex_per_year: set on the command line: "
            "--set datacenter.opex.operations_fraction_of_capex_per_year=5. Fix: give one in [0, 1], "
            "e.g. --set datacenter.opex.operations_fraction_of_capex_per_year=0.04.",
        ),
        (
            [*PLAN, "--pricing", "owned", "--set", "datacenter.depreciation_years=0.01year"],
            "depreciation life 0.01 years is outside 0.5 to 30 years",
        ),
        (
            ["tco", "h100-sxm", "--set", "datacenter.depreciation_years=100year"],
            "Fix: give one in [0.5, 30], e.g. --set datacenter.depreciation_years=5year.",
        ),
        (
            ["tco", "h100-sxm", "--set", "datacenter.electricity_usd_per_kwh.country-usa=1000USD/kWh"],
            "electricity price 1000 USD/kWh is outside 0 to 5 USD/kWh",
        ),
        (
            ["tco", "h100-sxm", "--set", "datacenter.colocation_usd_per_kw_month=1e9USD/kW/month"],
            "colocation price 1e+09 USD/kW-month is outside 0 to 2000 USD/kW-month",
        ),
        (
            ["tco", "h100-sxm", "--set", "datacenter.capex.scaleout_network_usd_per_chip=1e9USD"],
            "e.g. --set datacenter.capex.scaleout_network_usd_per_chip=6600USD.",
        ),
        (["tco", "h100-sxm", "--set", "h100-sxm.unit_price=1e9USD"], "chip price 1e+09 USD is outside 0 to 1000000"),
        (
            [*PLAN, "--set", "reliability.spares.spare_fraction=5"],
            "error: spare fraction 5 is not in [0, 1); reliability.spares.spare_fraction: set on the command line: "
            "--set reliability.spares.spare_fraction=5. Fix: give e.g. --set reliability.spares.spare_fraction=0.02.",
        ),
        (["tco", "h100-sxm", "--operations", "5"], "operations fraction 5 is outside 0 to 1"),
        (["tco", "h100-sxm", "--utilisation", "1e-9"], "utilisation 1e-09 is outside 0.01 to 1"),
        ([*PLAN, "--pricing", "owned", "--utilisation", "0.001"], "utilisation 0.001 is outside 0.01 to 1"),
        (["tco", "h100-sxm", "--colocation", "1e9"], "Fix: give one in [0, 2000], e.g. 184."),
        (["tco", "h100-sxm", "--server", "1e12"], "server capex per chip 1e+12 USD is outside 0 to 100000 USD"),
        (["tco", "h100-sxm", "--storage", "2e5"], "storage capex per chip 200000 USD is outside"),
        (["tco", "h100-sxm", "--chip-price", "2e6"], "Fix: give one in [0, 1000000], e.g. 30000."),
    ],
)
def test_an_implausible_figure_is_one_line_however_given(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert needle in run_error(capsys, argv)


def test_figures_at_the_bounds_stand(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--utilisation", "0.01", "--colocation", "2000", "--server", "1e5", "--chip-price", "1e6", "--json"]
    assert run_json(capsys, ["tco", "h100-sxm", *argv])["utilisation"] == 0.01
    sets = ["--set", "datacenter.opex.operations_fraction_of_capex_per_year=1", "--json"]
    assert run_json(capsys, ["tco", "h100-sxm", *sets])["usd_per_chip_hour"] > 0


def test_the_api_refuses_the_same(catalog: Catalog, hw: Hardware) -> None:
    with pytest.raises(ChipwiseError, match=r"^colocation price 5000 USD/kW-month is outside 0 to 2000"):
        owned_tco(catalog, hw.system("h100-sxm"), overrides={"colocation_usd_per_kw_month": 5000})
    with pytest.raises(ChipwiseError, match=r"^utilisation 0\.005 is outside 0\.01 to 1"):
        owned_tco(catalog, hw.system("h100-sxm"), utilisation=0.005)


def test_every_tco_input_has_a_bound_that_holds_the_catalogs_figures(catalog: Catalog, hw: Hardware) -> None:
    assert set(OVERRIDES) <= set(PLAUSIBLE)
    for name, (path, _, _) in OVERRIDES.items():
        if not path:  # the chip price: each chip's unit price
            values = [u for c in hw.chip_ids if (u := hw.chip(c).unit_price) is not None]
        else:
            fig = node(catalog, "datacenter", *path)
            values = [float(f.value) for f in (fig.values() if isinstance(fig, dict) else [fig])]
        bound = PLAUSIBLE[name]
        assert values and all(bound.low <= v <= bound.high for v in values), name


def test_a_catalog_files_implausible_figure_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file's out-of-range figure had been 'a catalog file figure' (or its own derivation) with a --set for fix;
    the line names the file to correct. At a bound's edge the value is not rounded onto it ('0.01 is outside 0.01')."""
    f = tmp_path / "dc.yaml"
    f.write_text(
        "datacenter:\n  opex:\n    operations_fraction_of_capex_per_year: {value: 5, unit: '1', status: measured, "
        "source: [mine]}\nsources: {mine: 'my books'}\n"
    )
    out = run_error(capsys, ["tco", "h100-sxm", "--catalog", str(f)])
    assert (
        f"datacenter.opex.operations_fraction_of_capex_per_year in {f}. Fix: give one in [0, 1], e.g. 0.04 in {f}."
        in out
    )
    assert "utilisation 0.009999999 is outside 0.01 to 1" in run_error(
        capsys, ["tco", "h100-sxm", "--utilisation", "0.009999999"]
    )
