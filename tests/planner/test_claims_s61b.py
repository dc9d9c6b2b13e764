"""Claims 1d and 1e near their target (stop 61, review E #5): the ratio is shown to the digits that keep it on its
side of the target, so that 'would not hold' never stands beside a figure that reads as the target."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import load_catalog
from chipwise.planner.claims import _claim1, _Runs, _x_against


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [
        (1.39857, "1.399x"),  # rounds to 1.40x, which would read as holding
        (1.39996, "1.39996x"),  # 1.400 and 1.4000 round up too
        (1.40027, "1.40x"),  # holds: two decimals already read so
        (1.4, "1.40x"),
        (0.88, "0.88x"),
        (3.996, "3.996x"),  # the 4x target of 1e
        (1.3999999999, "1.399999x"),  # cut, not rounded, past six decimals
        (float("nan"), "-"),
    ],
)
def test_a_ratio_reads_on_its_side_of_the_targets(ratio: float, shown: str) -> None:
    assert _x_against(ratio, (1.4, 4.0)) == shown


def _checks(tdp: str) -> dict[str, Any]:
    return {c.id: c for c in _claim1(_Runs(load_catalog(sets=[f"trn3.tdp={tdp}"]))).checks}


def test_the_reviewers_519_w_reads_below_the_target() -> None:
    """At 519 W Trn3 / Trn2 tokens per joule is 1.3986x: printed '1.40x' beside 'would not hold'; at 518 W it is
    1.4003x and holds, as the threshold text (<= 518 W) says."""
    below = _checks("519W")
    assert below["1d"].numbers["tokens_per_joule_ratio"] == pytest.approx(1.3986, abs=1e-4)
    assert below["1d"].computed.endswith(": 1.399x")
    assert below["1d"].why.startswith("on chipwise's estimates it would not hold (1.399x)")
    assert below["1e"].computed == "same computation: 1.399x"  # one figure for both checks
    above = _checks("518W")
    assert above["1d"].numbers["tokens_per_joule_ratio"] == pytest.approx(1.4003, abs=1e-4)
    assert above["1d"].why.startswith("on chipwise's estimates it would hold (1.40x)")


def test_a_system_power_its_chips_take_whole_is_no_internal_error() -> None:
    """--set trn3-ultraserver.power=144kW: 144 chips at their 1,000 W TDP take it all, so a 0 W chip leaves 0 W and
    the ratio at 0 W had divided by it (ZeroDivisionError); any ratio is reachable then, and the threshold is
    priced."""
    catalog = load_catalog(sets=["trn3-ultraserver.power=144kW"])
    d = next(c for c in _claim1(_Runs(catalog)).checks if c.id == "1d")
    assert d.numbers["ratio_at_0_w"] == float("inf")
    assert 0 < d.numbers["trn3_tdp_for_target_w"] < 1000
