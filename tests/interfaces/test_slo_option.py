"""SLO targets as given: --slo is repeatable, the targets of every --slo taken together (a second one had replaced
the first); a JSON target that is no time is named as JSON writes it."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces.web import routes
from cli_run import run_error, run_json

SERVE = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "2", "--hardware", "h100-sxm", "--json"]


def test_plan_serve_takes_every_slo_option(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(capsys, [*SERVE, "--slo", "ttft_p99=2s", "--slo", "tpot_p99=50ms"])
    assert got["slo"] == {"ttft_p99": 2.0, "tpot_p99": 0.05}


def test_one_target_in_two_slo_options_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert "SLO key 'ttft_p99' is given twice" in run_error(
        capsys, [*SERVE, "--slo", "ttft_p99=2s", "--slo", "ttft_p99=1s"]
    )


def test_plan_fleet_takes_every_slo_option(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "plan",
        "fleet",
        "--model",
        "llama-3.1-8b",
        "--workload",
        "examples/chat-mix.yaml",
        "--hardware",
        "h100-sxm",
    ]
    got = run_json(capsys, [*argv, "--no-replay", "--json", "--slo", "ttft_p99=2s", "--slo", "tpot_p99=50ms"])
    assert got["slo"] == {"ttft_p99": 2.0, "tpot_p99": 0.05}


@pytest.mark.parametrize(("value", "said"), [(True, "true"), (None, "null")])
def test_an_slo_of_true_is_written_as_json_writes_it(value: Any, said: str) -> None:
    """/api/plan/serve had answered 'SLO tpot_p99 = True: not a time', Python's spelling, to a JSON API."""
    body = {"model": "llama-3.1-8b", "rate": 5, "hardware": "h100-sxm", "slo": {"tpot_p99": value}}
    with pytest.raises(ChipwiseError) as info:
        routes.plan_serve(body, routes.Settings())
    assert str(info.value).startswith(f"SLO tpot_p99 = {said}: not a time such as 2s or 50ms. Fix: give seconds")
