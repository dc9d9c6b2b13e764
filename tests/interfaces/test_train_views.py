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


def _predict_out(capsys: pytest.CaptureFixture[str], tmp_path: Path, scenario: str, *extra: str) -> str:
    path = tmp_path / "train.yaml"
    path.write_text(scenario)
    assert run(["predict", str(path), *extra]) == 0
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


P5 = "kind: train\nmodel: llama-3.1-8b\nhardware: p5.48xlarge\nchips: 64\nseq_len: 8192\ntokens: 1e12\n"


def test_a_price_set_on_the_command_line_is_labelled_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--set h100-sxm.price=2.0 had printed 'price (on-demand, us-east-1) $2.000 per chip-hour § (a catalog
    estimate: --sources)': the price has no region, is no catalog estimate, and --sources has no price row."""
    monkeypatch.setenv("COLUMNS", "300")
    out = _predict_out(capsys, tmp_path, P5, "--set", "h100-sxm.price=2.0")
    assert "price (on-demand) $2.000 per chip-hour (set on the command line: --set h100-sxm.price=2.0)" in out
    assert "§" not in out and "us-east-1" not in out
    # a catalog price keeps its region; a catalog estimate points to --json, where its derivation is
    assert "price (on-demand, us-east-1) $6.880 per chip-hour cost" in _predict_out(capsys, tmp_path, P5)
    trn2 = P5.replace("p5.48xlarge", "trn2")
    assert (
        "price (on-demand, us-east-2) $2.730 per chip-hour § (a catalog estimate: --json price_source gives its "
        "derivation)" in _predict_out(capsys, tmp_path, trn2)
    )


def test_plan_train_marks_a_price_set_on_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """plan train had footnoted the user's H100 price as 'no rental offer in the catalog: priced by an estimate'."""
    monkeypatch.setenv("COLUMNS", "300")
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e12", "--hardware"]
    assert run([*argv, "h100-sxm,trn2", "--set", "h100-sxm.price=2.0"]) == 0
    out = capsys.readouterr().out
    assert "h100-sxm: price set on the command line: --set h100-sxm.price=2.0" in out
    notes = [line for line in out.splitlines() if line.startswith("§")]
    assert len(notes) == 1 and "trn2" in notes[0] and "h100-sxm" not in notes[0]


def test_trainium_ranks_are_neuroncores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'TP4 DP512 CP2' on 1,024 Trainium2 multiplies to 4,096: a rank is a NeuronCore, four to a chip, which neither
    predict nor plan train said."""
    monkeypatch.setenv("COLUMNS", "300")
    trn2 = P5.replace("p5.48xlarge", "trn2").replace("chips: 64", "chips: 1024").replace("8b", "70b")
    out = _predict_out(capsys, tmp_path, trn2 + "plan: {tp: 4, cp: 2}\n")
    assert "plan TP4 DP512 CP2 mb1" in out
    assert "ranks a rank is a core (4 NeuronCores a chip): tp x pp x dp x cp = 4,096 ranks on 1,024 chips" in out
    assert "ranks a rank" not in _predict_out(capsys, tmp_path, P5)
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e12", "--hardware"]
    assert run([*argv, "h100-sxm,trn1"]) == 0
    out = capsys.readouterr().out
    assert "trn1: a rank is a core (2 NeuronCores a chip): tp x pp x dp x cp = 128 ranks on 64 chips" in out
    assert "h100-sxm" not in out.split("a rank is a core")[0].splitlines()[-1]
    # chips whose notes read alike share one line
    assert run([*argv, "trn2,trn3"]) == 0
    out = capsys.readouterr().out
    assert "trn3, trn2: a rank is a core (4 NeuronCores a chip): tp x pp x dp x cp = 256 ranks on 64 chips" in out


def test_zero3_with_a_pipeline_prints_its_memory_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    plan = "plan: {tp: 8, pp: 4, dp: 32, cp: 1, vpp: 1, microbatch: 1, zero: 3, recompute: full}\n"
    scenario = P5.replace("llama-3.1-8b", "llama-3.1-70b").replace("chips: 64", "chips: 1024") + plan
    out = _predict_out(capsys, tmp_path, scenario)
    assert "memory note zero 3 with pp > 1 holds 19.2 GiB per chip, more than zero 1 (19.0) or zero 2 (10.8)" in out
