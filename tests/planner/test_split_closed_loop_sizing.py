"""A split's prefill pool is sized by its prompts' arrival rate; under a closed loop predict asks for the replicas
(as plan serve refuses such a split), where it had searched 16 users' one-token requests back to back and given
six prefill replicas for the TTFT one meets ($48.16/h against $13.76/h)."""

from __future__ import annotations

import pytest

from cli_run import run_error, run_json

SPLIT = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, input_tokens: 2048, output_tokens: 256, concurrency: 16, "
    "requests: 200, plan: {disaggregated: true PREFILL}}"
)


def test_a_closed_loop_split_asks_for_its_prefill_replicas(capsys: pytest.CaptureFixture[str]) -> None:
    err = run_error(capsys, ["predict", SPLIT.replace(" PREFILL", "")])
    assert err == (
        "error: a split's prefill pool is sized by an arrival rate, and a closed loop has none. Fix: give "
        "arrival_rate, or state plan.prefill.replicas (or chips, which the pools share)."
    )
    given = run_json(capsys, ["predict", SPLIT.replace(" PREFILL", ", prefill: {replicas: 1}"), "--json"])
    assert given["plan"]["prefill"]["replicas"] == 1
