"""The batch note counts the users who send a request: 512 users of 400 requests on one TPU v6e (b89) had read
'512 users, 311 of them waiting for a slot', the 311 counted from the 400 who send (400 - 89 = 311)."""

from __future__ import annotations

import pytest

from cli_run import run_json

SCENARIO = (
    "{kind: serve, model: llama-3.1-8b, hardware: tpu-v6e, chips: 1, input_tokens: 1024, output_tokens: 256, "
    "concurrency: 512, requests: %d}"
)


def test_fewer_requests_than_users_name_the_users_who_send(capsys: pytest.CaptureFixture[str]) -> None:
    note = run_json(capsys, ["predict", SCENARIO % 400, "--json"])["batch_note"]
    assert note.startswith("b89: ")
    assert note.endswith("; 400 of the 512 users send a request, 311 of them waiting for a slot")


def test_as_many_requests_as_users_keep_the_user_count(capsys: pytest.CaptureFixture[str]) -> None:
    """512 requests for 512 users: all of them send, 512 - 89 = 423 wait."""
    note = run_json(capsys, ["predict", SCENARIO % 512, "--json"])["batch_note"]
    assert note.endswith("; 512 users, 423 of them waiting for a slot")
