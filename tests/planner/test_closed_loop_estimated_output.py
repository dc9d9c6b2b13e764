"""A closed loop's ranking row prices its output as the ranking and its users' cycle have it (serving_choice
._closed_output: each user's request takes its first token and then its answer's steps), not users / TPOT, which
left the first token out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.serving_choice import Choice, ShapeQuery, _closed_output, choose_any
from chipwise.planner.serving_economics import RankingPrice
from chipwise.planner.serving_plan_rows import colocated_row
from chipwise.serve.engine import engine_profile
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob


def _choice(closed: float) -> Choice:
    plan = ReplicaPlan(tp=2, max_batch=16, weight_precision="fp8", kv_precision="fp8")
    return Choice(plan, 4, 2.0, 1000.0, 0.02, 0.5, 8.0, closed_output=closed)


def test_the_row_serves_what_the_closed_loop_does(catalog: Catalog, hw: Hardware) -> None:
    """64 users over four TP2 replicas of 1,000 tok/s at 20 ms TPOT: users / TPOT had read 3,200 tok/s (under the
    replicas' 4,000); the closed loop's 2,500 tok/s is what the row now serves, at $2/chip-h x 8 chips = $16/h, so
    $16 x 1e6 / (2,500 x 3,600) = $1.778 per M output tokens."""
    system = hw.system("h100-sxm")
    row = colocated_row(
        catalog, system, "trtllm", _choice(2500.0), RankingPrice(2.0), Load("closed", concurrency=64), 256
    )
    assert row["estimate"]["output_tokens_per_s"] == 2500.0
    assert row["cost_usd_per_mtok"] == pytest.approx(16.0 * 1e6 / (2500.0 * 3600.0), rel=1e-12)
    # an open loop keeps its own law (the rate's tokens, at most the replicas' throughput)
    rate = colocated_row(catalog, system, "trtllm", _choice(math.nan), RankingPrice(2.0), Load("rate", rate=5.0), 256)
    assert rate["estimate"]["output_tokens_per_s"] == 5.0 * 256


def test_the_choice_carries_the_ranking_output(catalog: Catalog, hw: Hardware) -> None:
    """choose's closed_output is _closed_output of its shape at its replicas (users x O / (F + step / 2 + O t) a
    replica), below the users / TPOT that had been shown: 4,096-token prompts for 64-token answers spend much of a
    user's cycle on the first token."""
    llama8b = load_model(catalog, "llama-3.1-8b")
    system = hw.system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", system.chip.family)
    job = ServingJob(llama8b, LengthDist.fixed(4096), LengthDist.fixed(64), Load("closed", concurrency=32), 200)
    choice, est, _ = choose_any(llama8b, system, eng, job, "fp8", "fp8", {"tpot_p99": 0.05}, fixed={"tp": 1})
    query = ShapeQuery(llama8b, system, eng, "fp8", "fp8", 4096.0, 64.0)
    replicas = np.full(len(est.cand), float(choice.replicas))
    each = _closed_output(query, est, replicas, 32.0, job.router)  # every shape at the chosen count
    assert np.isclose(each, choice.closed_output, rtol=1e-12).any()
    assert 0 < choice.closed_output < 32 / choice.tpot  # the first token of every request is in the cycle
