"""Built-in figures whose basis or unit had been read against the wrong reference: TPU v5e's ICI efficiency on its
per-link rate, Trainium1's and Inferentia2's HBM bandwidth in decimal GB/s."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware


def test_tpu_v5e_ici_efficiency_is_on_the_chips_50_gb_s_link(catalog: Catalog) -> None:
    """The scaling book measured 95% of its 45 GB/s per-link figure (42.75 GB/s a link); the chip's 200 GB/s is 4 x
    50 GB/s, so the measurement supports 4 x 42.75 = 171 GB/s, not the 0.95 x 200 = 190 GB/s the model had used."""
    chip = catalog.chips["tpu-v5e"].scaleup_bandwidth
    eff = catalog.fabrics["tpu-ici-v5e"].bus_efficiency
    assert isinstance(eff.value, float)  # a number, not a descriptive text
    assert chip.si == 200e9 and eff.value == pytest.approx(0.95 * 45 / 50)
    assert chip.si * eff.value == pytest.approx(171e9)
    # the scaling book's own basis stays as an alternative giving the same achieved bandwidth
    assert [a.value for a in eff.alternatives] == [0.95]
    book = eff.alternatives[0].value
    assert isinstance(book, float)
    assert 180e9 * book == pytest.approx(chip.si * eff.value)


@pytest.mark.parametrize("chip", ["trn1", "inf2"])
def test_trainium1_and_inferentia2_hbm_is_820_decimal_gb_s(catalog: Catalog, chip: str) -> None:
    """2 HBM2e stacks x 1,024 bit x 3.2 Gb/s / 8 = 819.2 GB/s, as the NKI guide's 820 GB/s; the architecture page's
    '820 GiB/sec' (880.5 GB/s, which the model had used: 7.4% high) is kept as an alternative on both chips."""
    hbm = catalog.chips[chip].hbm_bandwidth
    assert hbm.si == 820e9 and abs(hbm.si - 2 * 1024 * 3.2e9 / 8) / hbm.si < 0.001
    assert "NRN_NKI_ARCH_V2" in hbm.source and "819.2" in hbm.note
    assert (820.0, "GiB/s") in [(a.value, a.unit) for a in hbm.alternatives]


def test_fusion_rack_scale_out_uses_the_catalogs_gb300_nic(catalog: Catalog) -> None:
    """36 Trainium4 x 200 Gb/s + 36 GB300 x the GB300's own 800 Gb/s = 36,000 Gb/s (500 Gb/s a chip); the
    derivation had used an unsourced 600 Gb/s a GB300 (28,800 Gb/s)."""
    rack = catalog.systems["trn4-gb300-fusion-rack"]
    gb300_bits = catalog.chips["gb300"].scaleout_bandwidth.si * 8
    assert gb300_bits == 800e9
    assert rack.scaleout.bandwidth.si * 8 == 36 * 200e9 + 36 * gb300_bits == 36_000e9
    assert hardware(catalog).system("trn4-gb300-fusion-rack").scaleout_bandwidth_per_chip * 8 == 500e9


@pytest.mark.parametrize("system", ["trn4-ultraserver", "trn4-gb300-fusion-rack", "trn3-ultraserver"])
def test_a_power_built_on_an_estimated_tdp_is_an_estimate(catalog: Catalog, system: str) -> None:
    """Trainium4's 2,000 W TDP is an estimate (an assumed perf/W), not an announced ratio: a rack power derived
    from it is an estimate too, as trn3-ultraserver's (no published power: TDP x host_power_fraction); two had read
    'projected'."""
    assert catalog.chips[catalog.systems[system].chip].tdp.status == "estimate"
    assert hardware(catalog).system(system).provenance["power"].status == "estimate"


def test_no_system_power_is_projected_on_an_estimated_tdp(catalog: Catalog) -> None:
    """The rule above over the whole catalog: 'projected' is for figures derived from announced ratios."""
    bad = [
        sid
        for sid, s in catalog.systems.items()
        if s.power is not None and s.power.status == "projected" and catalog.chips[s.chip].tdp.status == "estimate"
    ]
    assert bad == []


def test_trn3_gen1_takes_the_chips_figure(catalog: Catalog) -> None:
    """The chip's figure is its per-device NeuronLink-v4 bandwidth (2.56 TB/s halved), which the trn3-arch table
    gives Gen1 and Gen2 alike: Gen1 takes it, as Gen2 does, and says so (it had borrowed Gen2's wired 704 GB/s)."""
    assert catalog.systems["trn3-ultraserver-gen1"].scaleup.bandwidth is None
    assert "Gen1 and Gen2" in catalog.systems["trn3-ultraserver-gen1"].scaleup.note
    assert hardware(catalog).system("trn3-ultraserver-gen1").scaleup.bandwidth == 1280e9
