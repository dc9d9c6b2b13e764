"""Speculative decoding only where the engine has it, and a scenario's empty `speculative` named as the CLI's is."""

from __future__ import annotations

import pytest

from cli_run import run_error

FT = (
    "{kind: serve, model: llama-3.1-8b, hardware: a100-80gb, chips: 1, engine: fastertransformer, input_tokens: 1024, "
    "output_tokens: 256, concurrency: 1, requests: 30, speculative: SPEC}"
)


@pytest.mark.parametrize("spec", ["eagle:3@0.8", "draft:llama-3.2-1b:3@0.7"])
def test_fastertransformer_drafts_nothing(capsys: pytest.CaptureFixture[str], spec: str) -> None:
    """FasterTransformer had been priced with EAGLE (2.95 tokens a step, 226 tok/s) though it never drafted."""
    err = run_error(capsys, ["predict", FT.replace("SPEC", spec)])
    assert err.startswith("error: fastertransformer has no speculative decoding (")
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "a100-80gb", "--engine", "fastertransformer",
            "--concurrency", "1", "--requests", "20", "--speculative", spec]  # fmt: skip
    assert run_error(capsys, argv).startswith("error: fastertransformer has no speculative decoding (")


@pytest.mark.parametrize("spec", ["''", "'  '"])
def test_an_empty_speculative_names_no_option(capsys: pytest.CaptureFixture[str], spec: str) -> None:
    """`speculative: ''` had run without drafting, silently, where `--speculative ''` is refused."""
    scenario = FT.replace("engine: fastertransformer, ", "").replace("SPEC", spec)
    assert "speculative: empty text names no option: give e.g. mtp:3" in run_error(capsys, ["predict", scenario])


def test_a_draft_model_that_stops_a_fit_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3.1 70B in fp8 beside an 8B draft on one H100: the refusal names the draft and offers a smaller one (it
    had offered more chips or quantising only, while the same scenario without drafting runs)."""
    scenario = (
        "{kind: serve, model: llama-3.1-70b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 1024, "
        "output_tokens: 256, concurrency: 1, requests: 30, speculative: 'draft:llama-3.1-8b:3@0.8'}"
    )
    assert run_error(capsys, ["predict", scenario]) == (
        "error: llama-3.1-70b (fp8) beside its draft model llama-3.1-8b fits no replica shape on h100-sxm within 1 "
        "chip. Fix: use a smaller draft model (or EAGLE, MTP, or no drafting), use more chips, or quantise the "
        "weights or the KV cache."
    )
