"""Option and fix texts: the unknown-name fix puts every alternative in the plural ('the chip or systems' had been built
from f"{kind}s"), tco's cost options say what they default to, and plan train --tokens says what the table gives
without it (one hour: its time to train reads '-')."""

from __future__ import annotations

import re

import pytest

from chipwise.errors import UnknownNameError
from chipwise.interfaces.cli.app import run
from cli_run import run_error

TCO_COSTS = ("--chip-price", "--server", "--scaleout-network", "--storage", "--depreciation-years", "--operations")


@pytest.mark.parametrize(
    ("kind", "plural"),
    [("chip or system", "chips or systems"), ("chip, system or fabric", "chips, systems or fabrics"),
     ("fabric", "fabrics"), ("catalog id", "catalog ids"), ("efficiency family", "efficiency families")],
)  # fmt: skip
def test_the_fix_names_every_kind_in_the_plural(kind: str, plural: str) -> None:
    assert str(UnknownNameError(kind, "zz", ["a"])).endswith(
        f"Fix: run 'chipwise catalog list' to see the {plural} the catalog holds."
    )


def test_catalog_show_of_an_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_error(capsys, ["catalog", "show", "h100-sx"]).endswith(
        "the chips, systems or fabrics the catalog holds."
    )


def _help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, str]:
    """Each option's help text, its lines joined, by option name."""
    assert run([*argv, "--help"]) == 0
    options: dict[str, str] = {}
    name = ""
    for line in capsys.readouterr().out.splitlines():
        m = re.match(r"│ (?:[ *]  )?(--[\w-]+)", line)
        name = m[1] if m else name
        if name and line.startswith("│"):
            options[name] = options.get(name, "") + " " + " ".join(line.strip("│ ").split()[1 if m else 0 :])
    return {k: " ".join(v.split()) for k, v in options.items()}


def test_tco_cost_options_say_their_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    options = _help(capsys, ["tco"])
    assert all(options[o].endswith("(default: the catalog's).") for o in (*TCO_COSTS, "--colocation")), options
    assert options["--electricity"].endswith("(default: the region's).")
    assert options["--depreciation-years"].startswith("FLOAT Useful life of the capex, years")


def test_tokens_help_says_what_the_table_gives_without_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert (
        "without it, cost, energy and CO2e are of one hour of training and the time to train reads '-'"
        in (_help(capsys, ["plan", "train"])["--tokens"])
    )
