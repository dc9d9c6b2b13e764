"""Training text that names what it describes and says what its figures leave out: the half-goodput note a line per
row under 50%, named (one unlabelled line had described the worst of three rows), spare chips grouped to two
decimals (it read '18350.1'), the memory capacity at the use's precision (it read '79.4 of 80 GiB' on a 79.6 GiB
chip), the per-GPU billing of part of a p5 (said nowhere), and spot prices with no reclaims in the goodput."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chipwise.interfaces.cli.train_views import _scale_note, ranking_notes, spares_text
from cli_run import run, run_json

P5_NOTE = (
    "Capacity Blocks sell whole 8-GPU instances; other modes are billed per GPU used (single GPUs are rented elsewhere)"
)
LORA_8B_1 = {
    "kind": "train",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 1,
    "seq_len": 4096,
    "global_batch_tokens": 262144,
    "tokens": 1e9,
    "lora": True,
}
# the testers' spot run: 70B on 64 H100s, whose goodput is the same on spot as on demand
SPOT_70B_64 = {
    "kind": "train",
    "model": "llama-3.1-70b",
    "hardware": "h100-sxm",
    "chips": 64,
    "seq_len": 8192,
    "global_batch": 128,
    "tokens": 2e10,
    "pricing": "spot",
}


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # each row and note on one line


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert run(argv) == 0
    return " ".join(capsys.readouterr().out.split())


def _rel(chips: int, mtbf_s: float, per_day: float, ck: float, mem: float) -> dict[str, Any]:
    return {"chips": chips, "mtbf_s": mtbf_s, "failures_per_day": per_day, "goodput_checkpoint": ck,
            "goodput_in_memory": mem}  # fmt: skip


def test_each_row_under_half_goodput_gets_its_own_named_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Two rows under half and one over: a line for each of the two, numbered and named, each with its own fleet
    that keeps half the run (the one line had said only the worse row's 179,909 chips, unnamed)."""
    rows = [
        {"goodput": 0.9, "chips": 64, "reliability": _rel(64, 86400.0, 1.0, 0.9, 0.95)},
        {"goodput": 0.412, "chips": 1000, "reliability": _rel(512, 600.0, 144.0, 0.2, 0.412)},
        {"goodput": 0.365, "chips": 1000, "reliability": _rel(512, 600.0, 144.0, 0.1, 0.365)},
    ]
    rows[1]["half_goodput_chips"], rows[2]["half_goodput_chips"] = 204551, 179909
    _scale_note(rows, ["gaudi3", "h100-sxm", "tpu-v5p"])
    text = " ".join(capsys.readouterr().out.split())  # the console's width wraps each line where it will
    line = (
        "{n} {chip}: on the 512 chips it runs (of 1,000) a failure every 10.0 min (144.0 per day) leaves {ckpt} "
        "goodput with checkpoint-restart and {mem} with in-memory recovery; at its step time, half the run goes to "
        "training on at most {half} chips"
    )
    assert text == " ".join(
        (
            line.format(n=2, chip="h100-sxm", ckpt="20.0%", mem="41.2%", half="204,551"),
            line.format(n=3, chip="tpu-v5p", ckpt="10.0%", mem="36.5%", half="179,909"),
        )
    )


def test_plan_train_names_every_row_under_half_with_its_own_fleet(capsys: pytest.CaptureFixture[str]) -> None:
    """The testers' 405B on 1M chips with 600 s in-memory restarts: all three rows under half, each its own line (the
    CLI's and the web page's, which takes them from ranking_notes)."""
    argv = ["plan", "train", "--model", "llama-3.1-405b", "--chips", "1000000", "--tokens", "15T", "--hardware",
            "h100-sxm,gaudi3,tpu-v5p", "--set", "reliability.checkpoint.in_memory_recovery_s=600"]  # fmt: skip
    report = run_json(capsys, [*argv, "--json"])
    rows = report["results"]
    assert [r["goodput"] < 0.5 for r in rows] == [True, True, True]
    assert len({r["half_goodput_chips"] for r in rows}) == 3  # each row's own limit
    out = _out(capsys, argv)
    notes = [n for n in ranking_notes(report) if "a failure every" in n]
    assert len(notes) == 3
    for i, (r, note) in enumerate(zip(rows, notes, strict=True), start=1):
        head = f"{i} {r['hardware']}: on the {r['reliability']['chips']:,} chips it runs (of 1,000,000) a failure every"
        tail = f"half the run goes to training on at most {r['half_goodput_chips']:,} chips"
        assert note.startswith(head) and note.endswith(tail)
        assert " ".join(note.split()) in out


def test_spares_are_grouped_to_two_decimals() -> None:
    """917,504 busy chips want 2% = 18,350.08 spares (it read '18350.1'); 65,536 want 1,310.72 (it read '1310.72')."""
    for used, text in ((917_504, "18,350.08"), (65_536, "1,310.72"), (64, "1.28"), (50, "1")):
        row = {"chips": used, "spare_chips": used * 0.02, "spare_chips_wanted": used * 0.02,
               "reliability": {"chips": used, "spare_fraction": 0.02}}  # fmt: skip
        assert spares_text(row) == (
            f"{text} (2% of the {used:,} it runs on), paid for and idle in the expected cost, energy and carbon"
        )


