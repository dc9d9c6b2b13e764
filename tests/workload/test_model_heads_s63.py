"""Review M (s63) findings 1-3: gpt-oss's KV heads under the shared check, GPT-2/MPT/OPT heads positive and a
whole number of them in the hidden size, and the Qwen2.5 base names' own presets (131,072-token context)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload import load_model
from chipwise.workload.model import from_hf_config

GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "vocab_size": 50257, "n_positions": 1024}
MPT = {"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "vocab_size": 50432, "max_seq_len": 2048}
OPT = {
    "model_type": "opt",
    "hidden_size": 768,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "ffn_dim": 3072,
    "vocab_size": 50272,
    "max_position_embeddings": 2048,
}


def _oss(catalog: Catalog, **keys: object) -> dict[str, object]:
    return {**catalog.model_config("gpt-oss-20b"), **keys}


@pytest.mark.parametrize("kv", [0, 7])
def test_gpt_oss_kv_heads_must_divide_the_heads(catalog: Catalog, kv: int) -> None:
    """0 KV heads had priced a KV cache of 0 B (and NaN GiB per device), 7 over 64 heads 24 x 7 x 128 x 2 = 43,008 B
    a token: one line naming the keys, as the Llama path's."""
    with pytest.raises(ChipwiseError, match=f"64 attention heads over {kv} key-value heads: the KV heads must divide"):
        from_hf_config(_oss(catalog, num_key_value_heads=kv), "oss")


def test_gpt_oss_attention_unchanged(catalog: Catalog) -> None:
    """Through the shared check gpt-oss-20b keeps 64 heads over 8 KV heads of 64 wide, with biases: 24 layers x
    8 x 64 x 2 (K and V) x 2 B = 49,152 B of KV cache a token (before its windows)."""
    spec = from_hf_config(catalog.model_config("gpt-oss-20b"), "oss")
    att = spec.attention
    assert (att.kind, att.heads, att.kv_heads, att.head_dim, att.bias, att.out_bias) == ("gqa", 64, 8, 64, True, True)
    assert spec.kv_bytes_per_token() == 24 * 8 * 64 * 2 * 2
    with pytest.raises(ChipwiseError, match="lacks 'num_key_value_heads'"):
        from_hf_config({k: v for k, v in _oss(catalog).items() if k != "num_key_value_heads"}, "oss")


@pytest.mark.parametrize(("cfg", "key"), [(GPT2, "n_head"), (MPT, "n_heads"), (OPT, "num_attention_heads")])
def test_zero_heads_is_one_line(cfg: dict[str, object], key: str) -> None:
    """0 heads had divided by zero (an internal error) in GPT-2, MPT and OPT configs."""
    with pytest.raises(ChipwiseError, match=f"'{key}' must be a positive integer, got 0"):
        from_hf_config({**cfg, key: 0}, "m")


@pytest.mark.parametrize(("cfg", "key"), [(GPT2, "n_head"), (MPT, "n_heads"), (OPT, "num_attention_heads")])
def test_heads_must_split_the_hidden_size(cfg: dict[str, object], key: str) -> None:
    """GPT-2 small over 5 heads had heads of 153 and 124,328,340 parameters; Hugging Face refuses it."""
    hidden = cfg.get("n_embd", cfg.get("d_model", cfg.get("hidden_size")))
    with pytest.raises(ChipwiseError, match=f"hidden size {hidden} is not a whole number of 5 heads. Fix: correct "):
        from_hf_config({**cfg, key: 5}, "m")


def test_gpt2_small_by_hand() -> None:
    """GPT-2 small, heads 64 wide: 124,439,808 parameters (wte 50257 x 768 + wpe 1024 x 768 + 12 x (attention
    4 x 768^2 + 4 x 768 + MLP 2 x 768 x 3072 + 3072 + 768 + two LayerNorms 4 x 768) + ln_f 2 x 768), tied; chipwise
    counts the final norm's weight alone (768 fewer)."""
    spec = from_hf_config(GPT2, "gpt2")
    assert spec.attention.head_dim == 64
    layer = 4 * 768 * 768 + 4 * 768 + 2 * 768 * 3072 + 3072 + 768 + 4 * 768
    assert 50257 * 768 + 1024 * 768 + 12 * layer + 2 * 768 == 124_439_808
    assert spec.params_total == 124_439_808 - 768


@pytest.mark.parametrize("size", ["7", "14", "32"])
def test_qwen25_base_names_get_the_base_context(catalog: Catalog, size: str) -> None:
    """Qwen2.5-7B/14B/32B (and their Hub ids) had resolved to the Instruct preset, whose config states 32,768
    tokens; the base config states 131,072. The architecture is the same."""
    for name in (f"Qwen2.5-{size}B", f"Qwen/Qwen2.5-{size}B", f"qwen2.5-{size}b"):
        assert load_model(catalog, name).max_seq_len == 131_072
    for name in (f"Qwen2.5-{size}B-Instruct", f"Qwen/Qwen2.5-{size}B-Instruct", f"qwen2.5-{size}b-instruct"):
        assert load_model(catalog, name).max_seq_len == 32_768
    base, instruct = load_model(catalog, f"qwen2.5-{size}b"), load_model(catalog, f"qwen2.5-{size}b-instruct")
    assert base.params_total == instruct.params_total
    assert base.attention == instruct.attention and base.groups == instruct.groups


def test_qwen25_base_files_hold_the_base_config() -> None:
    """The base presets' files differ from the Instruct ones only where the base config.json does."""
    folder = Path(__file__).parents[2] / "src/chipwise/catalog/data/models"
    base = json.loads((folder / "qwen2.5-7b-base.json").read_text())
    instruct = json.loads((folder / "qwen2.5-7b.json").read_text())
    differ = {k for k in base.keys() | instruct.keys() if base.get(k) != instruct.get(k)}
    assert differ == {"max_position_embeddings", "eos_token_id", "transformers_version", "use_mrope"}
    assert (base["max_position_embeddings"], base["eos_token_id"]) == (131_072, 151_643)
