"""`chipwise validate --explain ID` on a row priced as LoRA says so as predict does: T353 (MLPerf Training v4.0's
Llama 2 70B LoRA on 8 H100) had read as full training in its title and rows, 'lora: true' and its rank-16 adapters
in --json alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_json


def test_a_lora_row_names_itself_and_its_adapters(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, shared_data: Path
) -> None:
    """80 layers x rank 16 x (q 8,192 + 8,192, k and v 8,192 + 1,024 each) = 44,564,480 adapter parameters."""
    argv = ["validate", "--data", str(shared_data / "groundtruth_training.csv"), "--explain", "T353"]
    (e,) = run_json(capsys, [*argv, "--json"])["explain"]
    assert (e["lora"], e["lora_rank"], e["lora_adapter_params"]) == (True, 16, 80 * 16 * (16_384 + 2 * 9_216))
    monkeypatch.setenv("COLUMNS", "400")
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "T353: llama-2-70b LoRA fine-tune on 8 h100-sxm (p5.48xlarge), fp8" in out
    assert "LoRA adapters │ rank 16, 44.6 M parameters trained; the base frozen" in out


def test_a_full_training_row_says_no_lora(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, shared_data: Path
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["validate", "--data", str(shared_data / "groundtruth_training.csv"), "--explain", "T001"]) == 0
    out = capsys.readouterr().out
    assert "T001: MPT-70B on 512 h100-sxm" in out and "LoRA" not in out
