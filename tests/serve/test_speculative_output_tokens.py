"""Speculative decoding in the simulator: a step adds tau tokens a sequence on average, but the output counted is
each request's answer (its last step emits only the tokens it still needs), and the drafted positions come out of
an iteration's token budget."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.run import Deployment, SimOutput, simulate
from chipwise.serve.sim.steps import StepModel
from chipwise.serve.speculation import Speculation
from chipwise.workload.model import ModelSpec
from cli_run import run_json

EAGLE = Speculation("eagle", 3, 0.8)  # tau = 1 + 0.8 + 0.64 + 0.512 = 2.952


def _emitted(out: SimOutput) -> float:
    """Output tokens the replicas generated over the whole run (each replica's last record)."""
    return sum(float(rep["emit_v"][-1]) for rep in out.replicas)


@pytest.mark.parametrize("engine", ["trtllm", "vllm"])
def test_the_output_counted_is_the_answers_tokens(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, h100_setup: ReplicaSetup, engine: str
) -> None:
    """Every request of a loaded closed loop finishes: the tokens counted are the sum of their outputs, also where
    vLLM preempts requests mid-answer on a small cache (each keeps the whole tokens it made). A step's tau tokens
    for every sequence had counted each request's last step whole: 4 steps of 2.952 for a 10-token answer's 9."""
    plan = replace(h100_setup.plan, speculation=EAGLE)
    setup = setup_replica(catalog, llama8b, hw.system("h100-sxm"), engine, plan, 512.0, 128.0)
    n = 120
    rng = np.random.default_rng(3)
    inputs, outputs = rng.integers(64, 1024, n), rng.integers(1, 300, n)
    pool = replace(setup.pool(1), kv_tokens=20_000)
    out = simulate(Deployment((pool,)), inputs, outputs, np.zeros(n, dtype=np.int64), None, concurrency=48)
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    if engine == "vllm":
        assert r["preempted"].sum() > 0
    assert _emitted(out) == pytest.approx(float(outputs.sum()), rel=1e-9)


def test_ten_token_answers_read_ten_tokens_a_request(capsys: pytest.CaptureFixture[str]) -> None:
    """64 prompts of 200 tokens answered in 10 under eagle:3@0.8, all at once: output tok/s = requests/s x 10
    (1,369.7 tok/s, $1.395 per M output tokens); it had read 1,754.3 tok/s at $1.089, 12.8 tokens a request."""
    scenario = (
        '{"kind":"serve","model":"llama-3.1-8b","hardware":"h100-sxm","chips":1,"precision":"bf16",'
        '"input_tokens":200,"output_tokens":10,"offline":true,"requests":64,"speculative":"eagle:3@0.8",'
        '"plan":{"tp":1,"max_batch":64}}'
    )
    d: dict[str, Any] = run_json(capsys, ["predict", scenario, "--json"])
    assert d["requests"]["finished"] == 64
    assert d["output_tokens_per_s"] == pytest.approx(10 * d["requests_per_s"], rel=1e-9)
    window = d["simulation"]["window_s"]
    assert d["output_tokens_per_s"] == pytest.approx(640 / (window[1] - window[0]), rel=1e-9)


def test_no_iteration_carries_more_than_its_token_budget(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM with a 2,048-token budget, eagle:3: an iteration that advances n decoding sequences beside prompt chunks
    carries their n x 4 verified positions and at most 2,048 - 4n prompt tokens. One token a sequence had been
    reserved: 69 sequences let the prompts take 1,979 tokens, 2,255 in all."""
    plan = ReplicaPlan(
        tp=1, max_batch=128, max_tokens=2048, weight_precision="bf16", kv_precision="bf16", speculation=EAGLE
    )
    setup = setup_replica(catalog, llama8b, hw.system("h100-sxm"), "vllm", plan, 3000.0, 300.0)
    carried: list[int] = []
    original = StepModel.prompt_time

    def spy(self: StepModel, tokens: int, *args: Any, **kwargs: Any) -> float:
        carried.append(int(tokens))
        return original(self, tokens, *args, **kwargs)

    monkeypatch.setattr(StepModel, "prompt_time", spy)
    n = 150
    ones = np.ones(n, dtype=np.int64)
    arrivals = np.arange(n) / 20.0  # 20 req/s: prompts keep arriving while dozens of answers are generated
    simulate(Deployment((setup.pool(1),)), ones * 3000, ones * 300, ones * 0, arrivals)
    assert max(carried) == 2048  # full iterations, none over
