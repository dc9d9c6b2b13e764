"""The modules split out of workload.serving take their data one way: the bounds, the SLO reader, request lengths,
traces, the load and the serving scenario know nothing of the ServingJob module that builds on them."""

from __future__ import annotations

import pytest

from test_module_splits_s69 import _reached

SPLIT = ("bounds", "slo", "lengths", "traces", "load", "serve_scenario")


@pytest.mark.parametrize("module", SPLIT)
def test_a_split_module_does_not_reach_the_serving_job(module: str) -> None:
    assert "chipwise.workload.serving" not in _reached(f"chipwise.workload.{module}")


def test_the_serving_job_builds_on_the_split_modules() -> None:
    reached = _reached("chipwise.workload.serving")
    assert {f"chipwise.workload.{m}" for m in SPLIT} <= reached
