"""Output cut short by its reader (`| head`) ends quietly with 141 for --json and --help as for tables.
Click's main caught the real EPIPE of a --json print and exited 1 (the code of a search that ranked nothing), and
Rich's console did the same for --help; only a bare BrokenPipeError (errno None, as tables raise) had reached run()."""

from __future__ import annotations

import errno
import subprocess
import sys
from typing import Any

import pytest

from chipwise.interfaces.cli import app, common
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.common import PIPE_CLOSED_EXIT


class _ClosedPipe:
    """A stdout whose reader has gone: every write raises the EPIPE a real pipe raises."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.__stdout__, name)


@pytest.mark.parametrize("argv", [["model", "list", "--json"], ["catalog", "show", "h100-sxm", "--json"]])
def test_a_json_print_to_a_closed_pipe_exits_141(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    monkeypatch.setattr(app, "close_stdout", lambda: None)  # the real one points this process's stdout at /dev/null
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert run(argv) == PIPE_CLOSED_EXIT


def test_help_to_a_closed_pipe_exits_141(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich's console, which prints --help, exits 1 on EPIPE (Console.on_broken_pipe) while handling it."""
    monkeypatch.setattr(app, "close_stdout", lambda: None)

    def closed(self: object) -> None:
        try:
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")
        except BrokenPipeError:
            raise SystemExit(1) from None

    monkeypatch.setattr("rich.console.Console._check_buffer", closed)
    assert run(["plan", "serve", "--help"]) == PIPE_CLOSED_EXIT


def test_another_exit_is_not_taken_for_a_closed_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    def leaves(cat: object) -> None:
        raise SystemExit(3)

    monkeypatch.setattr(common, "whatif_banner", leaves)
    monkeypatch.setattr("chipwise.interfaces.cli.tco_cmd.whatif_banner", leaves)
    with pytest.raises(SystemExit) as exc:
        run(["tco", "h100-sxm"])
    assert exc.value.code == 3


@pytest.mark.parametrize("argv", [["model", "list", "--json"], ["--help"], ["plan", "serve", "--help"]])
def test_a_real_pipe_closed_by_its_reader(argv: list[str]) -> None:
    """`chipwise ARGV | true`: the reader is gone before the command writes (its end closed at once)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "chipwise", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert (proc.wait(timeout=120), err) == (PIPE_CLOSED_EXIT, "")
