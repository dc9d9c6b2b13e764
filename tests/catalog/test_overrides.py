"""`--set` overrides and catalog files: values read whole, the entry a name means, fields and ranges checked, units read
as vendors write them; a chip's default system holds that chip; a chip's figure set reaches the figures its systems
give of their own; the figures the reviewer found mis-stated."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog_errors import catalog_error
from chipwise.catalog import Catalog, load_catalog
from chipwise.catalog.units import parse_quantity
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware

# ---------------------------------------------------------------- 1: a value ending in '1' kept its last digit


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_reads_back_whole(x: float) -> None:
    """The ratio unit '1' was matched as a suffix before the plain number: '0.1' read (0.0, '1'), '6e11' 60."""
    assert parse_quantity(repr(x)) == (x, "")


@pytest.mark.parametrize(("text", "value"), [("0.1", 0.1), ("1.1", 1.1), ("1001", 1001.0), ("6e11", 6e11)])
def test_numbers_ending_in_one(text: str, value: float) -> None:
    assert parse_quantity(text) == (value, "")


def test_set_pue_reads_its_last_digit() -> None:
    c = load_catalog(sets=["datacenter.pue.aws=1.1"])
    assert c.datacenter["pue"]["aws"].si == pytest.approx(1.1)


# ---------------------------------------------------------------- 2: default_system of another chip


def _user_chip(tmp_path: Path, default_system: str) -> Path:
    f = tmp_path / "mine.yaml"
    f.write_text(
        f"""
chips:
  mychip:
    name: My chip
    vendor: other
    family: hopper
    default_system: {default_system}
    flops: {{bf16: {{value: 100, unit: TFLOP/s, status: estimate, derivation: x}}}}
    hbm_capacity: {{value: 10, unit: GB, status: estimate, derivation: x}}
    hbm_bandwidth: {{value: 1, unit: TB/s, status: estimate, derivation: x}}
    tdp: {{value: 100, unit: W, status: estimate, derivation: x}}
    scaleup_bandwidth: {{value: 10, unit: GB/s, status: estimate, derivation: x}}
    scaleout_bandwidth: {{value: 10, unit: GB/s, status: estimate, derivation: x}}
