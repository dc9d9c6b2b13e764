"""Review 68 (M7): Trainium's scale-up bandwidth read one way for Trn2 and Trn3, Trn2's old compute figures credited
to the page that printed them, the two Gaudi rental estimates by one rule, MI325X's platform figures sourced as
the chip's, and `catalog show`'s inherited scale-up row, whole figure names and rental line."""

from __future__ import annotations

import pytest

from chipwise.catalog.loader import Catalog
from chipwise.hardware import hardware
from chipwise.interfaces.cli.app import run


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


def _table_rows(out: str) -> dict[str, list[str]]:
    """A `catalog show` table's rows by figure name, their cells stripped (a continuation line has no name)."""
    table = [x.split("│") for x in out.splitlines()]
    return {row[1].strip(): [c.strip() for c in row[2:-1]] for row in table if len(row) >= 5 and row[1].strip()}


def test_catalog_show_names_the_inherited_scaleup_bandwidth(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system with no scale-up bandwidth of its own shows the chip's, its status and where it comes from; every
    figure name stays whole on an 80-column terminal ('scaleup.dim_bandwidt' / 'h.0' had split)."""
    monkeypatch.setenv("COLUMNS", "80")
    assert run(["catalog", "show", "trn3-ultraserver"]) == 0
    rows = _table_rows(capsys.readouterr().out)
    value, status, note = rows["scaleup.bandwidth"]
    assert (value, status) == ("1280 GB/s", "estimate") and note.startswith("from chip trn3")
    assert run(["catalog", "show", "trn2-ultraserver"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert {"scaleup.dim_bandwidth.0", "scaleup.dim_bandwidth.2", "scaleout.bandwidth"} <= set(_table_rows(out))
    assert "scaleup.bandwidth" not in _table_rows(out)  # its torus dimensions are its own, not the chip's total


def test_rental_line_without_a_note_ends_at_its_status(capsys: pytest.CaptureFixture[str]) -> None:
    """tpu-v6e-256's rental has a derivation and no note: without --sources the line ends '(estimate)', where it had
    ended '(estimate): ' with nothing after; with --sources it gives the derivation."""
    assert run(["catalog", "show", "tpu-v6e-256"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rented in units"))
    assert line == "rented in units of 1, 4, 8, 16, 32, 64, 128, 256 chips (estimate)"
    assert run(["catalog", "show", "tpu-v6e-256", "--sources"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rented in units"))
    assert line.startswith("rented in units of 1, 4, 8, 16, 32, 64, 128, 256 chips (estimate): v6e-1")
