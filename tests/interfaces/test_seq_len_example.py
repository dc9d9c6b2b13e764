"""--seq-len's example says what 8k is: 8,000 tokens (SI, as the guide has it); "e.g. 8192 or 8k" had read as if 8k
were 8,192."""

from __future__ import annotations

import pytest

from cli_run import run, run_error


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm", "--seq-len", "0"],
        ["model", "show", "llama-3.1-8b", "--seq-len", "eight"],
    ],
)
def test_the_fix_says_8k_is_8000(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert run_error(capsys, argv).endswith("is not a positive finite whole number. Fix: give e.g. 8192 or 8k (8,000).")


def test_model_shows_help_says_8k_is_8000(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["model", "show", "--help"]) == 0
    assert "within the model's context, e.g. 8192 or 8k (8,000) (default: 4096" in capsys.readouterr().out
