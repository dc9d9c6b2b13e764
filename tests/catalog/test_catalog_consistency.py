"""What a catalog file may not do in silence: run a scale-up domain over no fabric of its layer, redefine a source
key, cite an empty source or an undefined key, or price a system at a provider that does not rent it; and built-in
figures that had disagreed with their siblings or their own notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_errors import catalog_error
from chipwise.catalog import Catalog, load_catalog
from chipwise.catalog.loader import BUILTIN, _merge_file
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.catalog_cmd import _system_rows, system_json

SRC = "{value: 1, unit: GB/s, status: spec, source: [MYSRC]}"
CHIP = (
    "sources: {MYSRC: 'https://example.com/mychip'}\n"
    "chips:\n  mychip:\n    name: My Chip\n    vendor: nvidia\n    family: hopper\n    default_system: mysys\n"
    "    flops: {bf16: {value: 1000, unit: TFLOP/s, status: spec, source: [MYSRC]}}\n"
    "    hbm_capacity: {value: 100, unit: GiB, status: spec, source: [MYSRC]}\n"
    "    hbm_bandwidth: {value: 4, unit: TB/s, status: spec, source: [MYSRC]}\n"
    "    tdp: {value: 800, unit: W, status: spec, source: [MYSRC]}\n"
    "    scaleup_bandwidth: {value: 450, unit: GB/s, status: spec, source: [MYSRC]}\n"
    "    scaleout_bandwidth: {value: 50, unit: GB/s, status: spec, source: [MYSRC]}\n"
    "systems:\n  mysys:\n    name: My System\n    kind: server\n    provider: oem\n    chip: mychip\n"
    "    chips: CHIPS\n    scaleup: {kind: switched, size: CHIPS UP}\n"
    "    scaleout: {fabric: OUT, bandwidth: {value: 3200, unit: Gb/s, status: spec, source: [MYSRC]}}\n"
)


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    return path


def _system(tmp_path: Path, up: str = "", out: str = "ib-ndr", chips: int = 8) -> Path:
    return _file(tmp_path, CHIP.replace("CHIPS UP", f"{chips}{up}").replace("CHIPS", str(chips)).replace("OUT", out))


# ---------------------------------------------------------------- a system's fabrics and their layers


@pytest.mark.parametrize("chips", [8, 2])
def test_a_domain_of_several_chips_with_no_fabric_is_refused(tmp_path: Path, chips: int) -> None:
    """It had run its 8 chips over its scale-out ib-ndr in silence, and `catalog show` had read 'over '."""
    path = _system(tmp_path, chips=chips)
    assert catalog_error(files=[path]).startswith(
        f"{path}: systems.mysys.scaleup.fabric: missing: a scale-up domain of {chips} chips needs its own fabric, "
        "not the scale-out ib-ndr. Fix: give scaleup.fabric, one of gaudi-roce-scaleup, "
    )


def test_a_one_chip_domain_may_name_no_fabric_and_is_shown_so(tmp_path: Path) -> None:
    cat = load_catalog(files=[_system(tmp_path, chips=1)])
    rows = {row[0]: row[1] for row in _system_rows(system_json(cat, "mysys"))}
    assert rows["scale-up"] == "switched domain of 1 chips over no scale-up fabric (one chip)"


@pytest.mark.parametrize(
    ("up", "out", "said"),
    [
        (", fabric: efa-v2", "ib-ndr", "scaleup.fabric: 'efa-v2' is a scaleout fabric, not a scaleup one"),
        (", fabric: nvlink4", "nvlink4", "scaleout.fabric: 'nvlink4' is a scaleup fabric, not a scaleout one"),
    ],
)  # fmt: skip
def test_a_fabric_of_the_other_layer_is_refused(tmp_path: Path, up: str, out: str, said: str) -> None:
    """Both had been taken: a scale-up domain over EFA, a network over NVLink."""
    path = _system(tmp_path, up=up, out=out)
    assert catalog_error(files=[path]).startswith(f"{path}: systems.mysys.{said}. Fix: use one of ")


def test_every_builtin_system_runs_each_layer_on_a_fabric_of_it(catalog: Catalog) -> None:
    for sid, system in catalog.systems.items():
        assert catalog.fabrics[system.scaleup.fabric].layer == "scaleup", sid
        assert catalog.fabrics[system.scaleout.fabric].layer == "scaleout", sid


# ---------------------------------------------------------------- source keys


def test_a_file_redefining_a_builtin_source_key_is_refused(tmp_path: Path) -> None:
    """`sources: {KLOCK_H100: my own blog}` had re-attributed every H100 figure citing KLOCK_H100 to the blog, and
    predict had said no figure differed."""
    path = _file(tmp_path, "sources:\n  KLOCK_H100: my own blog\n")
    assert catalog_error(files=[path]) == (
        f"{path}: sources.KLOCK_H100: the key is already a source (built-in catalog): "
        "'https://glennklockwood.com/garden/processors/h100'. Fix: give your source another key (e.g. KLOCK_H100_2) "
        "and cite that, or drop it to cite the catalog's."
    )


def test_a_source_key_given_again_with_its_own_text_is_taken(tmp_path: Path) -> None:
    path = _file(tmp_path, "sources:\n  KLOCK_H100: https://glennklockwood.com/garden/processors/h100\n")
    assert load_catalog(files=[path]).sources["KLOCK_H100"] == "https://glennklockwood.com/garden/processors/h100"


def test_two_builtin_files_giving_one_key_two_texts_are_refused() -> None:
    """SEMI_TRN2, PHILISUN_H800, TORCHTITAN, TPU_V4 (chips.yaml, systems.yaml) and KLOCK_META (fabrics.yaml,
    systems.yaml) had two texts each, the later file's winning: TPU_V4's 275 TFLOPS and HBM excerpt was lost."""
    merged: dict[str, object] = {}
    _merge_file(merged, {"sources": {"K": "one"}}, {}, BUILTIN, [])
    with pytest.raises(ChipwiseError, match=r"^built-in catalog: sources\.K: the key is already a source"):
        _merge_file(merged, {"sources": {"K": "two"}}, {}, BUILTIN, [])


def test_the_merged_builtin_source_texts_keep_both_copies(catalog: Catalog) -> None:
    tpu = catalog.sources["TPU_V4"]
    assert tpu.startswith("https://cloud.google.com/tpu/docs/v4 (275 TFLOPS bf16/int8, 32 GiB HBM2 1200 GBps")
    assert "4096-chip pod" in tpu and "https://docs.cloud.google.com/tpu/docs/v4" in tpu
    assert catalog.sources["SEMI_TRN2"].startswith("https://newsletter.semianalysis.com/")
    assert "64-chip 4x4x4 3D torus" in catalog.sources["SEMI_TRN2"]
    assert "Grand Teton node" in catalog.sources["KLOCK_META"]
    assert "400 GB/s total aggregate" in catalog.sources["PHILISUN_H800"]
    assert "Custom H100 GPUs" in catalog.sources["TORCHTITAN"]


@pytest.mark.parametrize("source", ['""', "'   '", '[""]', "[' ']"])
def test_a_blank_source_is_no_source(tmp_path: Path, source: str) -> None:
    """`source: ""` had read as [""] and passed the rule that a spec figure needs a source, as `[]` does not."""
    chip = _file(tmp_path, f"chips:\n  h100-sxm:\n    tdp: {{value: 800, unit: W, status: spec, source: {source}}}\n")
    assert catalog_error(files=[chip]) == (
        f"{chip}: chips.h100-sxm.tdp: a figure with status 'spec' needs a 'source'. Fix: correct that figure "
        "(format: docs/catalog-format.md)."
    )
    price = _file(
        tmp_path,
        "prices:\n  - {system: p5.48xlarge, provider: aws, region: us-east-1, mode: on-demand, value: 30, "
        f"date: '2026-12', status: spec, source: {source}}}\n",
    )
    assert "price for p5.48xlarge: a price with status 'spec' needs a 'source'" in catalog_error(files=[price])
    rental = _file(tmp_path, f"systems:\n  p5.48xlarge:\n    rental: {{chips: [8], status: spec, source: {source}}}\n")
    assert "rental units with status 'spec' needs a 'source'" in catalog_error(files=[rental])


def test_a_source_that_reads_as_an_undefined_key_is_refused(tmp_path: Path) -> None:
    """KLOCK_H10 (KLOCK_H100 mistyped) had been taken as the citation's text, and the figure as sourced."""
    path = _file(tmp_path, "chips:\n  h100-sxm:\n    tdp: {value: 800, unit: W, status: spec, source: [KLOCK_H10]}\n")
    assert catalog_error(files=[path]) == (
        f"{path}: chips.h100-sxm.tdp.source: 'KLOCK_H10' reads as a source key, but no `sources` block defines it. "
        "Did you mean 'KLOCK_H100', 'KLOCK_A100', 'KLOCK_B300'? Fix: cite a defined key, define KLOCK_H10 under "
        "sources (KLOCK_H10: 'the citation'), or write the citation itself (docs/catalog-format.md)."
    )


