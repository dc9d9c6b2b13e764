"""MI355X's FP8 and FP4 peaks are AMD's own ISSCC 2026 arithmetic, 8,192 FP8 FLOP/clk/CU x 256 CUs x 2.4 GHz = 5,033
TFLOP/s and twice it for FP4, as its BF16 estimate (2,516) is; they had been the rounded 5,000 and 10,000, an
FP8:BF16 ratio of 1.987, not the CDNA 2. The rounded figures stay as alternatives."""

from __future__ import annotations

import pytest

from chipwise.catalog import load_catalog


def test_mi355x_fp8_and_fp4_are_the_per_cu_rate_times_cus_and_clock() -> None:
    flops = load_catalog().chips["mi355x"].flops
    assert flops["fp8"].si == pytest.approx(8192 * 256 * 2.4e9, rel=1e-4)
    assert flops["fp4"].si == pytest.approx(2 * flops["fp8"].si)
    assert flops["fp8"].si / flops["bf16"].si == pytest.approx(2.0, rel=1e-3)
    assert (flops["fp8"].status, flops["fp4"].status) == ("spec", "spec")
    assert [a.value for a in flops["fp8"].alternatives] == [5000]
    assert [a.value for a in flops["fp4"].alternatives] == [10000, 20100]
