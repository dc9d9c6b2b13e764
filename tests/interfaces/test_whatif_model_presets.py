"""A --catalog file's model presets are said in the what-if line: one that gave llama-3.1-8b a 64-layer config had
read "0 figures differ from the built-in catalog's" above 15.0 B parameters, in the tables and in --json alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.interfaces.cli.common import whatif_lines
from cli_run import run, run_json


@pytest.fixture
def l64(catalog: Catalog, tmp_path: Path) -> Path:
    path = tmp_path / "l64.json"
    path.write_text(json.dumps({**catalog.model_config("llama-3.1-8b"), "num_hidden_layers": 64}), encoding="utf-8")
    return path


def _file(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "c.yaml"
    f.write_text(text, encoding="utf-8")
    return f


def test_a_replaced_preset_is_named(tmp_path: Path, l64: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _file(tmp_path, "models:\n  llama-3.1-8b:\n    name: Llama 3.1 8B\n    file: l64.json\n")
    line = f"--catalog {f}: replaces model preset llama-3.1-8b"
    assert whatif_lines(load_catalog([f])) == [line]
    data = run_json(capsys, ["model", "show", "llama-3.1-8b", "--catalog", str(f), "--json"])
    assert data["what_if"] == [line] and round(data["params_total"] / 1e9, 1) == 15.0
    assert run(["model", "show", "llama-3.1-8b", "--catalog", str(f)]) == 0
    # the banner wraps at the console's width (a long temporary path folds): compared without the breaks
    assert "".join(capsys.readouterr().out.split()).startswith("".join(f"WHAT-IF: {line}".split()))


def test_added_presets_beside_a_figure(tmp_path: Path, l64: Path) -> None:
    f = _file(
        tmp_path,
        "chips:\n  h100-sxm:\n    hbm_bandwidth: {value: 4.0, unit: TB/s, status: estimate, derivation: a what-if}\n"
        "models:\n  my-8b:\n    name: Mine\n    file: l64.json\n  my-other:\n    name: Other\n    file: l64.json\n",
    )
    assert whatif_lines(load_catalog([f])) == [
        f"--catalog {f}: 1 figure differs from the built-in catalog's; adds model presets my-8b, my-other"
    ]


def test_a_preset_restated_as_the_catalog_has_it_changes_nothing(tmp_path: Path) -> None:
    f = _file(tmp_path, "models:\n  llama-3.1-8b:\n    name: Llama 3.1 8B\n")
    assert whatif_lines(load_catalog([f])) == [f"--catalog {f}: 0 figures differ from the built-in catalog's"]
