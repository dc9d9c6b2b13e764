"""A training cost billed for more chips than the fleet's says so (stop 61, review E #3): 12 H100s in EC2 Capacity
Blocks rent two whole p5.48xlarge instances, 16 GPUs, and 12 x the price x the time had not reached the cost."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_json

SCENARIO = (
    '{"kind":"train","model":"llama-3.1-8b","hardware":"p5.48xlarge","chips":12,"tokens":1e9,"seq_len":4096,'
    '"pricing":"capacity-block"}'
)


def test_predict_names_the_chips_billed(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """$248 = 16 x $5.191 x 2.99 h, where 12 chips give $186: the cost row says 16 are billed."""
    monkeypatch.setenv("COLUMNS", "400")  # one line, however wide the terminal the tests run in
    r = run_json(capsys, ["predict", "--json", SCENARIO])
    assert r["billed_chips"] == 16 and r["chips"] == 12
    assert r["cost_usd"] == pytest.approx(16 * r["price_usd_per_chip_hour"] * r["time_to_train_s"] / 3600)
    assert run(["predict", SCENARIO]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "cost, ideal / expected" in line)
    assert "$248 / $248, billed for 16 chips (whole p5.48xlarge units)" in row


def test_plan_train_notes_each_row_billed_for_more(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "12", "--tokens", "1e9"]
    argv += ["--hardware", "h100-sxm,b200"]
    assert run([*argv, "--pricing", "capacity-block"]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if "billed for" in line]
    assert notes == [
        "2 h100-sxm: billed for 16 chips (whole p5.48xlarge units) in capacity-block pricing, 4 more than it runs on: "
        "cost and $/Mtok count them"
    ]
    # on demand an H100 is rented by the GPU: no note
    assert run(argv) == 0
    assert "billed for" not in capsys.readouterr().out


def test_whole_units_need_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    """16 H100s in Capacity Blocks are two whole instances: billed as run."""
    assert run(["predict", SCENARIO.replace('"chips":12', '"chips":16')]) == 0
    assert "billed for" not in capsys.readouterr().out
