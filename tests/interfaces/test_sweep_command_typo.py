"""`chipwise sweep WORD` runs WORD only where it names a sweep file (a .yaml, .yml or .json suffix, or a
file that exists); a mistyped command ('shwo') had been run as a sweep file, "sweep file 'shwo' does not exist"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run_error


@pytest.mark.parametrize(
    ("argv", "meant"),
    [(["shwo"], "show"), (["shwo", "fleet.duckdb"], "show"), (["exprot", "x.duckdb", "--csv", "y.csv"], "export")],
)
def test_a_mistyped_command_is_named(capsys: pytest.CaptureFixture[str], argv: list[str], meant: str) -> None:
    assert run_error(capsys, ["sweep", *argv]) == (
        f"error: No such command '{argv[0]}'. Did you mean '{meant}'? Fix: run 'chipwise sweep --help'."
    )


def test_a_sweep_file_is_still_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name close to a command with a sweep suffix, or an existing file of any name, is the sweep file."""
    assert (
        run_error(capsys, ["sweep", "shw.yaml"]) == "error: sweep file 'shw.yaml' does not exist. Fix: check the path."
    )
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shwo").write_text("[1, 2]\n", encoding="utf-8")
    assert "does not exist" not in run_error(capsys, ["sweep", "shwo"])  # read as a sweep file (and refused)
    assert run_error(capsys, ["sweep", "grid"]) == "error: sweep file 'grid' does not exist. Fix: check the path."
