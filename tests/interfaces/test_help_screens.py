"""Every command's --help at 80 columns shows each option's name whole (Typer 0.29's type
column, '<int range> [1<=x<=1000000]', had cut '--no-disaggregated' to '--no-disaggrega…'), a flag with no value
('--json <bool>'), short upper-case names for values and arguments, and -h as --help; an option given a value it
does not take points to its own command's help."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main

from chipwise.interfaces.cli.app import app, run
from cli_run import run_error  # registers validate too


def _commands(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, [*path, name])


COMMANDS = list(_commands(typer.main.get_command(app), []))


def _help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert run(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "chipwise" for p, _ in COMMANDS])
def test_every_option_name_is_whole_at_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: list[str], command: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = _help(capsys, [*path, "--help"])
    names = [o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
    assert names or not command.params
    for name in [*names, "--help"]:
        assert re.search(rf"{re.escape(name)}(?![\w-])", out), f"{name} cut in 'chipwise {' '.join(path)} --help'"
    assert "<bool>" not in out and "list[" not in out and "…" not in "".join(re.findall(r"--[\w-]+…?", out))


def test_values_and_arguments_have_short_upper_case_names(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    rows = dict(re.findall(r"^│ [ *]  (--[\w-]+) +(\S+)", _help(capsys, ["plan", "serve", "--help"]), re.MULTILINE))
    assert rows["--catalog"] == "FILE" and rows["--set"] == "ID.FIELD=VALUE" and rows["--slo"] == "TARGETS"
    # --rate and --requests are text read as counts (2k), as --concurrency is
    assert rows["--rate"] == "TEXT" and rows["--requests"] == "TEXT" and rows["--model"] == "TEXT"
    assert rows["--json"] == "Print" and rows["--pareto"] == "Also"  # a flag: its description, no value
    usage = {" ".join(p): _help(capsys, [*p, "--help"]).split("\n\n")[0] for p in (["predict"], ["sweep", "show"])}
    assert "chipwise predict [OPTIONS] {SCENARIO}" in usage["predict"]
    assert "chipwise sweep show [OPTIONS] {STORE}" in usage["sweep show"]


def test_a_flag_shows_no_value(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    line = next(x for x in _help(capsys, ["model", "list", "--help"]).splitlines() if "--json" in x)
    assert line.split() == ["│", "--json", "Print", "one", "JSON", "object", "instead", "of", "tables.", "│"]


@pytest.mark.parametrize("argv", [["-h"], ["plan", "train", "-h"], ["sweep", "-h"], ["validate", "-h"]])
def test_h_is_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert "Usage: chipwise" in _help(capsys, argv)


def test_a_flag_given_a_value_points_to_its_commands_help(capsys: pytest.CaptureFixture[str]) -> None:
    """Click raises this error with no context: it had said "Fix: run 'chipwise --help'"."""
    assert run_error(capsys, ["model", "list", "--json=true"]) == (
        "error: Option '--json' does not take a value. Fix: run 'chipwise model list --help'."
    )
    err = run_error(capsys, ["plan", "serve", "--model", "llama-3.1-8b", "--json=1"])
    assert err.endswith("Fix: run 'chipwise plan serve --help'.")


def test_disaggregated_and_its_negation_contradict(capsys: pytest.CaptureFixture[str]) -> None:
    """--disaggregated and --no-disaggregated are two flags now (one '--disaggregated/--no-disaggregated' took a
    second name column): both given is one line, as the last one had silently won."""
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--hardware", "h100-sxm"]
    err = run_error(capsys, [*argv, "--disaggregated", "--no-disaggregated"])
    assert err == "error: --disaggregated and --no-disaggregated contradict each other. Fix: give one of them."
