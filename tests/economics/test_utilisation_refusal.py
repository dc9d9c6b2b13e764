"""An owned fleet's utilisation outside [0.01, 1] is one line stating the rule and the fix, with no history of how
the rule came to be (it had ended 'and 1e-9 had priced one at $1.5 billion')."""

from __future__ import annotations

import pytest

from chipwise.economics.tco import check_utilisation_share
from chipwise.errors import ChipwiseError


def test_a_utilisation_of_zero_states_the_rule_and_the_fix() -> None:
    with pytest.raises(ChipwiseError) as exc:
        check_utilisation_share(0.0)
    assert str(exc.value) == (
        "utilisation 0 is outside 0.01 to 1 (the share of calendar hours the chips do paid work: under 1%, 88 hours "
        "a year, a used hour costs over 100x its full-use cost). Fix: give one in [0.01, 1], e.g. 0.5."
    )
