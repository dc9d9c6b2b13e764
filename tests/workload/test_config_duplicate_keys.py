"""A model config.json that gives a key twice is refused, as every other input file is (json keeps the last)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import run_error


def test_a_repeated_key_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """'num_hidden_layers': 32 then 64 had read as a 15.0 B model, silently."""
    from chipwise.catalog.loader import load_catalog

    cfg = load_catalog().model_config("llama-3.1-8b")
    body = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in cfg.items())
    path = tmp_path / "cfg_dup.json"
    path.write_text("{" + body + ', "num_hidden_layers": 64}')
    assert run_error(capsys, ["model", "show", str(path)]) == (
        f"error: '{path}' gives the key 'num_hidden_layers' twice. Fix: give each key once."
    )


def test_a_catalog_files_preset_config_giving_a_key_twice_is_refused(tmp_path: Path) -> None:
    """A catalog file's preset read its config.json without the check a path gets: num_hidden_layers 32 then 64 had
    read as a 64-layer model."""
    from chipwise.catalog import load_catalog
    from chipwise.errors import ChipwiseError
    from chipwise.workload import load_model

    (tmp_path / "dup.json").write_text(
        '{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 32, '
        '"num_hidden_layers": 64, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000}'
    )
    (tmp_path / "c.yaml").write_text("models:\n  my-model: {name: Mine, file: dup.json, source: mine}\n")
    with pytest.raises(ChipwiseError, match=r"gives the key 'num_hidden_layers' twice\. Fix: give each key once\."):
        load_model(load_catalog(files=[tmp_path / "c.yaml"]), "my-model")
