"""`sweep run` refuses --workers beside --ray before it prints anything: a model's notes (a config.json read as a
Llama) had come out on stderr ahead of the one-line refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_run import run_error

#: a config.json with no model_type, which chipwise reads as a Llama and says so in a note
CONFIG = {
    "hidden_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "intermediate_size": 512,
    "vocab_size": 1000,
    "max_position_embeddings": 2048,
}


def test_workers_beside_ray_is_refused_before_any_note(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    sweep = tmp_path / "s.yaml"
    base = f"{{kind: train, model: {tmp_path / 'config.json'}, hardware: h100-sxm}}"
    sweep.write_text(f"name: s\nbase: {base}\ngrid: {{chips: [1, 8]}}\n")
    argv = ["sweep", "run", str(sweep), "--store", str(tmp_path / "s.duckdb"), "--workers", "1", "--ray"]
    err = run_error(capsys, argv)
    assert err == (
        "error: --workers does not apply to --ray: Ray places the tasks on its own cluster's CPUs. Fix: drop "
        "--workers (workers= from Python)."
    )
    assert not (tmp_path / "s.duckdb").exists()
