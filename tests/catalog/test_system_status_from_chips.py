"""A system figure taken from its chips' figures is no firmer than they are: the Trainium4 systems' scale-up and
scale-out bandwidths, the chip's estimates, had read `projected`; the loader refuses a file that does it again. The
Trainium4 + GB300 rack's Trn4-Trn4 pair runs through NVLink 5 switches at their 900 GB/s port, not Trainium4's 1.8 TB/s
NVLink 6 port."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware


def _links(cat_sets: list[str], system: str) -> dict[tuple[str, ...], float]:
    rack = load_catalog(sets=cat_sets).systems[system]
    return {tuple(link.between): link.bandwidth.si for link in rack.links}


def test_the_trainium4_systems_bandwidths_are_estimates_as_the_chips_are() -> None:
    cat = load_catalog()
    assert cat.chips["trn4"].scaleup_bandwidth.status == cat.chips["trn4"].scaleout_bandwidth.status == "estimate"
    ultra = cat.systems["trn4-ultraserver"]
    assert ultra.scaleup.bandwidth is not None
    assert (ultra.scaleup.bandwidth.status, ultra.scaleout.bandwidth.status) == ("estimate", "estimate")
    for rack in ("trn4-gb300-fusion-rack", "trn4-rubin-fusion-rack"):
        entry = cat.systems[rack]
        trn4 = next(link for link in entry.links if link.between == ["trn4", "trn4"])
        assert (trn4.bandwidth.status, entry.scaleout.bandwidth.status) == ("estimate", "estimate")


def test_a_file_giving_a_copied_figure_a_firmer_status_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "firmer.yaml"
    path.write_text(
        "systems:\n  trn4-ultraserver:\n    scaleout:\n      fabric: efa-v4\n"
        "      bandwidth: {value: 14400, unit: Gb/s, status: projected, derivation: '72 x 200 Gbps'}\n",
        encoding="utf-8",
    )
    with pytest.raises(ChipwiseError) as exc:
        load_catalog([path])
    assert str(exc.value) == (
        f"{path}: trn4-ultraserver.scaleout.bandwidth (14400.0 Gb/s) is 'projected' but restates its chips' figure, "
        "which is 'estimate': a figure taken from another is no firmer than it. Fix: give it status: estimate, or a "
        "source of its own."
    )


def test_an_announced_figure_with_its_own_source_is_kept(tmp_path: Path) -> None:
    """A vendor's announced system figure that happens to equal its chip's estimate has a provenance of its own: it
    is not refused (only `spec` and `measured` figures had been exempt, and the fix had said to call an announcement
    spec)."""
    path = tmp_path / "announced.yaml"
    path.write_text(
        "systems:\n  trn4-ultraserver:\n    scaleout:\n      fabric: efa-v4\n"
        "      bandwidth: {value: 14400, unit: Gb/s, status: announced, source: [NAND_TRN4]}\n",
        encoding="utf-8",
    )
    assert load_catalog([path]).systems["trn4-ultraserver"].scaleout.bandwidth.status == "announced"


def test_a_link_naming_an_unknown_chip_is_one_line(tmp_path: Path) -> None:
    """A system with no members may name any link ends; one the catalog lacks is refused in one line (it had been
    an internal KeyError)."""
    path = tmp_path / "links.yaml"
    path.write_text(
        "systems:\n  p5.48xlarge:\n    links:\n"
        "    - between: [h100-sxm, nosuch]\n"
        "      bandwidth: {value: 100, unit: GB/s, status: estimate, derivation: 'a test'}\n"
        "      latency: {value: 1, unit: us, status: estimate, derivation: 'a test'}\n",
        encoding="utf-8",
    )
    with pytest.raises(ChipwiseError, match="link chip 'nosuch'"):
        load_catalog([path])


def test_the_gb300_racks_trainium4_pair_runs_at_the_nvlink5_switch_port() -> None:
    """900 GB/s per direction (130 TB/s over 72 NVLink 5 ports, halved), as the Trn4-GB300 pair; on the Rubin rack's
    NVLink 6 tray the pair keeps Trainium4's 1.8 TB/s. A --set of trn4's port takes the lower of it and the switch's
    on the GB300 rack (450 GB/s: 450; 3.6 TB/s: still 900) and moves the Rubin rack's in proportion."""
    rack = hardware(load_catalog()).system("trn4-gb300-fusion-rack")
    assert _links([], "trn4-gb300-fusion-rack") == {
        ("trn4", "trn4"): 900e9,
        ("gb300", "gb300"): 900e9,
        ("trn4", "gb300"): 900e9,
    }
    assert rack.id == "trn4-gb300-fusion-rack"
    assert _links([], "trn4-rubin-fusion-rack")[("trn4", "trn4")] == 1.8e12
    slow, fast = ["trn4.scaleup_bandwidth=450GB/s"], ["trn4.scaleup_bandwidth=3.6TB/s"]
    assert _links(slow, "trn4-gb300-fusion-rack")[("trn4", "trn4")] == pytest.approx(450e9)
    assert _links(fast, "trn4-gb300-fusion-rack")[("trn4", "trn4")] == pytest.approx(900e9)
    assert _links(slow, "trn4-rubin-fusion-rack")[("trn4", "trn4")] == pytest.approx(450e9)
    assert _links(fast, "trn4-rubin-fusion-rack")[("trn4", "trn4")] == pytest.approx(3.6e12)


def test_the_trn2_ultraservers_hbm_is_said_in_tib() -> None:
    """64 x 96 GiB = 6,144 GiB = 6 TiB (6.6 TB, where it had read '6 TB')."""
    assert "6 TiB HBM (64 x 96 GiB)" in load_catalog().systems["trn2-ultraserver"].host