def test_the_memory_capacity_reads_at_the_use_s_precision(capsys: pytest.CaptureFixture[str]) -> None:
    """An 8B full fine-tune on 2 H100: 79.4 GiB a chip of the 79.647 it has, where '79.4 of 80 GiB' showed headroom."""
    scenario = {**LORA_8B_1, "chips": 2, "lora": False}
    r = run_json(capsys, ["predict", json.dumps(scenario), "--json"])
    assert r["memory_capacity_gib"] == pytest.approx(79.647, abs=1e-3)
    out = _out(capsys, ["predict", json.dumps(scenario)])
    assert f"memory per chip │ {r['memory_per_chip_gib']:.1f} of 79.6 GiB" in out


def test_one_h100_on_demand_says_it_is_billed_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """1 H100 is billed 1 x p5.48xlarge's rate a GPU-hour (the catalog's choice; 2 Trainium2 rent a whole 16-chip
    trn2.48xlarge): the cost row says so, in the catalog's words; in a Capacity Block it rents a whole p5, no note."""
    r = run_json(capsys, ["predict", json.dumps(LORA_8B_1), "--json"])
    note = f"billed per chip: 1 of the 8 chips a p5.48xlarge holds, at the price per chip-hour: {P5_NOTE}"
    assert r["billed_per_chip_note"] == note and r["billed_chips"] == 1.0 and r["billed_units"] == []
    assert r["cost_usd"] == pytest.approx(r["price_usd_per_chip_hour"] * r["time_to_train_s"] / 3600)  # unchanged
    assert "cost, ideal / expected (whole run) │ $" in (out := _out(capsys, ["predict", json.dumps(LORA_8B_1)]))
    assert f", {note} │" in out
    block = run_json(capsys, ["predict", json.dumps({**LORA_8B_1, "pricing": "capacity-block"}), "--json"])
    assert "billed_per_chip_note" not in block and block["billed_chips"] == 8.0


def test_plan_train_says_which_rows_are_billed_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """4 H100s on p5 and on GCP's a3 (no rental units in the catalog) are billed per chip; 4 Trainium2 rent a whole
    trn2.48xlarge, and say that instead."""
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "4", "--tokens", "1e9", "--hardware",
            "h100-sxm,gcp-a3-highgpu-8g,trn2"]  # fmt: skip
    out = _out(capsys, argv)
    p5 = "h100-sxm (p5.48xlarge): billed per chip: 4 of the 8 chips a p5.48xlarge holds, at the price per chip-hour"
    assert f"{p5}: {P5_NOTE}" in out
    assert (
        "h100-sxm (gcp-a3-highgpu-8g): billed per chip: 4 of the 8 chips a gcp-a3-highgpu-8g holds, at the price per "
        "chip-hour: the catalog lists no rental units of it, so its chips are billed one by one"
    ) in out
    assert "trn2: billed for 16 chips (one 16-chip trn2.48xlarge unit)" in out
    assert "trn2: billed per chip" not in out


def test_a_whole_p5_or_more_says_nothing_of_billing_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """8, 12 and 16 H100s on demand fill a p5 at least: per GPU is how single GPUs past whole ones are rented
    (docs/economics.md), no note."""
    for chips in (8, 12, 16):
        r = run_json(capsys, ["predict", json.dumps({**LORA_8B_1, "chips": chips}), "--json"])
        assert "billed_per_chip_note" not in r and r["billed_chips"] == chips


def test_spot_says_its_goodput_has_no_reclaims(capsys: pytest.CaptureFixture[str]) -> None:
    """Spot and on demand have the same goodput and expected time (86.27 h); only the price moves. Spot says that its
    expected figures are a lower bound; on demand says nothing of it."""
    spot = run_json(capsys, ["predict", json.dumps(SPOT_70B_64), "--json"])
    demand = run_json(capsys, ["predict", json.dumps({**SPOT_70B_64, "pricing": "on-demand"}), "--json"])
    assert spot["goodput"] == demand["goodput"]
    assert spot["expected_time_to_train_s"] == demand["expected_time_to_train_s"]
    assert spot["expected_time_to_train_s"] / 3600 == pytest.approx(86.27, abs=0.01)
    note = spot["spot_note"]
    assert note == (
        "spot interruptions are not in the goodput, which counts failures and planned stops only (the catalog has no "
        "rate at which a provider reclaims spot chips): the expected time and cost are a lower bound for a run that "
        "must restart after reclaims"
    )
    assert "spot_note" not in demand
    assert f"spot prices │ {note} │" in _out(capsys, ["predict", json.dumps(SPOT_70B_64)])
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "8", "--tokens", "1e9", "--hardware",
            "h100-sxm,trn2"]  # fmt: skip
    out = _out(capsys, [*argv, "--pricing", "spot"])
    assert out.count(note) == 1  # once, for both rows
    assert note not in _out(capsys, argv)
