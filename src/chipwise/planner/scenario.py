"""DESIGN.md's `chipwise predict`: one training or serving scenario priced, a missing or partial plan searched."""

from __future__ import annotations

from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.planner.training import predict_training
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.train_scenario import TrainScenario


def predict_scenario(catalog: Catalog, sc: TrainScenario | ServeScenario) -> dict[str, Any]:
    """A training scenario's prediction (planner.training) or a serving one's, simulated (planner.serving_predict)."""
    if isinstance(sc, TrainScenario):
        return predict_training(catalog, sc)
    from chipwise.planner.serving_predict import predict_serving  # the serving stack loads only for a serving scenario

    return dict(predict_serving(catalog, sc))
