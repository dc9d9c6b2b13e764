"""`chipwise validate` counts its rows on stderr while it works (a serving file had shown nothing for minutes): a bar
on a terminal only, never on stdout, which --json keeps for its JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from chipwise.__main__ import _register
from chipwise.catalog import Catalog
from chipwise.interfaces.cli import common
from chipwise.interfaces.cli.app import run
from chipwise.validation.run import validate_path

_register()

ROWS = 3


@pytest.fixture(scope="module")
def three_rows(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first three rows of the training ground truth."""
    lines = (shared_data / "groundtruth_training.csv").read_text().splitlines(keepends=True)
    path = tmp_path_factory.mktemp("validate") / "three.csv"
    path.write_text("".join(lines[: 1 + ROWS]))
    return path


def test_validate_path_tells_of_each_row(catalog: Catalog, three_rows: Path) -> None:
    told: list[tuple[int, int]] = []
    validate_path(catalog, three_rows, lambda done, total: told.append((done, total)))
    assert told == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_the_bar_is_on_a_terminal_stderr_only(
    three_rows: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a terminal's stderr the bar counts the rows ('3/3'); stdout holds the JSON alone; no bar where stderr is
    not a terminal (capsys's)."""
    terminal = io.StringIO()
    monkeypatch.setattr(common, "err_console", Console(file=terminal, force_terminal=True, width=100))
    assert run(["validate", "--data", str(three_rows), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["summary"]["rows_total"] == ROWS
    assert "validate" in terminal.getvalue() and "3/3" in terminal.getvalue()
    monkeypatch.undo()
    assert run(["validate", "--data", str(three_rows), "--json"]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    assert json.loads(out.out)["summary"]["rows_total"] == ROWS
