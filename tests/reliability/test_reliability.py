"""Failure rates, checkpoints and goodput: formulas by hand, the Llama 3 interruption count, invariants; the
checkpoint's bytes by training precision, planned maintenance scaled to the job's hosts, the storage bandwidths on one
(sustained) basis, and the in-memory recovery time labelled as the launch claim it is."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.catalog.terms import term
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.planner.training import plan_training
from chipwise.reliability import assess_run, chips_per_host, failure_rates, goodput, interruption_rate
from chipwise.reliability.checkpoint import checkpoint_bytes, daly_interval
from chipwise.reliability.goodput import reliability_inputs, wall_time_factor
from chipwise.reliability.rates import planned_rate

HOUR = 3600.0
DAY = 86400.0


def test_young_and_daly_intervals_by_formula() -> None:
    delta, mtbf = 300.0, 3 * HOUR
    young = math.sqrt(2 * 300 * 10_800)  # 2,545.6 s, Young's first order
    x = delta / (2 * mtbf)
    daly = young * (1 + math.sqrt(x) / 3 + x / 9) - delta  # 2,349.5 s
    assert daly_interval(delta, mtbf) == pytest.approx(daly)
    assert daly == pytest.approx(2349.5, abs=0.1) and daly < young
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
    n = interruption_rate(rates, 16_384, per_host) * 54 * DAY
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
    n = interruption_rate(failure_rates(catalog), chips, per_host) * hours * HOUR
    assert published / factor <= n <= published * factor


def test_bloom_gpu_failures_per_week(catalog: Catalog) -> None:
    """BLOOM: 1-2 GPU failures a week on 384 A100 (GPU faults only)."""
    per_week = failure_rates(catalog).chip.value * 384 * 7 * DAY
    assert 0.5 <= per_week <= 2.0
    assert per_week == pytest.approx(1.26e-5 * 384 * 168, rel=1e-9)  # 0.8129 a week, at the catalog's per-hour rate


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
    """Llama 3 405B (405.85e9 parameters) on 16,384 H100 (2,048 hosts), 7 s steps, by hand from the catalog's rates:
    M = 3,600 / (16,384 x (1.26e-5 + 1.65e-6 + 2.97e-6) + 2,048 x 2e-5) = 3,600 / 0.323092 = 11,142.3 s;
    delta = 405.85e9 x 14 B / 2 TB/s = 2.841 s; Daly's tau = 249.72 s; R = max(1,200 s restart, 2.841 s restore);
    planned stops p = 0.0363 / 3,600 /s of 1,200 s each. goodput = (1 - p x 1,200) tau / (M e^(R/M)
    (e^((tau + delta)/M) - 1)) = 0.86715 (0.87713 had the checkpoint write been left out of the wall time)."""
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))
    r = assess_run(inputs, 16_384, 405.85e9, 7.0, "checkpoint")
    assert r.checkpoint_bytes == pytest.approx(checkpoint_bytes(405.85e9, 14.0))  # 5.7 TB
    assert r.checkpoint_bytes / 16_384 < 4e9  # inside Llama 3's 1 MB-4 GB per GPU
    assert r.checkpoint_write_s == pytest.approx(r.checkpoint_bytes / 2e12)  # 2 TB/s sustained storage
    assert r.checkpoint_write_s == pytest.approx(2.84095, rel=1e-6)
    assert r.checkpoint_interval_s == pytest.approx(daly_interval(r.checkpoint_write_s, r.mtbf_s))
    assert r.checkpoint_interval_s == pytest.approx(249.7235, rel=1e-6)
    assert r.downtime_per_failure_s == 1200.0
    # the paper reports > 90% effective training time with tuned recovery; persistent checkpoints alone give 86.7%
    assert r.goodput == pytest.approx(0.86715, rel=1e-4)
    assert r.mtbf_s == pytest.approx(11_142.32, rel=1e-6)
    assert r.mtbf_s / HOUR == pytest.approx(54 * 24 / 419, rel=0.01)


def test_a_restore_slower_than_the_restart_sets_the_downtime(catalog: Catalog, hw: Hardware) -> None:
    """One 8-H100 host restores the 405.85e9 x 14 B = 5.682 TB checkpoint at its own 0.977 GB/s (2 TB/s sustained
    / 2,048 hosts, below the 2 TB/s aggregate): 5,815.66 s, longer than the 1,200 s restart overhead, so a failure
    costs detection (0 s) + max(1,200, 5,815.66) = 5,815.66 s, not 1,200."""
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))
    r = assess_run(inputs, 8, 405.85e9, 7.0, "checkpoint")
    assert r.hosts == 1.0
    assert r.checkpoint_restore_s == pytest.approx(405.85e9 * 14 / 0.977e9, rel=1e-12)
    assert r.downtime_per_failure_s == pytest.approx(5815.66, rel=1e-6)


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


def test_failure_rates_are_per_second_as_their_unit_says(catalog: Catalog) -> None:
    """The catalog's rates are per hour (unit '/h') and SI per second when loaded: the record's `si` is the value
    times the unit's factor (it had unit '1' and an `si` 3,600 times smaller, converted in the middle of the model).
    MTBF of 4,096 H100s on 512 hosts by hand: 3,600 / (4,096 x (1.26e-5 + 1.65e-6 + 2.97e-6) + 512 x 2e-5)
    = 3,600 / 0.080773 = 44,569 s."""
    rates = failure_rates(catalog)
    for t, per_hour in zip(rates.terms(), (1.26e-5, 1.65e-6, 2.97e-6, 2e-5, 0.0363, 1.7725e-5), strict=True):
        record = t.record()
        assert (record["value"], record["unit"]) == (per_hour, "/h")
        assert record["si"] == pytest.approx(per_hour / HOUR, rel=1e-12)
    per_chip_hour = 1.26e-5 + 1.65e-6 + 2.97e-6
    mtbf = HOUR / (4_096 * per_chip_hour + 512 * 2e-5)
    assert 1 / interruption_rate(rates, 4_096, 8) == pytest.approx(mtbf, rel=1e-12)
    assert mtbf == pytest.approx(44_569, abs=1)


def test_a_failure_rate_in_a_catalog_file_without_its_unit_is_one_clear_error(tmp_path: Path) -> None:
    """A catalog file written when the rates had unit '1' (per hour) would now be read per second, 3,600 times the
    rate meant: refused, naming the file and the unit; with '/h' the file's rate is taken per hour."""
    path = tmp_path / "rates.yaml"
    rate = '{value: 2.0e-5, unit: "%s", status: estimate, derivation: "a fleet log"}'
    path.write_text("reliability:\n  failures:\n    gpu_failure_rate_per_chip_hour: " + rate % "1" + "\n")
    with pytest.raises(ChipwiseError) as info:
        load_catalog([path])  # refused as the file is read, whichever command reads it
    assert str(info.value) == (
        f"{path}: reliability.failures.gpu_failure_rate_per_chip_hour is in '1' (ratio), where the figure is a rate. "
        "Fix: give it in one of /s, /h."
    )
    path.write_text("reliability:\n  failures:\n    gpu_failure_rate_per_chip_hour: " + rate % "/h" + "\n")
    assert failure_rates(load_catalog([path])).chip.value == pytest.approx(2e-5 / HOUR, rel=1e-12)


