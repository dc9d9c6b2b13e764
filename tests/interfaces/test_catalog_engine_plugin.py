"""`catalog engine vllm --chip trn2` shows the engine predict runs there: vllm on an AWS chip is vllm-neuron."""

from __future__ import annotations

import pytest

from chipwise import api
from chipwise.interfaces.cli.app import run
from cli_run import run_json


@pytest.mark.parametrize("chip", ["trn2", "trn1", "inf2", "trainium2"])
def test_vllm_on_an_aws_chip_shows_vllm_neuron(chip: str) -> None:
    """It had shown GPU vLLM's figures: a 2.0 ms step, max_batch 1,024, no static batch."""
    data = api.catalog_engine("vllm", chip=chip)
    assert (data["engine"], data["engine_asked"]) == ("vllm-neuron", "vllm")
    assert data["figures"]["static_batch"]["value"] == 1
    assert data["figures"]["max_batch"]["value"] == 4  # neuron's compiled batch, not vLLM's 1,024
    assert data == {**api.catalog_engine("vllm-neuron", chip=chip), "engine_asked": "vllm"}


def test_vllm_elsewhere_is_vllm(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["catalog", "engine", "vllm", "--chip", "h100", "--json"])
    assert (data["engine"], data["engine_asked"]) == ("vllm", "vllm")
    assert data["figures"]["max_batch"]["value"] == 1024
    assert api.catalog_engine("vllm")["engine"] == "vllm"  # no chip: the engine's own figures


def test_the_table_says_which_engine_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["catalog", "engine", "vllm", "--chip", "trn2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "vllm on trainium2 chips runs as vllm-neuron: its figures are shown" in out
    assert "vllm-neuron on trainium2" in out
