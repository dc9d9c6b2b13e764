"""A training prediction says what it predicts: a LoRA fine-tune names itself and its adapters (its step and checkpoint
had read as full training's, in the table and in --json), and chips a given dp leaves idle are put down to the plan
given, not to the batch (dp 32 of TP8 PP2 on 1,024 H100s was said to divide the batch, which dp 64 divides too)."""

from __future__ import annotations

import json

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _idle_reason
from cli_run import run_json

# Llama 3.1 8B on 16 H100s: the search alone would run dp 4 on all of them
SCENARIO = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 16, "plan": {"tp": 2, "pp": 2}}


def _out(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, **changes: object) -> str:
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["predict", json.dumps({**SCENARIO, **changes})]) == 0
    return capsys.readouterr().out


def test_a_lora_prediction_says_it_is_one(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = _out(capsys, monkeypatch, lora=True)
    assert "llama-3.1-8b LoRA fine-tune on 16 x h100-sxm" in out
    assert "rank 16, 9.44 M parameters trained; the base frozen" in out
    got = run_json(capsys, ["predict", json.dumps({**SCENARIO, "lora": True}), "--json"])
    adapters = 32 * 16 * (4096 + 6144 + 4096 + 4096)  # 32 layers of QKV and output projections at rank 16
    assert (got["lora"], got["lora_rank"], got["lora_adapter_params"]) == (True, 16, adapters)


def test_full_training_says_it_is_not_lora(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(capsys, ["predict", json.dumps(SCENARIO), "--json"])
    assert got["lora"] is False and "lora_rank" not in got


def test_chips_a_given_dp_leaves_idle_are_the_plans_doing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _out(capsys, monkeypatch, plan={"tp": 2, "pp": 2, "dp": 2})
    assert "8 of 16 (the plan given uses 8 ranks); the other 8 are paid for and idle" in out
    assert "batch" not in next(line for line in out.splitlines() if "chips the plan runs on" in line)


def test_the_batch_explains_idle_chips_only_for_a_dp_the_search_chose() -> None:
    plan = {"tp": 8, "pp": 2, "dp": 32, "cp": 1, "vpp": 1, "microbatch": 4}
    assert _idle_reason(plan, 512, dp_given=True) == "the plan given uses 512 ranks"
    assert _idle_reason(plan, 512) == "its data parallelism divides the 512-sequence batch"
    assert _idle_reason({**plan, "cp": 2}, 512, dp_given=True) == "the plan given uses 1,024 ranks"
