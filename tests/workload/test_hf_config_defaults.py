"""Keys a Llama 4, DeepSeek-V3 or Qwen3-MoE config leaves out take Hugging Face's defaults (Llama4TextConfig's
attention_chunk_size 8192 and intermediate_size_mlp 16384; DeepseekV3Config's n_shared_experts 1,
first_k_dense_replace 3, q_lora_rank 1536), not 0 or none; an intermediate_size of null where no layer is dense is
not asked for."""

from __future__ import annotations

from typing import Any

from chipwise.catalog import Catalog
from chipwise.workload.hf_config import from_hf_config


def _text_without(cfg: dict[str, Any], key: str) -> dict[str, Any]:
    return {**cfg, "text_config": {k: v for k, v in cfg["text_config"].items() if k != key}}


def test_scout_without_attention_chunk_size_attends_in_8192_token_chunks(catalog: Catalog) -> None:
    """36 of Scout's 48 layers chunked at 8,192 tokens, every fourth global (it had read full attention in all 48)."""
    spec = from_hf_config(_text_without(catalog.model_config("llama-4-scout"), "attention_chunk_size"), "scout")
    assert sorted((g.count, g.window, g.chunked) for g in spec.groups) == [(12, 0, False), (36, 8192, True)]


def test_llama4_without_intermediate_size_mlp_takes_16384(catalog: Catalog) -> None:
    """Scout, all MoE, reads 107,769,861,120 parameters (it had been refused); Maverick's 24 dense layers take
    16,384: 400,711,848,960, as the presets that state it."""
    scout = from_hf_config(_text_without(catalog.model_config("llama-4-scout"), "intermediate_size_mlp"), "scout")
    maverick = _text_without(catalog.model_config("llama-4-maverick"), "intermediate_size_mlp")
    assert scout.params_total == 107_769_861_120
    assert from_hf_config(maverick, "maverick").params_total == 400_711_848_960


def test_deepseek_v3_without_shared_experts_dense_layers_or_q_rank_is_deepseek_v3(catalog: Catalog) -> None:
    """671,026,404,352 / 37,552,282,624 parameters, as the preset (it had read 708.9 B / 42.6 B: no shared expert,
    all 61 layers MoE, a full-rank query projection). q_lora_rank null stays a full-rank projection (7168 x 128 x 192
    a layer for 7168 x 1536 + 1536 + 1536 x 128 x 192: 127,400,448 more in each of 61 layers)."""
    cfg = catalog.model_config("deepseek-v3")
    missing = {k: v for k, v in cfg.items() if k not in ("n_shared_experts", "first_k_dense_replace", "q_lora_rank")}
    spec = from_hf_config(missing, "dsv3")
    assert (spec.params_total, spec.params_active) == (671_026_404_352, 37_552_282_624)
    assert from_hf_config({**cfg, "q_lora_rank": None}, "dsv3").params_total == 671_026_404_352 + 61 * 127_400_448


def test_a_qwen3_moe_of_intermediate_size_null_has_no_dense_layer_to_size(catalog: Catalog) -> None:
    """Qwen3-30B-A3B, every layer MoE: 30,532,122,624 parameters with intermediate_size null (it had been refused)."""
    cfg = {**catalog.model_config("qwen3-30b-a3b"), "intermediate_size": None}
    assert from_hf_config(cfg, "q3").params_total == 30_532_122_624
