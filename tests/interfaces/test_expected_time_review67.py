"""The ranking's 'expected' column prints the finite time the row's cost, energy and carbon are priced on, in years
where it is long: 405B on 1M trn3 with checkpoint-restart, goodput 0.0919%, takes 167,920.6 s / 0.00091854 =
1.828e8 s = 5.79 years, and had read 'never' beside $268.13B and 13.8 TWh. 'never' is kept for an infinite time."""

from __future__ import annotations

import math
from typing import Any

import pytest

from chipwise.interfaces.cli.train_views import _expected_time

RELIABILITY: dict[str, Any] = {"recovery": "checkpoint"}


@pytest.mark.parametrize(
    ("goodput", "expected_s", "text"),
    [
        (0.00091854, 182_812_844.0, "5.79 y"),
        (1e-95, 4.5e99, "1.43e+92 y"),
        (0.0, math.inf, "never"),
        (0.9, 2.0 * 86400, "2.0 d"),
    ],
)
def test_a_finite_expected_time_is_printed(goodput: float, expected_s: float, text: str) -> None:
    row = {"goodput": goodput, "expected_time_to_train_s": expected_s, "reliability": RELIABILITY}
    assert _expected_time(row) == text


def test_a_row_without_a_length_has_no_expected_time() -> None:
    assert _expected_time({"goodput": 0.5, "reliability": RELIABILITY}) == "-"
