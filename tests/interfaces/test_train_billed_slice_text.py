"""A training prediction whose plan leaves chips out of a fleet billed in larger units says one thing: 100 TPU v5e
with a plan on 96 had read 'the other 4 are paid for and idle in cost, MFU and energy' beside 'billed for 128 chips
(whole tpu-v5e-256 units)', a 256-chip system's name for one 128-chip slice. MFU is over the 100 chips of the fleet,
cost and energy over the 128 billed: 96 busy and 32 at idle power."""

from __future__ import annotations

import pytest

from chipwise.catalog import load_catalog
from chipwise.economics.power import power_model
from chipwise.hardware import hardware
from chipwise.interfaces.cli.app import run
from cli_run import run_json

V5E_100 = '{"kind":"train","model":"llama-3.1-8b","hardware":"tpu-v5e","chips":100,"tokens":1e11}'


def test_the_plan_row_and_the_cost_row_agree(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    r = run_json(capsys, ["predict", "--json", V5E_100])
    assert (r["chips"], r["chips_used"], r["billed_chips"]) == (100, 96, 128)
    # a slice names no instance (System.unit_name: None), as billed units have carried since they named theirs
    assert r["billed_units"] == [{"count": 1, "chips": 128, "kind": "slice", "name": None}]
    # MFU over the 100 (tokens/s x FLOP a token / (100 x 197 TFLOP/s)), energy over 96 busy and 32 idle chips
    assert r["mfu"] == pytest.approx(r["tokens_per_s"] * r["model_flops_per_token"] / (100 * 197e12))
    power = power_model(load_catalog(), hardware(load_catalog()).system("tpu-v5e-256"), scaleout=False)
    assert r["facility_power_w"] == pytest.approx((96 * power.busy_w + 32 * power.idle_w) * r["pue"])
    assert run(["predict", V5E_100]) == 0
    out = capsys.readouterr().out
    assert (
        "96 of 100 (its data parallelism divides the 128-sequence batch); 128 are billed (one 128-chip slice), the 32 "
        "past the 96 paid for and idle in cost and energy; MFU is over the 100"
    ) in out
    assert "billed for 128 chips (one 128-chip slice)" in out
    assert "the other 4" not in out and "tpu-v5e-256 units" not in out


def test_a_fleet_billed_as_its_own_chips_keeps_the_short_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """100 H100s on demand are billed per GPU: the 4 a plan on 96 leaves out are the only idle ones."""
    monkeypatch.setenv("COLUMNS", "400")
    scenario = V5E_100.replace("tpu-v5e", "h100-sxm")
    assert run(["predict", scenario]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "chips the plan runs on" in x)
    assert "; the other 4 are paid for and idle in cost, MFU and energy" in line and "billed" not in line


def test_plan_train_says_it_once(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The ranking's notes: the left-out note names the billed slice; no second 'billed for' note says '28 more'."""
    monkeypatch.setenv("COLUMNS", "400")
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "100", "--tokens", "1e11", "--hardware", "tpu-v5e"]
    assert run(argv) == 0
    out = capsys.readouterr().out
    notes = [x for x in out.splitlines() if "tpu-v5e:" in x and "billed" in x]
    assert notes == [
        "1 tpu-v5e: the plan runs on 96 of the 100 chips (its data parallelism divides the 128-sequence batch); 128 "
        "are billed (one 128-chip slice), the 32 past the 96 paid for and idle in cost and energy; MFU is over the 100"
    ]
