"""`--set` on a chip's figure reaches what the model reads: a system's own scale-up and scale-out bandwidth and its
power follow the chip's (a system figure a --set gives wins, whatever the flags' order); a figure only shown is
refused; the same value in two units is one value; an id with no figure, a scale-up domain larger than its system
and an upper-case partial override each get the line that names their problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_errors import catalog_error
from chipwise.catalog import load_catalog
from chipwise.hardware import hardware


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
    """In the Trn4-GB300 rack the Trn4-Trn4 link moves with trn4's scale-up figure (1.8 -> 0.9 TB/s), the mixed one
    stays at the GB300's 900 GB/s; its 28,800 Gb/s (3,600 GB/s) network moves by 36 Trn4 x (50 - 25) GB/s."""
    cat = load_catalog(sets=["trn4.scaleup_bandwidth=900GB/s", "trn4.scaleout_bandwidth=50GB/s"])
    rack = cat.systems["trn4-gb300-fusion-rack"]
    links = {tuple(link.between): link.bandwidth.si for link in rack.links}
    assert links[("trn4", "trn4")] == pytest.approx(900e9)
    assert links[("trn4", "gb300")] == pytest.approx(900e9)
    assert rack.scaleout.bandwidth.si == pytest.approx(3600e9 + 36 * 25e9)


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
    """The reviewer's TP16 run on trn2 (trn2.48xlarge): 23.18 s with --set trn2.scaleup_bandwidth=50GB/s as
    without; now as with the system's figure set to 512 x 50/640 = 40 GB/s."""
    import chipwise.api as cw

    s2 = {"kind": "train", "model": "llama-3.1-8b", "hardware": "trn2", "chips": 16, "precision": "bf16",
          "seq_len": 8192, "global_batch_tokens": 1048576, "tokens": 1e10,
          "plan": {"tp": 16, "pp": 1, "dp": 4, "microbatch": 1}}  # fmt: skip
    assert round(cw.predict(s2)["step_time_s"], 2) == 23.18
    chip = cw.predict(s2, sets=["trn2.scaleup_bandwidth=50GB/s"])["step_time_s"]
    assert chip == pytest.approx(cw.predict(s2, sets=["trn2.48xlarge.scaleup.bandwidth=40GB/s"])["step_time_s"])
    assert round(chip, 2) == 141.97
