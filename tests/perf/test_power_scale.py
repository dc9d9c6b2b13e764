"""A power-capped part's matrix-unit rate (perf.device.power_scale), as the `Efficiency` docstring states it."""

from __future__ import annotations

import pytest

from chipwise.perf.device import STATIC_POWER_FRACTION, power_scale


def test_a_capped_part_scales_the_power_above_the_static_quarter_by_its_cube_root() -> None:
    """((tdp - 0.25 ref) / (0.75 ref))^(1/3): 500 W against 700 W is (325 / 525)^(1/3) = 0.8523, 350 W is
    (175 / 525)^(1/3) = 0.6934; the whole board power's cube root, (tdp / ref)^(1/3), would read 0.894 and 0.794. At
    or above the reference, or without one, the rate is whole."""
    assert STATIC_POWER_FRACTION == 0.25
    assert power_scale(500.0, 700.0) == pytest.approx(0.852265, rel=1e-6)
    assert power_scale(350.0, 700.0) == pytest.approx(0.693361, rel=1e-6)
    assert power_scale(700.0, 700.0) == power_scale(1000.0, 700.0) == power_scale(500.0, 0.0) == 1.0
