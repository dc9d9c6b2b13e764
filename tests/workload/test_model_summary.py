"""`chipwise model show` / `chipwise.api.model`: KV per token labelled for windowed and chunked models with the KV
at the full context beside it, the FLOPs convention true for them, the active-parameter convention stated, and the
alias asked for carried."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.workload import load_model
from chipwise.workload.presets import model_summary
from cli_run import run_json


@pytest.mark.parametrize(
    ("pid", "windows", "at_context_gib"),
    [
        ("gpt-oss-120b", [{"layers": 18, "window": 128, "kind": "sliding"}], 4.50),
        ("mistral-7b", [{"layers": 32, "window": 4096, "kind": "sliding"}], 0.50),
        ("llama-4-scout", [{"layers": 36, "window": 8192, "kind": "chunked"}], 481.125),
        ("llama-3-8b", [], 1.0),
    ],
)
def test_windowed_models_kv_at_the_full_context(
    catalog: Catalog, pid: str, windows: list[dict[str, object]], at_context_gib: float
) -> None:
    """gpt-oss-120b's 72 KiB per token times 131,072 had read 9.0 GiB; its sliding layers keep 128 tokens: 4.5."""
    data = model_summary(load_model(catalog, pid))
    assert data["attention_windows"] == windows
    assert data["kv_bytes_at_context"] / 2**30 == pytest.approx(at_context_gib, rel=1e-3)
    windowed = "sliding-window layers attend to at most their window" in data["flops_convention"]
    assert windowed == bool(windows)


def test_json_carries_the_alias_and_the_active_parameter_convention(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "show", "deepseek-ai/DeepSeek-R1", "--json"])
    assert (data["name"], data["alias"]) == ("deepseek-v3", "deepseek-ai/DeepSeek-R1")  # as written
    oss = run_json(capsys, ["model", "show", "gpt-oss-120b", "--json"])
    assert oss["alias"] is None
    # the model card's 5.1 B counts without the input embedding (201,088 x 2,880)
    assert oss["params_active"] - oss["params_active_without_embedding"] == 201_088 * 2880
    assert oss["params_active_without_embedding"] == pytest.approx(5.13e9, rel=1e-3)


def test_model_show_labels_kv_by_the_window(capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.interfaces.cli.app import run

    assert run(["model", "show", "gpt-oss-120b"]) == 0
    out = capsys.readouterr().out
    for row in (
        "18 of 36 layers sliding 128",
        "KV cache per token up to 128 (bf16)",
        "72.0 KiB",
        "KV cache of one 131,072-token context (bf16)",
        "4.50 GiB",
        "without the input embedding",
        "5.13 B",
    ):
        assert row in out, row


def test_an_mla_model_shows_the_ranks_its_kv_bytes_follow_from(capsys: pytest.CaptureFixture[str]) -> None:
    """DeepSeek-V3's 'kv heads 128' and head_dim 192 give 2 x 61 x 128 x 192 x 2 = 5.99 MB a token by the usual hand
    check; its latent cache holds (kv_lora_rank 512 + rope 64) x 61 layers x 2 B = 70,272 B, and model show had not
    printed the ranks that figure follows from."""
    from chipwise.interfaces.cli.app import run

    data = cw.model("deepseek-v3")
    mla = data["mla"]
    assert mla == {"q_lora_rank": 1536, "kv_lora_rank": 512, "rope_dim": 64, "v_head_dim": 128}
    assert data["kv_bytes_per_token"] == (mla["kv_lora_rank"] + mla["rope_dim"]) * data["layers"] * 2
    assert "mla" not in cw.model("llama-3.1-8b")
    assert run(["model", "show", "deepseek-v3"]) == 0
    assert "1536 / 512 / 64 / 128" in capsys.readouterr().out
