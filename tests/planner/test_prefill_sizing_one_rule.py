"""A split's prefill pool is sized by one rule (planner.serving_deployment.prefill_replicas) in plan serve and in
predict: a plan serve split fed back to predict without its prefill replica count gets the same count, prefix-cache hits
included (plan serve had sized from the estimate's prompt work, which encodes the whole prompt)."""

from __future__ import annotations

import functools
import math

import pytest

from chipwise.catalog import Catalog
from chipwise.planner import serving_plan
from chipwise.planner.serving_breakdown import prefill_alone, prefill_full
from chipwise.planner.serving_deployment import PREFILL_SIZING_LOAD, build_deployment
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.serving_job import ServingJob, serving_job

SLO = {"ttft_p99": 3.0, "tpot_p99": 0.05}
SHAPE = ("tp", "pp", "ep", "attention_dp", "max_batch")


@pytest.mark.parametrize(("hit", "replicas"), [(0.0, 10), (0.9, 2)])
def test_a_plan_serve_split_fed_back_to_predict_sizes_the_same_prefill_pool(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, hit: float, replicas: int
) -> None:
    """Llama 3.1 70B, 8,192-token prompts at 5 req/s on H100: TP2 prefill replicas encode one prompt alone in
    1.317 s, 0.153 s at 0.9 hits, kept 70% busy: ceil(5 x 1.317 / 0.7) = 10 and ceil(5 x 0.153 / 0.7) = 2. Plan
    serve had sized 10 at 0.9 hits too, where predict sizes 2."""
    # plan serve takes no hit rate of its own: its job is given one, as a scenario's is
    monkeypatch.setattr(serving_plan, "ServingJob", functools.partial(ServingJob, prefix_hit_rate=hit))
    load = Load("rate", rate=5.0)
    report = serving_plan.plan_serving(catalog, "llama-3.1-70b", ["h100-sxm"], load, 8192, 256, SLO, verify=0)
    row = next(r for r in report["results"] if r["disaggregated"])
    pre, dec = row["plan"]["prefill"], row["plan"]["decode"]
    sc = ServeScenario.model_validate(
        {
            "kind": "serve",
            "model": "llama-3.1-70b",
            "hardware": "h100-sxm",
            "arrival_rate": 5.0,
            "input_tokens": 8192,
            "output_tokens": 256,
            "prefix_hit_rate": hit,
            "slo": {f"{k}_s": v for k, v in SLO.items()},
            "precision": pre["weight_precision"],
            "plan": {
                "disaggregated": True,
                "prefill": {k: pre[k] for k in SHAPE},  # its replicas left to predict
                "decode": {**{k: dec[k] for k in SHAPE}, "replicas": dec["replicas"]},
            },
        }
    )
    model = load_model(catalog, sc.model)
    setup = build_deployment(catalog, model, sc, serving_job(model, sc), SLO)[0]
    prefill = setup.pools[0]
    assert prefill.setup.steps.ranks == 1  # no attention DP: a prompt's time is its own
    alone = prefill_alone(prefill.setup, 8192, hit)["seconds"]
    assert prefill_full(prefill.setup, 8192, hit) == alone
    assert alone == pytest.approx(1.317 if hit == 0 else 0.153, abs=1e-3)
    assert pre["replicas"] == prefill.replicas == math.ceil(5.0 * alone / PREFILL_SIZING_LOAD) == replicas
