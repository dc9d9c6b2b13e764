"""Serving fleets keep training's bound, the largest fleet planned (a million chips): 1e9 req/s had sized 67 million
H100s in plan serve and plan lifecycle, priced to the cent."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.interfaces import format as fmt
from chipwise.planner.serving_report import fleet_problem
from chipwise.workload.bounds import MAX_CHIPS
from cli_run import run_error, run_json

FIX = "Fix: give the load of one deployment (a lower rate or fewer users)."


def test_the_bound_is_trainings() -> None:
    assert fleet_problem(MAX_CHIPS, "x") is None
    assert fleet_problem(MAX_CHIPS + 0.5, "serving it") == (
        "serving it takes 1,000,001 chips, past the largest fleet planned (at most 1,000,000). " + FIX[:-1]
    )


def test_plan_serve_refuses_a_load_no_chip_serves_within_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "1e9", "--hardware", "h100-sxm"]
    err = run_error(capsys, argv)
    assert err.startswith("error: serving 1,000,000,000 req/s on h100-sxm takes ")
    assert err.endswith(f"chips, past the largest fleet planned (at most 1,000,000). {FIX}")


def test_plan_lifecycle_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--train-tokens", "1T"]
    err = run_error(capsys, [*argv, "--serve-rate", "1e9"])
    assert "past the largest fleet planned (at most 1,000,000)" in err and err.endswith(FIX)


def test_predict_refuses_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sc = tmp_path / "big.yaml"
    sc.write_text(
        "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\narrival_rate: 1e9\ninput_tokens: 1024\n"
        "output_tokens: 256\n"
    )
    assert run_error(capsys, ["predict", str(sc)]) == (
        "error: serving 1,000,000,000 req/s on h100-sxm takes 67,201,224 chips, past the largest fleet planned "
        f"(at most 1,000,000). {FIX}"
    )


def test_a_chip_past_it_is_not_ranked_beside_one_within(capsys: pytest.CaptureFixture[str]) -> None:
    """2e7 req/s: 1.3 million H100s, past the bound, and fewer B200s, within it (whole replicas: splits meet the
    same bound, fleet_problem, and their checks of half a million chips' slices take most of a minute)."""
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "2e7", "--hardware", "h100-sxm,b200",
            "--no-disaggregated", "--json"]  # fmt: skip
    report = run_json(capsys, argv)
    assert all(r["chips"] <= MAX_CHIPS for r in report["results"]) and report["results"]
    reasons = {s["hardware"]: s["reason"] for s in report["skipped"]}
    assert reasons["h100-sxm"].startswith("serving the load takes 1,344,025 chips, past the largest fleet planned")


def test_a_fleets_hour_past_a_million_dollars_reads_as_usd() -> None:
    assert fmt.price(462_344_421.12) == "$462.34M" and fmt.price(27.52) == "$27.52"
