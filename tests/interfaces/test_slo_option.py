"""--slo is repeatable: the targets of every --slo are taken together (a second one had replaced the first)."""

from __future__ import annotations

import pytest

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
