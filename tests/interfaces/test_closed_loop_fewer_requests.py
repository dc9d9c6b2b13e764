"""A closed loop of more users than requests says its latencies are those of the requests' users: 100,000 users and
2,000 requests had read as a short run alone, the latencies some 50x under what 100,000 users would wait."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run

SCENARIO = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, input_tokens: 256, output_tokens: 16, "
    "concurrency: %d, requests: 40}"
)


def test_fewer_requests_than_users_says_whose_latencies_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["predict", SCENARIO % 400]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "only 40 of the 400 users sent a request: the latencies are of about 40 users in the system" in out


def test_more_requests_than_users_keeps_the_start_and_drain_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["predict", SCENARIO % 20]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "40 requests for 20 users: the users' start, all together, and the final drain" in out
