"""A prediction says where the precisions it was not given came from (serving_predict.precision_source): the
checkpoint's own weights (precision auto), and the engine's default KV cache for them. deepseek-v3 on 8 B200 had read
'fp8 weights, fp8 KV cache' with no word that both were chosen for the user, and differently by engine."""

from __future__ import annotations

from typing import Any

import chipwise.api as cw

#: /tmp/explore46/d1.yaml, the tester's scenario
D1: dict[str, Any] = {"kind": "serve", "model": "deepseek-v3", "hardware": "b200", "chips": 8, "input_tokens": 1024,
                      "output_tokens": 128, "concurrency": 8, "requests": 64}  # fmt: skip
WEIGHTS = "weights: deepseek-v3's checkpoint as released (fp8; precision auto)"


def test_trtllm_quantises_the_cache_with_the_checkpoints_fp8() -> None:
    r = cw.predict(D1)
    assert (r["precision"], r["kv_precision"], r["engine"]) == ("fp8", "fp8", "trtllm")
    assert r["precision_source"] == (
        f"{WEIGHTS}; KV cache: fp8, the engine's default (trtllm quantises the cache with fp8 weights; kv_precision "
        "sets it)"
    )


def test_vllm_keeps_a_bf16_cache_for_the_same_weights() -> None:
    r = cw.predict({**D1, "engine": "vllm"})
    assert r["kv_precision"] == "bf16"
    assert r["precision_source"] == (
        f"{WEIGHTS}; KV cache: bf16, the engine's default (vllm keeps a 16-bit cache under fp8 weights; kv_precision "
        "sets it)"
    )


def test_only_what_was_not_given_is_explained() -> None:
    assert cw.predict({**D1, "precision": "fp8"})["precision_source"].startswith("KV cache: fp8, the engine's")
    assert cw.predict({**D1, "kv_precision": "fp8"})["precision_source"] == WEIGHTS
    assert "precision_source" not in cw.predict({**D1, "precision": "fp8", "kv_precision": "bf16"})
