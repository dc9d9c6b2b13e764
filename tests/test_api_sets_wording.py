"""What the API says of the `sets` a caller gave: an error quotes the assignment whole, as written
(sets=['trn2.tdp=800 TB'] had read "sets=['trn2.tdp=800'] TB"), and an answer marks a figure it gave 'given in
sets=' where the CLI says 'set on the command line' (a Python caller gave none on a command line)."""

from __future__ import annotations

from pathlib import Path

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "train-llama70b-trn2.yaml"
TRAIN = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 64}
GB200 = {"kind": "train", "model": "llama-3.1-8b", "hardware": "gb200", "chips": 72, "tokens": 1e10}
UNIT_SLIP = "tdp is a power, not a bytes ('TB'). Fix: give it in one of W, kW, MW."


@pytest.mark.parametrize("assignment", ["trn2.tdp=800 TB", "trn2.tdp = 800 TB", " trn2.tdp=800 TB"])
def test_an_error_quotes_the_assignment_as_written(assignment: str) -> None:
    """The overrides quote '--set trn2.tdp=800 TB' (stripped about its '='); a --set's text had ended at the space."""
    with pytest.raises(ChipwiseError) as raised:
        cw.predict(SCENARIO, sets=[assignment])
    assert str(raised.value) == f"sets=[{assignment!r}]: {UNIT_SLIP}"
    with pytest.raises(ChipwiseError) as raised:
        cw.catalog(sets=[assignment])
    assert str(raised.value) == f"sets=[{assignment!r}]: {UNIT_SLIP}"


def test_an_error_on_a_left_hand_side_quotes_the_assignment_it_is_of() -> None:
    """The overrides name an unknown figure by its id alone ('--set trn2.hbm_bandwith:'): it had read
    sets=['trn2.hbm_bandwith'], an entry the caller never wrote; the caller's assignment is quoted whole."""
    with pytest.raises(ChipwiseError) as raised:
        cw.predict(SCENARIO, sets=["trn2.hbm_bandwith=3TB/s"])
    assert str(raised.value).startswith("sets=['trn2.hbm_bandwith=3TB/s']: unknown figure of trn2 (chip)")


@pytest.mark.parametrize(
    ("assignment", "says"),
    [
        ("gb200.tdp=abc", "'abc' is not a number. Fix: give tdp in one of W, kW, MW."),
        ("gb200.tdp = abc", "'abc' is not a number. Fix: give tdp in one of W, kW, MW."),
        ("gb200.price.on-demand=abc", "'abc' is not a number. Fix: give a number, optionally with a unit"),
        ("gb200.price.spotx=3", "unknown pricing mode 'spotx'. Fix: use one of on-demand, capacity-block,"),
        ("gb200.price.on-demand=-3", "value -3 is negative. Fix: give a non-negative number."),
    ],
)
def test_an_error_on_a_value_quotes_the_assignment_as_written(assignment: str, says: str) -> None:
    """The overrides quote '--set gb200.tdp: ...' (the left-hand side): it had read "sets=['gb200.tdp']: 'abc' is
    not a number"; it now reads "sets=['gb200.tdp=abc']: ...", as the caller wrote it."""
    with pytest.raises(ChipwiseError) as raised:
        cw.predict(GB200, sets=[assignment])
    assert str(raised.value).startswith(f"sets=[{assignment!r}]: {says}")


def test_of_two_assignments_to_one_figure_the_refused_one_is_quoted() -> None:
    """Two assignments to gb200.tdp: the one whose value the line names ('abc'), not the first."""
    with pytest.raises(ChipwiseError) as raised:
        cw.predict(GB200, sets=["gb200.tdp=800W", "gb200.tdp=abc"])
    assert str(raised.value).startswith("sets=['gb200.tdp=abc']: 'abc' is not a number.")


def test_an_answer_says_the_figures_sets_gave() -> None:
    """H100's 700 W TDP set to 800 W and an on-demand price of $2.50: the what-if lines, the price's source, and the
    p5.48xlarge power the TDP moved (10.2 kW + 8 x 100 W) name sets=, not the command line."""
    r = cw.predict(TRAIN, sets=["h100-sxm.tdp=800W", "h100-sxm.price.on-demand=2.5"])
    assert r["what_if"] == [
        "h100-sxm.tdp = 800 W (catalog 700 W), given in sets=",
        "h100-sxm.price.on-demand = $2.50/h (over the catalog's prices), given in sets=",
    ]
    assert r["price_source"]["derivation"] == "given in sets=['h100-sxm.price.on-demand=2.5']"
    assert r["economics_figures"]["h100-sxm.tdp"]["derivation"] == "given in sets=['h100-sxm.tdp=800W']"
    power = r["economics_figures"]["p5.48xlarge.power"]
    moved = "h100-sxm TDP moved by sets=['h100-sxm.tdp=800W']: 10.2 kW + 8 x (800 - 700) W;"
    assert power["derivation"].startswith(moved)
    assert power["note"] == "what-if: follows sets=['h100-sxm.tdp=800W']; catalog value was 10.2 kW"
    assert "command line" not in str(r) and "--set h100-sxm" not in str(r)
