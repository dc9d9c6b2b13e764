"""plan serve ranks an owned pool at the price its check charges a chip of one system busy all hour: the TCO's fixed
terms without the scale-out network, and busy energy (serving_economics.chip_hour_price)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipwise.catalog import Catalog
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


@pytest.mark.parametrize("busy", [0.27, 0.5, 1.0])
def test_the_ranking_price_bounds_what_a_one_system_check_charges(catalog: Catalog, hw: Hardware, busy: float) -> None:
    """The ranking's owned price is the check's charge of one chip of one system busy all hour (economics,
    _owned_charge: one rule), and so no lower than that chip's charge at any busy share: the table's price and the
    verdict's differ only by the busy share the check measured."""
    system = hw.system("h100-sxm")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), 1)]  # type: ignore[arg-type]
    charged = economics(catalog, pools, 100.0, 500.0, pricing="owned", busy=[busy])["cost_usd_per_hour"]
    price, _, _ = chip_hour_price(catalog, system, "owned", None, None)
    assert charged <= price * (1 + 1e-12)
    if busy == 1.0:
        assert charged == pytest.approx(price, rel=1e-12)
