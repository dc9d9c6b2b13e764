"""A system with no published power takes the host share of its design class, not of an 8-GPU
server. The catalog's sourced systems give it: DGX H100 10.2 kW / (8 x 700 W) - 1 = 0.82, GB200 NVL72 120 kW /
(72 x 1.2 kW) - 1 = 0.389, TPU7x pod 10,000 kW / (9,216 x 900 W) - 1 = 0.206. One rule (0.82) had given a Trn3 in a
144-chip UltraServer 820 W of host and a TPU v5p 262 W. The Trn3 UltraServers take the host each chip has, as the
Trn2 UltraServer's four trn2u.48xlarge do (410 W a chip for 12 vCPU), the GB200 rack's 0.389 kept as an alternative."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.power import power_model
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware, hardware
from chipwise.hardware.build import host_power_fraction


@pytest.mark.parametrize(
    ("system", "host_w", "fraction_key"),
    [
        ("trn3-ultraserver", 1_000 * 0.547, "trn3-ultraserver.host_power_fraction"),  # from its host specification
        ("tpu-v5p-pod", 320 * 0.206, "tpu-v5p-pod.host_power_fraction"),  # a TPU pod: 65.92 W
        ("mi300x-8x", 750 * 0.82, "datacenter.opex.host_power_fraction"),  # an 8-GPU server: the DGX H100's share
        ("dgx-h100", 10_200 / 8 - 700, "dgx-h100.power"),  # a published power: 575 W
    ],
)
def test_the_host_share_follows_the_design_class(
    catalog: Catalog, hw: Hardware, system: str, host_w: float, fraction_key: str
) -> None:
    """547 W, 65.92 W, 615 W and 575 W a chip by hand (with 0.82 for all: 820 W and 262.4 W for the first two), and
    the figure each comes from is listed among the run's figures (--sources)."""
    p = power_model(catalog, hw.system(system), scaleout=False)
    assert p.host_w == pytest.approx(host_w)
    assert fraction_key in {t.key for t in p.terms()}


def test_the_fallback_system_power_takes_the_same_fraction(hw: Hardware) -> None:
    """The power the loader fills in (catalog list, claims): 144 x 1,000 W x 1.547 = 222.768 kW for the Trn3
    UltraServer (262.08 kW with 0.82), 8 x 750 W x 1.82 = 10.92 kW for an MI300X server."""
    trn3 = hw.system("trn3-ultraserver")
    assert trn3.power == pytest.approx(222_768.0)
    assert "trn3-ultraserver.host_power_fraction 0.547" in trn3.provenance["power"].derivation
    assert hw.system("mi300x").power == pytest.approx(10_920.0)


def test_each_class_fraction_is_its_sourced_systems(catalog: Catalog) -> None:
    """The estimates reproduce from the entries they are taken from (to 3 decimals), so a change there shows. The Trn3
    UltraServers take the Trn2 UltraServer's host watts a chip (0.82 x 500 W = 410 W for 12 vCPU a chip), scaled by
    their vCPUs a chip: Gen1 768 / 64 = 12, 410 W / 1,000 W = 0.41; Gen2 2,304 / 144 = 16, 410 x 16 / 12 / 1,000 =
    0.547; the GB200 rack's 0.389, which they had carried, is their first alternative."""
    gb200 = catalog.systems["gb200-nvl72"].power
    tpu7 = catalog.systems["tpu-v7-pod"].power
    assert gb200 is not None and tpu7 is not None
    rack = gb200.si / (72 * catalog.chips["gb200"].tdp.si) - 1
    pod = tpu7.si / (9_216 * catalog.chips["tpu-v7"].tdp.si) - 1
    # the Trn2 UltraServer is four trn2.48xlarge-class instances: their share, the default's (it had carried 0.389)
    trn2u = catalog.systems["trn2-ultraserver"].host_power_fraction
    assert trn2u is not None and trn2u.status == "estimate"
    assert trn2u.value == host_power_fraction(catalog, "trn2.48xlarge").value == 0.82
    per_chip_w = trn2u.value * catalog.chips["trn2"].tdp.si  # 410 W for 12 vCPU a chip
    trn3_w = catalog.chips["trn3"].tdp.si
    for sid, vcpu_per_chip, share in (
        ("trn3-ultraserver-gen1", 768 / 64, 0.41),
        ("trn3-ultraserver", 2_304 / 144, 0.547),
    ):
        fig = catalog.systems[sid].host_power_fraction
        assert fig is not None and fig.status == "estimate"
        assert fig.value == round(per_chip_w * vcpu_per_chip / 12 / trn3_w, 3) == share
        assert fig.alternatives[0].value == round(rack, 3) == 0.389
    for sid in ("tpu-v4-pod", "tpu-v5e-256", "tpu-v5p-pod", "tpu-v6e-256"):
        fig = catalog.systems[sid].host_power_fraction
        assert fig is not None and fig.value == round(pod, 3) == 0.206 and fig.status == "estimate"
    for sid in ("trn2.48xlarge", "inf2.48xlarge", "mi355x-8x", "gaudi3-8x", "rtx-pro-6000d-8x"):
        assert catalog.systems[sid].host_power_fraction is None  # 8-accelerator servers: the DGX default


def test_a_systems_host_fraction_set_moves_it_and_the_default_does_not() -> None:
    """--set trn3-ultraserver.host_power_fraction=0.5: 500 W of host (547 W before); the datacenter default set to
    0.1 moves the MI300X server (75 W) and not the UltraServer, which carries its own; an MI300X server given the
    rack's fraction by --set draws 750 x 0.389 = 291.75 W of host, labelled as the user's."""
    cat = load_catalog(
        sets=[
            "trn3-ultraserver.host_power_fraction=0.5",
            "datacenter.opex.host_power_fraction=0.1",
            "mi355x-8x.host_power_fraction=0.389",
        ]
    )
    hw = hardware(cat)
    assert power_model(cat, hw.system("trn3-ultraserver"), scaleout=False).host_w == pytest.approx(500.0)
    assert power_model(cat, hw.system("tpu-v5p-pod"), scaleout=False).host_w == pytest.approx(320 * 0.206)
    assert power_model(cat, hw.system("mi300x-8x"), scaleout=False).host_w == pytest.approx(75.0)
    mi355 = power_model(cat, hw.system("mi355x-8x"), scaleout=False)
    assert mi355.host_w == pytest.approx(hw.system("mi355x-8x").chip.tdp * 0.389)
    (frac,) = (t for t in mi355.terms() if t.key == "mi355x-8x.host_power_fraction")
    assert frac.derivation.startswith("set on the command line") and frac.extra == {"origin": "--set"}


def test_a_host_fraction_set_on_a_system_with_a_power_is_refused() -> None:
    """A DGX H100's host comes from its 10.2 kW rating: a fraction set on it would move nothing, refused in one line."""
    with pytest.raises(ChipwiseError, match="dgx-h100 has a power figure") as err:
        load_catalog(sets=["dgx-h100.host_power_fraction=0.5"])
    assert "Fix: set its power instead, e.g. --set dgx-h100.power=9kW." in str(err.value)
    assert "\n" not in str(err.value)
