"""The training ranking on the command line: systems of one chip told apart, one system named twice ranked once,
and a plan's bad knobs and ignored settings refused in one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_error, run_json

H100_SYSTEMS = ["p5.48xlarge", "azure-nd-h100-v5", "gcp-a3-megagpu-8g", "dgx-h100"]


def test_systems_of_one_chip_are_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    """Four H100 systems had printed as four rows labelled h100-sxm at four costs."""
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e11"]
    assert run([*argv, "--hardware", "h100-sxm,azure-nd-h100-v5,gcp-a3-megagpu-8g,dgx-h100,trn2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line[:2].strip().isdigit()]
    for system in H100_SYSTEMS:
        assert sum(f"h100-sxm ({system})" in line for line in rows) == 2, system  # both tables
    # a chip on one system keeps its short name
    assert any(line.split()[1] == "trn2" for line in rows) and not any("trn2 (" in line for line in rows)


def test_one_system_named_twice_is_ranked_once(capsys: pytest.CaptureFixture[str]) -> None:
    """h100-sxm is p5.48xlarge (its default system): the fleet had been ranked twice."""
    out = run_json(
        capsys,
        ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm,p5.48xlarge", "--json"],
    )
    assert [(r["hardware"], r["system"]) for r in out["results"]] == [("h100-sxm", "p5.48xlarge")]


@pytest.mark.parametrize(
    ("plan", "needle"),
    [
        ("{cp: 3}", "invalid plan: cp=3 does not divide seq_len 8192"),
        ("{cp: 3, tp: 1, pp: 1, dp: 2}", "invalid plan: cp=3 does not divide seq_len 8192"),
        ("{tp: .nan}", "plan.tp must be a whole number, got nan"),
        ("{pp: .inf}", "plan.pp must be a whole number, got inf"),
        ('{sp: "no", tp: 2}', "plan.sp: 'no' is not true or false"),
        ('{hsdp: "false", zero: 3}', "plan.hsdp: 'false' is not true or false"),
    ],
)
def test_a_bad_plan_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, plan: str, needle: str) -> None:
    scenario = tmp_path / "train.yaml"
    scenario.write_text(f"kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 6\nplan: {plan}\n")
    assert needle in run_error(capsys, ["predict", str(scenario)])


def test_a_utilisation_without_owned_pricing_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm"]
    assert "Fix: add --pricing owned, or drop --utilisation" in run_error(capsys, [*argv, "--utilisation", "0.5"])
    scenario = tmp_path / "train.yaml"
    scenario.write_text("kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\nutilisation: 0.5\n")
    assert "Fix: add pricing: owned, or drop utilisation" in run_error(capsys, ["predict", str(scenario)])