def test_a_citation_written_out_or_a_key_the_file_defines_is_taken(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "sources: {MY_QUOTE: 'my measurement, 2026-07'}\nchips:\n  h100-sxm:\n"
        "    tdp: {value: 800, unit: W, status: spec, source: [MY_QUOTE, 'https://example.com/h100']}\n",
    )
    assert load_catalog(files=[path]).chips["h100-sxm"].tdp.source == ["MY_QUOTE", "https://example.com/h100"]
    # a plain upper-case word is a citation, not a key (NVIDIA had been refused as an undefined key)
    plain = _file(tmp_path, "chips:\n  h100-sxm:\n    tdp: {value: 800, unit: W, status: spec, source: NVIDIA}\n")
    assert load_catalog(files=[plain]).chips["h100-sxm"].tdp.source == ["NVIDIA"]


# ---------------------------------------------------------------- a system's price and its provider


def test_a_system_price_of_another_provider_is_refused(tmp_path: Path) -> None:
    """A gcp price of p5.48xlarge in us-east-1 had been used for a gcp run."""
    path = _file(
        tmp_path,
        "prices:\n  - {system: p5.48xlarge, provider: gcp, region: us-east-1, mode: on-demand, value: 30, "
        "date: '2026-12', status: spec, source: [q]}\n",
    )
    assert catalog_error(files=[path]) == (
        f"{path}: price for p5.48xlarge: provider 'gcp' does not rent p5.48xlarge, a system of aws. Fix: give "
        "provider: aws, or price the chip per chip-hour (chip: h100-sxm, provider: gcp) or a system of gcp."
    )


