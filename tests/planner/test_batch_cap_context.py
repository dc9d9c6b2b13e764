"""The batch limit plan serve searches and predict's notes on it: an on-demand engine's limit holds its requests at
their mean context (a reserving engine's, or an open load's, at their whole context), and the note says why it is
what it is; a closed loop of fixed lengths with more users than slots is told it runs in lock-step cohorts."""

from __future__ import annotations

from typing import Any

import chipwise.api as cw
from chipwise.interfaces.cli.serve_views import _kv_bound
from chipwise.serve.estimate import held_tokens

LLAMA_8B = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100",
    "chips": 1,
    "precision": "bf16",
    "input_tokens": 1024,
    "output_tokens": 1024,
    "plan": {"tp": 1},
}


def _predict(**changes: Any) -> dict[str, Any]:
    return cw.predict({**LLAMA_8B, **changes})


def test_a_request_holds_its_whole_context_reserved_and_its_mean_one_on_demand() -> None:
    assert held_tokens("reserve", 1024, 1024) == 2048
    assert held_tokens("on_demand", 1024, 1024) == 1024 + 512


def test_vllm_seats_256_users_its_cache_holds_at_their_mean_context() -> None:
    """Llama-3.1-8B, 256 users of 1,024 + 1,024 tokens on one H100: capped at the 206 requests the cache holds at
    2,048 tokens, 50 of 256 users waited for a slot and TTFT p50 read 8 s; at their mean 1,536 tokens it holds 275,
    as vLLM's own cap runs them (0 preemptions, TTFT 115 ms)."""
    r = _predict(engine="vllm", concurrency=256, requests=600)
    assert r["plan"]["max_batch"] >= 256
    assert r["ttft_s"]["p50"] < 0.5
    assert r["requests"]["preemptions"] == 0
    note = r["batch_note"]
    assert f"b{r['plan']['max_batch']}: " in note and "at their mean 1,536 tokens (on-demand admission" in note
    assert note.endswith("; 256 users")


def test_a_reserving_engine_still_holds_the_whole_context() -> None:
    """TensorRT-LLM reserves a request's whole 2,048 tokens: its searched cap is what the cache holds at that, and the
    users beyond it wait (the note counts them)."""
    r = _predict(engine="trtllm", concurrency=256, requests=600)
    cap, kv = r["plan"]["max_batch"], r["plan"]["kv_cache_tokens_per_replica"]
    assert cap < 256 and kv / 2048 - 3 <= cap <= kv / 2048 + 3
    assert r["batch_note"] == (
        f"b{cap}: the KV cache holds {cap} requests at their whole 2,048 tokens (reserve admission: trtllm holds a "
        f"request's context from its start); 256 users, {256 - cap} of them waiting for a slot"
    )
    assert r["requests"]["preemptions"] == 0


def test_a_given_cap_on_demand_is_bounded_at_the_mean_context() -> None:
    plan: dict[str, Any] = {"kv_cache_tokens_per_replica": 422_400, "max_batch": 1024, "admission": "on_demand"}
    row = {"plan": plan, "load": {"input_tokens_mean": 1024, "output_tokens_mean": 1024}}
    assert _kv_bound(row) == " (about 275 mean requests of b1024: the cache, not max_batch, bounds the batch)"
    plan["admission"] = "reserve"  # 422,400 / 2,048
    assert _kv_bound(row) == " (about 206 mean requests of b1024: the cache, not max_batch, bounds the batch)"


def test_fixed_lengths_past_the_batch_slots_are_told_they_run_in_lock_step() -> None:
    r = _predict(engine="vllm", concurrency=512, requests=600)
    slots = r["plan"]["max_batch"]
    assert r["lockstep_note"].startswith(f"512 users of fixed lengths outnumber the {slots} batch slots")
    assert "input_tokens: {dist: uniform, min: 819, max: 1024}" in r["lockstep_note"]
    spread = {"dist": "uniform", "min": 820, "max": 1024}
    assert "lockstep_note" not in _predict(engine="vllm", concurrency=512, requests=600, input_tokens=spread)
    assert "lockstep_note" not in _predict(engine="vllm", concurrency=128, requests=300)


def test_an_open_load_caps_the_batch_at_the_whole_context() -> None:
    """A Poisson load's requests in flight rise with its bursts: the searched cap seats them at their whole context
    on an on-demand engine too (vLLM), as the admission control that keeps a step short under a TPOT target, and the
    note says so."""
    from types import SimpleNamespace
    from typing import cast

    from chipwise.planner.serving_choice import cap_context
    from chipwise.serve.engine import EngineProfile

    def eng(admission: str) -> EngineProfile:  # cap_context reads the admission only
        return cast(EngineProfile, SimpleNamespace(admission=admission))

    assert cap_context(eng("on_demand"), "closed", 1024, 1024) == 1536.0
    assert cap_context(eng("on_demand"), "rate", 1024, 1024) == 2048.0
    assert cap_context(eng("reserve"), "closed", 1024, 1024) == 2048.0
