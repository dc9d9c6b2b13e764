"""One $/Mtok formula (serving_economics.per_mtok) for plan serve's rows and a deployment's economics."""

from __future__ import annotations

import math

import pytest

from chipwise.planner.serving_economics import per_mtok


def test_per_mtok_is_per_hour_over_the_tokens_an_hour_serves() -> None:
    """$36 an hour at 10,000 tokens/s: 36 million tokens an hour, $1 per million."""
    assert per_mtok(36.0, 10_000.0) == pytest.approx(1.0, rel=1e-12)
    assert per_mtok(2.5e9, 1_000.0) == pytest.approx(2.5e9 / 3.6, rel=1e-12)  # J/h to J/Mtok alike
    assert math.isnan(per_mtok(36.0, 0.0)) and math.isnan(per_mtok(36.0, -1.0))
