"""`chipwise catalog engine ENGINE --chip CHIP` where the family's figures are carried from another fit."""

from __future__ import annotations

import json

import pytest

from chipwise.interfaces.cli.app import run


def test_carried_figures_name_the_fit_they_come_from_and_trn4_is_projected(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header said the figures were carried from vllm-neuron on trainium2 while the `from` column said
    'vllm-neuron on trainium4', and nothing said trn4 is projected."""
    monkeypatch.setenv("COLUMNS", "240")
    assert run(["catalog", "engine", "vllm-neuron", "--chip", "trn4"]) == 0
    out = capsys.readouterr().out
    assert "(PROJECTED: trn4, announced, not shipping)" in out
    rows = {c[1].strip(): c[4].strip() for c in (line.split("│") for line in out.splitlines()) if len(c) == 6}
    assert rows["step_overhead"] == rows["layer_overhead"] == "vllm-neuron on trainium2"
    assert "vllm-neuron on trainium4" not in rows.values()
    assert run(["catalog", "engine", "vllm-neuron", "--chip", "trn4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["projected_chips"] == ["trn4"] and data["carried_from"] == "vllm-neuron on trainium2"


def test_a_fitted_family_keeps_its_own_level(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    assert run(["catalog", "engine", "vllm-neuron", "--chip", "trn2"]) == 0
    out = capsys.readouterr().out
    assert "PROJECTED" not in out
    rows = {c[1].strip(): c[4].strip() for c in (line.split("│") for line in out.splitlines()) if len(c) == 6}
    assert rows["step_overhead"] == "vllm-neuron on trainium2"


def test_a_partly_carried_family_says_which_figures_are_carried(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blackwell Ultra carries TensorRT-LLM's Blackwell fixed costs, not its scale factors: the header had said 'its
    figures are carried', and a B300 read slower than a B200 on the same plan with no word why."""
    monkeypatch.setenv("COLUMNS", "240")
    assert run(["catalog", "engine", "trtllm", "--chip", "b300"]) == 0
    out = capsys.readouterr().out
    assert "the figures marked from trtllm on blackwell are carried from its fit, the others are the engine's own" in (
        " ".join(out.split())
    )
    rows = {c[1].strip(): c[4].strip() for c in (line.split("│") for line in out.splitlines()) if len(c) == 6}
    assert rows["step_overhead"] == rows["kernel_overhead"] == "trtllm on blackwell"
    assert rows["compute_scale"] == rows["memory_scale"] == "default"
