"""config.json reading, review B: Hugging Face's default windows where a gpt-oss or Mistral config leaves them out,
a malformed quantization_config or an impossible context as one line, and parameter counts to the last norm
(GPT-2's final LayerNorm bias, OPT-350m's missing final norm, Qwen2-MoE's QKV bias and shared-expert gate)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload.hf_config import MAX_CONTEXT, from_hf_config

LLAMA = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}


def _without(cfg: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in cfg.items() if k not in keys}


# ---- B3: the windows Hugging Face's config classes default to


def test_gpt_oss_without_a_window_gets_gptossconfigs_128_on_alternate_layers(catalog: Catalog) -> None:
    """GptOssConfig defaults sliding_window to 128 and layer_types to sliding on the even layers; the reader had
    read such a config as full attention everywhere, its KV at 131,072 tokens 9.0 GiB instead of 4.50 GiB."""
    stated = from_hf_config(catalog.model_config("gpt-oss-120b"), "stated")
    cfg = _without(catalog.model_config("gpt-oss-120b"), "sliding_window", "layer_types")
    spec = from_hf_config(cfg, "defaults")
    assert spec.windows == [{"layers": 18, "window": 128, "kind": "sliding"}]
    assert [g.window for g in spec.groups] == [128, 0]  # layer 0 slides, as GptOssConfig's (i + 1) % 2
    # 18 full layers x 131,072 + 18 sliding x 128 tokens, at 8 KV heads x 64 x 2 (K, V) x 2 B = 2,048 B a layer
    assert spec.kv_bytes(131_072) == 18 * (131_072 + 128) * 2048 == 4_836_556_800
    assert spec.kv_bytes(131_072) == stated.kv_bytes(131_072)


def test_mistral_without_a_window_gets_mistralconfigs_4096(catalog: Catalog) -> None:
    """MistralConfig defaults sliding_window to 4096 (every layer); an explicit null stays full attention, and
    Mixtral's default is None."""
    cfg = _without(catalog.model_config("mistral-7b"), "sliding_window")
    spec = from_hf_config(cfg, "mistral")
    assert spec.windows == [{"layers": 32, "window": 4096, "kind": "sliding"}]
    assert spec.kv_bytes(32_768) == 32 * 4096 * (8 * 128 * 2) * 2 == 512 * 2**20
    assert from_hf_config({**cfg, "sliding_window": None}, "null").windows == []
    assert from_hf_config({**LLAMA, "model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2},
                          "mixtral").windows == []  # fmt: skip


# ---- B2: a malformed quantization_config


@pytest.mark.parametrize(
    ("quant", "key", "shown"),
    [
        ({"quant_method": "awq", "bits": [4]}, "bits", "[4]"),
        ({"quant_method": "gptq", "bits": {"w": 4}}, "bits", "{'w': 4}"),
        ({"quant_method": "gptq", "bits": True}, "bits", "True"),
        ({"quant_method": "compressed-tensors",
          "config_groups": {"g": {"weights": {"type": "int", "num_bits": [4]}}}}, "num_bits", "[4]"),
        ({"quant_method": "compressed-tensors",
          "config_groups": {"g": {"weights": {"type": ["int"], "num_bits": 4}}}}, "type", "['int']"),
    ],
)  # fmt: skip
def test_a_malformed_quantization_key_is_one_line_naming_it(quant: dict[str, Any], key: str, shown: str) -> None:
    """bits [4] or {'w': 4} had been 'internal error: TypeError: unhashable type'."""
    with pytest.raises(ChipwiseError) as exc:
        from_hf_config({**LLAMA, "quantization_config": quant}, "q", where="q.json")
    assert str(exc.value).startswith(f"q.json: quantization_config '{key}' must be ")
    assert str(exc.value).endswith(f", got {shown}. Fix: correct it.")


# ---- B4: an impossible context


@pytest.mark.parametrize(
    ("changes", "shown"),
    [
        ({"max_position_embeddings": 10**30}, "'max_position_embeddings' gives a context of 1e+30 tokens"),
        ({"max_position_embeddings": MAX_CONTEXT + 1}, "a context of 2,147,483,649 tokens"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 1e300}},
         "'max_position_embeddings' scaled by rope_scaling 'factor' gives a context of 4.096e+303 tokens"),
    ],
)  # fmt: skip
def test_a_context_past_2_to_the_31_is_one_line(changes: dict[str, Any], shown: str) -> None:
    """10**30 tokens had been printed digit by digit, a rope factor of 1e300 as a 300-digit context."""
    with pytest.raises(ChipwiseError, match="past the 2,147,483,648 chipwise reads") as exc:
        from_hf_config({**LLAMA, **changes}, "c", where="c.json")
    assert shown in str(exc.value)
    assert from_hf_config({**LLAMA, "max_position_embeddings": MAX_CONTEXT}, "c").max_seq_len == MAX_CONTEXT


