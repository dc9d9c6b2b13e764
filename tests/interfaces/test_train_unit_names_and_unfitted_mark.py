"""plan train and predict name each billed unit by the instance that holds it (4,096 Inferentia2 had been billed as
'341 12-chip inf2.48xlarge units and one 6-chip inf2.48xlarge unit'; the 6-chip size is an inf2.24xlarge), and mark
chips whose families' training efficiencies are unfitted priors (Gaudi 3 had ranked first for DeepSeek-V3 on 65,536
chips unmarked; Gaudi 2's one published run, MLPerf v4.0's GPT-3 175B on 1,024 chips, took 66.24 min where chipwise
prices 46.3)."""

from __future__ import annotations

import json

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _units_text
from cli_run import run_json

G2 = {
    "kind": "train",
    "model": "gpt3-175b",
    "hardware": "gaudi2",
    "chips": 1024,
    "precision": "fp8",
    "seq_len": 2048,
    "global_batch": 2048,
    "tokens": 1258291200,
}


def _out(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", "400")
    assert run(argv) == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_smaller_unit_is_named_by_its_own_instance(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """4,096 = 341 x 12 + 4: the last 4 chips rent the smallest unit that holds them, a 6-chip inf2.24xlarge."""
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "4096", "--hardware", "inf2", "--tokens", "15T"]
    out = _out(capsys, monkeypatch, argv)
    assert "billed for 4,098 chips (341 12-chip inf2.48xlarge units and one 6-chip inf2.24xlarge unit)" in out


def test_a_unit_name_the_result_gives_is_used() -> None:
    row = {"system": "inf2.48xlarge", "billed_units": [{"count": 2, "chips": 6, "kind": "instance", "name": "x.6"}]}
    assert _units_text(row) == "two 6-chip x.6 units"
    unnamed = {"system": "trn3-ultraserver", "billed_units": [{"count": 3, "chips": 16, "kind": "x", "name": None}]}
    assert _units_text(unnamed) == "three 16-chip units"


def test_the_json_names_each_unit_it_bills() -> None:
    """The billed units carry the instance that holds them (System.unit_name), for the JSON and the web page."""
    from chipwise.api import plan_train

    row = plan_train("llama-3.1-70b", chips=4096, hardware="inf2", tokens=15e12)["results"][0]
    assert [(u["chips"], u["name"]) for u in row["billed_units"]] == [(12, "inf2.48xlarge"), (6, "inf2.24xlarge")]


def test_an_unfitted_family_is_marked_in_predict(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = run_json(capsys, ["predict", json.dumps(G2), "--json"])
    assert r["efficiency_unfitted"] is True and "efficiency_carried_from" not in r
    assert r["efficiency_unfitted_reason"] == (
        "no published training run of the gaudi2 family (nor of a family it takes figures from) is in the fit: its "
        "efficiencies are the catalog's priors (a large GEMM at 0.85 of fp8 peak), with no framework time per layer, "
        "micro-batch or step, so its time leans optimistic"
    )
    out = _out(capsys, monkeypatch, ["predict", json.dumps(G2)])
    assert f"efficiencies │ unfitted: {r['efficiency_unfitted_reason']}" in out
    fitted = run_json(capsys, ["predict", json.dumps({**G2, "hardware": "h100-sxm"}), "--json"])
    assert "efficiency_unfitted" not in fitted


def test_plan_train_marks_unfitted_rows_apart_from_carried_ones(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """gaudi3 runs on priors (†), rubin on blackwell-ultra's fitted figures (‡), h100-sxm on its own fit (neither)."""
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e11"]
    out = _out(capsys, monkeypatch, [*argv, "--hardware", "gaudi3,rubin,h100-sxm"])
    assert "gaudi3 †" in out and "rubin ‡" in out and "rubin ‡ †" not in out
    assert "h100-sxm †" not in out and "h100-sxm ‡" not in out
    assert (
        "† no published training run of these chips' families (nor of one they take figures from) is in the fit: "
        "they run on the catalog's prior efficiencies, and where those charge no framework overhead their times lean "
        "optimistic (gaudi3; --json efficiency_unfitted_reason, 'chipwise catalog show ID --sources')"
    ) in out
    assert (
        "‡ no training run of these chips' families is in the fit: their efficiencies are a predecessor's (rubin from "
        "blackwell-ultra;"
    ) in out
