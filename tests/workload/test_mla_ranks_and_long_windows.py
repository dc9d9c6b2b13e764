"""A DeepSeek-style (MLA) config's latent and head sizes are positive, as a Llama's head_dim is (its RoPE part may be
0: an MLA without position embeddings); a sliding window no shorter than the model's context is full attention."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload import load_model
from chipwise.workload.hf_config import from_hf_config


def _deepseek(catalog: Catalog, **changes: Any) -> dict[str, Any]:
    return {**catalog.model_config("deepseek-v3"), **changes}


@pytest.mark.parametrize("key", ["kv_lora_rank", "v_head_dim", "qk_nope_head_dim"])
def test_a_zero_mla_size_is_refused(catalog: Catalog, key: str) -> None:
    """kv_lora_rank 0 had priced DeepSeek-V3's KV cache at 7.62 KiB a token, 61 layers x 64 x 2 B."""
    with pytest.raises(ChipwiseError, match=rf"^ds\.json: '{key}' must be a positive integer, got 0\. Fix: "):
        from_hf_config(_deepseek(catalog, **{key: 0}), name="ds", where="ds.json")


def test_the_mla_kv_cache_is_the_latent_and_the_rope_key(catalog: Catalog) -> None:
    """61 layers x (512 + 64) x 2 B = 70,272 B a token; without RoPE (qk_rope_head_dim 0, taken) 61 x 512 x 2."""
    assert load_model(catalog, "deepseek-v3").kv_bytes_per_token(2.0) == 61 * (512 + 64) * 2 == 70_272
    nope = from_hf_config(_deepseek(catalog, qk_rope_head_dim=0), name="ds", where="ds.json")
    assert (nope.kv_bytes_per_token(2.0), nope.attention.head_dim) == (61 * 512 * 2, 128)
    lite = from_hf_config(_deepseek(catalog, q_lora_rank=None), name="ds", where="ds.json")  # DeepSeek-V2-Lite's
    assert lite.attention.q_lora_rank == 0


def _phi3(window: int) -> dict[str, Any]:
    return {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064,
            "max_position_embeddings": 131072, "sliding_window": window}  # fmt: skip


def test_a_window_past_the_context_is_full_attention() -> None:
    """sliding_window 262,144 in a 131,072-token context had been shown 'sliding 262,144' and 'KV cache per token up
    to 262,144'; its figures, min(context, window), were already the full context's and stay so."""
    per_token = 32 * 32 * (96 + 96) * 2  # layers x KV heads x (K + V head widths) x bf16: 393,216 B
    long = from_hf_config(_phi3(262_144), name="phi3")
    summary = long.summary(4096)
    assert summary["attention_windows"] == [] and "sliding-window" not in summary["flops_convention"]
    assert (summary["kv_bytes_per_token"], summary["kv_bytes_at_context"]) == (per_token, per_token * 131_072)
    full = from_hf_config({**_phi3(0), "sliding_window": None}, name="phi3")
    assert long.flops_per_token_fwd(131_072) == full.flops_per_token_fwd(131_072)
    at_context = from_hf_config(_phi3(131_072), name="phi3")  # a window of the whole context reaches no further
    assert at_context.windows == []
    short = from_hf_config(_phi3(2047), name="phi3")  # Phi-3's own
    assert short.windows == [{"layers": 32, "window": 2047, "kind": "sliding"}]
    assert short.kv_bytes(131_072) == per_token * 2047


def test_the_presets_windows_stand(catalog: Catalog) -> None:
    windows = {pid: load_model(catalog, pid).windows for pid in ("mistral-7b", "gpt-oss-120b", "gpt-oss-20b")}
    assert windows == {
        "mistral-7b": [{"layers": 32, "window": 4096, "kind": "sliding"}],
        "gpt-oss-120b": [{"layers": 18, "window": 128, "kind": "sliding"}],
        "gpt-oss-20b": [{"layers": 12, "window": 128, "kind": "sliding"}],
    }
    assert load_model(catalog, "llama-4-scout").windows == [{"layers": 36, "window": 8192, "kind": "chunked"}]
    gemma2 = {"model_type": "gemma2", "hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16,
              "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336, "vocab_size": 256000,
              "sliding_window": 4096, "max_position_embeddings": 8192, "tie_word_embeddings": True}  # fmt: skip
    assert from_hf_config(gemma2, name="g").windows == [{"layers": 21, "window": 4096, "kind": "sliding"}]