"""
    )
    return f


def test_a_chip_whose_default_system_holds_another_chip_is_refused(tmp_path: Path) -> None:
    """mychip with default_system p5.48xlarge had run as '8 x h100-sxm'."""
    message = catalog_error(files=[_user_chip(tmp_path, "p5.48xlarge")])
    assert "chips.mychip: default_system 'p5.48xlarge' is a system of h100-sxm, not of mychip" in message
    assert "add a system with `chip: mychip`" in message
    # a hybrid rack is a system of its `chip` only: its other member type cannot take it as its default
    hybrid = catalog_error(files=[_user_chip(tmp_path, "trn4-gb300-fusion-rack")])
    assert "is a system of trn4, not of mychip (a hybrid's member types" in hybrid


def test_every_builtin_chip_defaults_to_a_system_of_its_own(catalog: Catalog) -> None:
    for cid, chip in catalog.chips.items():
        assert catalog.systems[chip.default_system].chip == cid


# ---------------------------------------------------------------- 3: a name that is a chip's alias and a family


@pytest.mark.parametrize(
    ("assignment", "chip", "field", "si"),
    [
        ("trainium3.tdp=1200W", "trn3", "tdp", 1200.0),
        ("trainium2.flops.bf16=900TFLOP/s", "trn2", "flops.bf16", 900e12),
        ("trainium1.tdp=300W", "trn1", "tdp", 300.0),
        ("blackwell-ultra.tdp=1300W", "b300", "tdp", 1300.0),
        ("chips.trainium3.tdp=1.1kW", "trn3", "tdp", 1100.0),
    ],
)
def test_a_chip_figure_through_an_alias_that_is_a_family_goes_to_the_chip(
    assignment: str, chip: str, field: str, si: float
) -> None:
    c = load_catalog(sets=[assignment])
    entry = c.chips[chip]
    fig = entry.flops["bf16"] if field == "flops.bf16" else getattr(entry, field)
    assert fig.si == pytest.approx(si)


@pytest.mark.parametrize("assignment", ["tpu-v5e.memory=0.7", "efficiency.tpu-v5e.memory=0.7"])
def test_a_family_named_like_a_chip_is_reachable(assignment: str) -> None:
    """'tpu-v5e.memory' had been an unknown figure of the chip."""
    c = load_catalog(sets=[assignment])
    assert c.efficiency["tpu-v5e"]["memory"].si == pytest.approx(0.7)


def test_a_field_of_both_entries_is_refused_naming_the_qualified_forms() -> None:
    message = catalog_error(["default.step_overhead=1ms"])
    assert "efficiency family 'default' and of engine 'default'" in message
    assert "efficiency.default.step_overhead=" in message and "engines.default.step_overhead=" in message
    c = load_catalog(sets=["engines.default.step_overhead=2ms"])
    assert c.engines["default"]["step_overhead"].si == pytest.approx(2e-3)
    assert c.efficiency["default"]["step_overhead"].si == 0.0


# ---------------------------------------------------------------- 4: unknown fields, out-of-range values


@pytest.mark.parametrize(
    ("assignment", "needle"),
    [
        ("hopper.nonsense=5", "unknown figure of hopper (efficiency family): 'nonsense'"),
        ("trainium2.memry=0.1", "Did you mean 'efficiency.trainium2.memory'?"),
        ("vllm.step_overhed=2ms", "Did you mean 'vllm.step_overhead'"),
        ("datacenter.pue.colocation=0.5", "0.5 is not in [1, 3] (a PUE"),
        ("datacenter.pue.colocation=5", "5 is not in [1, 3] (a PUE"),
        ("trainium2.matmul.bf16=5", "5 is not in (0, 1]"),
        ("trainium2.matmul.bf16=0", "0 is not in (0, 1]"),
        ("datacenter.opex.idle_power_fraction=1.5", "1.5 is not in [0, 1]"),
        ("datacenter.pricing_mode_ratio.spot=1.2", "1.2 is not in (0, 1]"),
        ("datacenter.pricing_mode_ratio.reserved-3y=0.8", "reserved-3y = 0.8 is above reserved-1y's 0.7"),
        ("vllm.chunked_prefill=0.5", "not 0 or 1"),
        ("reliability.nonsense=1", "unknown figure of reliability"),
    ],
)
def test_tree_overrides_are_checked(assignment: str, needle: str) -> None:
    assert needle in catalog_error([assignment])


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("efficiency:\n  hopper:\n    nonsense: {value: 5, unit: '1', status: estimate, derivation: x}", "nonsense"),
        ("efficiency:\n  hopper:\n    memry: {value: 0.5, unit: '1', status: estimate, derivation: x}", "'memory'"),
        ("engines:\n  vllm:\n    step_overhed: {value: 2, unit: ms, status: estimate, derivation: x}", "step_overhead"),
        (
            "efficiency:\n  hopper:\n    matmul:\n"
            "      bf16: {value: 1.13, unit: '1', status: estimate, derivation: x}",
            "1.13 is not in (0, 1]",
        ),
        ("datacenter:\n  pue:\n    colocation: {value: 0.5, unit: '1', status: estimate, derivation: x}", "PUE"),
        ("datacenter:\n  capex:\n    gold: {value: 5, unit: USD, status: estimate, derivation: x}", "'capex.gold'"),
    ],
)
def test_catalog_files_are_checked_alike(tmp_path: Path, body: str, needle: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(body)
    message = catalog_error(files=[f])
    assert needle in message and str(f) in message


def test_a_new_region_or_operator_key_is_taken(tmp_path: Path) -> None:
    c = load_catalog(sets=["datacenter.pue.mycloud=1.3", "datacenter.electricity_usd_per_kwh.my-dc=0.1USD/kWh"])
    assert c.datacenter["pue"]["mycloud"].si == pytest.approx(1.3)
    # a bare number is SI (USD/J): 0.1 is off the siblings by millions, surely a missing unit
    assert "USD/kWh" in catalog_error(["datacenter.electricity_usd_per_kwh.my-dc=0.1"])


# ---------------------------------------------------------------- 6: units as written, bare numbers


@pytest.mark.parametrize(
    ("rhs", "si"),
    [("900TFLOPS", 900e12), ("0.9 PFLOPS", 900e12), ("900 tflop/s", 900e12), ("900 TFLOP/s", 900e12)],
)
def test_vendor_spellings_of_compute_units(rhs: str, si: float) -> None:
    c = load_catalog(sets=[f"trn3.flops.bf16={rhs}"])
    assert c.chips["trn3"].flops["bf16"].si == pytest.approx(si)


def test_a_lower_case_watt_is_read() -> None:
    assert load_catalog(sets=["trn3.tdp=1200 w"]).chips["trn3"].tdp.si == 1200.0


@pytest.mark.parametrize(
    ("assignment", "needle"),
    [
        ("trn3.tdp=1,200W", "without separators (1200W)"),
        ("trn3.tdp=1200 watts", "unknown unit 'watts'. Fix: give tdp in one of W, kW, MW"),
        ("trn3.tdp=5ms", "tdp is a power, not a time"),
        ("trn3.hbm_bandwidth=6 tb/s", "ambiguous: TB/s or Tb/s"),
        ("trn3.tdp=1 mw", "case of B/b and M/m"),
        # a bare number is SI: 1.2 for a 1000 W TDP is 1.2 W, surely 1.2 kW meant
        (
            "trn3.tdp=1.2",
            "a bare number is in W, 0.0012 x the catalog's 1000 W. Fix: give its unit, e.g. trn3.tdp=1.2kW",
        ),
        ("trn3.process=3", "text figure"),
    ],
)
def test_unit_errors_say_what_is_wrong(assignment: str, needle: str) -> None:
    assert needle in catalog_error([assignment])


def test_a_launch_year_is_refused_as_display_only() -> None:
    """'trn3.launch_year=2030' had been read as 2030 s ('a bare number is in s'), then taken as a year that no
    prediction reads: it is refused (a file may record it)."""
    assert "launch_year is only shown" in catalog_error(["trn3.launch_year=2030"])


def test_a_tdp_in_kw_moves_the_systems_power_by_the_watts() -> None:
    """A TDP given in kW moved the system by (0.8 - 1000) W a chip: the SI value is what moves it."""
    base, capped = load_catalog(), load_catalog(sets=["trn4.tdp=1.8kW"])
    before, after = base.systems["trn4-ultraserver"], capped.systems["trn4-ultraserver"]
    assert before.power is not None and after.power is not None
    assert after.power.si == pytest.approx(before.power.si - 200.0 * before.chips)


# ---------------------------------------------------------------- 7: fabric tiers and unknown fabric fields


def test_a_fabric_tier_figure_can_be_set() -> None:
    tier = load_catalog(sets=["efa-v4.tiers.0.oversubscription=2"]).fabrics["efa-v4"].tiers[0]
    assert tier.oversubscription is not None and tier.oversubscription.si == pytest.approx(2.0)


def test_a_tier_figure_no_prediction_reads_is_refused() -> None:
    """A tier's per-hop latency and radix are documentation (the fabric's per-step latency counts the hops):
    `--set ib-ndr.tiers.2.latency=10ms` had been echoed as a WHAT-IF and left the plan the same."""
    assert catalog_error(["ib-ndr.tiers.2.latency=10ms"]) == (
        "--set ib-ndr.tiers.2.latency: a tier's latency is only shown (catalog show); no prediction reads it (the "
        "fabric's latency, per collective step, counts the switch hops). Fix: set ib-ndr.latency, or the tier's "
        "ib-ndr.tiers.2.oversubscription or .chips."
    )
    assert "a tier's radix is only shown" in catalog_error(["roce-400g.tiers.1.radix=64"])


def test_a_hybrid_link_can_be_set() -> None:
    c = load_catalog(sets=["fusion-rack.links.trn4-gb300.bandwidth=1TB/s"])
    link = next(lk for lk in c.systems["trn4-gb300-fusion-rack"].links if lk.between == ["trn4", "gb300"])
    assert link.bandwidth.si == pytest.approx(1e12)


def test_an_unknown_fabric_field_says_what_was_meant() -> None:
    message = catalog_error(["efa-v4.latencyy=3us"])
    assert "Extra inputs" not in message and "Did you mean 'efa-v4.latency'" in message


# ---------------------------------------------------------------- 5, 8: figures as their sources give them


def test_h100_96gb_carried_over_figures_are_estimates(catalog: Catalog) -> None:
    chip = catalog.chips["h100-96gb"]
    carried = [*chip.flops.values(), chip.scaleup_bandwidth, chip.sram]
    assert all(f is not None and f.status == "estimate" and "carried over" in f.derivation for f in carried)


def test_tpu7x_figures_from_googles_table(catalog: Catalog) -> None:
    """docs.cloud.google.com/tpu/docs/tpu7x: HBM 7380 GB/s, ICI 1200 GB/s bidirectional, DCN 100 Gb/s a chip."""
    chip = catalog.chips["tpu-v7"]
    assert chip.hbm_bandwidth.si == pytest.approx(7.38e12)
    assert chip.scaleup_bandwidth.si == pytest.approx(600e9)
    assert chip.scaleout_bandwidth.si == pytest.approx(12.5e9)
    for fig in (chip.hbm_bandwidth, chip.scaleup_bandwidth, chip.scaleout_bandwidth):
        assert fig.status == "spec" and "TPU_7X" in fig.source
    pod = catalog.systems["tpu-v7-pod"].scaleout.bandwidth
    assert pod.status == "spec" and math.isclose(pod.si / 9216, 12.5e9)


# ---------------------------------------------------------------- 10: catalog show names the system, marks old prices


def test_show_names_each_prices_system_and_marks_superseded_ones(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_run import run

    assert run(["catalog", "show", "trn1"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # as one line: the console wraps at its width
    assert "$21.5/system-hour of trn1.32xlarge" in out and "$24.78/system-hour of trn1n.32xlarge" in out
    assert run(["catalog", "show", "h100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "$98.32/system-hour of p5.48xlarge = $12.29/chip-hour (2025-05, spec; superseded by $55.04 of 2026-07)" in out
    )


def test_show_json_resolves_the_alternatives_sources(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_run import run_json

    data = run_json(capsys, ["catalog", "show", "h100", "--json"])
    sources = [s for f in data["figures"].values() for a in f.get("alternatives", []) for s in a.get("source", [])]
    assert sources and not [s for s in sources if re.fullmatch(r"[A-Z0-9_]+", s)]
    old = next(p for p in data["prices"] if p["value"] == 98.32)
    assert old["superseded_by"] == {"value": 55.04, "date": "2026-07"}


def test_the_suggestions_for_an_unknown_figure_are_ones_set_takes() -> None:
    """A misspelt 'trn2-ultraserver.scaleup.bandwidth' had been offered 'scaleup.dim_bandwidth.2' and '.1', list items
    that --set then refused ('is not a figure of system'); a figure inside a list item (a fabric tier's latency) is
    still offered."""
    assert catalog_error(["trn2-ultraserver.scaleup.bandwith=1280GB/s"]) == (
        "--set trn2-ultraserver.scaleup.bandwith: unknown figure of trn2-ultraserver (system): 'scaleup.bandwith'. "
        "Did you mean 'trn2-ultraserver.scaleup.bandwidth', 'trn2-ultraserver.scaleout.bandwidth'? Fix: name a figure "
        "it has, or price[.MODE] for its hourly price in USD ('chipwise catalog show trn2-ultraserver' lists its "
        "figures and prices)."
    )
    assert "Did you mean 'efa-v3.tiers.0.latency'," in catalog_error(["efa-v3.tiers.0.latncy=1us"])


@pytest.mark.parametrize("prefix", ["", "systems."])
def test_an_unknown_figure_of_a_dotted_id_is_named_as_written(prefix: str) -> None:
    """p5.48xlarge is also reached by its alias p5: an unknown figure of it had been named '48xlarge.nonexistent' and
    the suggestions spelt p5.scaleup.bandwidth, a field and ids the user never wrote."""
    assert catalog_error([f"{prefix}p5.48xlarge.nonexistent=4"]) == (
        f"--set {prefix}p5.48xlarge.nonexistent: unknown figure of p5.48xlarge (system): 'nonexistent'. Fix: name a "
        "figure it has, or price[.MODE] for its hourly price in USD ('chipwise catalog show p5.48xlarge' lists its "
        "figures and prices)."
    )
    assert "Did you mean 'p5.48xlarge.scaleup.bandwidth'," in catalog_error(
        [f"{prefix}p5.48xlarge.scaleup.bandwith=500GB/s"]
    )


# `--set` on a chip's figure reaches what the model reads: a system's own scale-up and scale-out bandwidth and its power
# follow the chip's (a system figure a --set gives wins, whatever the flags' order); a figure only shown is refused; the
# same value in two units is one value; an id with no figure, a scale-up domain larger than its system and an upper-case
# partial override each get the line that names their problem.


@pytest.mark.parametrize("assignment", ["h100-sxm.sram=1MB", "trn3.launch_year=2030", "chips.h100-sxm.sram=1MB"])
def test_a_display_only_chip_figure_is_refused(assignment: str) -> None:
    """sram and launch_year are only shown: --set of them had been taken, its prediction the same to the byte."""
    field = assignment.split("=", maxsplit=1)[0].rsplit(".", 1)[1]
    assert f"{field} is only shown" in catalog_error([assignment])


def test_a_chips_scaleout_bandwidth_scales_its_systems() -> None:
    """The model reads a system's scale-out bandwidth (per system / chips), not the chip's: --set
    h100-sxm.scaleout_bandwidth=1GB/s had left p5's step time as it was. 400 GB/s x 25/50 = 200 GB/s; trn1n's
    twice the chip's share (200 GB/s over 16 x 6.25) stays twice: 200 x 12.5/6.25 = 400 GB/s."""
    cat = load_catalog(sets=["h100-sxm.scaleout_bandwidth=25GB/s", "trn1.scaleout_bandwidth=12.5GB/s"])
    hw = hardware(cat)
    assert hw.system("p5.48xlarge").scaleout_bandwidth_per_chip == pytest.approx(25e9)
    assert hw.system("dgx-h100").scaleout_bandwidth_per_chip == pytest.approx(25e9)
    assert hw.system("gcp-a3-highgpu-8g").scaleout_bandwidth_per_chip == pytest.approx(100e9 / 8 / 2)
    assert cat.systems["trn1n.32xlarge"].scaleout.bandwidth.si == pytest.approx(400e9)
    assert hw.system("p5e.48xlarge").scaleout_bandwidth_per_chip == pytest.approx(50e9)  # an H200: not moved
    note = cat.systems["p5.48xlarge"].scaleout.bandwidth.note
    assert note.startswith("what-if: follows --set h100-sxm.scaleout_bandwidth=25GB/s; catalog value was 3200")


def test_a_systems_own_scaleout_set_wins_over_the_chips() -> None:
    for sets in (
        ["h100-sxm.scaleout_bandwidth=25GB/s", "p5.48xlarge.scaleout.bandwidth=800Gb/s"],
        ["p5.48xlarge.scaleout.bandwidth=800Gb/s", "h100-sxm.scaleout_bandwidth=25GB/s"],
    ):
        assert hardware(load_catalog(sets=sets)).system("p5").scaleout_bandwidth_per_chip == pytest.approx(12.5e9)


def test_a_chips_scaleup_bandwidth_reaches_a_system_with_its_own() -> None:
    """trn2.48xlarge (trn2's default system) gives its own 512 GB/s: --set trn2.scaleup_bandwidth=50GB/s had left
    it there (a TP16 step of 23.18 s unchanged). It scales with the chip's 640 GB/s: 512 x 320/640 = 256 GB/s; the
    UltraServer, with none of its own, takes the chip's, split over its torus in its dimensions' proportions."""
    hw = hardware(load_catalog(sets=["trn2.scaleup_bandwidth=320GB/s"]))
    assert hw.system("trn2").scaleup.bandwidth == pytest.approx(256e9)
    assert hw.system("trn2-ultraserver").scaleup.bandwidth == pytest.approx(320e9)
    assert sum(hw.system("trn2-ultraserver").scaleup.dim_bandwidth) == pytest.approx(320e9)
    own = hardware(load_catalog(sets=["trn2.scaleup_bandwidth=320GB/s", "trn2.48xlarge.scaleup.bandwidth=100GB/s"]))
    assert own.system("trn2").scaleup.bandwidth == pytest.approx(100e9)


def test_a_hybrids_links_and_network_follow_their_member_chip() -> None:
    """In the Trn4-GB300 rack the Trn4-Trn4 link runs at the lower of trn4's scale-up figure and its NVLink 5 switch's
    900 GB/s (1.8 -> 0.9 TB/s leaves it there), the mixed one stays at the GB300's 900 GB/s; its 36,000 Gb/s
    (4,500 GB/s) network moves by 36 Trn4 x (50 - 25) GB/s."""
    cat = load_catalog(sets=["trn4.scaleup_bandwidth=900GB/s", "trn4.scaleout_bandwidth=50GB/s"])
    rack = cat.systems["trn4-gb300-fusion-rack"]
    links = {tuple(link.between): link.bandwidth.si for link in rack.links}
    assert links[("trn4", "trn4")] == pytest.approx(900e9)
    assert links[("trn4", "gb300")] == pytest.approx(900e9)
    assert rack.scaleout.bandwidth.si == pytest.approx(4500e9 + 36 * 25e9)


@pytest.mark.parametrize(
    "sets",
    [
        ["p5.48xlarge.power=11kW", "h100-sxm.tdp=350W"],
        ["h100-sxm.tdp=350W", "p5.48xlarge.power=11kW"],
    ],
)
def test_a_systems_power_set_wins_over_its_chips_tdp_in_either_order(sets: list[str]) -> None:
    """The chip's TDP set after the system's power had overwritten it (8.2 kW one way, 11 kW the other), and the
    note named the other --set's 7,400 W as the catalog's value."""
    cat = load_catalog(sets=sets)
    power = cat.systems["p5.48xlarge"].power
    assert power is not None and power.si == pytest.approx(11e3)
    assert power.note == "what-if override; catalog value was 10.2 kW"
    dgx = cat.systems["dgx-h100"].power  # no --set of its own: moves by 8 x (350 - 700) W
    assert dgx is not None and dgx.si == pytest.approx(10.2e3 - 8 * 350)
    assert dgx.note.startswith("what-if: follows --set h100-sxm.tdp=350W; catalog value was 10.2 kW")


def test_a_figure_that_follows_a_chip_what_if_is_an_estimate_saying_how() -> None:
    """dgx-h100's power after --set h100-sxm.tdp=800W had read 11 kW `spec`, its derivation NVIDIA's 10.2 kW;
    p5.48xlarge's scale-out bandwidth after h100-sxm.scaleout_bandwidth=100GB/s 6,400 Gb/s `spec`. Each is now an
    estimate whose derivation gives the step from the catalog's figure (whose sources it keeps)."""
    dgx = load_catalog(sets=["h100-sxm.tdp=800W"]).systems["dgx-h100"].power
    assert dgx is not None and dgx.si == pytest.approx(10.2e3 + 8 * 100) and dgx.status == "estimate"
    assert dgx.derivation == (
        "h100-sxm TDP moved by --set h100-sxm.tdp=800W: 10.2 kW + 8 x (800 - 700) W; the catalog's 10.2 kW (spec: "
        "SERVNET; FLASHGENIUS)"
    )
    assert dgx.source == ["SERVNET", "FLASHGENIUS"]
    p5 = load_catalog(sets=["h100-sxm.scaleout_bandwidth=100GB/s"]).systems["p5.48xlarge"].scaleout.bandwidth
    assert (p5.value, p5.unit, p5.status) == (6400.0, "Gb/s", "estimate")
    assert p5.derivation == (
        "h100-sxm scale-out bandwidth moved by --set h100-sxm.scaleout_bandwidth=100GB/s: 3200 Gb/s x 100 / 50 GB/s; "
        "the catalog's 3200 Gb/s (spec: EFA_NOTE)"
    )


def test_the_same_value_in_two_units_is_one_value() -> None:
    """1200W and 1.2kW had been refused as two values."""
    cat = load_catalog(sets=["trn3.tdp=1200W", "trainium3.tdp=1.2kW", "trn3.tdp=1200 w", "trn3.tdp=1200"])
    assert cat.chips["trn3"].tdp.si == 1200.0
    assert cat.chips["trn3"].tdp.note == "what-if override; catalog value was 1000 W"
    assert "twice" in catalog_error(["trn3.tdp=1200W", "trn3.tdp=1.1kW"])


@pytest.mark.parametrize(
    ("assignment", "said"),
    [
        ("h100-sxm=5", "--set h100-sxm: names chip 'h100-sxm' but no figure of it. Fix: write --set "
         "h100-sxm.FIELD=VALUE ('chipwise catalog show h100-sxm' lists its figures)."),
        ("chips.h100-sxm.=5", "--set chips.h100-sxm.: names chip 'h100-sxm' but no figure of it. Fix: write --set "
         "chips.h100-sxm.FIELD=VALUE ('chipwise catalog show h100-sxm' lists its figures)."),
        ("p5=5", "--set p5: names system 'p5.48xlarge' but no figure of it. Fix: write --set p5.FIELD=VALUE "
         "('chipwise catalog show p5.48xlarge' lists its figures)."),
        ("datacenter=5", "--set datacenter: names the datacenter section but no figure of it. Fix: write --set "
         "datacenter.PATH=VALUE (docs/catalog-format.md names them)."),
    ],
)  # fmt: skip
def test_an_id_without_a_figure_is_named_as_such(assignment: str, said: str) -> None:
    """'h100-sxm=5' had been 'unknown catalog id 'h100-sxm'. Did you mean 'h100-sxm'?'."""
    assert catalog_error([assignment]) == said


def test_a_scaleup_domain_larger_than_its_system_is_refused(tmp_path: Path) -> None:
    """A 16-chip domain on an 8-chip server had loaded, and run TP16 across two servers at NVLink speed."""
    f = tmp_path / "big.yaml"
    f.write_text("systems:\n  p5.48xlarge:\n    scaleup: {kind: switched, size: 16}\n")
    assert "scaleup.size 16 is larger than the system's 8 chips" in catalog_error(files=[f])


def test_a_partial_override_under_an_upper_case_id_is_told_the_id_is_taken(tmp_path: Path) -> None:
    """It had been told 'chips.H100-SXM.family: Field required'."""
    f = tmp_path / "dup.yaml"
    f.write_text("chips:\n  H100-SXM: {name: dup, vendor: nvidia}\n")
    assert "id 'H100-SXM' is already the id of chip 'h100-sxm'" in catalog_error(files=[f])


def test_a_chips_scaleup_bandwidth_moves_a_tp16_step_on_its_default_system() -> None:
    """The reviewer's TP16 run on trn2 (trn2.48xlarge): 22.96 s with --set trn2.scaleup_bandwidth=50GB/s as
    without; now as with the system's figure set to 512 x 50/640 = 40 GB/s."""
    import chipwise.api as cw

    s2 = {"kind": "train", "model": "llama-3.1-8b", "hardware": "trn2", "chips": 16, "precision": "bf16",
          "seq_len": 8192, "global_batch_tokens": 1048576, "tokens": 1e10,
          "plan": {"tp": 16, "pp": 1, "dp": 4, "microbatch": 1}}  # fmt: skip
    assert round(cw.predict(s2)["step_time_s"], 2) == 22.96
    chip = cw.predict(s2, sets=["trn2.scaleup_bandwidth=50GB/s"])["step_time_s"]
    assert chip == pytest.approx(cw.predict(s2, sets=["trn2.48xlarge.scaleup.bandwidth=40GB/s"])["step_time_s"])
    assert round(chip, 2) == 141.75


def test_a_scale_multiplies_the_figure_in_its_own_unit() -> None:
    """`x1.1` is the catalog's figure times 1.1 in its unit (3.35 TB/s -> 3.685 TB/s), what `chipwise sensitivity`
    moves each figure by; a --catalog file's figure is scaled from the file's value."""
    hbm = load_catalog((), ["h100-sxm.hbm_bandwidth=x1.1"]).chips["h100-sxm"].hbm_bandwidth
    assert (hbm.value, hbm.unit) == pytest.approx((3.685, "TB/s"))
    assert hbm.derivation == "set on the command line: --set h100-sxm.hbm_bandwidth=x1.1"
    assert hbm.note == "what-if override; catalog value was 3.35 TB/s"
    eff = load_catalog((), ["efficiency.hopper.memory=x 0.9"]).efficiency["hopper"]["memory"]
    assert eff.value == pytest.approx(0.87 * 0.9)
    # a chip figure a system follows moves the system's by the same share (Trn2's 512 GB/s torus total -> 563.2)
    systems = load_catalog((), ["trn2.scaleup_bandwidth=x1.1"]).systems
    assert systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(1.1 * 512e9)  # type: ignore[union-attr]


def test_a_scaled_engine_figure_scales_each_familys_own() -> None:
    """An engine figure fitted per chip family is scaled from each family's value, not replaced by the engine's
    default times the factor (TensorRT-LLM's Hopper layer overhead 24.8383 us -> 27.32213 us, not 5.5 us)."""
    engine = load_catalog((), ["engines.trtllm.layer_overhead=x1.1"]).engines["trtllm"]
    hopper = engine["chips"]["hopper"]["layer_overhead"]
    assert (hopper.value, hopper.unit) == (pytest.approx(24.8383 * 1.1), "us")
    assert hopper.note == "what-if override; catalog value was 24.8383 us"
    assert engine["layer_overhead"].value == pytest.approx(5.0 * 1.1)  # the default engine's, for other families


@pytest.mark.parametrize(
    ("sets", "needle"),
    [
        (["h100-sxm.price=x1.1"], "a price is not scaled"),
        (["efficiency.hopper.memory=x1.5"], "is not in (0, 1]"),
        (["h100-sxm.hbm_bandwidth=x1.1", "h100-sxm.hbm_bandwidth=x1.2"], "gives chips.h100-sxm.hbm_bandwidth twice"),
        (["h100-sxm.hbm_bandwidth=x-1"], "'x-1' is not a number"),
    ],
)
def test_a_bad_scale_is_one_line(sets: list[str], needle: str) -> None:
    with pytest.raises(ChipwiseError) as err:
        load_catalog((), sets)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_the_same_scale_twice_is_one_value() -> None:
    cat = load_catalog((), ["h100-sxm.hbm_bandwidth=x1.1", "h100-sxm.hbm_bandwidth=x 1.10"])
    assert cat.chips["h100-sxm"].hbm_bandwidth.value == pytest.approx(3.685)
