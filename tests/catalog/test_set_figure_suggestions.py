"""A misspelt `--set` figure of a chip or system is offered what it was likely meant to be, the rental price
(ID.price[.MODE], a --set target the figure table has no row for) among them: 'h100-sxm.prce' had been offered
'process', 'p5.48xlarge.price_usd_per_hour', 'h100-sxm.hbm' and 'h100-sxm.hbm_gib' nothing, and the fix had named
no price."""

from __future__ import annotations

import pytest

from catalog_errors import catalog_error
from cli_run import run_error

#: the fix of an unknown figure of a chip or system: its figures, or its price
PRICED_FIX = "Fix: name a figure it has, or price[.MODE] for its hourly price in USD"


@pytest.mark.parametrize(
    ("assignment", "offered"),
    [
        ("h100-sxm.prce=2", "'h100-sxm.price', 'h100-sxm.process'"),
        (
            "p5.48xlarge.price_usd_per_hour=16",
            "'p5.48xlarge.price', 'p5.48xlarge.price.on-demand', 'p5.48xlarge.price.capacity-block'",
        ),
        ("h100-sxm.hbm=90GB", "'h100-sxm.hbm_capacity', 'h100-sxm.hbm_bandwidth'"),
        ("h100-sxm.hbm_gib=1", "'h100-sxm.hbm_capacity', 'h100-sxm.hbm_bandwidth'"),
    ],
)
def test_a_misspelt_figure_is_offered_the_price_or_the_figures_it_begins(assignment: str, offered: str) -> None:
    """prce is closest to price; price_usd_per_hour shares price's leading word; hbm is inside hbm_capacity and
    hbm_gib shares its leading word, which a spelling's similarity (difflib at 0.6) had missed."""
    lhs = assignment.split("=", 1)[0]
    entry, field = lhs.split(".", 1) if lhs.startswith("h100") else ("p5.48xlarge", lhs.removeprefix("p5.48xlarge."))
    kind = "chip" if entry == "h100-sxm" else "system"
    assert catalog_error([assignment]) == (
        f"--set {lhs}: unknown figure of {entry} ({kind}): '{field}'. Did you mean {offered}? {PRICED_FIX} "
        f"('chipwise catalog show {entry}' lists its figures and prices)."
    )


def test_a_fabric_is_offered_no_price() -> None:
    """A fabric takes no price: neither offered nor named in its fix."""
    assert catalog_error(["efa-v3.price=2"]) == (
        "--set efa-v3.price: unknown figure of efa-v3 (fabric): 'price'. Fix: name a figure it has ('chipwise catalog "
        "show efa-v3' lists its figures)."
    )


def test_the_plan_command_says_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """As the sweep found it: `plan train ... --set h100-sxm.prce=2` exits 2 with the price offered."""
    line = run_error(
        capsys,
        [
            "plan",
            "train",
            "--model",
            "llama-3.1-8b",
            "--chips",
            "8",
            "--hardware",
            "h100-sxm",
            "--set",
            "h100-sxm.prce=2",
        ],
    )
    assert "Did you mean 'h100-sxm.price', 'h100-sxm.process'?" in line and PRICED_FIX in line
