"""The roofline that joins a GEMM's compute and memory terms, and a GEMM's time by formula on H100."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chipwise.hardware import Hardware
from chipwise.perf.compute import gemm_compute_time, roofline
from chipwise.perf.device import device_of
from chipwise.perf.serving import streamed_gemm_time

TERMS = st.floats(min_value=1e-9, max_value=10.0, allow_nan=False)


def test_on_the_ridge_a_gemm_takes_sqrt2_times_either_roof() -> None:
    assert float(roofline(3e-3, 3e-3)) == pytest.approx(math.sqrt(2) * 3e-3, rel=1e-12)


def test_far_from_the_ridge_the_larger_term_is_the_time() -> None:
    # a decode GEMM of one row: the weight read is ~100x the compute; the norm adds 1/2 (1/100)^2 of it
    assert float(roofline(1e-7, 1e-5)) == pytest.approx(1e-5 * (1 + 0.5e-4), rel=1e-9)
    assert float(roofline(1e-5, 1e-7)) == float(roofline(1e-7, 1e-5))
    assert float(roofline(0.0, 2e-3)) == 2e-3


def test_roofline_broadcasts() -> None:
    got = roofline(np.array([[1.0], [2.0]]), np.array([0.0, 1.0, 2.0]))
    assert got.shape == (2, 3)
    assert got[1, 2] == pytest.approx(2 * math.sqrt(2))


@given(TERMS, TERMS, TERMS)
def test_roofline_lies_between_max_and_sum_and_grows_with_each_term(tc: float, tm: float, more: float) -> None:
    t = float(roofline(tc, tm))
    assert max(tc, tm) <= t <= (tc + tm) * (1 + 1e-12)
    assert float(roofline(tc + more, tm)) >= t
    assert float(roofline(tc, tm + more)) >= t


def test_a_decode_gemm_on_the_ridge_pays_the_norm(hw: Hardware) -> None:
    """An fp8 weight-streamed GEMM (8,192 x 8,192) on H100: one row's compute at the large-shape rate against the
    weight read puts the ridge at about 300 rows (a decode batch); at every batch the time is the two terms'
    Euclidean norm plus one kernel overhead, about 1.4x the larger term near the ridge."""
    dev = device_of(hw.system("h100-sxm"))
    n = k = 8192
    bw = dev.hbm_bandwidth * dev.eff.memory
    per_row = float(gemm_compute_time(4096, n, k, dev, "fp8", waves=False)) / 4096

    def terms(m: float) -> tuple[float, float]:
        return m * per_row, (1.0 * k * n + 2.0 * m * (k + n)) / bw

    for m in (1.0, 128.0, 256.0, 512.0, 2048.0):
        expected = math.hypot(*terms(m)) + dev.eff.kernel_overhead_s
        assert float(streamed_gemm_time(m, n, k, dev, "fp8", 1.0)) == pytest.approx(expected, rel=1e-12)
    (c256, m256), (c512, m512) = terms(256.0), terms(512.0)
    assert c256 < m256 and c512 > m512
    # at 300 rows the terms are within 1% of each other
    ridge = float(streamed_gemm_time(300.0, n, k, dev, "fp8", 1.0)) - dev.eff.kernel_overhead_s
    assert ridge / max(terms(300.0)) == pytest.approx(math.sqrt(2), abs=0.01)


def test_a_precision_the_chip_lacks_runs_at_its_fallback_rate_and_efficiency(hw: Hardware) -> None:
    """fp4 on an H100 (no FP4 units) runs as fp8: the same peak and the same Hopper fp8 efficiency, not the default
    family's fp4 fraction (0.4) on the fp8 peak, which made fp4 training slower than fp8."""
    dev = device_of(hw.system("h100-sxm"))
    assert "fp4" not in dev.chip.flops
    fp4 = float(gemm_compute_time(4096, 8192, 8192, dev, "fp4"))
    assert fp4 == float(gemm_compute_time(4096, 8192, 8192, dev, "fp8"))
    b200 = device_of(hw.system("b200"))
    assert float(gemm_compute_time(4096, 8192, 8192, b200, "fp4")) < float(
        gemm_compute_time(4096, 8192, 8192, b200, "fp8")
    )
