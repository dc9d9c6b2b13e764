"""Built-in catalog figures checked against their own sources and the catalog's conventions: Trainium's scale-up
bandwidth read one way (per direction) for Trn1, Trn2 and Trn3, figures credited to the page that printed them, rental
estimates by one rule, and a platform's figures sourced as its chip's."""

from __future__ import annotations

import re

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware


def test_trn1_neuronlink_is_in_the_trn1_arch_tables_gib(catalog: Catalog) -> None:
    """trn1-arch gives 384 GiB/s/device for trn1.32xlarge and 768 for trn1n.32xlarge; both halved (per direction).
    trn1 had read 192 GB/s (7% low) beside trn1n's 384 GiB/s."""
    hw = hardware(catalog)
    trn1, trn1n = hw.system("trn1.32xlarge"), hw.system("trn1n.32xlarge")
    assert trn1.scaleup.bandwidth == 192 * 2**30
    assert trn1n.scaleup.bandwidth == 2 * trn1.scaleup.bandwidth


def test_mi325x_tdp_is_an_estimate(catalog: Catalog) -> None:
    """No AMD source gives the MI325X's TDP (the shared data lists it unconfirmed): an estimate with a derivation."""
    tdp = catalog.chips["mi325x"].tdp
    assert tdp is not None and (tdp.value, tdp.status) == (1000, "estimate") and "not confirmed" in tdp.derivation


@pytest.mark.parametrize("fabric", ["efa-v1", "efa-v2", "efa-v3", "efa-v4"])
def test_an_efa_fabric_names_only_instances_that_use_it(catalog: Catalog, fabric: str) -> None:
    """efa-v1's name listed trn1 and trn1n, which run on efa-v2: a reader picked the wrong fabric for Trainium1."""
    named = re.findall(r"\b(p\d[\w-]*|trn\d\w*|inf\d)\b", catalog.fabrics[fabric].name)
    assert named
    for family in named:
        systems = [s for s in catalog.systems if s.split(".")[0] == family or s.startswith(family + "-")]
        assert systems, family
        assert {catalog.systems[s].scaleout.fabric for s in systems} == {fabric}, family


def test_trn3_and_trn2_scaleup_read_one_way(catalog: Catalog) -> None:
    """AWS's table gives Trainium2 1,280 and Trainium3 2,560 GB/sec/chip (2x); both are halved, as all links both
    ways: 640 and 1,280 GB/s per direction. Trn3 had read the Gen2 UltraServer's wired PCIe links per direction
    (704, 1.1x Trn2's 640); that reading and the source's 'bidirectional' one (352) stay as alternatives."""
    trn2, trn3 = catalog.chips["trn2"].scaleup_bandwidth, catalog.chips["trn3"].scaleup_bandwidth
    assert (trn2.si, trn3.si) == (640e9, 1280e9) and trn3.si / trn2.si == 2.0
    assert trn3.status == "estimate" and "NRN_TRN3" in trn3.source
    alternatives = {a.value: a.source for a in trn3.alternatives}
    assert "NRN_TRN3_ARCH" in alternatives[704] and "NRN_TRN3_PCIE" in alternatives[352]
    # Gen1 and Gen2 both take the chip's figure: the trn3-arch table gives them the same figure per device
    for system in ("trn3-ultraserver", "trn3-ultraserver-gen1"):
        assert catalog.systems[system].scaleup.bandwidth is None
        assert hardware(catalog).system(system).scaleup.bandwidth == 1280e9


def test_trn2_old_compute_figures_cite_the_page_that_printed_them(catalog: Catalog) -> None:
    """1,287 FP8 / 655 BF16 TFLOPS are the earlier trainium2.rst's; the v2.21 beta trn2-arch table's 20 and 10 PFLOPS
    per 16 chips are 1,250 and 625 a chip. The old figures had cited the trn2-arch page."""
    flops = catalog.chips["trn2"].flops
    cited = {(a.value, tuple(a.source)) for p in ("fp8", "bf16") for a in flops[p].alternatives}
    assert {(1287, ("NRN_TRN2_OLD",)), (655, ("NRN_TRN2_OLD",))} <= cited
    assert {(1250, ("NRN_TRN2_ARCH_OLD",)), (625, ("NRN_TRN2_ARCH_OLD",))} <= cited
    assert "general/arch/neuron-hardware/trainium2.rst" in catalog.sources["NRN_TRN2_OLD"]


def _on_demand(catalog: Catalog, chip: str) -> float:
    return next(p.value for p in catalog.prices if p.chip == chip and p.mode == "on-demand" and not p.system)


def test_gaudi_rental_estimates_follow_one_rule(catalog: Catalog) -> None:
    """Both Gaudi estimates are Lambda's H100 3.99/h scaled by purchase price over the H100's ~27,500 USD: Gaudi 3
    3.99 x 15,625 / 27,500 = 2.27, Gaudi 2 3.99 x 8,125 / 27,500 = 1.18. Gaudi 2 had been priced as an A100 80GB,
    2.79, above its successor."""
    for chip, expected in (("gaudi3", 2.27), ("gaudi2", 1.18)):
        unit_price = catalog.chips[chip].unit_price
        assert unit_price is not None
        assert _on_demand(catalog, chip) == expected == round(3.99 * unit_price.si / 27_500, 2)
    assert _on_demand(catalog, "gaudi2") < _on_demand(catalog, "gaudi3")


def test_mi325x_platform_figures_are_sourced_as_the_chip(catalog: Catalog) -> None:
    """The platform's power rests on the chip's 1,000 W estimate (Yobitel, third party), an estimate and not 'AMD
    spec': no platform power is published, so it is 8 x 1,000 W x (1 + host_power_fraction 0.82); its scale-out NICs
    cite the MI300X platform they are taken from."""
    system, chip = catalog.systems["mi325x-8x"], catalog.chips["mi325x"]
    assert system.power is None and chip.tdp.status == "estimate"
    built = hardware(catalog).system("mi325x-8x")
    assert built.power == pytest.approx(8 * 1_000 * 1.82) and built.provenance["power"].status == "estimate"
    assert system.scaleout.bandwidth is not None and "AZ_MI300X" in system.scaleout.bandwidth.source
