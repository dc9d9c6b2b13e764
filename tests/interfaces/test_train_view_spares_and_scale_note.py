"""predict's training text says what its expected figures pay for and when failures take over the run: the spare
chips in every expected cost, energy and carbon figure (Llama 70B LoRA on 64 H100 had read 'goodput 100.0%' beside an
expected cost 2.0% over the ideal, $1,398 / $1,426, with no word of spares), and plan train's note where goodput falls
under half (405B on 1M H100 had printed 49.7% goodput and 5.3 d expected against 2.6 d ideal with no note)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import spares_text
from cli_run import run_json

LORA_70B_64 = {
    "kind": "train",
    "model": "llama-3.1-70b",
    "hardware": "h100-sxm",
    "chips": 64,
    "seq_len": 8192,
    "global_batch_tokens": 1048576,
    "tokens": 1e9,
    "lora": True,
}
# 405B on a million H100s at a given plan of 998,400 ranks (TP8 PP16 DP7800): 1,600 chips left out
F405_1M = {
    "kind": "train",
    "model": "llama-3.1-405b",
    "hardware": "h100-sxm",
    "chips": 1_000_000,
    "seq_len": 8192,
    "tokens": 15e12,
    "global_batch": 124800,
    "plan": {"tp": 8, "pp": 16, "dp": 7800, "cp": 1, "vpp": 1, "microbatch": 1, "zero": 1, "recompute": "full"},
}


def _predict(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, scenario: dict[str, Any]) -> str:
    monkeypatch.setenv("COLUMNS", "400")  # each row on one line
    assert run(["predict", json.dumps(scenario)]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_the_spares_are_said_beside_the_expected_figures(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """64 x 2% = 1.28 spare chips, paid for over the expected time: the expected cost is the ideal x 1.02 / goodput."""
    r = run_json(capsys, ["predict", json.dumps(LORA_70B_64), "--json"])
    assert r["expected_cost_usd"] == pytest.approx(r["cost_usd"] * 1.02 / r["goodput"])
    out = _predict(capsys, monkeypatch, LORA_70B_64)
    assert (
        "spare chips (expected figures) │ 1.28 (2% of the 64 it runs on), paid for and idle in the expected cost, "
        "energy and carbon"
    ) in out


def test_billed_chips_stand_in_for_the_spares(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """12 H100s in Capacity Blocks are billed as two p5 (16 chips): the 4 past the 12 cover its 0.24 spares."""
    scenario = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 12, "tokens": 1e9}
    out = _predict(capsys, monkeypatch, {**scenario, "pricing": "capacity-block"})
    assert (
        "0.24 (2% of the 12 it runs on): the 4 chips paid for past those it runs on stand in for them (no more paid "
        "for)"
    ) in out


def test_a_part_of_the_spares_stood_in_for() -> None:
    """998,400 busy chips want 19,968 spares; the 1,600 a given plan leaves out stand in for as many, 18,368 more."""
    row = {
        "chips": 1_000_000,
        "billed_chips": 1_000_000.0,
        "spare_chips": 18_368.0,
        "spare_chips_wanted": 19_968.0,
        "reliability": {"chips": 998_400, "spare_fraction": 0.02},
    }
    assert spares_text(row) == (
        "19,968 (2% of the 998,400 it runs on): the 1,600 chips paid for past those it runs on stand in for 1,600 of "
        "them, and 18,368 more are paid for and idle in the expected cost, energy and carbon"
    )


def test_predict_says_when_failures_take_over_half_the_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note plan train prints (train_views._scale_note), with the fleet size that keeps half the run."""
    r = run_json(capsys, ["predict", json.dumps(F405_1M), "--json"])
    assert r["goodput"] < 0.5
    rel, half = r["reliability"], r["half_goodput_chips"]
    out = _predict(capsys, monkeypatch, F405_1M)
    assert (
        f"on the 998,400 chips it runs (of 1,000,000) a failure every {rel['mtbf_s'] / 60:.1f} min "
        f"({rel['failures_per_day']:,.1f} per day) leaves {100 * rel['goodput_checkpoint']:.1f}% goodput with "
        f"checkpoint-restart and {100 * rel['goodput_in_memory']:.1f}% with in-memory recovery; at its step time, "
        f"half the run goes to training on at most {half:,} chips"
    ) in out
    # the 1,600 left-out chips stand in for 1,600 of the 19,968 spares the 998,400 want
    assert "19,968 (2% of the 998,400 it runs on): the 1,600 chips paid for past those" in out


def test_no_note_where_goodput_keeps_over_half(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "a failure every" not in _predict(capsys, monkeypatch, LORA_70B_64)
