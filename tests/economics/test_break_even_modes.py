"""Owning against a reservation (paid every hour of its term) is a verdict, not a break-even utilisation; the
scale-out network is paid for only by a fleet past one system; idle power above busy power is refused."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.loader import load_catalog
from chipwise.economics.tco import break_even, owned_tco, tco_report
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware, hardware
from chipwise.interfaces.cli.tco_cmd import print_tco

# The owned H100 (p5 in a fleet of many, colocation, country-usa): fixed 1.00502 + 0.20100 + 0.34645 = 1.55247 $/h;
# energy idle 320.75 W and busy 0.76 x 1,275 W + 100 W = 1,069 W x PUE 1.42 x $0.0862/kWh = 0.039261 and 0.130850 $/h.
FIXED, IDLE, BUSY = 1.55247, 0.039261, 0.130850


def test_a_reservation_is_compared_per_calendar_hour(catalog: Catalog, hw: Hardware) -> None:
    """reserved-1y at $3.64 a GPU-hour had read 'own when utilisation > 43.2%': (F + E_idle) / (r - E_busy +
    E_idle), the formula of a price paid by the hour used. A reservation is paid every hour, r / u per used hour, so
    owning wins iff F + E_idle + (E_busy - E_idle) u < r: at any utilisation when F + E_busy <= r (1.683 <= 3.64)."""
    tco = owned_tco(catalog, hw.system("h100-sxm"))
    (row,) = break_even(catalog, tco, "reserved-1y")
    assert row["break_even_utilisation"] is None
    assert row["verdict"] == "owning is cheaper at any utilisation"
    assert row["owned_usd_per_calendar_hour"]["idle"] == pytest.approx(FIXED + IDLE, abs=1e-4)
    assert row["owned_usd_per_calendar_hour"]["busy"] == pytest.approx(FIXED + BUSY, abs=1e-4)
    # on demand is still paid by the hour used: its break-even stands ((F + E_idle) / (6.88 - E_busy + E_idle))
    (od,) = [r for r in break_even(catalog, tco, "on-demand") if r.get("this_system")]
    assert od["break_even_utilisation"] == pytest.approx((FIXED + IDLE) / (6.88 - BUSY + IDLE), abs=1e-4)
    assert "verdict" not in od


def test_the_three_verdicts_against_a_reservation(catalog: Catalog, hw: Hardware) -> None:
    """Renting wins at any utilisation when F + E_idle >= r; between F + E_idle and F + E_busy owning wins below
    u = (r - F - E_idle) / (E_busy - E_idle): at r = 1.65, (1.65 - 1.591731) / 0.091589 = 63.6%."""
    tco = owned_tco(catalog, hw.system("h100-sxm"))
    assert tco.commitment_verdict(3.64) == ("own", None)
    assert tco.commitment_verdict(1.50) == ("rent", None)
    verdict, below = tco.commitment_verdict(1.65)
    assert below is not None  # a utilisation below which owning is cheaper
    assert verdict == "own below" and below == pytest.approx((1.65 - FIXED - IDLE) / (BUSY - IDLE), abs=1e-3)
    assert below == pytest.approx(0.636, abs=1e-3)
    # at that utilisation the two cost the same per used hour: r / u = the owned cost per used hour
    assert tco.usd_per_used_chip_hour(below) == pytest.approx(1.65 / below, rel=1e-9)


def test_the_tco_command_says_owning_wins_at_any_utilisation(capsys: pytest.CaptureFixture[str]) -> None:
    """The table's last column is the verdict, not a utilisation, in a few words (the sentence had folded to
    'utilisat / ion' at 80 columns)."""
    cat = load_catalog()
    print_tco(tco_report(cat, owned_tco(cat, hardware(cat).system("h100-sxm")), "reserved-3y"))
    out = capsys.readouterr().out
    assert "own, any u" in out and "own when utilisation" not in out


def test_one_system_pays_no_scale_out_network(catalog: Catalog, hw: Hardware) -> None:
    """8 H100s on one p5 owned had paid $6,600 a chip of 400G fabric and colocation for its 100 W: capex $37,450,
    1,275 W rated; depreciation 37,450 / 43,830 h = 0.85444, operations 0.04 x 37,450 / 8,766 = 0.17089,
    colocation 184.06 x 1.275 / 730.5 = 0.32125, energy 0.76 x 1,275 = 969 W x 1.42 x 0.0862 = 0.11861: $1.46519 a
    chip-hour. Sixteen span two systems and pay the fabric: $1.68332."""
    system = hw.system("p5.48xlarge")
    one = owned_tco(catalog, system, scaleout=False)
    assert one.inputs.capex["scaleout_network"].value == 0.0 and one.inputs.power.network_w == 0.0
    assert one.capex_usd == pytest.approx(37_450)
    assert one.usd_per_chip_hour == pytest.approx(0.85444 + 0.17089 + 0.32125 + 0.11861, abs=1e-4)
    two = owned_tco(catalog, system, scaleout=True)
    assert two.inputs.capex["scaleout_network"].value == pytest.approx(6_600)
    assert two.usd_per_chip_hour == pytest.approx(FIXED + BUSY, abs=1e-4)
    assert two.usd_per_chip_hour == pytest.approx(owned_tco(catalog, system).usd_per_chip_hour)


def test_idle_power_above_busy_power_is_refused(hw: Hardware) -> None:
    """idle 1.0 of the chip and host against a busy load of 0.3: idle 1,275 W above busy 382.5 W had priced (a higher
    utilisation then lowered the energy cost)."""
    cat = load_catalog(
        sets=[
            "datacenter.opex.idle_power_fraction=1.0",
            "datacenter.opex.host_idle_power_fraction=1.0",
            "datacenter.opex.utilisation_power_fraction=0.3",
        ]
    )
    with pytest.raises(ChipwiseError) as err:
        owned_tco(cat, hardware(cat).system("h100-sxm"))
    # the values in use, not the catalog's defaults copied into the text (which a catalog change leaves stale)
    assert str(err.value) == (
        "p5.48xlarge: idle IT power 1,275 W a chip is above its busy 382 W (idle_power_fraction 1 of the 700 W chip, "
        "host_idle_power_fraction 1 of its 575 W host, utilisation_power_fraction 0.3 of both). Fix: --set "
        "datacenter.opex.idle_power_fraction and datacenter.opex.host_idle_power_fraction below --set "
        "datacenter.opex.utilisation_power_fraction."
    )


@pytest.mark.parametrize(
    ("rate", "code", "cell"),
    [(3.64, "own", "own, any u"), (1.50, "rent", "rent, any u"), (1.65, "own below", "own if u < 63.6%")],
)
def test_a_reservation_row_carries_its_verdict_code(
    catalog: Catalog, hw: Hardware, rate: float, code: str, cell: str
) -> None:
    """The row keeps commitment_verdict's code beside its sentence, and the tco table's cell is built from the code
    (it had read 'owning' back out of the sentence): at r = 1.65 owning wins below 63.6% (as above)."""
    from chipwise.economics.tco import _against
    from chipwise.interfaces.cli.tco_cmd import _verdict_cell

    row = _against(owned_tco(catalog, hw.system("h100-sxm")), "reserved-1y", {"usd_per_chip_hour": rate})
    assert row["cheaper"] == code
    assert _verdict_cell(row) == cell
