"""Pipeline stages in the serving breakdown: a prompt's chunk passes the stages in turn, so its parts are the work
of every stage it passes (not a pipelined pass's pp-th of it, with the rest called 'waits'), and they still add up
to the time the model gives it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.serving_predict import predict_serving
from scenario_kinds import serve_scenario


def _predict(catalog: Catalog, chips: int, pp: int) -> dict[str, Any]:
    """Llama-3.1-70B in fp8 under vLLM on H100s at TP2 x `pp`, 4,000-token prompts and 300-token answers at 2
    req/s (the tester's scenario)."""
    scenario = {
        "kind": "serve", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": chips, "precision": "fp8",
        "engine": "vllm", "input_tokens": 4000, "output_tokens": 300, "arrival_rate": 2, "requests": 300,
        "plan": {"tp": 2, "pp": pp, "max_batch": 128},
    }  # fmt: skip
    return predict_serving(catalog, serve_scenario(json.dumps(scenario)))


@pytest.fixture(scope="module")
def staged(catalog: Catalog) -> dict[str, Any]:
    return _predict(catalog, 8, 4)


def test_a_lone_prompt_does_every_stages_work_in_turn(catalog: Catalog, staged: dict[str, Any]) -> None:
    """A 4,000-token prompt on TP2 x PP4 (8 H100s) runs in one chunk that passes the 4 stages in turn, each stage
    doing its 20 of the 80 layers at TP2: its GEMMs, attention, norms, all-reduces and layers' fixed costs are those
    of the same prompt on one TP2 x PP1 replica (2 H100s, 271.9 ms), and the three hand-offs make the difference
    (0.54 ms). It had read 48.6 ms of GEMMs (a pipelined pass's quarter of them) and 196.7 ms of 'waits' in 272.5
    ms; its GEMMs are 183.3 ms, 67% of the prompt's time, and no waits."""
    flat = _predict(catalog, 2, 1)
    parts, one = staged["prefill_breakdown"], flat["prefill_breakdown"]
    seconds = staged["prefill_one_prompt"]["seconds"]
    assert seconds == pytest.approx(0.2725, abs=1e-4)  # the model's time, which the breakdown only splits
    assert sum(parts.values()) == pytest.approx(seconds, rel=1e-9)
    assert "waits" not in parts and one["pp_comm"] == 0.0
    for key in ("gemm", "attention", "memory_bound", "tp_comm", "lm_head", "overhead"):
        assert parts[key] == pytest.approx(one[key], rel=1e-9), key
    assert parts["pp_comm"] == pytest.approx(seconds - flat["prefill_one_prompt"]["seconds"], rel=1e-6)
    assert parts["gemm"] == pytest.approx(0.1833, abs=1e-4)
    assert parts["gemm"] / seconds == pytest.approx(0.67, abs=0.005)


def test_the_steady_iteration_prices_the_chunks_pass_as_its_work(staged: dict[str, Any]) -> None:
    """The same deployment's mean iteration: one that carries a prompt's chunk takes the chunk's pass through the
    4 stages, and its parts are that pass's work. It had read 'waits' 15.9 of 42.2 ms (dominated by waits) and GEMMs
    15.4; now GEMMs 26.5 ms and no waits, its parts still adding up to the mean step (the simulated TPOT plus the
    prompt's iteration spread over its 300 tokens), and TTFT and TPOT as they were."""
    parts = staged["breakdown"]
    assert staged["tpot_s"]["mean"] == pytest.approx(0.04031, abs=1e-5)  # the predictions, unmoved
    assert staged["ttft_s"]["mean"] == pytest.approx(0.3775, abs=1e-4)
    assert "waits" not in parts and staged["dominated_by"] == "gemm"
    assert parts["gemm"] == pytest.approx(0.0265, abs=1e-4)
    # the split's old total, but for the tables' coarse grid the simulator prices a 17,600-token pass on
    assert sum(parts.values()) == pytest.approx(0.04221, rel=0.005)
    step = staged["tpot_s"]["mean"] + staged["ttft_s"]["mean"] / 300
    assert sum(parts.values()) == pytest.approx(step, rel=0.05)
