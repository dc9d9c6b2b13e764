"""plan hetero's economics options on the command line (plan train's --pricing, --region, --provider, --utilisation,
--pue: '--pricing owned' had read 'No such option'), the per-part line under the mix, and counts that read right:
'(TP1 = 1 chip)' and '(1 layer)', where '1 chips' and '1 layers' had stood."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_error, run_json

OWNED = ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "tpu-v5p=64,h100-sxm=64", "--tokens", "10B"]


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert run(argv) == 0
    return " ".join(capsys.readouterr().out.split())


def test_an_owned_mix_runs_and_gives_each_parts_share(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, [*OWNED, "--pricing", "owned"])
    assert "per part of the mix: tpu-v5p $" in out and "(64 chips billed)" in out
    assert "§ the owned cost of" in out and "each part is charged its own chip's owned cost" in out


def test_the_json_gives_the_mode_and_each_parts_share(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, [*OWNED, "--pricing", "owned", "--pue", "1.2", "--json"])
    assert r["pricing"] == "owned" and r["mixed"]["pue"] == 1.2
    assert set(r["mixed"]["parts"]) == {"tpu-v5p", "h100-sxm"}


def test_a_bad_economics_option_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown pricing mode 'bogus'" in run_error(capsys, [*OWNED, "--pricing", "bogus"])
    assert "PUE 0.5 is below 1" in run_error(capsys, [*OWNED, "--pricing", "owned", "--pue", "0.5"])


def test_one_chip_and_one_layer_read_singular(capsys: pytest.CaptureFixture[str]) -> None:
    """8B on 16 GB200 beside 32 trn1: a TP1 GB200 stage of one chip, and one trn1 layer."""
    out = _out(capsys, ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "gb200=16,trn1=32", "--tokens", "10B"])
    assert "(TP1 = 1 chip)" in out and "(1 layer)" in out  # the table's cell may wrap its plan apart at any width
    assert "= 1 chips" not in out and "(1 layers)" not in out


def test_the_api_reads_the_options_as_plan_train_does() -> None:
    """plan_hetero(pricing=..., pue=...) as plan_train: a PUE that is no number, and a utilisation for rented chips,
    are one line each, named as the API names them."""
    from chipwise import api
    from chipwise.errors import ChipwiseError

    fleet = "tpu-v5p=64,h100-sxm=64"
    with pytest.raises(ChipwiseError, match="pue 'x' is not a number"):
        api.plan_hetero("llama-3.1-8b", fleet, pricing="owned", pue="x")
    with pytest.raises(ChipwiseError, match="Fix: add pricing='owned', or drop utilisation"):
        api.plan_hetero("llama-3.1-8b", fleet, utilisation=0.5)
