"""A config.json's optional keys read as strictly as its required ones: a malformed or impossible value is one line
naming the key (exit 2 on the command line, ChipwiseError in the API), never an internal error or a silent
truncation, and `chipwise.api.model` answers as `chipwise model show --json` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.app import run
from chipwise.workload import from_hf_config

LLAMA = {
    "model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 8192,
}  # fmt: skip
MIXTRAL = {**LLAMA, "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}
QWEN3_MOE = {
    **LLAMA, "model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
    "head_dim": 64,
}  # fmt: skip
DEEPSEEK = {
    "model_type": "deepseek_v3", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
    "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "kv_lora_rank": 64, "q_lora_rank": 96,
    "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "intermediate_size": 512,
    "n_shared_experts": 1, "first_k_dense_replace": 1, "vocab_size": 1000, "max_position_embeddings": 4096,
}  # fmt: skip
GPT_OSS = {
    "model_type": "gpt_oss", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "num_local_experts": 8, "num_experts_per_tok": 2,
    "intermediate_size": 256, "sliding_window": 128, "vocab_size": 1000, "max_position_embeddings": 4096,
}  # fmt: skip
LLAMA4: dict[str, Any] = {
    "model_type": "llama4",
    "text_config": {
        "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 64, "num_local_experts": 4, "num_experts_per_tok": 1, "intermediate_size": 128,
        "intermediate_size_mlp": 512, "attention_chunk_size": 1024, "vocab_size": 1000,
        "max_position_embeddings": 8192,
    },
}  # fmt: skip
GPT2 = {"model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_layer": 2, "vocab_size": 1000, "n_positions": 1024}
MPT = {"model_type": "mpt", "d_model": 256, "n_heads": 4, "n_layers": 2, "vocab_size": 1000, "max_seq_len": 2048}
OPT = {
    "model_type": "opt", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2, "ffn_dim": 1024,
    "vocab_size": 1000, "max_position_embeddings": 2048,
}  # fmt: skip


def llama4(**text: Any) -> dict[str, Any]:
    return {**LLAMA4, "text_config": {**LLAMA4["text_config"], **text}}


BAD = [
    # 4. a value of the wrong type: each had met a bare int() or bool() (internal error, exit 1, or misread)
    (LLAMA, "head_dim", "x", "'head_dim' must be a positive integer, got 'x'"),
    (LLAMA, "head_dim", "64", "'head_dim' must be a positive integer, got '64'"),
    (LLAMA, "num_key_value_heads", "eight", "'num_key_value_heads' must be a non-negative integer, got 'eight'"),
    (LLAMA, "max_position_embeddings", "4k", "'max_position_embeddings' must be a positive integer, got '4k'"),
    (LLAMA, "max_position_embeddings", [1], "'max_position_embeddings' must be a positive integer, got [1]"),
    ({**LLAMA, "model_type": "mistral"}, "sliding_window", "abc", "'sliding_window' must be a positive integer"),
    (QWEN3_MOE, "mlp_only_layers", 5, "'mlp_only_layers' must be a list of layer indices (whole numbers from 0 to 3)"),
    (QWEN3_MOE, "mlp_only_layers", [0.5], "'mlp_only_layers' must be a list of layer indices"),
    (QWEN3_MOE, "decoder_sparse_step", "2", "'decoder_sparse_step' must be a positive integer, got '2'"),
    (QWEN3_MOE, "shared_expert_intermediate_size", "big", "'shared_expert_intermediate_size' must be a non-neg"),
    (DEEPSEEK, "q_lora_rank", "1536", "'q_lora_rank' must be a non-negative integer, got '1536'"),
    (DEEPSEEK, "n_shared_experts", 1.5, "'n_shared_experts' must be a non-negative integer, got 1.5"),
    (DEEPSEEK, "first_k_dense_replace", -3, "'first_k_dense_replace' must be a non-negative integer, got -3"),
    (DEEPSEEK, "num_nextn_predict_layers", "1", "'num_nextn_predict_layers' must be a non-negative integer"),
    (GPT_OSS, "layer_types", "sliding_attention", "'layer_types' must be a list, got 'sliding_attention'"),
    (GPT_OSS, "layer_types", ["sliding_attention"] * 3, "'layer_types' lists 3 layers where the model has 4"),
    (GPT_OSS, "layer_types", ["linear_attention"] * 4, "'layer_types' holds 'linear_attention', which chipwise"),
    (GPT_OSS, "head_dim", None, ""),  # null: the default, read
    (GPT2, "n_inner", "4x", "'n_inner' must be a positive integer, got '4x'"),
    (GPT2, "n_positions", "1k", "'n_positions' must be a positive integer, got '1k'"),
    (MPT, "expansion_ratio", "four", "'expansion_ratio' must be a positive number, got 'four'"),
    (MPT, "max_seq_len", 2048.5, "'max_seq_len' must be a positive integer, got 2048.5"),
    (OPT, "max_position_embeddings", "2k", "'max_position_embeddings' must be a positive integer, got '2k'"),
    ({**LLAMA4, "text_config": 5}, "model_type", "llama4", "'text_config' must be an object"),
    (llama4(no_rope_layers="1110"), "model_type", "llama4", "'no_rope_layers' must be a list of 0 and 1"),
    (llama4(moe_layers=["a"]), "model_type", "llama4", "'moe_layers' must be a list of layer indices"),
    (llama4(attention_chunk_size="8k"), "model_type", "llama4", "'attention_chunk_size' must be a positive integer"),
    # 5. an impossible value: each had been read, and priced, without a word
    (MIXTRAL, "num_experts_per_tok", 16, "'num_experts_per_tok' is 16, more than the 8 experts of 'num_local_exp"),
    (MIXTRAL, "num_experts_per_tok", 0, "'num_experts_per_tok' must be a positive integer, got 0"),
    (QWEN3_MOE, "num_experts_per_tok", 9, "'num_experts_per_tok' is 9, more than the 8 experts of 'num_experts'"),
    (DEEPSEEK, "num_experts_per_tok", 9, "'num_experts_per_tok' is 9, more than the 8 experts of 'n_routed_exp"),
    (GPT_OSS, "num_experts_per_tok", -1, "'num_experts_per_tok' must be a positive integer, got -1"),
    (llama4(num_experts_per_tok=5), "model_type", "llama4", "'num_experts_per_tok' is 5, more than the 4 experts"),
    (LLAMA, "max_position_embeddings", -1, "'max_position_embeddings' must be a positive integer, got -1"),
    (LLAMA, "max_position_embeddings", 0, "'max_position_embeddings' must be a positive integer, got 0"),
    (LLAMA, "max_position_embeddings", 4096.7, "'max_position_embeddings' must be a positive integer, got 4096.7"),
    (LLAMA, "num_key_value_heads", 1.5, "'num_key_value_heads' must be a non-negative integer, got 1.5"),
    (LLAMA, "num_key_value_heads", -2, "'num_key_value_heads' must be a non-negative integer, got -2"),
    (LLAMA, "num_attention_heads", 8.5, "'num_attention_heads' must be a positive integer, got 8.5"),
    (LLAMA, "tie_word_embeddings", "false", "'tie_word_embeddings' must be true or false, got 'false'"),
    (LLAMA, "attention_bias", "false", "'attention_bias' must be true or false, got 'false'"),
    (LLAMA, "mlp_bias", 1, "'mlp_bias' must be true or false, got 1"),
    ({**LLAMA, "model_type": "qwen2"}, "use_sliding_window", "false", "'use_sliding_window' must be true or false"),
    (LLAMA, "intermediate_size", 0, "'intermediate_size' must be a positive integer, got 0"),
    (LLAMA, "intermediate_size", -512, "'intermediate_size' must be a positive integer, got -512"),
    (MIXTRAL, "num_local_experts", 0, "'num_local_experts' must be a positive integer, got 0"),
    ({**LLAMA, "model_type": "mistral"}, "sliding_window", -5, "'sliding_window' must be a positive integer, got -5"),
    ({**LLAMA, "model_type": "mistral"}, "sliding_window", 0, "'sliding_window' must be a positive integer, got 0"),
    (GPT_OSS, "sliding_window", 0, "'sliding_window' must be a positive integer, got 0"),
    ({**LLAMA, "model_type": "mistral"}, "sliding_window", None, ""),  # null: no window, read
    (GPT_OSS, "sliding_window", None, ""),
    (DEEPSEEK, "q_lora_rank", None, ""),  # DeepSeek-V2-Lite: no query compression
    # a layer step of 0 (Hugging Face divides by it) had read as 1, and layer indices past the model were ignored
    (DEEPSEEK, "moe_layer_freq", 0, "'moe_layer_freq' must be a positive integer, got 0"),
    (QWEN3_MOE, "decoder_sparse_step", 0, "'decoder_sparse_step' must be a positive integer, got 0"),
    (
        QWEN3_MOE,
        "mlp_only_layers",
        [1000],
        "'mlp_only_layers' must be a list of layer indices (whole numbers from 0 to 3)",
    ),
]


@pytest.mark.parametrize(("base", "key", "value", "needle"), BAD)
def test_an_optional_key_of_the_wrong_type_or_an_impossible_value_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: dict[str, Any], key: str, value: Any, needle: str
) -> None:
    """On the command line exit 2 and one line naming the key; in the API the same line as a ChipwiseError (it
    had raised a ValueError or TypeError, and the CLI 'internal error', exit 1)."""
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({**base, key: value}), encoding="utf-8")
    code = run(["model", "show", str(path), "--json"])
    captured = capsys.readouterr()
    if not needle:  # a null optional key is its default
        assert code == 0 and json.loads(captured.out)["params_total"] > 0
        return
    assert code == 2, captured.err
    line = " ".join(captured.err.split())
    assert line.startswith(f"error: {path}: ") and needle in line and "Fix:" in line
    with pytest.raises(ChipwiseError) as info:
        cw.model(str(path))
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_whole_floats_and_true_booleans_are_still_read() -> None:
    spec = from_hf_config(
        {**LLAMA, "num_key_value_heads": 2.0, "max_position_embeddings": 8192.0, "tie_word_embeddings": True}, "ok"
    )
    assert (spec.attention.kv_heads, spec.max_seq_len, spec.tied_embeddings) == (2, 8192, True)
    assert from_hf_config({**MIXTRAL, "num_experts_per_tok": 8}, "all").params_active == pytest.approx(
        from_hf_config(MIXTRAL, "all").params_total
    )


# ---- 3. chipwise.api.model and models answer as model show and model list do ---------------------------------------


@pytest.mark.parametrize("name", ["mpt-7b", "gpt3", "llama-3.1-8b", "llama-4-scout"])
def test_api_model_is_model_show_json(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """The API had priced every model at 4,096 tokens: MPT-7B's and GPT-3's 2,048-token contexts read at 4,096
    (mpt-7b's attention 1.07e9 where model show gives 5.37e8), and seq_len=None a TypeError."""
    assert run(["model", "show", name, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert cw.model(name) == cw.model(name, seq_len=None) == shown
    assert run(["model", "show", name, "--json", "--seq-len", "1024"]) == 0
    assert cw.model(name, seq_len=1024) == json.loads(capsys.readouterr().out)


def test_api_model_defaults_to_a_short_context_and_refuses_a_longer_sequence() -> None:
    assert cw.model("mpt-7b")["seq_len"] == 2048
    assert cw.model("llama-3.1-8b")["seq_len"] == 4096
    with pytest.raises(ChipwiseError, match=r"^seq_len 100,000 is longer than gpt3-175b's context of 2,048 tokens"):
        cw.model("gpt3", seq_len=100_000)
    with pytest.raises(ChipwiseError, match="seq_len 0 is not a positive finite whole number"):
        cw.model("gpt3", seq_len=0)


def test_cli_model_show_refuses_a_sequence_past_the_context(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["model", "show", "gpt3", "--seq-len", "4096"]) == 2
    assert "--seq-len 4,096 is longer than gpt3-175b's context of 2,048 tokens" in capsys.readouterr().err


def test_api_models_is_model_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["model", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert cw.models() == listed and any(r["id"] == "llama-3.1-8b" for r in listed["models"])


def test_an_empty_model_name_is_refused_not_read_as_the_folders_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Path('') is '.': in a folder holding a config.json, `model show ''` had printed that model (exit 0)."""
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert run(["model", "show", ""]) == 2
    assert "the model name is empty" in capsys.readouterr().err


def test_a_binary_model_config_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00binary")
    assert run(["model", "show", str(path)]) == 2
    assert f"model config '{path}' is not UTF-8 text" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("interleave_moe_layer_step", 0, "'interleave_moe_layer_step' must be a positive integer, got 0"),
        ("moe_layers", [100, 200], "'moe_layers' must be a list of layer indices (whole numbers from 0 to 3)"),
    ],
)
def test_llama4s_layer_layout_is_checked(key: str, value: Any, needle: str) -> None:
    """moe_layers [100, 200] on 4 layers had read as a dense model, and a step of 0 as 1."""
    with pytest.raises(ChipwiseError) as info:
        from_hf_config({**LLAMA4, "text_config": {**LLAMA4["text_config"], key: value}}, "l4")
    assert needle in str(info.value)


def test_a_text_config_with_no_model_type_is_said_to_be_read_as_llama4() -> None:
    """A nested text_config and no model_type is read as Llama 4: it had been in silence, and a dense config nested
    so had been told to add experts 'for model_type ?'."""
    bare = {k: v for k, v in LLAMA4.items() if k != "model_type"}
    spec = from_hf_config(bare, "l4")
    assert any("read as Llama 4 (llama4)" in n for n in spec.notes)
    dense = {"text_config": {k: v for k, v in LLAMA.items() if k != "model_type"}}
    with pytest.raises(ChipwiseError, match=r"needed for model_type 'llama4'"):
        from_hf_config(dense, "nested")
