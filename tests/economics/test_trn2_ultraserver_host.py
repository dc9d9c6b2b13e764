"""The Trn2 UltraServer is four trn2u.48xlarge instances joined by NeuronLink cables (its own host entry: 768 vCPU and
8,192 GiB = 4 x the trn2.48xlarge's 192 vCPU and 2,048 GiB a 16 chips), so a Trainium2 chip carries the same host in
both. It had carried the GB200 NVL72 rack's 0.389: 500 W x 0.389 = 194.5 W of host a chip in the UltraServer against
500 W x 0.82 = 410 W in the trn2.48xlarge, the same chip on the same host."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.power import power_model
from chipwise.hardware import Hardware


def test_a_trn2_chip_carries_the_same_host_in_both_systems(catalog: Catalog, hw: Hardware) -> None:
    ultra = power_model(catalog, hw.system("trn2-ultraserver"), scaleout=False)
    instance = power_model(catalog, hw.system("trn2.48xlarge"), scaleout=False)
    assert ultra.host_w == pytest.approx(500 * 0.82) == pytest.approx(instance.host_w)
    assert "trn2-ultraserver.host_power_fraction" in {t.key for t in ultra.terms()}


def test_the_ultraserver_fraction_says_where_it_comes_from(catalog: Catalog) -> None:
    fig = catalog.systems["trn2-ultraserver"].host_power_fraction
    assert fig is not None and fig.status == "estimate" and fig.value == 0.82
    assert "four trn2u.48xlarge instances" in fig.derivation and "4 x the instance's 192 vCPU" in fig.derivation
