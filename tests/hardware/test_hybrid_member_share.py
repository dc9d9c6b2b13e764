"""A hybrid rack's members take the rack's power and scale-out NICs by their own figures, as the rack's derivation
sums them: 36 x 2,000 W Trainium4 + 36 x 1,400 W GB300, x 1.29 = 157.9 kW; 36 x 200 + 36 x 800 Gb/s = 36,000 Gb/s.
An even split had given both types 2,381 W and 500 Gb/s a chip."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.power import power_model
from chipwise.hardware import Hardware
from chipwise.hardware.build import _share

RACK = "trn4-gb300-fusion-rack"


def test_each_member_draws_its_own_share_of_the_rack_power(catalog: Catalog, hw: Hardware) -> None:
    """157,900 W x 2,000 / (36 x 2,000 + 36 x 1,400) = 2,580.07 W a Trainium4, x 1,400 / 122,400 = 1,806.05 W a GB300
    (an even split had given both 2,380.56 W of the rack's 171.4 kW at its former x 1.4 overhead, which made them
    2,800.65 W and 1,960.46 W); the host share, power a chip less TDP, is 580.07 W and 406.05 W."""
    rack = hw.system(RACK)
    trn4, gb300 = hw.member_system(rack, "trn4"), hw.member_system(rack, "gb300")
    assert trn4.power / 36 == pytest.approx(157_900 * 2_000 / 122_400) == pytest.approx(2_580.07, abs=0.01)
    assert gb300.power / 36 == pytest.approx(157_900 * 1_400 / 122_400) == pytest.approx(1_806.05, abs=0.01)
    assert trn4.power + gb300.power == pytest.approx(rack.power)
    assert power_model(catalog, trn4).host_w == pytest.approx(580.07, abs=0.01)
    assert power_model(catalog, gb300).host_w == pytest.approx(406.05, abs=0.01)
    assert trn4.provenance["power"].derivation == (
        f"{RACK} power 157,900 W x 36 x 2,000 W / (36 x 2,000 W + 36 x 1,400 W), the members' own figures"
    )
    assert trn4.provenance["power"].status == rack.provenance["power"].status


def test_each_member_gets_its_own_chips_scaleout_share(hw: Hardware) -> None:
    """36,000 Gb/s x 200 / (36 x 200 + 36 x 800) = 200 Gb/s a Trainium4 and 800 Gb/s a GB300 (500 each before)."""
    rack = hw.system(RACK)
    trn4, gb300 = hw.member_system(rack, "trn4"), hw.member_system(rack, "gb300")
    assert trn4.scaleout_bandwidth_per_chip * 8 == pytest.approx(200e9)
    assert gb300.scaleout_bandwidth_per_chip * 8 == pytest.approx(800e9)
    assert gb300.provenance["scaleout.bandwidth"].value == pytest.approx(28_800)  # Gb/s, the member's whole


def test_a_member_without_a_figure_leaves_an_even_share(hw: Hardware) -> None:
    rack = hw.system(RACK)
    share, how = _share(rack, {"trn4": 0.0, "gb300": 100e9}, "gb300", "Gb/s", 8e-9)
    assert share == 0.5 and how == "36 / 72 chips (an even share: no figure)"
    share, _ = _share(rack, {"trn4": 25e9, "gb300": 100e9}, "gb300", "Gb/s", 8e-9)
    assert share == pytest.approx(0.8)
