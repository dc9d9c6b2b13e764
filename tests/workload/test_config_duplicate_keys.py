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
