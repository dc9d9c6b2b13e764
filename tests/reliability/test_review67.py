"""Review 67 of the reliability layer: the checkpoint's bytes follow the training precision, planned maintenance
scales with the job's hosts, the storage bandwidths are on one (sustained) basis, and the in-memory recovery time
is labelled as the launch claim it is."""

from __future__ import annotations

import math

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.terms import term
from chipwise.hardware import Hardware
from chipwise.planner.training import plan_training
from chipwise.reliability import assess_run, goodput
from chipwise.reliability.goodput import reliability_inputs
from chipwise.reliability.rates import failure_rates, planned_rate

HOUR = 3600.0


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
    """The review's 8B on one p5 host: 0.0363/h x 24 = 0.87 planned 20-minute stops a day had been 99.6% of its
    downtime; its host's share is 1.7725e-5 x 24 = 4.25e-4 a day, and goodput's planned factor 1 - p R_p is
    1 - 1.7725e-5 / 3,600 x 1,200 = 0.9999941 where it had been 1 - 0.0363 / 3,600 x 1,200 = 0.9879."""
    inputs = reliability_inputs(catalog, hw.system("p5.48xlarge"))
    run = assess_run(inputs, 8, 8.03e9, 7.0, "checkpoint")
    assert run.planned_per_s * 86400 == pytest.approx(4.254e-4, rel=1e-12)
    daly = (run.checkpoint_interval_s, run.checkpoint_write_s, run.downtime_per_failure_s, run.mtbf_s)
    assert run.goodput == pytest.approx(goodput(*daly) * (1.0 - 1.7725e-5 / HOUR * 1200.0), rel=1e-12)
    assert run.goodput - goodput(*daly, 0.0363 / HOUR, 1200.0) == pytest.approx(0.0121, abs=2e-4)


def test_storage_share_and_cap_are_on_one_basis(catalog: Catalog, hw: Hardware) -> None:
    """Both sustained: 2,048 hosts' shares add up to the 2 TB/s cap (the per-host 3.4 GB/s had been the 7 TB/s
    peak's share). The review's 405B on 1,000 H100s runs on 112 hosts: 5.682 TB at 112 x 0.977 GB/s = 51.9 s
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
