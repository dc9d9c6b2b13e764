"""A catalog with files or --sets copies the built-in data without copy.deepcopy and takes the built-in catalog's
validated entries for those it leaves as they were: the same catalog as validating it all again (`chipwise
sensitivity` loads one a figure it moves, and had spent some 90% of its time deep-copying and re-validating)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from chipwise.catalog import Catalog, load_catalog, loader
from chipwise.catalog.overrides import apply_sets

SECTIONS = ("chips", "systems", "fabrics", "models", "prices", "efficiency", "engines", "datacenter", "reliability")


def _validated_whole(files: list[Path], sets: list[str]) -> Catalog:
    """The catalog as load_catalog had built it: every entry validated again."""
    raw: dict[str, Any] = copy.deepcopy(loader._builtin_raw())
    origins: dict[str, str] = {}
    replaced: list[Any] = []
    for path in files:
        loader._merge_file(raw, loader._read_yaml(path), origins, str(path), replaced)
    apply_sets(raw, loader._builtin_raw(), sets, origins, {})
    return loader._validate(raw, origins, tuple(sets), replaced)


def test_the_copy_is_deepcopys(catalog: Catalog) -> None:
    """Equal, sharing no node with the built-in data, nor within itself what an anchor shares (vllm's tpu-v5e
    figures are its tpu-v4 ones in engines.yaml): a --set of one moves that one alone."""
    raw = loader._builtin_raw()
    copied = loader._copy_tree(raw)
    assert copied == raw and copied["chips"] is not raw["chips"]
    assert copied["chips"]["trn2"]["tdp"] is not raw["chips"]["trn2"]["tdp"]
    chips = copied["engines"]["vllm"]["chips"]
    assert chips["tpu-v5e"] == chips["tpu-v4"] and chips["tpu-v5e"] is not chips["tpu-v4"]
    moved = load_catalog(sets=["engines.vllm.chips.tpu-v4.max_tokens=x1.5"]).engines["vllm"]["chips"]
    assert (moved["tpu-v4"]["max_tokens"].value, moved["tpu-v5e"]["max_tokens"].value) == (3072, 2048)


def test_a_set_moves_its_entries_and_keeps_the_rest(catalog: Catalog) -> None:
    """--set h100-sxm.tdp=800W changes the chip and, following it, p5.48xlarge's power (8 x 100 W more); trn2 and
    the trees are the built-in objects."""
    sets = ["h100-sxm.tdp=800W"]
    cat = load_catalog(sets=sets)
    assert cat.chips["h100-sxm"].tdp.si == 800.0 and cat.chips["h100-sxm"] is not catalog.chips["h100-sxm"]
    now, was = cat.systems["p5.48xlarge"].power, catalog.systems["p5.48xlarge"].power
    assert now is not None and was is not None and now.si - was.si == 8 * 100.0
    assert cat.chips["trn2"] is catalog.chips["trn2"] and cat.efficiency["hopper"] is catalog.efficiency["hopper"]
    whole = _validated_whole([], sets)
    assert all(getattr(cat, s) == getattr(whole, s) for s in SECTIONS)


def test_a_files_entries_are_validated_and_the_rest_kept(catalog: Catalog, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "chips:\n  h100-sxm:\n    tdp: {value: 650, unit: W, status: estimate, derivation: capped}\n"
        "datacenter:\n  pue:\n    aws: {value: 1.3, unit: '1', status: estimate, derivation: measured here}\n"
        "efficiency:\n  hopper:\n    memory: {value: 0.8, unit: '1', status: estimate, derivation: a trace}\n"
    )
    sets = ["datacenter.pue.gcp=1.2", "trn2.hbm_bandwidth=x1.1"]
    cat = load_catalog(files=[path], sets=sets)
    assert (cat.datacenter["pue"]["aws"].value, cat.efficiency["hopper"]["memory"].value) == (1.3, 0.8)
    assert cat.datacenter["pue"] is not catalog.datacenter["pue"]
    assert cat.datacenter["grid_intensity"] is catalog.datacenter["grid_intensity"]
    whole = _validated_whole([path], sets)
    assert all(getattr(cat, s) == getattr(whole, s) for s in SECTIONS)
