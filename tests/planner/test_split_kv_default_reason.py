"""A split whose pools' engines default to different KV caches says so (serving_predict.precision_source): the decode
pool reads the cache the prefill pool writes, so they share one, 16-bit. fp8 weights on a TensorRT-LLM h100-sxm
prefill beside a vLLM mi300x decode had read 'trtllm holds no fp8 cache on h100-sxm', which predict on h100-sxm
alone contradicts ('trtllm quantises the cache with fp8 weights')."""

from __future__ import annotations

from typing import Any

import chipwise.api as cw

SPLIT: dict[str, Any] = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 2,
    "precision": "fp8",
    "input_tokens": 512,
    "output_tokens": 64,
    "arrival_rate": 1,
    "requests": 60,
    "plan": {
        "disaggregated": True,
        "prefill": {"hardware": "h100-sxm", "replicas": 1, "tp": 1},
        "decode": {"hardware": "mi300x", "replicas": 1, "tp": 1},
    },
}


def test_a_split_of_differing_defaults_names_both_and_the_shared_format() -> None:
    r = cw.predict(SPLIT)
    assert r["engine"] == "trtllm>vllm" and r["kv_precision"] == "bf16"
    assert r["precision_source"] == (
        "KV cache: bf16, a split's one format: its pools' engines default to fp8 (trtllm on h100-sxm) and bf16 (vllm "
        "on mi300x), and the decode pool reads the cache the prefill pool writes, so both hold a 16-bit one (twice an "
        "fp8 cache's bytes held and handed over). Fix: set kv_precision for both"
    )


def test_the_prefill_chip_alone_holds_the_fp8_cache_the_old_line_denied() -> None:
    alone = cw.predict({**SPLIT, "chips": 1, "plan": {"tp": 1}})
    assert alone["kv_precision"] == "fp8"
    assert alone["precision_source"] == (
        "KV cache: fp8, the engine's default (trtllm quantises the cache with fp8 weights; kv_precision sets it)"
    )


def test_a_kv_precision_given_leaves_nothing_to_explain() -> None:
    assert "precision_source" not in cw.predict({**SPLIT, "kv_precision": "fp8"})
