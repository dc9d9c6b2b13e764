"""Scenarios read as the kind a test states: load_scenario answers TrainScenario | ServeScenario, and a test that
goes on to predict, plan or build a job from one needs the kind its text says (`kind: serve`, or training)."""

from __future__ import annotations

from chipwise.catalog.loader import Catalog
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.train_scenario import TrainScenario


def serve_scenario(source: str, catalog: Catalog | None = None) -> ServeScenario:
    """load_scenario of a serving scenario's path or text."""
    scenario = load_scenario(source, catalog)
    assert isinstance(scenario, ServeScenario), f"not a serving scenario: {source}"
    return scenario


def train_scenario(source: str, catalog: Catalog | None = None) -> TrainScenario:
    """load_scenario of a training scenario's path or text."""
    scenario = load_scenario(source, catalog)
    assert isinstance(scenario, TrainScenario), f"not a training scenario: {source}"
    return scenario
