"""The Python API: the same answers as the CLI, as plain dictionaries (SI units).

import chipwise.api as cw
cw.predict({"kind": "train", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 1024, "tokens": 15e12})
cw.plan_train("llama-3.1-405b", tokens=15e12, chips=16384, hardware=["h100-sxm", "trn2", "gb200"])
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.planner.training import plan_training, predict_training
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import TrainScenario, load_scenario


def catalog(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> Catalog:
    """The built-in catalog with users' YAML files and `ID.FIELD=VALUE` overrides applied."""
    return load_catalog(files, sets)


def predict(
    scenario: str | Mapping[str, Any], files: Sequence[str | Path] = (), sets: Sequence[str] = ()
) -> dict[str, Any]:
    """Predict a scenario given as a path, inline YAML/JSON text, or a mapping (DESIGN.md's scenario contract)."""
    text = json.dumps(dict(scenario)) if isinstance(scenario, Mapping) else scenario
    sc = load_scenario(text)
    cat = load_catalog(files, sets)
    if isinstance(sc, TrainScenario):
        return predict_training(cat, sc)
    from chipwise.planner.serving import predict_serving

    return predict_serving(cat, sc)


def plan_train(
    model: str,
    chips: int,
    hardware: Sequence[str] | str = "all",
    tokens: float | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Rank hardware for a training run (see `chipwise plan train --help` for the options)."""
    cat = load_catalog(files, sets)
    ids = list(cat.chips) if hardware == "all" else ([hardware] if isinstance(hardware, str) else list(hardware))
    return plan_training(cat, model, chips, ids, tokens=tokens, **options)


def model(name: str, seq_len: int = 4096, files: Sequence[str | Path] = ()) -> dict[str, Any]:
    """A model's parameters, FLOPs per token and KV-cache bytes (as `chipwise model show --json`)."""
    return load_model(load_catalog(files), name).summary(seq_len)
