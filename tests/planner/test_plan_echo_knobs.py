"""A serving report's plan block echoes the decode graph limit and the KV memory share it ran with: a user who set
plan.graph_batch or plan.memory_fraction sees it was read (the block had echoed piecewise_graphs but neither)."""

from __future__ import annotations

import chipwise.api as cw

BASE = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 1,
    "input_tokens": 256,
    "output_tokens": 32,
    "concurrency": 4,
    "requests": 40,
}


def _plan(engine: str, **plan: object) -> dict[str, object]:
    report = cw.predict({**BASE, "engine": engine, "plan": {"tp": 1, **plan}})
    return report["plan"]  # type: ignore[no-any-return]


def test_given_knobs_are_echoed() -> None:
    plan = _plan("vllm", graph_batch=8, memory_fraction=0.8)
    assert (plan["graph_batch"], plan["memory_fraction"]) == (8, 0.8)


def test_defaults_are_left_to_the_engine() -> None:
    # null: the engine's own (vLLM replays every decode batch in a graph and keeps 0.9 of memory)
    plan = _plan("vllm")
    assert (plan["graph_batch"], plan["memory_fraction"]) == (None, None)