def test_a_chip_price_of_any_provider_and_a_set_price_are_taken(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "prices:\n  - {chip: h100-sxm, provider: lambda, mode: on-demand, value: 2.5, date: '2026-12', status: spec, "
        "source: [q]}\n",
    )
    assert any(p.provider == "lambda" for p in load_catalog(files=[path]).prices)
    assert any(p.provider == "user" and p.system == "p5.48xlarge" for p in load_catalog(sets=["p5.price=40"]).prices)
    # a vendor's reference system (a DGX) is rented by any cloud that offers it
    dgx = tmp_path / "dgx.yaml"
    dgx.write_text(
        "prices:\n  - {system: dgx-h100, provider: coreweave, mode: on-demand, value: 40, unit: USD/h, "
        "date: '2026-12', status: spec, source: [q]}\n"
    )
    assert any(p.provider == "coreweave" and p.system == "dgx-h100" for p in load_catalog(files=[dgx]).prices)


# ---------------------------------------------------------------- built-in figures that disagreed


def test_the_trn4_gb300_rack_takes_the_overhead_of_its_sibling_racks(catalog: Catalog) -> None:
    """Its x 1.4 (171.4 kW) was the top of the GB300 NVL72's 120-140 kW range; trn4-rubin-fusion-rack and
    vr200-nvl72 take 130 kW / 100.8 kW = 1.29: (36 x 2,000 + 36 x 1,400) W x 1.29 = 157.9 kW."""
    power = catalog.systems["trn4-gb300-fusion-rack"].power
    assert power is not None and power.si == pytest.approx(157.9e3)
    assert power.si / (36 * 2000 + 36 * 1400) == pytest.approx(130 / 100.8, abs=0.001)
    sibling = catalog.systems["trn4-rubin-fusion-rack"].power
    assert sibling is not None and sibling.si / (36 * 2000 + 36 * 2300) == pytest.approx(130 / 100.8, abs=0.001)


def test_trainium4s_nvlink_figure_says_why_it_is_above_rubins(catalog: Catalog) -> None:
    """Trainium4 1,800 GB/s (its NVLink 6 Fusion port as reported) and Rubin 1,500 GB/s (NVIDIA's latest page) on
    one switch tray: the derivation says why, and Rubin's rate is Trainium4's alternative."""
    trn4, rubin = catalog.chips["trn4"].scaleup_bandwidth, catalog.chips["rubin"].scaleup_bandwidth
    assert (trn4.si, rubin.si) == (1800e9, 1500e9)
    assert "SERVERNEWS_TRN4" in trn4.source and "chips.rubin.scaleup_bandwidth" in trn4.derivation
    assert any(a.value == 1500 and a.unit == "GB/s" for a in trn4.alternatives)


def test_tpu_v5e_memory_is_named_as_its_source_names_it(catalog: Catalog) -> None:
    """memory_type HBM2 (Google's v5e page: 'HBM2 capacity and bandwidth') beside a capacity note saying HBM2e."""
    chip = catalog.chips["tpu-v5e"]
    assert chip.memory_type == "HBM2" and chip.hbm_capacity.note.startswith("HBM2, as Google's v5e page names it")
    assert "HBM2e" not in chip.hbm_capacity.note
