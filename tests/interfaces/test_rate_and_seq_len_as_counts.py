"""`plan serve --rate` and `plan train --seq-len` read as counts, as --concurrency and --chips are and as the web page
and the API take them: Typer had refused --rate 2k ('Input should be a valid number') and --seq-len 8k."""

from __future__ import annotations

import pytest

from cli_run import run_error, run_json

SERVE = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--output-tokens", "64", "--top", "1"]
TRAIN = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm", "--top", "1"]


def test_a_rate_of_2k_is_2000_requests_a_second(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, [*SERVE, "--rate", "2k", "--requests", "200", "--no-disaggregated", "--json"])
    assert data["load"]["arrival_rate_per_s"] == 2000.0 and data["load"]["label"] == "2,000 req/s"


def test_a_seq_len_of_8k_is_8000_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    text = run_json(capsys, [*TRAIN, "--seq-len", "8k", "--json"])
    number = run_json(capsys, [*TRAIN, "--seq-len", "8000", "--json"])
    assert text["results"][0]["seq_len"] == 8000
    assert text["results"][0]["step_time_s"] == number["results"][0]["step_time_s"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([*SERVE, "--rate", "fast"], "error: --rate 'fast' is not a positive number of requests/s. Fix: give e.g. 20."),
        ([*TRAIN, "--seq-len", "0"],
         "error: --seq-len '0' is not a positive finite whole number. Fix: give e.g. 8192 or 8k (8,000)."),
        ([*TRAIN, "--seq-len", "2.5k5"],
         "error: --seq-len '2.5k5' is not a positive finite whole number. Fix: give e.g. 8192 or 8k (8,000)."),
    ],
)  # fmt: skip
def test_bad_counts_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    assert run_error(capsys, argv) == says
