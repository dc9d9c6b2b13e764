"""Every failure rate set to 0 (perfect hardware): the job never fails, M is infinite, and goodput is the planned-stop
factor alone. It had divided by the zero rate (ZeroDivisionError, 'internal error')."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chipwise.catalog import load_catalog
from chipwise.hardware import hardware
from chipwise.reliability import assess_run, goodput
from chipwise.reliability.checkpoint import daly_interval
from chipwise.reliability.goodput import reliability_inputs

ZERO = [
    f"reliability.failures.{name}=0/h"
    for name in (
        "gpu_failure_rate_per_chip_hour",
        "network_failure_rate_per_chip_hour",
        "software_failure_rate_per_chip_hour",
        "host_failure_rate_per_host_hour",
    )
]
PLANNED_PER_S = 0.0363 / 3600.0  # the catalog's planned stops of a job on Meta's 2,048 hosts (47 in 1,296 h)


def test_an_infinite_mtbf_never_checkpoints_and_loses_nothing_to_failures() -> None:
    assert daly_interval(30.0, math.inf) == math.inf
    assert daly_interval(0.0, math.inf) == math.inf  # sqrt(0 x inf) is nan: the limit, not nan
    assert np.all(daly_interval(np.array([0.0, 30.0]), np.array([math.inf, 1e4])) > 0)
    assert goodput(math.inf, 30.0, 1200.0, math.inf) == 1.0  # never checkpointed, never failed
    assert goodput(2.0, 0.0, 120.0, math.inf, 1e-4, 120.0) == pytest.approx(1 - 1e-4 * 120)
    assert goodput(100.0, 10.0, 120.0, math.inf) == pytest.approx(100 / 110)  # a checkpoint each 100 s still costs


@pytest.mark.parametrize("recovery", ["checkpoint", "in-memory", "best"])
def test_zero_rates_leave_the_planned_stops_alone(recovery: str) -> None:
    """16,384 H100s on 2,048 hosts, Meta's planned stops: with checkpoints each writes the 8e9 x 14 B = 112 GB
    checkpoint at 2 TB/s (0.056 s) and restarts from it, max(1,200 s, 0.056 s restore): 1 - 0.0363/h x 1,200.056 s
    = 0.98789944 (0.9879 had left the write out); in memory 1 - 0.0363/h x 120 s = 0.99879; the downtime is the
    planned stops', p T_wall x their stopped seconds (1,200: the write runs busy; 120), and nothing else."""
    cat = load_catalog(sets=ZERO)
    inputs = reliability_inputs(cat, hardware(cat).system("h100-sxm"))
    run = assess_run(inputs, 16_384, 8e9, 2.0, recovery)
    assert run.failures_per_s == 0 and run.mtbf_s == math.inf
    mem = recovery != "checkpoint"
    stopped = 120.0 if mem else 1200.0
    assert run.planned_restart_s == pytest.approx(120.0 if mem else 1200.056, abs=1e-12)
    assert run.goodput == pytest.approx(0.99879 if mem else 1 - PLANNED_PER_S * 1200.056, abs=1e-12)
    assert run.goodput == pytest.approx(0.99879 if mem else 0.98789944, abs=1e-8)
    assert run.checkpoint_interval_s == (2.0 if mem else math.inf)
    work = 1e6
    assert run.downtime_s(work) == pytest.approx(PLANNED_PER_S * work / run.goodput * stopped, rel=1e-12)


def test_plan_train_with_zero_rates_answers(capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.interfaces.cli.app import run

    sets = [a for s in ZERO for a in ("--set", s)]
    args = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1e12", "--chips", "64", "--hardware", "h100-sxm"]
    assert run([*args, "--recovery", "checkpoint", *sets]) == 0
    out = capsys.readouterr().out
    # 64 H100s, 8 hosts: planned stops only, 8 x 1.7725e-5/h x 1,200 s, 0.0047% of the 24.2 d
    assert "internal error" not in out and "24.2 d   24.2 d" in out
