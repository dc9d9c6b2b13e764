"""config.json reading as Hugging Face reads it: which layers a sliding window covers (Qwen2's max_window_layers and
layer_types), gated MLPs whatever hidden_act says, Gemma 2, model types chipwise does not read, Llama 4's chunked
attention priced as chunks, and attention heads checked (gpt-oss, GPT-2, MPT, OPT)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload import from_hf_config, load_model
from chipwise.workload.model import ModelSpec

#: Qwen2-7B's config.json (Qwen/Qwen2-7B), its window switched by each test
QWEN2_7B = {
    "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
    "max_window_layers": 28, "sliding_window": 4096, "use_sliding_window": False, "tie_word_embeddings": False,
    "hidden_act": "silu",
}  # fmt: skip
#: Llama-2-7B's config.json (meta-llama/Llama-2-7b-hf): 6,738,415,616 parameters
LLAMA2_7B = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
    "hidden_act": "silu", "tie_word_embeddings": False,
}  # fmt: skip
#: Gemma-2-9B's config.json (google/gemma-2-9b)
GEMMA2_9B = {
    "model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "vocab_size": 256000, "max_position_embeddings": 8192,
    "sliding_window": 4096, "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0,
    "final_logit_softcapping": 30.0,
}  # fmt: skip


def windows(spec: ModelSpec) -> dict[int, int]:
    """Layers per window size (0: full attention)."""
    counts: dict[int, int] = {}
    for g in spec.groups:
        counts[g.window] = counts.get(g.window, 0) + g.count
    return counts


# ---- 1. which layers a sliding window covers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, {0: 28}),  # use_sliding_window false: no window (every preset)
        ({"use_sliding_window": True}, {0: 28}),  # the first max_window_layers (all 28) keep full attention
        ({"use_sliding_window": True, "max_window_layers": 0}, {4096: 28}),
        ({"use_sliding_window": True, "max_window_layers": 20}, {0: 20, 4096: 8}),
        ({"use_sliding_window": True, "sliding_window": None, "max_window_layers": 0}, {0: 28}),  # null: none
        # Qwen2Config's defaults where the keys are missing: a 4,096 window past layer 28
        (
            {
                "use_sliding_window": True,
                "sliding_window": "drop",
                "max_window_layers": "drop",
                "num_hidden_layers": 32,
            },
            {0: 28, 4096: 4},
        ),
        (
            {"use_sliding_window": True, "layer_types": ["full_attention"] * 4 + ["sliding_attention"] * 24},
            {0: 4, 4096: 24},
        ),
        ({"use_sliding_window": False, "layer_types": ["sliding_attention"] * 28}, {0: 28}),  # HF: no window
    ],
)
def test_qwen2_windows_the_layers_past_max_window_layers(changes: dict[str, object], expected: dict[int, int]) -> None:
    """Hugging Face windows Qwen2 layer i when use_sliding_window is true and i >= max_window_layers (or where
    layer_types says sliding_attention). chipwise had windowed i < max_window_layers: max_window_layers 28 (all
    full) read as all windowed, 0 (all windowed) as all full."""
    cfg = {**QWEN2_7B, **changes}
    cfg = {k: v for k, v in cfg.items() if v != "drop"}
    assert windows(from_hf_config(cfg, "qwen2")) == expected


def test_qwen2_max_window_layers_28_prices_full_attention_as_the_plain_model() -> None:
    """The reviewer's repro: Qwen2-7B with use_sliding_window and max_window_layers 28 at 32k is the plain model
    (6.58e9 attention FLOPs a token), not all-windowed (1.54e9); all-windowed is max_window_layers 0."""
    plain = from_hf_config(QWEN2_7B, "plain").attention_flops_per_token_fwd(32768)
    full = from_hf_config({**QWEN2_7B, "use_sliding_window": True}, "full").attention_flops_per_token_fwd(32768)
    cfg = {**QWEN2_7B, "use_sliding_window": True, "max_window_layers": 0}
    sliding = from_hf_config(cfg, "sliding").attention_flops_per_token_fwd(32768)
    assert full == plain == pytest.approx(6.577e9, rel=1e-3)
    # 28 layers x 2 x 28 heads x 256 x (4096 x 4097 / 2 + (32768 - 4096) x 4096) / 32768
    assert sliding == pytest.approx(28 * 2 * 28 * 256 * (4096 * 4097 / 2 + 28672 * 4096) / 32768)


def test_the_window_families_of_the_llama_like_types() -> None:
    """Mistral, Mixtral and Phi-3 window every layer where sliding_window is set (null: none); Llama has no window
    whatever its config says (it had taken use_sliding_window as Qwen's)."""
    base = {**LLAMA2_7B, "sliding_window": 2048, "use_sliding_window": True}
    assert windows(from_hf_config({**base, "model_type": "mistral"}, "m")) == {2048: 32}
    assert windows(from_hf_config({**base, "model_type": "phi3"}, "phi")) == {2048: 32}
    assert windows(from_hf_config({**base, "model_type": "mistral", "sliding_window": None}, "m")) == {0: 32}
    assert windows(from_hf_config(base, "llama")) == {0: 32}
    mixtral = {**base, "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}
    assert windows(from_hf_config(mixtral, "mixtral")) == {2048: 32}


# ---- 2. gated MLPs, Gemma 2, model types chipwise does not read ---------------------------------------------------


def test_a_llama_mlp_is_gated_whatever_hidden_act_says() -> None:
    """LlamaMLP (and Mistral's, Qwen2's, Mixtral's experts) has gate, up and down projections for any hidden_act:
    Llama-2-7B with hidden_act gelu had read as a 2-matrix MLP, 5.30 B parameters for 6.74 B."""
    silu = from_hf_config(LLAMA2_7B, "silu")
    gelu = from_hf_config({**LLAMA2_7B, "hidden_act": "gelu"}, "gelu")
    assert silu.params_total == gelu.params_total == 6_738_415_616
    assert (silu.mlp_kind, gelu.mlp_kind) == ("swiglu", "geglu")
    assert silu.flops_per_token_fwd(4096) == gelu.flops_per_token_fwd(4096)


def test_gemma2_9b_by_hand() -> None:
    """Gemma-2-9B: 42 layers of attention (16 heads of 256, 8 KV heads) 44,040,192, GeGLU MLP 3 x 3584 x 14336 =
    154,140,672 and four RMSNorms 14,336; embedding 256000 x 3584 tied; the final norm: 9,241,705,984 parameters,
    the published 9.24 B (chipwise had read it as a Llama: 7.08 B). Even layers keep a 4,096-token window."""
    spec = from_hf_config(GEMMA2_9B, "gemma-2-9b")
    per_layer = 3584 * 16 * 256 * 2 + 3584 * 8 * 256 * 2 + 3 * 3584 * 14336 + 4 * 3584
    assert spec.params_total == 42 * per_layer + 256000 * 3584 + 3584 == 9_241_705_984
    assert spec.tied_embeddings and spec.mlp_kind == "geglu" and spec.attention.head_dim == 256
    assert windows(spec) == {4096: 21, 0: 21} and spec.groups[0].window == 4096  # layer 0 is windowed
    full, sliding = (8192 + 1) / 2, (4096 * 4097 / 2 + 4096 * 4096) / 8192
    assert spec.attention_flops_per_token_fwd(8192) == pytest.approx(21 * 2 * 16 * 512 * (full + sliding))
    assert spec.kv_bytes(8192) == 21 * 8 * 512 * 2 * (8192 + 4096)
    assert spec.max_seq_len == 8192


@pytest.mark.parametrize("model_type", ["gemma", "gemma3_text", "falcon", "starcoder2"])
def test_a_model_type_chipwise_does_not_read_is_one_line(model_type: str) -> None:
    """A config.json with Llama's keys and another model_type had been read as a Llama without a word (Gemma's
    GeGLU MLP as a plain one)."""
    with pytest.raises(ChipwiseError) as info:
        from_hf_config({**LLAMA2_7B, "model_type": model_type}, "odd", where="cfg.json")
    message = str(info.value)
    assert f"cfg.json: model_type '{model_type}' is not supported (chipwise reads deepseek_v2" in message
    assert "gemma2" in message and "llama" in message and "Fix:" in message and "\n" not in message


def test_a_config_without_model_type_is_read_as_a_llama_and_says_so() -> None:
    cfg = {k: v for k, v in LLAMA2_7B.items() if k != "model_type"}
    spec = from_hf_config(cfg, "nameless")
    assert spec.params_total == 6_738_415_616
    assert any("names no model_type: read as a Llama" in note for note in spec.notes)


def test_llama_attention_and_mlp_biases() -> None:
    """Llama's attention_bias biases q, k, v and o; mlp_bias its gate, up and down projections (the output bias
    and mlp_bias had been left out); Qwen2 biases q, k and v only."""
    plain = from_hf_config(LLAMA2_7B, "plain").params_total
    assert from_hf_config({**LLAMA2_7B, "attention_bias": True}, "b").params_total == plain + 32 * 4 * 4096
    assert from_hf_config({**LLAMA2_7B, "mlp_bias": True}, "m").params_total == plain + 32 * (2 * 11008 + 4096)
    qwen = from_hf_config(QWEN2_7B, "qwen2")
    assert qwen.attention.bias and not qwen.attention.out_bias
    assert qwen.params_total == 7_615_616_512  # Qwen2-7B's published count


# ---- 6. Llama 4's chunked attention -------------------------------------------------------------------------------


def test_llama4_chunks_are_priced_as_chunks(catalog: Catalog) -> None:
    """A query of a chunked layer sees its own chunk only: (8192 + 1) / 2 keys on average over full chunks, not a
    sliding window's ~8192. Scout at 131,072: 12 global layers x 20480 x 65536.5 + 36 chunked x 20480 x 4096.5 =
    19,126,517,760 attention FLOPs a token (21,957,327,360 as a sliding window). The KV cache still holds at most
    a chunk a chunked layer."""
    scout = load_model(catalog, "llama-4-scout")
    per_pos = scout.attention.score_flops_per_position
    assert per_pos == 20480
    assert scout.attention_flops_per_token_fwd(131072) == 12 * 20480 * 65536.5 + 36 * 20480 * 4096.5
    assert scout.attention_flops_per_token_fwd(131072) == 19_126_517_760
    assert scout.mean_context(131072, 8192, chunked=True) == 4096.5
    assert scout.mean_context(131072, 8192) == 4096.5  # a group's window alone: chunked as the model's layers are
    assert scout.mean_context(131072, 8192, chunked=False) == pytest.approx(8192 - 8192 * 8191 / 2 / 131072)
    # a last chunk of r = 1000 positions: 2 full chunks of 8192 x 8193 / 2 pairs, then 1000 x 1001 / 2
    s = 2 * 8192 + 1000
    assert scout.mean_context(s, 8192, chunked=True) == pytest.approx((2 * 8192 * 8193 / 2 + 1000 * 1001 / 2) / s)
    assert scout.mean_context(4096, 8192, chunked=True) == (4096 + 1) / 2  # within one chunk
    assert scout.kv_bytes(100_000) == scout.kv_bytes_per_token() / 48 * (12 * 100_000 + 36 * 8192)
    maverick = load_model(catalog, "llama-4-maverick")
    assert maverick.attention_flops_per_token_fwd(131072) == 19_126_517_760


def test_llama4_layer_types_and_no_rope_layers_place_the_chunks(catalog: Catalog) -> None:
    cfg = dict(catalog.model_config("llama-4-scout"))
    text = dict(cfg["text_config"])
    types = ["chunked_attention", "full_attention"] * 24
    spec = from_hf_config({**cfg, "text_config": {**text, "layer_types": types}}, "scout")
    assert sum(g.count for g in spec.groups if g.chunked) == 24
    spec = from_hf_config({**cfg, "text_config": {**text, "no_rope_layers": [1] * 47 + [0]}}, "scout")
    assert sum(g.count for g in spec.groups if g.chunked) == 47


@pytest.mark.parametrize(
    ("rope", "context"),
    [
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 131_072),
        ({"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096}, 163_840),
        ({"type": "linear", "factor": 2.0}, 81_920),
        ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, 40_960),
        ({"rope_type": "longrope", "factor": 4.0}, 40_960),
    ],
)
def test_rope_scaling_sets_the_context_as_vllm_derives_max_model_len(
    catalog: Catalog, rope: dict[str, object], context: int
) -> None:
    """Qwen's model cards add yarn x4 over 32,768 for 131,072 tokens; the context had stayed at 40,960."""
    cfg = {**catalog.model_config("qwen3-8b"), "rope_scaling": rope}
    assert cfg["max_position_embeddings"] == 40_960
    assert from_hf_config(cfg, "q").max_seq_len == context


def test_a_malformed_rope_scaling_is_one_line(catalog: Catalog) -> None:
    cfg = {**catalog.model_config("qwen3-8b"), "rope_scaling": {"rope_type": "yarn", "factor": "4"}}
    with pytest.raises(ChipwiseError) as exc:
        from_hf_config(cfg, "q", where="q.json")
    assert str(exc.value) == "q.json: rope_scaling 'factor' must be a positive number, got '4'. Fix: correct it."


def test_the_presets_contexts_stay_their_configs_own(catalog: Catalog) -> None:
    """Every preset's yarn scaling multiplies out to its own max_position_embeddings (DeepSeek-V3 4,096 x 40)."""
    for pid in ("deepseek-v3", "kimi-k2", "gpt-oss-120b", "gpt-oss-20b", "llama-3.1-8b"):
        cfg = catalog.model_config(pid)
        assert load_model(catalog, pid).max_seq_len == cfg.get("text_config", cfg)["max_position_embeddings"]


OPT_350M = {
    "model_type": "opt", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "ffn_dim": 4096,
    "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 512, "do_layer_norm_before": False,
}  # fmt: skip


def test_opt_350m_embeds_at_word_embed_proj_dim() -> None:
    """HF facebook/opt-350m: embeddings and tied LM head 50,272 x 512, project_in/out 512 <-> 1,024: 331,196,416
    parameters, no final norm (OPT-350m, post-norm, has none: 1,024 more had been counted); 355,888,128 had counted
    the embeddings at 1,024."""
    spec = from_hf_config(OPT_350M, "opt-350m")
    assert spec.params_total == 331_196_416
    assert spec.projection_params == 2 * 512 * 1024
    # matmuls: every decoder linear, both projections, and the LM head at 512 wide
    assert spec.matmul_flops_per_token_fwd() == 2 * (331_196_416 - 50272 * 512 - 2050 * 1024 - 24 * 4096 + 50272 * 512)
    same = from_hf_config({**OPT_350M, "word_embed_proj_dim": 1024}, "opt")
    assert (same.projection_params, same.embedding_params) == (0, 50272 * 1024 + 2050 * 1024)


# Attention heads: gpt-oss's KV heads under the shared check, GPT-2/MPT/OPT heads positive and a whole number of them in
# the hidden size.


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
    4 x 768^2 + 4 x 768 + MLP 2 x 768 x 3072 + 3072 + 768 + two LayerNorms 4 x 768) + ln_f 2 x 768), tied; ln_f's
    bias had been left out (768 fewer)."""
    spec = from_hf_config(GPT2, "gpt2")
    assert spec.attention.head_dim == 64
    layer = 4 * 768 * 768 + 4 * 768 + 2 * 768 * 3072 + 3072 + 768 + 4 * 768
    assert 50257 * 768 + 1024 * 768 + 12 * layer + 2 * 768 == 124_439_808
    assert spec.params_total == 124_439_808
