"""A GH200's TDP is the whole superchip module, Grace CPU and LPDDR5X included (chips.gh200.tdp, 1,000 W), so its
system's host is what lies around the module: NICs, fans, power conversion. The GH200 systems had no power and took
the DGX H100's 0.82 of the TDP for two Xeons and 2 TB of DDR5 on top: 820 W of host a superchip, 1,383.2 W busy. They
now carry a power of their own, 1,000 W x 1.235 a superchip, the GB200 NVL72 rack's 120 kW over its 36 x 2,700 W
superchip modules: 235 W of host, (1,000 + 235) x 0.76 = 938.6 W busy. The GB200 and GB300 racks count their Grace
once: their rack power less the GPUs' TDP."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.energy import energy_j, site_for
from chipwise.economics.power import host_follows_tdp, power_model
from chipwise.hardware import Hardware, hardware


@pytest.mark.parametrize(("system", "chips"), [("gh200-1x", 1), ("gh200-96gb-1x", 1), ("gh200-nvl2", 2)])
def test_a_superchip_carries_the_host_around_its_module_not_a_second_cpu(
    catalog: Catalog, hw: Hardware, system: str, chips: int
) -> None:
    """1,235 W a superchip - 1,000 W of module = 235 W of host (820 W before), busy (1,000 + 235) x 0.76 = 938.6 W
    (1,383.2 W before), from the system's own power, listed among the run's figures."""
    built = hw.system(system)
    assert built.power == pytest.approx(chips * 1_235.0)
    p = power_model(catalog, built, scaleout=False)
    assert p.host_w == pytest.approx(235.0)
    assert p.busy_w == pytest.approx(938.6)
    assert f"{system}.power" in {t.key for t in p.terms()}
    assert not host_follows_tdp(catalog, built)


def test_the_gh200_power_reproduces_from_the_gb200_rack(catalog: Catalog) -> None:
    """120 kW / (36 x 2,700 W GB200 superchips) = 1.2346, 1.235 to 3 decimals, x 1,000 W a GH200: a change to the
    rack's power shows here. The figure is an estimate that names the double count it replaces."""
    rack = catalog.systems["gb200-nvl72"].power
    assert rack is not None
    ratio = round(rack.si / (36 * 2_700.0), 3)
    assert ratio == 1.235
    for sid in ("gh200-1x", "gh200-96gb-1x", "gh200-nvl2"):
        entry = catalog.systems[sid]
        assert entry.power is not None and entry.host_power_fraction is None
        assert entry.power.si == pytest.approx(entry.chips * catalog.chips[entry.chip].tdp.si * ratio)
        assert entry.power.status == "estimate" and "820 W a superchip" in entry.power.derivation


def test_one_superchip_hour_of_training_energy(catalog: Catalog, hw: Hardware) -> None:
    """One GH200 busy an hour at its site's PUE (1.42): 938.6 W x 3,600 s x 1.42 = 4,798,123 J, 1.333 kWh (it had been
    1,383.2 W x 3,600 x 1.42 = 7,070,918 J)."""
    system = hw.system("gh200-nvl2")
    site = site_for(catalog, system)
    assert site.pue.value == pytest.approx(1.42)
    e = energy_j(power_model(catalog, system, scaleout=False).busy_w, 1, 3_600.0, site.pue.value)
    assert e == pytest.approx(938.6 * 3_600 * 1.42)


def test_a_capped_superchip_keeps_its_host() -> None:
    """--set gh200.tdp=680W (JUPITER's cap): the system's power moves by the module's 320 W, 1,235 - 320 = 915 W, and
    the host stays 235 W (it had followed the TDP: 680 x 0.82 = 557.6 W)."""
    cat = load_catalog(sets=["gh200.tdp=680W"])
    system = hardware(cat).system("gh200-1x")
    assert system.power == pytest.approx(915.0)
    assert power_model(cat, system, scaleout=False).host_w == pytest.approx(235.0)


@pytest.mark.parametrize(
    ("system", "gpu_w", "rack_w"), [("gb200-nvl72", 1_200, 120_000), ("gb300-nvl72", 1_400, 130_000)]
)
def test_grace_racks_count_the_cpu_once_in_the_rack_power(
    catalog: Catalog, hw: Hardware, system: str, gpu_w: float, rack_w: float
) -> None:
    """A GB200 or GB300 chip's TDP is one GPU's (the Grace is outside it): its host is the rack's power less the 72
    GPUs', 120,000 / 72 - 1,200 = 466.7 W and 130,000 / 72 - 1,400 = 405.6 W, the Grace CPUs counted once there."""
    p = power_model(catalog, hw.system(system), scaleout=False)
    assert p.host_w == pytest.approx(rack_w / 72 - gpu_w)
    assert f"{system}.power" in {t.key for t in p.terms()}
