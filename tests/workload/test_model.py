"""ModelSpec: parameter counts of known models, FLOPs per token by hand, KV-cache bytes, config.json parsing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.workload import from_dims, load_model

PRESETS = [
    "gpt3-175b",
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "deepseek-v3",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "gpt-oss-120b",
    "llama-4-scout",
    "llama-4-maverick",
    "qwen3-32b",
    "deepseek-r1",
    "qwen3-14b",
    "qwen3-4b",
    "qwen3-coder-480b-a35b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "qwen2.5-7b-instruct",
    "qwen2.5-14b-instruct",
    "qwen2.5-32b-instruct",
    "qwen2.5-72b-instruct",
    "qwen3-0.6b",
    "qwen3-1.7b",
    "mistral-7b-v0.3",
    "mistral-small-24b",
    "kimi-k2",
    "phi-4",
]


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_loads(catalog: Catalog, name: str) -> None:
    spec = load_model(catalog, name)
    assert spec.params_total >= spec.params_active > 0


@pytest.mark.parametrize(
    ("name", "total", "active", "tol_total", "tol_active"),
    [
        ("deepseek-v3", 671e9, 37e9, 0.01, 0.02),
        ("deepseek-r1", 671e9, 37e9, 0.01, 0.02),
        ("llama-3.1-405b", 405e9, 405e9, 0.01, 0.01),
        ("mixtral-8x7b", 46.7e9, 12.9e9, 0.01, 0.02),
        ("mixtral-8x22b", 141e9, 39e9, 0.01, 0.02),
        ("qwen3-235b-a22b", 235e9, 22e9, 0.01, 0.02),
        ("qwen3-30b-a3b", 30.5e9, 3.3e9, 0.01, 0.03),
        ("gpt-oss-120b", 116.8e9, None, 0.01, None),
        ("llama-4-maverick", 400e9, 17e9, 0.01, 0.02),
        ("qwen3-32b", 32.8e9, 32.8e9, 0.01, 0.01),
        ("qwen3-14b", 14.8e9, 14.8e9, 0.01, 0.01),
        ("qwen3-4b", 4.0e9, 4.0e9, 0.01, 0.01),
        ("qwen3-coder-480b-a35b", 480e9, 35e9, 0.01, 0.02),
        # the model cards' figures (Qwen2.5-32B's card says 32.5B where its config counts 32.76B)
        ("qwen2.5-7b", 7.61e9, None, 0.01, None),
        ("qwen2.5-14b", 14.7e9, None, 0.01, None),
        ("qwen2.5-32b", 32.5e9, None, 0.01, None),
        ("qwen2.5-72b", 72.7e9, None, 0.01, None),
        ("qwen2.5-72b-instruct", 72.7e9, None, 0.01, None),
        ("llama-3.2-1b", 1.23e9, None, 0.01, None),  # Meta's Llama 3.2 model card: 1.23B and 3.21B
        ("llama-3.2-3b", 3.21e9, None, 0.01, None),
        ("qwen3-0.6b", 0.6e9, None, 0.01, None),
        ("qwen3-1.7b", 1.7e9, None, 0.02, None),
        ("mistral-7b-v0.3", 7.3e9, None, 0.01, None),
        ("mistral-small-24b", 24e9, None, 0.02, None),
        ("kimi-k2", 1.0e12, 32e9, 0.03, 0.03),
        ("phi-4", 14e9, None, 0.05, None),  # the card says 14B; its config counts 14.66B
    ],
)
def test_published_parameter_counts(
    catalog: Catalog, name: str, total: float, active: float | None, tol_total: float, tol_active: float | None
) -> None:
    spec = load_model(catalog, name)
    assert spec.params_total == pytest.approx(total, rel=tol_total)
    if active is not None and tol_active is not None:
        assert spec.params_active == pytest.approx(active, rel=tol_active)


def test_llama2_7b_flops_by_hand(catalog: Catalog) -> None:
    """Llama-2-7B: 32 layers, h=4096, 32 heads (MHA, d=128), SwiGLU ffn 11008, vocab 32000, untied head.

    Per layer: attention 4 h^2 = 67,108,864; MLP 3 h ffn = 135,266,304 -> 202,375,168 weights.
    Matmul weights per token: 32 x 202,375,168 + LM head 32000 x 4096 = 6,607,077,376 -> x2 FLOPs.
    Attention at seq 4096, causal: 32 layers x 2 x 32 heads x (128 + 128) x (4096 + 1)/2 = 1,074,266,112.
    """
    spec = load_model(catalog, "llama-2-7b")
    assert spec.matmul_flops_per_token_fwd() == 2 * 6_607_077_376
    assert spec.attention_flops_per_token_fwd(4096) == pytest.approx(32 * 2 * 32 * 256 * 4097 / 2)
    assert spec.kv_bytes_per_token(2.0) == 32 * 2 * 32 * 128 * 2  # 0.5 MiB per token in bf16
    assert spec.params_total == pytest.approx(6.738e9, rel=1e-3)


def test_gqa_and_mla_kv_cache(catalog: Catalog) -> None:
    llama70 = load_model(catalog, "llama-3.1-70b")
    assert llama70.attention.kind == "gqa"
    assert llama70.kv_bytes_per_token(2.0) == 80 * 2 * 8 * 128 * 2  # 320 KiB
    ds = load_model(catalog, "deepseek-v3")
    assert ds.attention.kind == "mla"
    assert ds.kv_bytes_per_token(1.0) == 61 * (512 + 64)  # compressed latent + rope key per layer


def test_sliding_window_caps_kv(catalog: Catalog) -> None:
    oss = load_model(catalog, "gpt-oss-120b")
    per_token = oss.kv_bytes_per_token(2.0)
    # half the layers keep only a 128-token window
    assert oss.kv_bytes(10_000, 2.0) == pytest.approx(per_token / 2 * 10_000 + per_token / 2 * 128)


def test_config_json_from_disk(tmp_path: Path) -> None:
    cfg = {
        "model_type": "llama",
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
        "tie_word_embeddings": True,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    from chipwise.catalog import load_catalog

    spec = load_model(load_catalog(), str(path))
    # per layer: q,o 2 h^2 + k,v 2 h (2 x 128) + MLP 3 h ffn + norms 2h
    per_layer = 2 * 1024 * 1024 + 2 * 1024 * 256 + 3 * 1024 * 4096 + 2 * 1024
    assert spec.params_total == 4 * per_layer + 1000 * 1024 + 1024


@pytest.mark.parametrize(
    ("name", "released"),
    [("deepseek-r1", "fp8"), ("deepseek-v3", "fp8"), ("gpt-oss-120b", "mxfp4"), ("gpt-oss-20b", "mxfp4"),
     ("llama-3.1-70b", "bf16"), ("qwen3-32b", "bf16")],
)  # fmt: skip
def test_released_weights_come_from_the_configs_quantization(catalog: Catalog, name: str, released: str) -> None:
    assert load_model(catalog, name).released_precision == released


def test_config_missing_field_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    from chipwise.catalog import load_catalog

    with pytest.raises(ChipwiseError, match="lacks 'num_hidden_layers'"):
        load_model(load_catalog(), str(path))
    # a zero size is refused where it is read (it overflowed the KV-cache sizing: 'internal error')
    sizes = {"hidden_size": 0, "num_attention_heads": 32, "num_hidden_layers": 32, "intermediate_size": 14336}
    path.write_text(json.dumps({**sizes, "vocab_size": 128256}))
    with pytest.raises(ChipwiseError, match=r"'hidden_size' must be positive, got 0\. Fix: correct it\."):
        load_model(load_catalog(), str(path))


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"num_attention_heads": 32, "num_key_value_heads": 3}, "32 attention heads over 3 key-value heads"),
        ({"num_attention_heads": 3, "num_key_value_heads": 3}, "hidden size 64 is not a whole number of 3 heads"),
        ({"num_attention_heads": 8, "num_key_value_heads": 0}, "8 attention heads over 0 key-value heads"),
    ],
)
def test_a_config_whose_heads_do_not_divide_is_one_clear_error(
    tmp_path: Path, fields: dict[str, int], problem: str
) -> None:
    """32 query heads over 3 KV heads, or a hidden size of 64 over 3 heads, is no model: both were accepted (the
    KV cache priced at 3 heads, a head of 21 dimensions)."""
    from chipwise.catalog import load_catalog

    path = tmp_path / "config.json"
    base = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2}
    path.write_text(json.dumps({**base, "vocab_size": 1000, **fields}))
    with pytest.raises(ChipwiseError, match=re.escape(problem)):
        load_model(load_catalog(), str(path))


def test_unknown_model_did_you_mean(catalog: Catalog) -> None:
    with pytest.raises(UnknownNameError, match=r"llama-3\.1-70b"):
        load_model(catalog, "llama-3.1-70")


def test_from_dims_matches_gpt3(catalog: Catalog) -> None:
    gpt3 = load_model(catalog, "gpt3-175b")
    dims = from_dims("gpt3", layers=96, hidden=12288, heads=96, ffn=4 * 12288, vocab=50257, gated=False, tied=True)
    assert dims.matmul_flops_per_token_fwd() == pytest.approx(gpt3.matmul_flops_per_token_fwd(), rel=0.01)


def test_context_length_and_mtp_modules_from_the_config(catalog: Catalog) -> None:
    """The context (max_position_embeddings) and the multi-token-prediction modules (num_nextn_predict_layers) a
    config.json states: what serving checks prompts and MTP speculation against."""
    llama, deepseek = load_model(catalog, "llama-3.1-8b"), load_model(catalog, "deepseek-v3")
    assert (llama.max_seq_len, llama.mtp_layers) == (131072, 0)
    assert (deepseek.max_seq_len, deepseek.mtp_layers) == (163840, 1)
    assert llama.summary(4096)["context_tokens"] == 131072


@pytest.mark.parametrize(
    ("model", "tp", "problem"),
    [
        ("llama-3.1-70b", 8, ""),
        ("llama-3.1-70b", 32, ""),  # 64 heads, 8 KV heads each on 4 ranks
        ("llama-3.1-70b", 3, "tp=3 does not divide the 64 attention heads"),
        ("llama-4-scout", 5, "tp=5 and the 8 KV heads do not divide one another"),  # 40 heads
        ("deepseek-v3", 16, ""),  # MLA: no KV heads to split
    ],
)
def test_tensor_parallelism_must_split_the_heads(catalog: Catalog, model: str, tp: int, problem: str) -> None:
    att = load_model(catalog, model).attention
    assert (problem in att.tp_problem(tp)) if problem else att.tp_problem(tp) == ""


def test_an_alias_is_shown_as_asked(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """deepseek-r1 is an alias of the deepseek-v3 preset (one architecture): outputs name both, not deepseek-v3
    alone, and the model is the preset's."""
    from chipwise.interfaces.cli.app import run

    r1, v3 = load_model(catalog, "DeepSeek-R1"), load_model(catalog, "deepseek-v3")
    # as the user wrote it: it had been kept lower-cased ('meta-llama/llama-3.1-8b' for 'meta-llama/Llama-3.1-8B')
    assert r1.display == "DeepSeek-R1 = deepseek-v3" and v3.display == "deepseek-v3"
    assert r1.name == v3.name and r1.groups == v3.groups
    assert run(["model", "show", "deepseek-r1"]) == 0
    assert "deepseek-r1 = deepseek-v3 (moe, mla, swiglu)" in capsys.readouterr().out


