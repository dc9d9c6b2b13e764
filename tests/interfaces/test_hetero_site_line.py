"""plan hetero's text says where the mix is reckoned (its --json carried site_note; the table had no word of it)."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run


def test_a_hybrid_racks_mix_says_its_one_site(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "hetero", "--model", "llama-3.1-70b", "--fleet", "trn4=36,gb300=36", "--hybrid",
            "trn4-gb300-fusion-rack", "--tokens", "10B"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "trn4-gb300-fusion-rack is one site: both parts' energy and carbon at us-east-1" in out
