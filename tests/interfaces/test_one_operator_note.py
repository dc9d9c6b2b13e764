"""Two systems joined over one network but priced at two providers say that one operator running both is assumed,
in plan hetero and in predict's prefill/decode split, as plan serve says it (providers.one_operator_note)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_json

NOTE = "one operator running both is assumed"


def test_plan_hetero_says_its_parts_are_priced_at_two_providers(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "azure-nd-mi300x-v5=64,p5.48xlarge=64"]
    argv += ["--tokens", "1T"]
    assert run_json(capsys, [*argv, "--json"])["mixed"]["providers"] == ["aws", "azure"]
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"(parts priced at aws and azure: {NOTE})" in out
    assert run(["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "trn2.48xlarge=64,p5.48xlarge=64"]) == 0
    assert NOTE not in capsys.readouterr().out  # AWS rents both


def test_predict_split_says_its_pools_are_priced_at_two_providers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "split.yaml"
    scenario.write_text(
        "kind: serve\nmodel: llama-3.1-8b\nhardware: p5.48xlarge\nprecision: bf16\ninput_tokens: 1024\n"
        "output_tokens: 256\narrival_rate: 5\nrequests: 200\nplan: {disaggregated: true, prefill: {hardware: "
        "p5.48xlarge, tp: 1, replicas: 1}, decode: {hardware: gcp-a3-highgpu-8g, tp: 1, replicas: 1}}\n"
    )
    assert run(["predict", str(scenario)]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # a narrow terminal wraps the cell
    assert f"over efa-v2 to roce-400g (pools priced at aws and gcp: {NOTE})" in out
