"""A speculating deployment split into prefill and decode pools: the prefill pool holds the drafter, which encodes
every prompt, and the prompt's drafter cache goes to the decode pool with the target's."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from cli_run import run_error

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


def test_a_windowed_targets_share_leaves_the_drafters_cache_whole() -> None:
    """gpt-oss-120b in fp8 KV: 36 layers of 1,024 B a token, half of them keeping 128 tokens; its EAGLE head is one
    full-attention layer. An 8,192-token prompt sends 36,864 x (8,192 - 0.5 x 8,064) + 1,024 x 8,192 bytes,
    161.7 MB at 369 GB/s + 1 us: 0.439 ms (the head's cache had been cut by the target's window share, 0.428)."""
    r = cw.predict(
        "{kind: serve, model: gpt-oss-120b, hardware: h100, chips: 2, precision: mxfp4, input_tokens: 8192, "
        "output_tokens: 256, arrival_rate: 0.5, requests: 40, speculative: 'eagle:3@0.7', plan: {disaggregated: "
        "true, prefill: {tp: 1, replicas: 1}, decode: {tp: 1, replicas: 1}}}"
    )
    sent = 36_864 * (8192 - 0.5 * 8064) + 1024 * 8192
    assert r["kv_transfer"]["seconds_for_mean_prompt"] == pytest.approx(sent / 369e9 + 1e-6, rel=1e-6)


def test_a_draft_model_shorter_than_the_requests_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3 8B (8,192 tokens of context) cannot draft 30,256-token requests for Llama 3.1 70B: it had been
    priced doing so, 206 ms of draft prefill a prompt."""
    scenario = (
        "{kind: serve, model: llama-3.1-70b, hardware: h200, chips: 8, precision: bf16, input_tokens: 30000, "
        "output_tokens: 256, arrival_rate: 0.2, requests: 40, speculative: 'draft:llama-3-8b:4@0.7', plan: {tp: 8}}"
    )
    message = "the draft model llama-3-8b has a context of 8,192 tokens, shorter than the 30,256-token requests"
    with pytest.raises(ChipwiseError, match=message):
        cw.predict(scenario)
    argv = ["plan", "serve", "--model", "llama-3.1-70b", "--rate", "0.2", "--input-tokens", "30000"]
    argv += ["--output-tokens", "256", "--speculative", "draft:llama-3-8b:4@0.7", "--hardware", "h200"]
    assert message in run_error(capsys, argv)  # before the search, which had found 'no option' and exited 0
