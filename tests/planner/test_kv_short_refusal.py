"""A request whose KV cache no replica shape within the stated chips holds is refused for that, naming its tokens and
the largest cache, with fixes that help (planner.serving_choice._cache_short): it had been refused as if the
weights did not fit, with 'quantise the weights or the KV cache' offered where both already were fp8."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError

LONG = (
    "{kind: serve, model: llama-3.1-70b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 120000, "
    "output_tokens: 64, arrival_rate: 0.05, requests: 20}"
)


def _refusal(scenario: str) -> str:
    with pytest.raises(ChipwiseError) as err:
        cw.predict(scenario)
    return str(err.value)


def test_a_request_longer_than_any_cache_names_its_length() -> None:
    """Llama-3.1-70B fp8 on one H100: the weights fit (1,024-token prompts run at TP1), but its fp8 KV cache holds
    at most 34,912 tokens (TP1 b1), less than one 120,064-token request; the KV cache is fp8 already, so no
    quantisation is offered. It had read 'fits no replica shape ... Fix: use more chips, or quantise the weights or
    the KV cache.'"""
    assert _refusal(LONG) == (
        "llama-3.1-70b (fp8) fits no replica shape on h100-sxm within 1 chip: the weights fit, but no shape's KV "
        "cache holds one 120,064-token request (the largest, TP1 b1's, holds 34,912 tokens). Fix: use more chips "
        "(a higher tp or pp), or shorten the requests."
    )
    assert cw.predict(LONG.replace("input_tokens: 120000", "input_tokens: 1024"))["plan"]["tp"] == 1


def test_a_16_bit_cache_is_offered_fp8() -> None:
    """The same request with a bf16 KV cache: the largest cache holds half as many tokens (17,440), and an fp8 one,
    which TensorRT-LLM holds on an H100, is offered."""
    line = _refusal(LONG.replace("precision: fp8,", "precision: fp8, kv_precision: bf16,"))
    assert "(the largest, TP1 b1's, holds 17,440 tokens)" in line
    assert line.endswith(
        "Fix: use more chips (a higher tp or pp), quantise the KV cache to fp8, or shorten the requests."
    )


def test_a_stated_memory_share_is_still_offered_first() -> None:
    """plan.memory_fraction, where stated, is the first fix (planner.serving_pool), before the cache's."""
    line = _refusal(LONG.replace("requests: 20}", "requests: 20, plan: {memory_fraction: 0.5}}"))
    assert "no shape's KV cache holds one 120,064-token request" in line
    assert "Fix: raise plan.memory_fraction (now 0.5), use more chips (a higher tp or pp), or shorten" in line


def test_weights_that_fit_no_shape_keep_their_refusal() -> None:
    """Llama-3.1-405B bf16 on two H100s: the weights fit no shape, so the refusal names no request."""
    line = _refusal(
        "{kind: serve, model: llama-3.1-405b, hardware: h100-sxm, chips: 2, input_tokens: 1000, output_tokens: 64, "
        "arrival_rate: 0.05, requests: 20}"
    )
    assert line == (
        "llama-3.1-405b (bf16) fits no replica shape on h100-sxm within 2 chips. Fix: use more chips, or quantise "
        "the weights or the KV cache."
    )
