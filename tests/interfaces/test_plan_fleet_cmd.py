"""`chipwise plan fleet`'s table names the systems left out for the precision, as plan serve's 'not ranked' does."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_error

FLEET = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--slo", "ttft_p99=2s"]
FLEET += ["--slo", "tpot_p99=50ms", "--no-replay", "--precision"]


def test_the_table_names_a_system_left_out_for_the_precision(capsys: pytest.CaptureFixture[str]) -> None:
    """An A100 beside an H100 at fp8 had left the answer without a word."""
    assert run([*FLEET, "fp8", "--hardware", "a100-80gb,h100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "not considered: a100-80gb: trtllm cannot run fp8 weights and an fp8 KV cache on a100-80gb: the chip has no "
        "FP8 units, and the engine has no known kernels that run them in bf16"
    ) in out


def test_a_precision_typo_is_its_own_error(capsys: pytest.CaptureFixture[str]) -> None:
    """It had read 'no hardware can serve this workload within the SLO (unknown weight precision 'fp9'.; ...' once
    for each of the catalog's systems."""
    assert run_error(capsys, [*FLEET, "fp9", "--hardware", "all"]) == (
        "error: unknown weight precision 'fp9'. Fix: use one of bf16, fp16, fp8, int8, w8a16, fp4, mxfp4, int4, auto."
    )
