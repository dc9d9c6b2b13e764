"""`chipwise model show` / `chipwise.api.model`: KV per token labelled for windowed and chunked models with the KV
at the full context beside it, the FLOPs convention true for them, the active-parameter convention stated, and the
alias asked for carried."""

from __future__ import annotations

import pytest

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
    assert (data["name"], data["alias"]) == ("deepseek-v3", "deepseek-ai/deepseek-r1")
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
