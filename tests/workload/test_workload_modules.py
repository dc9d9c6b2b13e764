"""The workload modules take their data one way. None reaches itself through another: the scenario loader had
imported the serving scenario inside load_scenario, and the serving scenario, the bounds, the SLO reader and request
lengths had built on the loader's module for their count types (a cycle hidden by a lazy import). And the modules
split out of the serving job's (the bounds, the SLO reader, request lengths, traces, the load and the serving
scenario) know nothing of the serving_job module that builds on them."""

from __future__ import annotations

import pytest

from test_layering import PACKAGE, _reached

WORKLOAD = sorted(
    f"chipwise.workload.{path.stem}" for path in (PACKAGE / "workload").glob("*.py") if path.stem != "__init__"
)
SPLIT = ("bounds", "slo", "lengths", "traces", "load", "serve_scenario")
#: what every scenario builds on: the count readers and types, and the strict base of its mappings
BASES = ("counts", "strict_model")
SCENARIOS = {f"chipwise.workload.{m}" for m in ("scenario", "train_scenario", "serve_scenario")}


@pytest.mark.parametrize("module", WORKLOAD)
def test_no_workload_module_reaches_itself(module: str) -> None:
    assert module not in _reached(module)


@pytest.mark.parametrize("module", BASES)
def test_the_count_readers_and_the_strict_base_know_no_scenario(module: str) -> None:
    assert not _reached(f"chipwise.workload.{module}") & SCENARIOS


@pytest.mark.parametrize("module", SPLIT)
def test_a_split_module_does_not_reach_the_serving_job(module: str) -> None:
    assert "chipwise.workload.serving_job" not in _reached(f"chipwise.workload.{module}")


def test_the_serving_job_builds_on_the_split_modules() -> None:
    reached = _reached("chipwise.workload.serving_job")
    assert {f"chipwise.workload.{m}" for m in SPLIT} <= reached
