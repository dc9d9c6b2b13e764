"""The built-in catalog: every required chip and system, sourced figures, SI conversion, user overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from chipwise.catalog import Catalog, load_catalog
from chipwise.catalog.schema import Figure
from chipwise.catalog.units import parse_quantity, to_si
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import hardware

REQUIRED_CHIPS = [
    "trn1",
    "inf2",
    "trn2",
    "trn3",
    "trn4",
    "a100-40gb",
    "a100-80gb",
    "h100-sxm",
    "h100-96gb",
    "h800",
    "h200",
    "gh200",
    "gh200-96gb",
    "b200",
    "rubin",
    "b300",
    "gb200",
    "gb300",
    "rtx-pro-6000d",
    "mi300x",
    "mi325x",
    "mi355x",
    "mi455x",
    "tpu-v4",
    "tpu-v5e",
    "tpu-v5p",
    "tpu-v6e",
    "tpu-v7",
    "gaudi2",
    "gaudi3",
]
REQUIRED_SYSTEMS = [
    "trn1.32xlarge",
    "trn2.48xlarge",
    "trn2-ultraserver",
    "trn3-ultraserver-gen1",
    "trn3-ultraserver",
    "p4d.24xlarge",
    "p5.48xlarge",
    "p5en.48xlarge",
    "p6-b200.48xlarge",
    "p6-b300.48xlarge",
    "p6e-gb200-ultraserver",
    "gb200-nvl72",
    "gb300-nvl72",
    "mi300x-8x",
    "mi355x-8x",
    "helios",
    "vr200-nvl72",
    "dgx-rubin-nvl8",
    "trn4-rubin-fusion-rack",
    "tpu-v5p-pod",
    "tpu-v6e-256",
    "tpu-v7-pod",
    "gaudi3-8x",
]


def _figures(node: object) -> list[Figure]:
    if isinstance(node, Figure):
        return [node]
    if isinstance(node, BaseModel):  # a catalog entry or one of its parts
        return [f for name in type(node).model_fields for f in _figures(getattr(node, name))]
    if isinstance(node, dict):
        return [f for v in node.values() for f in _figures(v)]
    if isinstance(node, list):
        return [f for v in node for f in _figures(v)]
    return []


def test_every_required_chip_and_system(catalog: Catalog) -> None:
    assert set(REQUIRED_CHIPS) <= set(catalog.chips)
    assert set(REQUIRED_SYSTEMS) <= set(catalog.systems)


def test_every_figure_is_sourced_or_derived(catalog: Catalog) -> None:
    entries = [*catalog.chips.values(), *catalog.systems.values(), *catalog.fabrics.values()]
    figures = [f for e in entries for f in _figures(e)] + _figures(catalog.efficiency) + _figures(catalog.datacenter)
    assert len(figures) > 800
    for f in figures:
        if f.status in ("estimate", "projected"):
            assert f.derivation.strip(), f
        else:
            assert f.source, f


def test_trainium4_is_projected_from_trainium3_ratios(catalog: Catalog) -> None:
    trn3, trn4 = catalog.chips["trn3"], catalog.chips["trn4"]
    assert trn4.status == "projected"
    assert trn4.flops["fp8"].si == pytest.approx(3 * trn3.flops["fp8"].si, rel=1e-3)
    assert trn4.flops["fp4"].si >= 6 * trn3.flops["fp4"].si * 0.999
    assert trn4.hbm_bandwidth.si == pytest.approx(4 * trn3.hbm_bandwidth.si, rel=1e-2)
    assert trn4.flops["fp8"].status == "projected"


def test_flops_are_dense_not_sparse(catalog: Catalog) -> None:
    # H100 SXM dense FP8 is 1,979 TFLOP/s; the 3,958 figure is the 2:4 sparse one
    assert catalog.chips["h100-sxm"].flops["fp8"].si == pytest.approx(1978.9e12, rel=1e-3)
    assert catalog.chips["h100-sxm"].flops["bf16"].si == pytest.approx(989.4e12, rel=1e-3)


def test_a_precision_the_chip_lacks_runs_at_the_next_wider_one(catalog: Catalog) -> None:
    """FP8 weights on a chip without FP8 units run weight-only in bf16, not at the int8 rate (A100 priced an fp8
    prefill of Llama-3.1-70B 30% faster than bf16); fp4 falls back through fp8, int4 through int8."""
    hw = hardware(catalog)
    a100, h100, v5e = hw.chip("a100-80gb"), hw.chip("h100-sxm"), hw.chip("tpu-v5e")
    assert "int8" in a100.flops and "fp8" not in a100.flops
    assert a100.native_precision("fp8") == "bf16" and a100.native_precision("fp4") == "bf16"
    assert a100.native_precision("int4") == a100.native_precision("int8") == "int8"
    assert v5e.native_precision("fp8") == "bf16" and h100.native_precision("fp8") == "fp8"
    assert h100.native_precision("fp4") == "fp8"


@pytest.mark.parametrize(
    ("chip", "mib"),
    # gb300 had 288 GB, a third-party page's figure marked spec, beside its own nvidia-smi total
    [
        ("h100-sxm", 81559),
        ("h200", 143771),
        ("b200", 183359),
        ("gb200", 189471),
        ("gb300", 284208),
        ("a100-80gb", 81920),
    ],
)
def test_gpu_memory_is_what_the_device_reports(catalog: Catalog, chip: str, mib: int) -> None:
    """HBM comes in binary-sized stacks: an "80 GB" H100 reports 81,559 MiB (79.6 GiB), not 80e9 bytes (74.5 GiB);
    the KV cache is what is left after the weights, so the 7% matters twice. The vendor's figure stays on record."""
    fig = catalog.chips[chip].hbm_capacity
    assert fig.si == mib * 2**20 and fig.status == "measured"
    assert any(alt.unit == "GB" for alt in fig.alternatives)


