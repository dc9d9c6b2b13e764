"""`chipwise predict` shows where the precisions it chose came from (serving_predict.precision_source) in a row of
its own, and leaves the row out where the scenario gives both."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run

D1 = """kind: serve
model: deepseek-v3
hardware: b200
chips: 8
input_tokens: 1024
output_tokens: 128
concurrency: 8
requests: 64
"""


def test_the_row_names_the_checkpoint_and_the_engines_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d1.yaml"
    path.write_text(D1, encoding="utf-8")
    assert run(["predict", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # the cell's wrapped lines, joined
    assert "precision from" in out and "deepseek-v3's checkpoint as released (fp8; precision auto)" in out
    path.write_text(D1 + "precision: fp8\nkv_precision: fp8\n", encoding="utf-8")
    assert run(["predict", str(path)]) == 0
    assert "precision from" not in capsys.readouterr().out
