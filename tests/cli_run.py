"""Running the command line in-process from tests: the JSON it prints, or the one-line error it exits with."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chipwise.__main__ import _register
from chipwise.interfaces.cli.app import run

_register()

# run is the command line's entry point, imported from here so that its commands are registered first
__all__ = ["run", "run_error", "run_json", "scenario_error"]


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str], exit_code: int = 0) -> dict[str, Any]:
    """Run `chipwise ARGV`, expect `exit_code` (0; a search that ranks no option exits 1) and return the JSON it
    printed."""
    code = run(argv)
    captured = capsys.readouterr()
    assert code == exit_code, captured.err
    data: dict[str, Any] = json.loads(captured.out)
    return data


def run_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run `chipwise ARGV`, expect exit code 2 and one line on stderr with no traceback; return that line."""
    code = run(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def scenario_error(text: str) -> str:
    """The one line load_scenario refuses a scenario's YAML `text` with (a ChipwiseError naming its fix)."""
    from chipwise.errors import ChipwiseError
    from chipwise.workload.scenario import load_scenario

    with pytest.raises(ChipwiseError) as exc:
        load_scenario(text)
    message = str(exc.value)
    assert "\n" not in message and "Fix:" in message, message
    return message