def test_a_size_of_400_digits_is_one_line() -> None:
    """A JSON integer past a float's range had overflowed formatting the error line itself."""
    with pytest.raises(ChipwiseError, match=r"'vocab_size' is about 10\^400, past the 10,000,000"):
        from_hf_config({**LLAMA, "vocab_size": 10**400}, "v")


# ---- B5: parameter counts to the last norm

GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024, "vocab_size": 50257}
OPT_350M = {
    "model_type": "opt", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 24, "ffn_dim": 4096,
    "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 512, "do_layer_norm_before": False,
}  # fmt: skip


def test_gpt2_small_counts_its_final_layernorm_bias() -> None:
    """wte 50257 x 768 = 38,597,376; wpe 1024 x 768 = 786,432; a layer: c_attn 768 x 2304 + 2304, c_proj
    768 x 768 + 768, c_fc 768 x 3072 + 3072, mlp c_proj 3072 x 768 + 768, ln_1 and ln_2 4 x 768 = 7,087,872, x 12;
    ln_f weight and bias 1,536: 124,439,808, Hugging Face's count (124,439,040 had left out ln_f's bias)."""
    spec = from_hf_config(GPT2, "gpt2")
    assert spec.params_total == 38_597_376 + 786_432 + 12 * 7_087_872 + 1_536 == 124_439_808
    # no norm is a matmul: the layers' linears (biases with them) and the tied head, ln_f's 1,536 not among them
    assert spec.matmul_params_active == 12 * (7_087_872 - 3_072) + 50257 * 768 == 123_614_976


def test_opt_350m_has_no_final_norm() -> None:
    """do_layer_norm_before false (OPT-350m, post-norm) leaves out final_layer_norm: embeddings 50272 x 512 =
    25,739,264, positions 2050 x 1024 = 2,099,200, project_in and project_out 2 x 512 x 1024 = 1,048,576, a layer
    4 x (1024^2 + 1024) + (1024 x 4096 + 4096) + (4096 x 1024 + 1024) + 4 x 1024 = 12,596,224, x 24: 331,196,416,
    Hugging Face's count (1,024 more had been a final norm it does not have). The pre-norm OPTs keep theirs."""
    assert from_hf_config(OPT_350M, "opt").params_total == 25_739_264 + 2_099_200 + 1_048_576 + 24 * 12_596_224
    assert from_hf_config(OPT_350M, "opt").params_total == 331_196_416
    pre_norm = {**OPT_350M, "do_layer_norm_before": True}
    assert from_hf_config(pre_norm, "opt").params_total == 331_196_416 + 2 * 1024


def test_qwen2_moe_counts_its_qkv_bias_and_shared_expert_gate() -> None:
    """Qwen2-MoE biases q, k and v (not o), as Qwen2 does, and gates its shared expert with a hidden x 1 linear.
    Hidden 64, 4 heads of 16, 2 KV heads: attention 4096 + 2 x 2048 + 4096 = 12,288 and bias 64 + 2 x 32 = 128;
    two RMSNorms 128; 4 experts of 3 x 64 x 32 = 6,144; a shared expert 3 x 64 x 48 = 9,216; router 64 x 4 = 256 and
    shared gate 64: 46,656 a layer, x 2; embedding and head 2 x 100 x 64, final norm 64: 106,176 (105,792 before)."""
    cfg = {
        "model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 128, "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 48, "num_experts": 4, "num_experts_per_tok": 2, "vocab_size": 100,
    }  # fmt: skip
    spec = from_hf_config(cfg, "qwen2_moe")
    layer = 12_288 + 128 + 128 + 4 * 6_144 + 9_216 + 256 + 64
    assert spec.params_total == 2 * layer + 2 * 6_400 + 64 == 106_176
    assert spec.params_active == 2 * (layer - 2 * 6_144) + 2 * 6_400 + 64 == 81_600
    assert spec.attention.bias and not spec.attention.out_bias
