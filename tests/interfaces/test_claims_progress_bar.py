"""`chipwise claims` counts its work on stderr while it runs (it had shown nothing for its quarter of a minute): the
claims checked of seven and the runs made (planner.claims.check_claims's progress), on a terminal only and never on
stdout, which --json keeps for its JSON."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from chipwise.catalog import Catalog
from chipwise.interfaces.cli import common
from chipwise.interfaces.cli.app import run
from chipwise.planner.claim_runs import ClaimRuns

#: a small workload, so that the runs are quick
SMALL = ["--model", "llama-3.1-8b", "--chips", "64"]


def test_the_bar_is_on_a_terminal_stderr_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(common, "err_console", Console(file=terminal, force_terminal=True, width=100))
    assert run(["claims", *SMALL, "--json"]) == 0
    out = capsys.readouterr()
    assert len(json.loads(out.out)["claims"]) == 7 and out.err == ""
    assert "claims" in terminal.getvalue() and "7/7" in terminal.getvalue() and " runs" in terminal.getvalue()


def test_claim_runs_count_each_run_once(catalog: Catalog) -> None:
    """A training run is told once when made, not again when read back from the claims' cache."""
    told: list[int] = []
    runs = ClaimRuns(catalog, progress=told.append)
    for _ in range(2):
        runs.train("llama-3.1-8b", "trn3-ultraserver", 64, "bf16")
    assert told == [1] and runs.ran == 1
