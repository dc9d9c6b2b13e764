"""Failure rates, checkpoints and goodput: formulas by hand, the Llama 3 interruption count, invariants."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.reliability import assess_run, chips_per_host, failure_rates, goodput, interruption_rate
from chipwise.reliability.checkpoint import checkpoint_bytes, daly_interval, young_interval
from chipwise.reliability.goodput import reliability_inputs, wall_time_factor
from chipwise.reliability.rates import expected_interruptions

HOUR = 3600.0
DAY = 86400.0


def test_young_and_daly_intervals_by_formula() -> None:
    delta, mtbf = 300.0, 3 * HOUR
    assert young_interval(delta, mtbf) == pytest.approx(math.sqrt(2 * 300 * 10_800))  # 2,545.6 s
    x = delta / (2 * mtbf)
    daly = math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta  # 2,349.5 s
    assert daly_interval(delta, mtbf) == pytest.approx(daly)
    assert daly_interval(2 * mtbf, mtbf) == pytest.approx(mtbf)  # delta >= 2M: checkpoint every M
    arr = daly_interval(np.array([10.0, 100.0, 1000.0]), mtbf)
    assert arr.shape == (3,) and np.all(np.diff(arr) > 0)


def test_goodput_limits() -> None:
    # no failures to speak of: only the checkpoint overhead tau / (tau + delta) is lost
    assert goodput(1000.0, 10.0, 600.0, 1e12) == pytest.approx(1000 / 1010, rel=1e-6)
    # Daly's expected-time formula by hand
    tau, delta, r, m = 1800.0, 60.0, 1200.0, 4 * HOUR
    assert wall_time_factor(tau, delta, r, m) == pytest.approx(
        m * math.exp(r / m) * math.expm1((tau + delta) / m) / tau
    )
    # planned maintenance divides goodput by 1 / (1 - p R)
    assert goodput(tau, delta, r, m, 1e-5, 1200.0) == pytest.approx(goodput(tau, delta, r, m) * (1 - 0.012))
    # restarts far longer than the MTBF: the run cannot progress
    assert goodput(100.0, 1.0, 1e6, 10.0) == 0.0


def test_llama3_16k_h100_54_days_interruptions(catalog: Catalog, hw: Hardware) -> None:
    """Dubey et al. 2024 (Table 5): 419 unexpected interruptions on 16,384 H100 in 54 days (the rates are derived
    from this log, so this pins the arithmetic; other runs are cross-checked below)."""
    rates = failure_rates(catalog)
    per_host = chips_per_host(catalog, hw.system("h100-sxm")).value
    assert per_host == 8
    n = expected_interruptions(rates, 16_384, per_host, 54 * DAY)
    assert n == pytest.approx(419, rel=0.01)  # 418.7
    planned = rates.planned.value * 54 * DAY
    assert n + planned == pytest.approx(466, rel=0.01)


@pytest.mark.parametrize(
    ("chips", "per_host", "hours", "published", "factor"),
    [
        (992, 8, 61 * 24, 105, 4.0),  # OPT-175B: 35 manual + ~70 automatic restarts in ~2 months (immature fleet)
        (12_288, 8, 21 * 24, 100, 1.5),  # MegaScale: "over 100" recoveries in a run of several weeks
    ],
)
def test_other_published_runs_within_a_factor(
    catalog: Catalog, chips: int, per_host: int, hours: float, published: float, factor: float
) -> None:
    n = expected_interruptions(failure_rates(catalog), chips, per_host, hours * HOUR)
    assert published / factor <= n <= published * factor


def test_bloom_gpu_failures_per_week(catalog: Catalog) -> None:
    """BLOOM: 1-2 GPU failures a week on 384 A100 (GPU faults only)."""
    per_week = failure_rates(catalog).chip.value * 384 * 7 * DAY
    assert 0.5 <= per_week <= 2.0  # 0.81


def test_more_chips_more_failures_less_goodput(catalog: Catalog, hw: Hardware) -> None:
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))
    chips = np.array([8, 1024, 16_384, 131_072, 1_000_000])
    lam = interruption_rate(inputs.rates, chips, 8)
    assert np.all(np.diff(lam) > 0)
    runs = [assess_run(inputs, int(c), 70e9, 5.0, "checkpoint") for c in chips]
    g = [r.goodput for r in runs]
    assert all(0 < x <= 1 for x in g)
    assert all(a >= b for a, b in itertools.pairwise(g))
    assert all(r.failures_per_day == pytest.approx(r.failures_per_s * DAY) for r in runs)


def test_checkpoint_plan_for_405b(catalog: Catalog, hw: Hardware) -> None:
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))
    r = assess_run(inputs, 16_384, 405.85e9, 7.0, "checkpoint")
    assert r.checkpoint_bytes == pytest.approx(checkpoint_bytes(405.85e9, 14.0))  # 5.7 TB
    assert r.checkpoint_bytes / 16_384 < 4e9  # inside Llama 3's 1 MB-4 GB per GPU
    assert r.checkpoint_write_s == pytest.approx(r.checkpoint_bytes / 2e12)  # 2 TB/s sustained storage
    assert r.checkpoint_interval_s == pytest.approx(daly_interval(r.checkpoint_write_s, r.mtbf_s))
    assert 0.8 < r.goodput < 0.95  # the paper reports > 90% effective training time with tuned recovery
    assert r.mtbf_s / HOUR == pytest.approx(54 * 24 / 419, rel=0.01)


def test_recovery_choice(catalog: Catalog, hw: Hardware) -> None:
    inputs = reliability_inputs(catalog, hw.system("trn3"))
    ck = assess_run(inputs, 1_000_000, 405e9, 10.0, "checkpoint")
    mem = assess_run(inputs, 1_000_000, 405e9, 10.0, "in-memory")
    best = assess_run(inputs, 1_000_000, 405e9, 10.0, "best")
    assert ck.goodput < 0.01 < mem.goodput  # a failure every ~3 min vs a 20 min restart
    assert best.recovery == "in-memory" and best.goodput == mem.goodput
    with pytest.raises(ChipwiseError, match="unknown recovery"):
        assess_run(inputs, 8, 1e9, 1.0, "pray")


def test_chips_per_host(catalog: Catalog, hw: Hardware) -> None:
    assert chips_per_host(catalog, hw.system("trn3-ultraserver")).value == 4
    assert chips_per_host(catalog, hw.system("trn2")).value == 16
    assert chips_per_host(catalog, hw.system("tpu-v6e")).value == 8
    assert chips_per_host(catalog, hw.system("tpu-v5p")).value == 4
