"""plan serve ranks an owned pool at the price its check charges: the TCO's fixed terms with the scale-out network
only past one system, and the pool's own energy at its busy share (serving_economics.chip_hour_price)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.tco import owned_tco
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import chip_hour_price, economics
from chipwise.serve.simulate import Pool


def test_an_owned_chip_of_one_system_is_ranked_without_a_fabric(catalog: Catalog, hw: Hardware) -> None:
    """The ranking had priced one owned H100 at the TCO of a fleet of many, busy all hour: $1.683 a chip-hour (the
    table's $1.68 beside a verdict of $1.40). One system has no scale-out fabric: 0.8544 + 0.1709 + 0.3213 fixed
    (capex $37,450) + 969 W busy x PUE 1.42 x $0.0862/kWh = $1.465."""
    system = hw.system("h100-sxm")
    price, record, quote = chip_hour_price(catalog, system, "owned", None, None)
    assert price == pytest.approx(0.8544 + 0.1709 + 0.3213 + 0.969 * 1.42 * 0.0862, rel=1e-4)
    assert price == pytest.approx(1.465, abs=1e-3)
    assert record is not None and record["basis"] == "owned" and quote is None
    # a pool past one system pays for the fabric: the TCO of a fleet of many, busy all hour, as before
    many, _, _ = chip_hour_price(catalog, system, "owned", None, None, chips=16)
    assert many == pytest.approx(owned_tco(catalog, system).usd_per_chip_hour)
    assert many == pytest.approx(1.683, abs=1e-3)


@pytest.mark.parametrize(("chips", "busy"), [(1, 0.27), (8, 0.1105), (16, 0.5)])
def test_the_ranking_price_is_what_the_check_charges(catalog: Catalog, hw: Hardware, chips: int, busy: float) -> None:
    """Given a pool's chips and busy share, the ranking's owned price a chip-hour is the simulated check's charge
    (economics, _owned_charge) over those chips: one rule, so that the table and the verdict can agree."""
    system = hw.system("h100-sxm")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), chips)]  # type: ignore[arg-type]
    charged = economics(catalog, pools, 100.0, 500.0, pricing="owned", busy=[busy])["cost_usd_per_hour"]
    price, _, _ = chip_hour_price(catalog, system, "owned", None, None, chips=chips, busy_share=busy)
    assert price * chips == pytest.approx(charged, rel=1e-12)
