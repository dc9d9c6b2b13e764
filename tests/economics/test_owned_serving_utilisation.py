"""An owned serving fleet priced at a utilisation under 1: each hour served pays its fixed terms / u and the
electricity of the (1 - u) / u idle hours between paid work, as an owned training run does
(Tco.fixed_and_idle_usd_per_chip_hour); it had been charged as busy every calendar hour, whatever it was given."""

from __future__ import annotations

import pytest

from chipwise.catalog.loader import load_catalog
from chipwise.catalog.units import SECONDS_PER_HOUR
from chipwise.economics.tco import owned_tco
from chipwise.hardware import hardware
from chipwise.planner.serving_economics import chip_hour_price


def test_charged_terms_at_half_utilisation_are_the_used_hour_cost() -> None:
    cat = load_catalog()
    system = hardware(cat).system("h100-sxm")
    full = owned_tco(cat, system, utilisation=1.0, scaleout=False)
    half = owned_tco(cat, system, utilisation=0.5, scaleout=False)
    busy_j = full.energy_busy_usd_per_s * SECONDS_PER_HOUR / full.inputs.electricity.value  # an hour busy
    at_full, at_half = full.charged_per_chip_hour(1.0, busy_j), half.charged_per_chip_hour(1.0, busy_j)
    assert "idle_energy" not in at_full  # at full use the terms are as they were
    for name, usd in full.fixed_usd_per_s.items():  # each fixed term paid over half the hours: twice per hour
        assert at_half[name] == pytest.approx(2 * usd * SECONDS_PER_HOUR)
    assert at_half["energy"] == pytest.approx(at_full["energy"])  # the served hour's own energy
    # (1 - 0.5) / 0.5 = 1 idle hour for each hour served
    assert at_half["idle_energy"] == pytest.approx(half.energy_idle_usd_per_s * SECONDS_PER_HOUR)
    assert sum(at_half.values()) == pytest.approx(half.usd_per_chip_hour)  # (F + E_idle/2 + E_busy/2) / 0.5


def test_owned_chip_hour_at_utilisation_is_plan_trains() -> None:
    cat = load_catalog()
    system = hardware(cat).system("h100-sxm")
    price = chip_hour_price(cat, system, "owned", None, None, utilisation=0.25)[0]
    tco = owned_tco(cat, system, utilisation=0.25, scaleout=False)
    busy_usd = tco.energy_busy_usd_per_s * SECONDS_PER_HOUR
    assert price == pytest.approx(tco.fixed_and_idle_usd_per_chip_hour + busy_usd)
    assert price > 3.5 * chip_hour_price(cat, system, "owned", None, None)[0]  # mostly fixed terms, x4
