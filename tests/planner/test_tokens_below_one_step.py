"""A run shorter than one training step trains one whole step: its cost per token is over the tokens that step
trains, not over the few asked for (1,000 tokens had read $268 per million where the steady rate is $0.26)."""

from __future__ import annotations

import pytest

import chipwise.api as cw


def _row(tokens: float) -> dict[str, float]:
    got = cw.plan_train("llama-3.1-8b", tokens=tokens, chips=8, hardware=["h100-sxm"])
    return dict(got["results"][0])


def test_a_run_shorter_than_a_step_costs_per_token_what_a_long_run_does() -> None:
    short, long = _row(1000), _row(1e12)
    assert short["steps"] == 1
    for key in ("usd_per_million_tokens", "expected_usd_per_million_tokens"):
        assert short[key] == pytest.approx(long[key], rel=0.05), key
    assert short["tokens_per_kwh"] == pytest.approx(long["tokens_per_kwh"], rel=0.05)
