"""The Python API's promise, one line for bad input: a None utilisation for tco, and a months example for
plan_lifecycle's serve_months."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError


def test_tco_refuses_a_none_utilisation_in_one_line() -> None:
    """It had raised TypeError: float() argument must be ... not 'NoneType', from deep in economics.tco."""
    with pytest.raises(ChipwiseError) as info:
        cw.tco("h100-sxm", utilisation=None)
    assert str(info.value) == (
        "utilisation None is not a number. Fix: give the share of hours used, e.g. 0.8 (1.0 the default)."
    )


@pytest.mark.parametrize("months", [-1, "x", 0, float("nan"), None])
def test_serve_months_is_told_a_number_of_months(months: object) -> None:
    """'Fix: give e.g. 15e12 or '15T'' had answered a month count with a token count."""
    with pytest.raises(ChipwiseError, match=r"^serve_months .*Fix: give (a positive number, )?e\.g\. 12\.$"):
        cw.plan_lifecycle("llama-3.1-70b", train_tokens=1e12, serve_rate=10, serve_months=months)
