"""A speculating deployment split into prefill and decode pools: the prefill pool holds the drafter, which encodes
every prompt, and the prompt's drafter cache goes to the decode pool with the target's."""

from __future__ import annotations

from typing import Any

import chipwise.api as cw

SPLIT = (
    "{kind: serve, model: llama-3.1-70b, hardware: h100-sxm, precision: fp8, input_tokens: 4000, output_tokens: 300, "
    "arrival_rate: 2, requests: 200, plan: {disaggregated: true, prefill: {tp: 4, replicas: 1}, "
    "decode: {tp: 4, replicas: 1}}"
)


def _predict(speculative: str | None) -> dict[str, Any]:
    return cw.predict(SPLIT + (f", speculative: '{speculative}'}}" if speculative else "}"))


def test_the_prefill_pool_holds_and_runs_the_drafter() -> None:
    """Llama 3.2 1B drafting for Llama 3.1 70B, fp8 KV: 16 layers x 8 KV heads x 64 x 2 x 1 byte = 16 KiB a token
    beside the target's 80 x 8 x 128 x 2 = 160 KiB; its weights sit on the prefill ranks and its prefill adds to the
    first token (it had held none: TTFT left the draft model's prompt out)."""
    plain, drafted = _predict(None), _predict("draft:llama-3.2-1b:4@0.7")
    assert plain["kv_transfer"]["bytes_per_token"] == 80 * 8 * 128 * 2
    assert drafted["kv_transfer"]["bytes_per_token"] == 80 * 8 * 128 * 2 + 16 * 8 * 64 * 2
    pre, pre_plain = drafted["plan"]["prefill"], plain["plan"]["prefill"]
    assert pre["speculative"].startswith("draft llama-3.2-1b k=4")
    weights = pre["memory_per_rank_gib"]["weights"] - pre_plain["memory_per_rank_gib"]["weights"]
    assert 0.2 < weights < 0.5  # about 1.2 B parameters (untied head and embedding) a quarter each at fp8/bf16
    assert drafted["prefill_one_prompt"]["seconds"] > plain["prefill_one_prompt"]["seconds"]
    assert drafted["ttft_s"]["p50"] > plain["ttft_s"]["p50"]
