"""plan serve's prefill/decode splits under a closed loop (asked for: --disaggregated, the API's and the page's
disaggregated true), sized for the most requests/s its users bring; and a prefill pool of attention-DP replicas
queued as the prompts its ranks encode at once, not as one lone prompt's time per replica."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.interfaces.format import plan_serve_verdict
from chipwise.planner.serving_breakdown import prefill_alone, prefill_full
from chipwise.planner.serving_plan import plan_serving
from chipwise.planner.serving_split import prefill_p99, sized_for_rate
from chipwise.serve.build import setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.queueing import slot_wait
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob
from cli_run import run_json

#: DeepSeek-R1's 64 users of 16,000-token prompts and 64-token answers on TPU v7: no count of colocated replicas
#: meets both targets (more replicas queue fewer prompts, whose chunks then join more users' decode steps)
R1_USERS = ("deepseek-r1", ["tpu-v7"], Load("closed", concurrency=64), 16000, 64, {"ttft_p99": 10.0, "tpot_p99": 0.03})


def test_a_closed_loop_is_sized_for_the_most_requests_its_users_bring(catalog: Catalog) -> None:
    """64 users, a 1 s prompt alone and 64 answer tokens at 20 ms: 64 / (1 + 64 x 0.02) = 28.07 req/s; an open loop
    is sized for its own rate."""
    model = load_model(catalog, "llama-3.1-8b")
    users = ServingJob(model, LengthDist.fixed(2048), LengthDist.fixed(64), Load("closed", concurrency=64), 1200)
    sized = sized_for_rate(users, 1.0, 0.02)
    assert sized.load.kind == "rate" and sized.load.rate == pytest.approx(64 / 2.28)
    assert sized.input == users.input and sized.output == users.output
    rate = ServingJob(model, LengthDist.fixed(2048), LengthDist.fixed(64), Load("rate", rate=5.0), 1200)
    assert sized_for_rate(rate, 1.0, 0.02) is rate


def test_a_prefill_pool_without_attention_dp_queues_as_before() -> None:
    """One rank: an M/D/c queue of the pool's replicas, each a prompt's S (0.5 s), at lambda S offered."""
    wait = float(slot_wait(np.asarray(4.0), np.asarray(6.0 * 0.5), np.asarray(0.5))[1])
    assert prefill_p99(0.5, 4, 6.0) == pytest.approx(0.5 + wait)
    assert prefill_p99(0.5, 4, 6.0, 0.9, 1) == pytest.approx(0.5 + wait)  # one rank: full_s is S
    assert prefill_p99(0.5, 4, 1e-9) == pytest.approx(0.5)


def test_an_attention_dp_prefill_replica_is_its_ranks_encoding_at_once() -> None:
    """Four ranks, S = 1 s alone, four prompts at once in 2 s: 10 replicas carry 20 prompts/s (each replica 2 a
    second); at 10 req/s half the ranks are busy, so a prompt takes 1 + 0.5 x (2 - 1) = 1.5 s, and the wait is the
    M/D/c one of 40 servers of 2 s. Priced as one server of S per replica, 10 req/s on 10 replicas of 1 s reads a
    queue at its capacity."""
    wait = float(slot_wait(np.asarray(40.0), np.asarray(10.0 * 2.0), np.asarray(2.0))[1])
    assert prefill_p99(1.0, 10, 10.0, 2.0, 4) == pytest.approx(1.5 + wait)
    assert wait < 0.05
    assert prefill_p99(1.0, 10, 1e-9, 2.0, 4) == pytest.approx(1.0)  # idle: the prompt alone
    assert prefill_p99(1.0, 10, 5.0, 2.0, 4) < prefill_p99(1.0, 10, 10.0, 2.0, 4) < prefill_p99(1.0, 10, 19.0, 2.0, 4)
    assert prefill_p99(1.0, 10, 10.0) > 1e3  # one server of S a replica: 10 req/s on 10 replicas of 1 s


def test_a_replica_encodes_a_prompt_on_each_rank_in_less_than_their_times_alone(catalog: Catalog) -> None:
    """A prompt on each of the four ranks takes more than one prompt alone and less than the four one after another
    (their weights are read once an iteration); more prompts than ranks are encoded a rank's at a time."""
    model = load_model(catalog, "deepseek-r1")
    plan = ReplicaPlan(tp=4, ep=4, attention_dp=True, max_batch=26, max_tokens=16384, weight_precision="fp8")
    pre = setup_replica(catalog, model, hardware(catalog).system("tpu-v7"), "vllm", plan, 16000.0, 1.0)
    alone = prefill_alone(pre, 16000.0)["seconds"]
    assert pre.steps.ranks == 4
    full = prefill_full(pre, 16000.0)
    assert alone < full < 4 * alone
    assert pre.steps.prompts_together(9, 16000, pre.prompt_chunk) == pytest.approx(full)


