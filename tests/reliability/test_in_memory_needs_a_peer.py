"""In-memory recovery restores the state from a copy in another host's memory; a job on one host has no such peer
(its copy dies with it), so it checkpoints. A 1-chip DP1 run had been given 'in-memory' recovery at 99.9% goodput."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.training import plan_training
from chipwise.reliability import assess_run
from chipwise.reliability.goodput import reliability_inputs


@pytest.mark.parametrize("recovery", ["best", "in-memory"])
def test_one_host_checkpoints(catalog: Catalog, hw: Hardware, recovery: str) -> None:
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))  # 8 GPUs a host
    for chips in (1, 8):
        run = assess_run(inputs, chips, 1.2e9, 1.0, recovery)
        assert (run.hosts, run.peer_copy, run.recovery) == (1.0, False, "checkpoint")
        assert run.goodput == run.goodput_checkpoint == run.goodput_in_memory  # falls back to the checkpoint
        assert run.record()["in_memory_possible"] is False
    two = assess_run(inputs, 9, 1.2e9, 1.0, recovery)  # a second host holds the copy
    assert (two.hosts, two.peer_copy, two.recovery) == (2.0, True, "in-memory")
    assert two.goodput == two.goodput_in_memory > two.goodput_checkpoint


def test_a_one_chip_dp1_plan_checkpoints(catalog: Catalog) -> None:
    """The review's case: Llama 3.2 1B on one H100, DP1: checkpoint, 99.94% (it had read in-memory 99.88%; 98.76%
    while one host was charged a whole 2,048-host cluster's planned stops)."""
    (r,) = plan_training(catalog, "llama-3.2-1b", 1, ["h100-sxm"], tokens=1e10)["results"]
    assert r["plan"]["dp"] == 1 and r["reliability"]["hosts"] == 1
    assert r["reliability"]["recovery"] == "checkpoint"
    assert r["goodput"] == pytest.approx(0.999377, abs=1e-6)