def test_link_bandwidth_is_per_direction(catalog: Catalog) -> None:
    # NVLink4: 900 GB/s bidirectional per GPU = 450 GB/s per direction
    assert catalog.chips["h100-sxm"].scaleup_bandwidth.si == pytest.approx(450e9, rel=1e-3)


def test_units_convert_to_si() -> None:
    assert to_si(3.35, "TB/s") == pytest.approx(3.35e12)
    assert to_si(80, "GiB") == 80 * 2**30
    assert to_si(400, "Gb/s") == pytest.approx(50e9)
    assert parse_quantity("6TB/s") == (6.0, "TB/s")
    assert parse_quantity("6e12") == (6e12, "")


def test_failure_rates_and_facility_cost_carry_their_units() -> None:
    """A rate per hour and a build cost per kW are units of their own, converted when loaded (the failure rates had
    unit '1' and the facility cost 'USD', and the model divided by 3,600 and 1,000 in the middle: the JSON's `si`
    was 3,600 and 1,000 times off what `unit` said)."""
    assert to_si(1.26e-5, "/h") == pytest.approx(3.5e-9, rel=1e-12)  # 1.26e-5 / 3,600
    assert to_si(11_700, "USD/kW") == pytest.approx(11.7, rel=1e-12)  # USD per W
    assert to_si(11.7, "USD/MW") == pytest.approx(11.7e-6, rel=1e-12)
    # '/h' after the number, as --set takes it; '1/h' read too where a space parts it from the number
    assert parse_quantity("2e-5/h") == (2e-5, "/h")
    assert parse_quantity("2e-5 1/h") == (2e-5, "/h")
    assert parse_quantity("12000USD/kW") == (12_000.0, "USD/kW")
    built_in = load_catalog()
    gpu = built_in.reliability["failures"]["gpu_failure_rate_per_chip_hour"]
    assert (gpu.value, gpu.unit) == (1.26e-5, "/h") and gpu.si == pytest.approx(3.5e-9, rel=1e-12)
    facility = built_in.datacenter["capex"]["facility_usd_per_kw"]
    assert (facility.value, facility.unit) == (11_700, "USD/kW") and facility.si == pytest.approx(11.7, rel=1e-12)


