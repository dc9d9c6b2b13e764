"""The EAGLE-3 prior (0.86, measured on Llama 3.1 8B) goes to Llama 3.1 8B by what a model is, not what its folder is
called: a byte copy of the preset's config in snap/Meta-Llama-3.1-8B-Instruct/ had been told to state its
acceptance, and a 64-layer, 15 B config in a folder named llama-3.1-8b priced with the 8B's measured 0.86."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.speculation import drafter, eagle_prior_applies, parse_speculation
from chipwise.workload.presets import load_model


def _folder(root: Path, name: str, cfg: dict[str, object]) -> str:
    folder = root / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return str(folder)


def test_a_copy_of_the_presets_config_reads_its_prior(catalog: Catalog, tmp_path: Path) -> None:
    target = load_model(catalog, _folder(tmp_path, "Meta-Llama-3.1-8B-Instruct", catalog.model_config("llama-3.1-8b")))
    head = drafter(catalog, target, parse_speculation("eagle:3"))
    assert (target.name, head.layers, head.vocab) == ("Meta-Llama-3.1-8B-Instruct", 1, 32_000)
    assert eagle_prior_applies(load_model(catalog, "meta-llama/Llama-3.1-8B"))  # an alias of the preset


def test_another_model_in_a_folder_of_the_presets_name_states_its_acceptance(catalog: Catalog, tmp_path: Path) -> None:
    cfg = {**catalog.model_config("llama-3.1-8b"), "num_hidden_layers": 64}
    path = _folder(tmp_path, "llama-3.1-8b", cfg)
    target = load_model(catalog, path)
    assert target.name == "llama-3.1-8b" and round(target.params_total / 1e9, 2) == 15.01
    with pytest.raises(ChipwiseError) as err:
        drafter(catalog, target, parse_speculation("eagle:3"))
    assert str(err.value) == (
        f"no EAGLE head with a measured acceptance is known for llama-3.1-8b as read from {path}/config.json, not the "
        "built-in llama-3.1-8b preset's config (the prior, 0.86, is Llama 3.1 8B's EAGLE-3 head). Fix: state its "
        "acceptance, e.g. eagle:3@0.7."
    )
    assert drafter(catalog, target, parse_speculation("eagle:3@0.7")).layers == 1


def test_a_catalog_files_preset_of_another_config_is_another_model(catalog: Catalog, tmp_path: Path) -> None:
    (tmp_path / "l64.json").write_text(
        json.dumps({**catalog.model_config("llama-3.1-8b"), "num_hidden_layers": 64}), encoding="utf-8"
    )
    f = tmp_path / "c.yaml"
    f.write_text("models:\n  llama-3.1-8b:\n    name: Llama 3.1 8B\n    file: l64.json\n", encoding="utf-8")
    cat = load_catalog([f])
    assert not eagle_prior_applies(load_model(cat, "llama-3.1-8b"))
