"""`chipwise plan lifecycle --serve-months` that is no positive number is told a number of months."""

from __future__ import annotations

import pytest

from cli_run import run_error


def test_serve_months_not_positive_gets_a_months_example(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "lifecycle", "--model", "llama-3.1-70b", "--train-tokens", "1T", "--serve-rate", "10"]
    assert run_error(capsys, [*argv, "--serve-months", "-1"]) == (
        "error: --serve-months must be positive and finite, got -1. Fix: give a positive number, e.g. 12."
    )
    # the other counts are no months: no example of 12 for them
    assert run_error(capsys, [*argv[:-1], "0", "--serve-months", "6"]).endswith("Fix: give a positive number.")