def test_set_a_failure_rate_and_facility_cost_in_their_units() -> None:
    c = load_catalog(
        sets=[
            "reliability.failures.gpu_failure_rate_per_chip_hour=3.6e-5/h",
            "datacenter.capex.facility_usd_per_kw=12000USD/kW",
        ]
    )
    assert c.reliability["failures"]["gpu_failure_rate_per_chip_hour"].si == pytest.approx(1e-8, rel=1e-12)
    assert c.datacenter["capex"]["facility_usd_per_kw"].si == pytest.approx(12.0, rel=1e-12)


def test_set_overrides_a_figure_in_si(catalog: Catalog) -> None:
    c = load_catalog(sets=["trn3.hbm_bandwidth=6e12"])
    fig = c.chips["trn3"].hbm_bandwidth
    assert fig.si == pytest.approx(6e12)
    assert fig.status == "estimate"
    assert "--set" in fig.derivation
    assert catalog.chips["trn3"].hbm_bandwidth.si == pytest.approx(4.9e12)  # the built-in one is untouched


def test_set_with_unit_and_price() -> None:
    c = load_catalog(sets=["h100-sxm.flops.bf16=1PFLOP/s", "h100-sxm.price=2.5"])
    assert c.chips["h100-sxm"].flops["bf16"].si == pytest.approx(1e15)
    assert any(p.chip == "h100-sxm" and p.value == 2.5 and p.provider == "user" for p in c.prices)


@pytest.mark.parametrize(
    ("assignment", "needle"),
    [
        ("trn3.hbm_bandwidth=-1", "negative"),
        # a chip of no bandwidth, memory or compute runs nothing (a plan search divided by it and found no option)
        ("trn3.hbm_bandwidth=0", r"'hbm_bandwidth' is 0: a bandwidth of 0 runs nothing; give a positive number"),
        ("h100-sxm.hbm_capacity=0TB", "a capacity of 0 runs nothing"),
        ("trn2.flops.bf16=0", "a compute rate of 0 runs nothing"),
        # a fabric's bus efficiency divides every collective (0 had crashed with a ZeroDivisionError)
        ("nvlink4.bus_efficiency=0", "'bus_efficiency' is 0: an efficiency of 0 moves no data; give a positive"),
        ("ib-ndr.bus_efficiency=0", "'bus_efficiency' is 0: an efficiency of 0 moves no data"),
        ("trn3.hbm_bandwidth=fast", "not a number"),
        ("trn9.hbm_bandwidth=1", "unknown catalog id"),
        ("trn3.hbm_speed=1", "unknown figure"),
        ("trn3.hbm_bandwidth", "has no '='"),
        # NaN had ranked a chip at 'nan tok/s' (exit 0); inf had been told to write 'infTB/s'
        (
            "h100-sxm.flops.bf16=nan",
            r"--set h100-sxm.flops.bf16: value nan is not a finite number\. Fix: give a finite",
        ),
        ("h100-sxm.hbm_bandwidth=inf", r"--set h100-sxm.hbm_bandwidth: value inf is not a finite number\. Fix:"),
        ("h100-sxm.price=inf", "value inf is not a finite number"),
        # a bare number is SI: 6.7 B/s for a 4.9 TB/s bandwidth is a missing unit, not a what-if
        ("trn3.hbm_bandwidth=6.7", r"a bare number is in B/s, 1.4e-12 x the catalog's 4.9 TB/s. Fix: give its unit"),
        # a failure rate per hour given bare is per second (it was taken as per hour while the catalog's unit was '1')
        (
            "reliability.failures.gpu_failure_rate_per_chip_hour=2e-5",
            r"a bare number is in /s, 5.7e\+03 x the catalog's 1.26e-05 /h\. Fix: give its unit, e\.g\. "
            r"reliability\.failures\.gpu_failure_rate_per_chip_hour=2e-5/h\.$",
        ),
        (
            "reliability.failures.gpu_failure_rate_per_chip_hour=2e-5 1",
            r"gpu_failure_rate_per_chip_hour is a rate, not a ratio \('1'\)\. Fix: give it in one of /s, /h\.",
        ),
        (
            "datacenter.capex.facility_usd_per_kw=12000",
            r"a bare number is in USD/W, 1e\+03 x the catalog's 11700 USD/kW\. Fix: give its unit, e\.g\. "
            r"datacenter\.capex\.facility_usd_per_kw=12000USD/kW\.$",
        ),
    ],
)
def test_bad_set_is_one_clear_error(assignment: str, needle: str) -> None:
    with pytest.raises(ChipwiseError, match=needle) as info:
        load_catalog(sets=[assignment])
    assert "\n" not in str(info.value) and "Fix" in str(info.value)