def test_a_reports_model_is_the_id_and_its_alias_apart(capsys: pytest.CaptureFixture[str]) -> None:
    """`model` holds the preset id in every report, the name given in `model_alias` (plan reports had read
    'deepseek-r1 = deepseek-v3' in `model` and predict the bare id with no alias); titles show both."""
    import chipwise.api as cw
    from chipwise.interfaces.cli.train_views import print_prediction

    plan = cw.plan_train("DeepSeek-R1", chips=256, hardware="h100-sxm")
    predicted = cw.predict({"kind": "train", "model": "DeepSeek-R1", "hardware": "h100-sxm", "chips": 256})
    for report in (plan, plan["results"][0], predicted):
        assert (report["model"], report["model_alias"]) == ("deepseek-v3", "DeepSeek-R1")
    assert (
        cw.predict({"kind": "train", "model": "deepseek-v3", "hardware": "h100-sxm", "chips": 256})["model_alias"]
        is None
    )
    print_prediction(predicted)
    assert "DeepSeek-R1 = deepseek-v3 on 256 x h100-sxm" in capsys.readouterr().out


def test_a_plots_title_names_the_alias_as_the_table_does(tmp_path: Path) -> None:
    """The plots' titles read the report's id and alias as the CLI's titles do (they had read `model` alone)."""
    import chipwise.api as cw
    from chipwise.interfaces.plots import plot

    out = tmp_path / "ranking.svg"
    plot(cw.plan_train("DeepSeek-R1", chips=256, hardware="h100-sxm"), out)
    assert "DeepSeek-R1 = deepseek-v3" in out.read_text()
