"""plan train where no chip can hold the job: the plans it priced are counted, and no empty tables are drawn."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_json

ARGV = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "1", "--hardware", "h100-sxm,trn2", "--tokens", "1e9"]


def test_the_plans_that_fit_nowhere_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    """The footer had read 'searched 0 plans' beside reasons naming 'the leanest of 60 plans' and of 1,485 (2,160
    since the search offers every interleaving that divides a stage's layers)."""
    got = run_json(capsys, [*ARGV, "--json"], exit_code=1)
    assert got["search"]["evaluated"] == 60 + 1560 and got["search"]["feasible"] == 0
    assert [s["hardware"] for s in got["skipped"]] == ["h100-sxm", "trn2"]


def test_no_empty_ranking_tables_are_drawn(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(ARGV) == 1
    out = capsys.readouterr().out
    assert "Their plans" not in out and "time to" not in out
    assert "searched 1,620 plans (0 fit in memory)" in out and "not ranked: h100-sxm" in out