def test_user_catalog_extends_and_overrides(tmp_path: Path) -> None:
    extra = tmp_path / "mine.yaml"
    extra.write_text(
        """
chips:
  h100-sxm:
    hbm_capacity: {value: 96, unit: GB, status: measured, source: [my lab]}
  my-chip:
    name: My Chip
    vendor: other
    family: hopper
    default_system: my-box
    flops: {bf16: {value: 500, unit: TFLOP/s, status: estimate, derivation: a guess}}
    hbm_capacity: {value: 64, unit: GB, status: estimate, derivation: a guess}
    hbm_bandwidth: {value: 2, unit: TB/s, status: estimate, derivation: a guess}
    tdp: {value: 500, unit: W, status: estimate, derivation: a guess}
    scaleup_bandwidth: {value: 200, unit: GB/s, status: estimate, derivation: a guess}
    scaleout_bandwidth: {value: 25, unit: GB/s, status: estimate, derivation: a guess}
systems:
  my-box:
    name: My box
    kind: server
    provider: oem
    chip: my-chip
    chips: 8
    scaleup: {kind: switched, size: 8, fabric: nvlink4}
    scaleout:
      fabric: efa-v2
      bandwidth: {value: 1600, unit: Gb/s, status: estimate, derivation: a guess}
"""
    )
    c = load_catalog(files=[extra])
    assert c.chips["h100-sxm"].hbm_capacity.si == 96e9
    assert c.chips["h100-sxm"].hbm_bandwidth.si == pytest.approx(3.35e12)  # untouched fields survive
    assert "my-chip" in c.chips
    assert c.origins["chips.my-chip"] == str(extra)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("chips: [unclosed", "not valid YAML"),
        ("chips:\n  h100-sxm: {tdp: 1}\n  h100-sxm: {tdp: 2}", "found duplicate key 'h100-sxm'"),
        ("gadgets: {}", "unknown section"),
        ("chips:\n  h100-sxm:\n    hbm_capacity: {value: -3, unit: GB, status: spec, source: [x]}", "negative"),
        ("chips:\n  h100-sxm:\n    hbm_capacity: {value: lots, unit: GB, status: spec, source: [x]}", "not a number"),
        # a zero bandwidth was taken, and plan serve answered that no replica shape met the SLO
        (
            "chips:\n  h100-sxm:\n    hbm_bandwidth: {value: 0, unit: TB/s, status: estimate, derivation: x}",
            "bad.yaml: chips.h100-sxm: 'hbm_bandwidth' is 0: a bandwidth of 0 runs nothing",
        ),
        (
            "chips:\n  h100-sxm:\n    hbm_capacity: {value: 3, unit: furlongs, status: spec, source: [x]}",
            "unknown unit",
        ),
        ("chips:\n  h100-sxm:\n    hbm_capacity: {value: 3, unit: GB, status: spec}", "needs a 'source'"),
        ("chips:\n  h100-sxm:\n    hbm_capacity: {value: 3, unit: GB, status: estimate}", "derivation"),
        (
            "chips:\n  h100-sxm:\n    hbm_capacity: {value: 3, unit: TB/s, status: estimate, derivation: x}",
            "bytes unit",
        ),
        ("systems:\n  inf2.48xlarge:\n    rental: {chips: [6, 1], status: spec, source: [x]}", "ascending"),
        ("systems:\n  inf2.48xlarge:\n    rental: {chips: [1, 24], status: spec, source: [x]}", "system's 12"),
        ("systems:\n  inf2.48xlarge:\n    rental: {chips: [1], status: spec, source: []}", "needs a 'source'"),
        ("systems:\n  inf2.48xlarge:\n    rental: {chips: [2], status: estimate}", "derivation"),
        ("systems:\n  p5.48xlarge:\n    rental: {modes: {capacity-block: [8, 4]}}", "ascending"),
        ("systems:\n  p5.48xlarge:\n    rental: {modes: {layaway: [8]}}", "layaway"),
        # YAML's .nan and .inf were taken: 'nan TB/s' in the tables, 'nan tok/s' in a ranking (exit 0)
        (
            "chips:\n  h100-sxm:\n    hbm_bandwidth: {value: .nan, unit: TB/s, status: estimate, derivation: x}",
            r"bad.yaml: chips.h100-sxm.hbm_bandwidth: value nan is not a finite number\. Fix: correct that figure",
        ),
        (
            "chips:\n  h100-sxm:\n    flops: {bf16: {value: .inf, unit: TFLOP/s, status: estimate, derivation: x}}",
            "chips.h100-sxm.flops.bf16: value inf is not a finite number",
        ),
        (
            "prices:\n  - {system: p5.48xlarge, provider: aws, mode: on-demand, value: .inf, date: '2026-01', "
            "status: estimate, derivation: x}",
            "price for p5.48xlarge.value: Input should be a finite number",
        ),
        # a misspelt family took the default efficiency: a Hopper at 54% MFU where 'hopper' gives 39%
        (
            "chips:\n  h100-sxm:\n    family: hoper",
            r"bad.yaml: chips.h100-sxm: family 'hoper' is not in the catalog's efficiency section\. Did you mean "
            r"'hopper'.*\? Fix: use (one of ampere, .*hopper.*|an id of the catalog's efficiency), or add 'hoper' to "
            r"efficiency",
        ),
        # an unknown fabric or default system had no fix
        (
            "systems:\n  p5.48xlarge:\n    scaleout: {fabric: efa-v9}",
            r"systems.p5.48xlarge: fabric 'efa-v9' is not in the catalog's fabrics section\. Did you mean 'efa-v.'.*"
            r"\? Fix: use .*, or add 'efa-v9' to fabrics",
        ),
        (  # one per-dimension bandwidth for a three-dimensional torus
            "systems:\n  trn2-ultraserver:\n    scaleup:\n      dim_bandwidth: [{value: 1, unit: GB/s, status: spec, "
            "source: [x]}]",
            r"dim_bandwidth gives 1 figures; it needs a torus and one per dimension of dims \[4, 4, 4\]",
        ),
        (
            "chips:\n  h100-sxm:\n    default_system: p5.48xlarg",
            r"chips.h100-sxm: default_system 'p5.48xlarg' is not in the catalog's systems section\. Did you mean "
            r"'p5.48xlarge'.*\? Fix: use an id of the catalog's systems, or add 'p5.48xlarg' to systems",
        ),
    ],
)
def test_bad_user_catalog_is_one_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ChipwiseError, match=needle) as info:
        load_catalog(files=[f])
    assert "\n" not in str(info.value)


def test_unknown_chip_suggests_a_close_name(catalog: Catalog) -> None:
    from chipwise.hardware import hardware

    with pytest.raises(UnknownNameError) as info:
        hardware(catalog).system("h100-sxn")
    assert "h100-sxm" in str(info.value)


def test_a_tdp_what_if_moves_the_power_per_chip_and_keeps_the_host_share() -> None:
    """--set h100-sxm.tdp=350W: the chip draws 350 W less at full load and its host share stays the DGX's 575 W
    (10.2 kW / 8 - 700 W). The host share had been the system's power less the new TDP, so the chip's power per
    chip stayed 1,120 W however low the cap."""
    from chipwise.economics.power import power_model

    base = power_model(load_catalog(), hardware(load_catalog()).system("p5.48xlarge"), scaleout=False)
    capped_cat = load_catalog(sets=["h100-sxm.tdp=350W"])
    capped = power_model(capped_cat, hardware(capped_cat).system("p5.48xlarge"), scaleout=False)
    assert capped.host_w == base.host_w == pytest.approx(575.0)
    assert base.rated_w - capped.rated_w == pytest.approx(350.0)
    assert base.busy_w - capped.busy_w == pytest.approx(350.0 * base.busy.value)
