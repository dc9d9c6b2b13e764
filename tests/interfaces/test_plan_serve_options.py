"""plan serve reads --input-tokens, --output-tokens and --concurrency as --chips and a scenario read counts (4k;
Typer's int had refused it, naming no accepted form), says every KV cache format and the default in --kv-precision's
help, and shows the KV cache asked for in its header (int8 had read as the default); /api/plan/serve answers the
kv_precision key plan serve --json gives."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.web import routes
from chipwise.serve.quant import KV_PRECISIONS
from cli_run import run_error, run_json

ARGV = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--top", "1"]


def test_counts_take_a_suffix(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, [*ARGV, "--rate", "5", "--input-tokens", "4k", "--output-tokens", "0.5k", "--json"])
    assert (data["input_tokens"], data["output_tokens"]) == (4000, 500)
    assert run_json(capsys, [*ARGV, "--concurrency", "1k", "--json"])["load"]["concurrency"] == 1000


@pytest.mark.parametrize(
    ("option", "value", "example"),
    [
        ("--output-tokens", "0", "256 or 1k"),
        ("--input-tokens", "4x", "1024 or 4k"),
        ("--concurrency", "2.5", "64 or 1k"),
    ],
)
def test_a_bad_count_names_its_option_and_the_accepted_form(
    capsys: pytest.CaptureFixture[str], option: str, value: str, example: str
) -> None:
    """--output-tokens 0 had been told 'input tokens ... give e.g. 1024', the input's default."""
    load = [] if option == "--concurrency" else ["--rate", "5"]
    assert run_error(capsys, [*ARGV, *load, option, value]) == (
        f"error: {option} '{value}' is not a positive finite whole number. Fix: give e.g. {example}."
    )


def test_kv_precision_help_lists_every_format_and_the_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["plan", "serve", "--help"]) == 0
    line = " ".join(next(x for x in capsys.readouterr().out.splitlines() if "--kv-precision" in x).split())
    assert f"KV cache: {', '.join(KV_PRECISIONS)} (default: fp8 under fp8, fp4, mxfp4 weights" in line
    assert KV_PRECISIONS == ("bf16", "fp16", "fp8", "int8", "fp4")


def test_the_header_names_the_kv_cache_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*ARGV, "--rate", "5", "--kv-precision", "int8"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the header wraps at the terminal's width
    assert out.startswith("llama-3.1-8b: 5 req/s, 1,024 in / 256 out, bf16, int8 KV cache - no SLO (on-demand prices)")
    assert run([*ARGV, "--rate", "5"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "llama-3.1-8b: 5 req/s, 1,024 in / 256 out, bf16 - no SLO (on-demand prices)"
    )


@pytest.mark.parametrize(("kv", "said"), [({"kv_precision": "fp8"}, "fp8"), ({}, None)])
def test_plan_serve_over_the_api_gives_its_kv_precision(
    quick_plans: None, kv: dict[str, str], said: str | None
) -> None:
    """As plan serve --json: the API's answer had no kv_precision key."""
    body = {"model": "llama-3.1-8b", "rate": 5, "hardware": "h100-sxm", "disaggregated": False, "top": 1, **kv}
    report = routes.plan_serve(body, routes.Settings())
    assert "kv_precision" in report and report["kv_precision"] == said