@pytest.mark.parametrize(("precision", "per_param"), [("fp32", 12.0), ("tf32", 12.0), ("bf16", 14.0), ("fp8", 14.0)])
def test_checkpoint_bytes_follow_the_precision(
    catalog: Catalog, hw: Hardware, precision: str, per_param: float
) -> None:
    """fp32 training holds no bf16 copy: fp32 weight (its own master) 4 + Adam's m and v 8 = 12 B a parameter;
    mixed precision saves the bf16 weights beside the fp32 master, m and v, 14 B. On 64 H100s (8 hosts at 0.977 GB/s)
    an 8.03e9-parameter model's checkpoint is 96.4 GB in fp32, written in 12.33 s (14 B: 112.4 GB, 14.39 s)."""
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"), precision=precision)
    assert inputs.bytes_per_param.value == per_param
    run = assess_run(inputs, 64, 8.03e9, 2.0, "checkpoint")
    assert run.checkpoint_bytes == pytest.approx(8.03e9 * per_param)
    assert run.checkpoint_write_s == pytest.approx(8.03e9 * per_param / (8 * 0.977e9), rel=1e-12)


def test_plan_train_checkpoints_fp32_state_at_twelve_bytes(catalog: Catalog) -> None:
    """End to end: an fp32 plan's checkpoint is its parameters x 12 B (it had been x 14 at every precision)."""
    (r,) = plan_training(catalog, "llama-3.2-1b", 8, ["h100-sxm"], tokens=1e9, precision="fp32")["results"]
    params = r["reliability"]["checkpoint_bytes"] / 12.0
    assert params == pytest.approx(1.236e9, rel=1e-3)
    assert r["economics_figures"]["reliability.checkpoint.bytes_per_parameter"]["value"] == 12.0