def test_a_closed_loop_split_meets_what_no_colocated_fleet_does(catalog: Catalog) -> None:
    """Asked for, the split is ranked by its cost per token at the rate its users bring and simulated as a closed
    loop: it meets both targets where the cheapest colocated fleet, grown, misses its TPOT."""
    model, chips, load, inp, out, slo = R1_USERS
    report = plan_serving(catalog, model, chips, load, inp, out, slo, disaggregated=True, verify=2)
    assert report["splits"] is True
    split = next(r for r in report["results"] if r["disaggregated"])
    rate = split["estimate"]["output_tokens_per_s"] / out
    assert 20.0 < rate < 64 / (out * split["estimate"]["tpot_s"])  # 64 users, each a prompt and an answer a cycle
    best = report["best"]
    assert best["disaggregated"] and best["slo_met"]
    assert best["ttft_s"]["p99"] <= 10.0 and best["tpot_s"]["p99"] <= 0.03
    whole = next(v for v in report["verified"] if not v["disaggregated"])
    assert not whole["slo_met"]
    assert plan_serve_verdict(report)[1]


def test_a_closed_loop_tries_splits_only_where_asked(catalog: Catalog) -> None:
    """By default a closed loop searches whole replicas; where none meets its SLO, the verdict says splits were not
    tried."""
    model, chips, load, inp, out, slo = R1_USERS
    report = plan_serving(catalog, model, chips, load, inp, out, slo, verify=1)
    assert report["splits"] is False and not any(r["disaggregated"] for r in report["results"])
    verdict, passed = plan_serve_verdict(report)
    assert not passed
    assert verdict.endswith(
        "; prefill/decode pool splits, which a closed loop tries only where asked for, were not tried"
    )


def test_an_attention_dp_prefill_pool_under_a_rate_makes_a_split(catalog: Catalog) -> None:
    """DeepSeek-R1 at 27 req/s on TPU v7: its TP4 EP4 attention-DP prefill pool had read a TTFT p99 of 2.5e12 s (a
    lone prompt's 1.08 s per replica at 27 req/s over 23 replicas) and its split was dropped; it is ranked now, its
    TTFT p99 estimated within its check's (2.1 s) by a quarter."""
    report = plan_serving(
        catalog, "deepseek-r1", ["tpu-v7"], Load("rate", rate=27.0), 16000, 64,
        {"ttft_p99": 10.0, "tpot_p99": 0.03}, verify=0,
    )  # fmt: skip
    split = next(r for r in report["results"] if r["disaggregated"])
    assert split["plan"]["prefill"]["attention_dp"] and split["plan"]["prefill"]["tp"] == 4
    assert 1.6 < split["estimate"]["ttft_p99_s"] < 2.6


def test_the_command_line_tries_a_closed_loops_splits_where_asked(capsys: pytest.CaptureFixture[str]) -> None:
    """--disaggregated under --concurrency ranks splits (it had been refused: 'a closed loop has none')."""
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency", "16", "--json"]
    asked = run_json(capsys, [*argv, "--disaggregated", "--top", "50"])
    assert asked["splits"] is True and any(r["disaggregated"] for r in asked["results"])
    assert run_json(capsys, argv)["splits"] is False
