"""`chipwise claims --claim N`: the claims asked for alone (a check's id names its claim), counted so by the bar;
anything but a claim 1-7 or one of its checks is one line naming the fix."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli import common
from chipwise.planner.claims import chosen_claims
from cli_run import run_error, run_json


def test_numbers_and_check_ids_name_their_claims() -> None:
    assert chosen_claims(None) == () and chosen_claims([]) == ()
    assert chosen_claims("3") == (3,) and chosen_claims("1A") == (1,)
    assert chosen_claims(["5c,1a", " 3 ", "1"]) == (1, 3, 5)  # in order, once each


@pytest.mark.parametrize("bad", ["8", "0", "x", "3-4", "", "1,,2", "12b"])
def test_anything_else_is_one_line(bad: str) -> None:
    with pytest.raises(ChipwiseError) as err:
        chosen_claims(bad)
    assert str(err.value).endswith(
        "is not one of the 7 claims. Fix: give a claim's number, 1-7, or a check's id (e.g. 3 or 1a,5c); "
        "`chipwise claims` lists them all."
    )


def test_the_command_checks_the_claims_asked_for_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(common, "err_console", Console(file=terminal, force_terminal=True, width=100))
    data = run_json(capsys, ["claims", "--claim", "4a", "--claim", "2", "--json"])
    assert [c["claim"] for c in data["claims"]] == [2, 4]
    assert {k["id"][0] for c in data["claims"] for k in c["checks"]} == {"2", "4"}
    assert "2/2" in terminal.getvalue() and "7/7" not in terminal.getvalue()
    assert run_error(capsys, ["claims", "--claim", "9"]).startswith("error: claim '9' is not one of the 7 claims.")
    assert [c["claim"] for c in cw.claims(only=["2"])["claims"]] == [2]
