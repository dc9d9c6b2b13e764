"""Review mends of the economics layer (stop 61, review A): as_of compares dates at the coarser precision, `tco`
says why a system has no price of its own in the compared mode, and a zero scale-out reference bandwidth is
refused."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.pricing import price_gap, price_per_chip_hour
from chipwise.economics.tco import owned_tco, tco_report
from chipwise.hardware import Hardware
from cli_run import run_error


# ----------------------------------------------------------------------------------------------- #3 as_of by year
@pytest.mark.parametrize("as_of", ["2025", "2025-05", "2025-06"])
def test_as_of_a_year_keeps_the_prices_dated_in_it(catalog: Catalog, hw: Hardware, as_of: str) -> None:
    """as_of='2025' found no on-demand H100 price ('2025-05' > '2025' as text) while it kept the reserved-1y price
    dated '2025': p5's $98.32 of 2025-05 is in force by 2025, as by 2025-06."""
    quote = price_per_chip_hour(catalog, hw.system("h100-sxm"), "on-demand", as_of=as_of)
    assert quote is not None and quote.usd_per_chip_hour == pytest.approx(98.32 / 8)
    assert quote.date == "2025-05"


def test_as_of_a_year_keeps_the_newest_price_in_it(catalog: Catalog, hw: Hardware) -> None:
    """'2026' had ignored the 2026-07 price (and taken 2025-05's $12.29): it is listed by 2026."""
    quote = price_per_chip_hour(catalog, hw.system("h100-sxm"), "on-demand", as_of="2026")
    assert quote is not None and quote.date == "2026-07" and quote.usd_per_chip_hour == pytest.approx(55.04 / 8)


# ---------------------------------------------------------------------------------------- #4 no own price in tco
def test_tco_says_why_a_system_has_no_own_price_beside_its_chips_other_prices(
    catalog: Catalog, hw: Hardware, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tco azure-nd-h100-v5 --compare capacity-block` listed p5's block and captioned it '* azure-nd-h100-v5's own
    price', with no row starred: Capacity Blocks are EC2's, not Azure's, and predict leaves the Azure system '-'."""
    system = hw.system("azure-nd-h100-v5")
    report = tco_report(catalog, owned_tco(catalog, system), "capacity-block")
    assert [r["entry"] for r in report["break_even"]] == ["p5.48xlarge"]
    assert not report["break_even"][0]["this_system"]
    note = "capacity-block is sold by aws only, not by azure, which rents azure-nd-h100-v5"
    assert report["break_even_note"] == note == price_gap(catalog, system, "capacity-block")
    own = tco_report(catalog, owned_tco(catalog, hw.system("p5.48xlarge")), "capacity-block")
    assert "break_even_note" not in own
    from chipwise.interfaces.cli.app import run

    assert run(["tco", "azure-nd-h100-v5", "--compare", "capacity-block"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "own price, the one predict" not in out
    assert "azure-nd-h100-v5 has no capacity-block price (capacity-block is sold by aws only, not by azure" in out
    assert run(["tco", "p5.48xlarge", "--compare", "capacity-block"]) == 0
    assert "* p5.48xlarge's own price, the one predict and plan train use for it" in capsys.readouterr().out


# ------------------------------------------------------------------------------ #6 zero scale-out reference bandwidth
@pytest.mark.parametrize("value", ["0", "0Gb/s"])
def test_a_zero_scaleout_reference_bandwidth_is_refused(capsys: pytest.CaptureFixture[str], value: str) -> None:
    """It had been taken as a share of 1 (every fabric priced at one 400G port a chip) and printed '/ 0 Gb/s per
    chip' in the derivation, exit 0."""
    err = run_error(
        capsys, ["tco", "h100-sxm", "--set", f"datacenter.capex.scaleout_reference_bandwidth_per_chip={value}"]
    )
    assert "scaleout_reference_bandwidth_per_chip" in err and "above 0" in err and "Fix:" in err