@pytest.mark.parametrize(("hosts", "per_hour"), [(1, 1.7725e-5), (8, 1.418e-4), (2048, 0.0363), (12_288, 0.0363)])
def test_planned_stops_are_the_hosts_share_up_to_the_job_rate(catalog: Catalog, hosts: int, per_hour: float) -> None:
    """Meta's 47 planned stops over 2,048 hosts in 1,296 h: 0.0363 / 2,048 = 1.7725e-5 a host-hour; a job of 2,048
    hosts or more meets the whole 0.0363 a job-hour, no more."""
    assert float(planned_rate(failure_rates(catalog), hosts)) * HOUR == pytest.approx(per_hour, rel=1e-12)


def test_one_host_is_not_charged_a_clusters_planned_stops(catalog: Catalog, hw: Hardware) -> None:
    """Llama 3.1 8B on one p5 host: 0.0363/h x 24 = 0.87 planned 20-minute stops a day had been 99.6% of its
    downtime; its host's share is 1.7725e-5 x 24 = 4.25e-4 a day, and goodput's planned factor 1 - p R_p, R_p the
    8.03e9 x 14 B = 112.4 GB checkpoint written first at 0.977 GB/s (115.07 s) and the restart from it, max(1,200 s,
    115.07 s), is 1 - 1.7725e-5 / 3,600 x 1,315.07 = 0.9999935 where it had been 1 - 0.0363 / 3,600 x 1,200 =
    0.9879."""
    inputs = reliability_inputs(catalog, hw.system("p5.48xlarge"))
    run = assess_run(inputs, 8, 8.03e9, 7.0, "checkpoint")
    assert run.planned_per_s * 86400 == pytest.approx(4.254e-4, rel=1e-12)
    assert run.planned_restart_s == pytest.approx(8.03e9 * 14 / 0.977e9 + 1200.0, rel=1e-12)  # 1,315.07 s
    daly = (run.checkpoint_interval_s, run.checkpoint_write_s, run.downtime_per_failure_s, run.mtbf_s)
    r_p = run.planned_restart_s
    assert run.goodput == pytest.approx(goodput(*daly) * (1.0 - 1.7725e-5 / HOUR * r_p), rel=1e-12)
    assert run.goodput - goodput(*daly, 0.0363 / HOUR, 1200.0) == pytest.approx(0.0121, abs=2e-4)


def test_storage_share_and_cap_are_on_one_basis(catalog: Catalog, hw: Hardware) -> None:
    """Both sustained: 2,048 hosts' shares add up to the 2 TB/s cap (the per-host 3.4 GB/s had been the 7 TB/s
    peak's share). A 405B plan on 896 of 1,000 H100s runs on 112 hosts: 5.682 TB at 112 x 0.977 GB/s = 51.9 s
    (14.9 s at the peak's share)."""
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))
    assert inputs.storage_per_host.value * 2048 == pytest.approx(inputs.storage_aggregate.value, rel=1e-3)
    run = assess_run(inputs, 896, 405.85e9, 10.0, "checkpoint")
    assert run.hosts == 112
    assert run.checkpoint_write_s == pytest.approx(405.85e9 * 14 / (112 * 0.977e9), rel=1e-12)  # 51.93 s
    assert math.isclose(run.checkpoint_write_s, 51.93, abs_tol=0.01)


def test_the_in_memory_recovery_time_is_the_launch_claim_it_is(catalog: Catalog) -> None:
    """AWS's 'under 2 minutes' comes from the same launch post as its 'up to 95%' goodput, labelled announced."""
    recovery = term(catalog, "reliability", "checkpoint", "in_memory_recovery_s")
    claim = term(catalog, "reliability", "goodput", "hyperpod_checkpointless_goodput")
    assert recovery.status == claim.status == "announced"
