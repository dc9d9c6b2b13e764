"""Human-readable latencies at the edge: three significant figures, one unit for a percentile triple."""

from __future__ import annotations

import math

import pytest

from chipwise.interfaces import format as fmt


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.00085, "850 us"), (0.0267, "26.7 ms"), (0.9503, "950 ms"), (1.3655, "1.37 s"), (196.2, "196 s")],
)
def test_latency_three_significant_figures(seconds: float, text: str) -> None:
    assert fmt.latency(seconds) == text


def test_latency_of_nothing_is_a_dash() -> None:
    assert fmt.latency(None) == fmt.latency(math.inf) == fmt.latency(math.nan) == "-"


def test_percentiles_share_the_unit_of_the_largest() -> None:
    assert fmt.latencies([0.118, 0.3176, 0.95]) == "118 / 318 / 950 ms"
    assert fmt.latencies([0.118, 0.3176, 1.3655]) == "0.118 / 0.318 / 1.37 s"
    assert fmt.latencies([0.0336, None, 0.0377]) == "33.6 / - / 37.7 ms"
    assert fmt.latencies([None, math.nan]) == "-"


def test_percentiles_in_a_given_unit_come_bare() -> None:
    unit = fmt.latency_unit([0.0377, 0.2])
    assert unit == (1e-3, "ms")
    assert fmt.latencies([0.0336, 0.037, 0.0377], unit, sep="/") == "33.6/37.0/37.7"
    assert fmt.latency_unit([]) == (1e-6, "us")
