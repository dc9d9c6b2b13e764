"""An attention-DP prefill replica's capacity is read one way wherever a split's prefill pool is sized, queued or
checked: its ranks each encoding a prompt, side by side (serving_breakdown.prefill_full). Its pool had been sized
from a prompt spread over the replica's heads, which it never runs, and the check had read each prompt alone
as its load: gpt-oss-120b's trn2 split at 20 req/s kept 24 prefill replicas (192 chips) where 8 meet the SLO."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.planner.serving_breakdown import prefill_alone, prefill_full
from chipwise.planner.serving_check import MAX_PREFILL_LOAD, _prefill_load
from chipwise.planner.serving_deployment import prefill_replicas, prefill_tokens_per_s
from chipwise.planner.serving_plan import plan_serving
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.simulate import Pool, ServingSetup
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob

PROMPT, ANSWER, RATE = 4096, 1024, 20.0


def _prefill_replica(catalog: Catalog, attention_dp: bool) -> tuple[ReplicaSetup, ServingJob]:
    """gpt-oss-120b's TP16 EP16 prefill replica on trn2.48xlarge (neuron, bf16), with or without attention DP, and
    4,096-token prompts at 20 req/s."""
    model = load_model(catalog, "gpt-oss-120b")
    plan = ReplicaPlan(tp=16, ep=16, attention_dp=attention_dp, max_batch=64, max_tokens=4096)
    system = hardware(catalog).system("trn2.48xlarge")
    setup = setup_replica(catalog, model, system, "neuron", plan, float(PROMPT), 1.0, PROMPT + ANSWER)
    job = ServingJob(model, LengthDist.fixed(PROMPT), LengthDist.fixed(ANSWER), Load("rate", rate=RATE), 2000)
    return setup, job


def test_an_attention_dp_replica_encodes_as_its_ranks_do_side_by_side(catalog: Catalog) -> None:
    """Sixteen ranks each encoding a 4,096-token prompt take prefill_full's seconds together: 16 x 4,096 tokens over
    them. That is more than three times the prompt tokens/s of one prompt spread over the replica's heads (the old
    reading: about 0.56 s a prompt against 2.78 s for sixteen), and the pool sized from it is a third as large."""
    adp, job = _prefill_replica(catalog, attention_dp=True)
    assert adp.steps.ranks == 16
    together = prefill_full(adp, PROMPT)
    encodes = prefill_tokens_per_s(adp, job)
    assert encodes == pytest.approx(16 * PROMPT / together)
    heads_split = replace(adp, steps=replace(adp.steps, ranks=1))
    spread = PROMPT / prefill_alone(heads_split, PROMPT)["seconds"]
    assert encodes > 3.0 * spread
    # a lone prompt's attention runs on one rank while the others wait: slower than spread over the heads, faster
    # than sixteen prompts together
    assert PROMPT / spread < prefill_alone(adp, PROMPT)["seconds"] < together
    assert prefill_replicas(job, encodes) <= 6
    assert prefill_replicas(job, spread) >= 15


def test_without_attention_dp_a_replica_encodes_one_prompt_at_a_time(catalog: Catalog) -> None:
    """No attention DP: the tokens/s of one prompt alone, as before."""
    tp, job = _prefill_replica(catalog, attention_dp=False)
    assert tp.steps.ranks == 1
    assert prefill_tokens_per_s(tp, job) == pytest.approx(PROMPT / prefill_alone(tp, PROMPT)["seconds"])


def test_the_check_reads_a_prefill_pools_load_against_what_it_was_sized_for(catalog: Catalog) -> None:
    """The check's load of an attention-DP prefill pool: 20 req/s x 4,096 tokens over its replicas' prompt
    tokens/s, 8 replicas under MAX_PREFILL_LOAD (a lone prompt's 0.80 s had read them twice over it, and no pool
    under 17 replicas would have been tried)."""
    adp, job = _prefill_replica(catalog, attention_dp=True)
    pool = ServingSetup((Pool(adp, 8, "prefill"),))
    load = _prefill_load(job, pool)
    assert load == pytest.approx(RATE * PROMPT / (8 * prefill_tokens_per_s(adp, job)))
    assert load < MAX_PREFILL_LOAD < RATE * prefill_alone(adp, PROMPT)["seconds"] / 8


def test_plan_serve_sizes_and_keeps_an_attention_dp_prefill_pool_by_its_ranks(catalog: Catalog) -> None:
    """gpt-oss-120b at 20 req/s of 4,096-token prompts and 1,024-token answers on trn2 (TTFT p99 3 s, TPOT p99 120
    ms): the answer is a split of TP16 EP16 attention-DP prefill replicas, at most 8 of them and 128 chips in all,
    that meets the SLO in simulation (it had been 24 prefill replicas and 192 chips, $7.11/M; then 8 and 160 chips,
    $5.92/M, while the check's capacity probe of a split counted its fill and drain: test_split_capacity_probe)."""
    report = plan_serving(
        catalog, "gpt-oss-120b", ["trn2"], Load("rate", rate=RATE), PROMPT, ANSWER, {"ttft_p99": 3.0, "tpot_p99": 0.12}
    )
    best = report["best"]
    assert best["disaggregated"] and best["slo_met"] and best["keeps_up"]
    prefill = best["plan"]["prefill"]
    assert prefill["attention_dp"] and prefill["tp"] == 16
    assert prefill["replicas"] <= 8 and best["chips"] <= 128
    assert best["cost_usd_per_mtok"] < 7.11 * (128 / 192) * 1.001
    assert math.isfinite(best["ttft_s"]["p99"]) and best["ttft_s"]["p99"] <= 3.0
