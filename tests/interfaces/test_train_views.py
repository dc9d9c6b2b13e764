"""The training ranking on the command line: systems of one chip told apart, one system named twice ranked once, and a
plan's bad knobs and ignored settings refused in one line (exit 2); chips billed past the fleet's, the failure rate
beside the MTBF, what leaves a plan's chips idle, and the expected time to train, finite however long."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _expected_time, _idle_reason, _rate
from cli_run import run_error, run_json

H100_SYSTEMS = ["p5.48xlarge", "azure-nd-h100-v5", "gcp-a3-megagpu-8g", "dgx-h100"]


def test_systems_of_one_chip_are_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    """Four H100 systems had printed as four rows labelled h100-sxm at four costs."""
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e11"]
    assert run([*argv, "--hardware", "h100-sxm,azure-nd-h100-v5,gcp-a3-megagpu-8g,dgx-h100,trn2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line[:2].strip().isdigit()]
    for system in H100_SYSTEMS:
        assert sum(f"h100-sxm ({system})" in line for line in rows) == 2, system  # both tables
    # a chip on one system keeps its short name
    assert any(line.split()[1] == "trn2" for line in rows) and not any("trn2 (" in line for line in rows)


def test_one_system_named_twice_is_ranked_once(capsys: pytest.CaptureFixture[str]) -> None:
    """h100-sxm is p5.48xlarge (its default system): the fleet had been ranked twice."""
    out = run_json(
        capsys,
        ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm,p5.48xlarge", "--json"],
    )
    assert [(r["hardware"], r["system"]) for r in out["results"]] == [("h100-sxm", "p5.48xlarge")]


@pytest.mark.parametrize(
    ("plan", "needle"),
    [
        ("{cp: 3}", "invalid plan: cp=3 does not divide seq_len 8192"),
        ("{cp: 3, tp: 1, pp: 1, dp: 2}", "invalid plan: cp=3 does not divide seq_len 8192"),
        ("{tp: .nan}", "plan.tp must be a whole number, got nan"),
        ("{pp: .inf}", "plan.pp must be a whole number, got inf"),
        ('{sp: "no", tp: 2}', "plan.sp: 'no' is not true or false"),
        ('{hsdp: "false", zero: 3}', "plan.hsdp: 'false' is not true or false"),
    ],
)
def test_a_bad_plan_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, plan: str, needle: str) -> None:
    scenario = tmp_path / "train.yaml"
    scenario.write_text(f"kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 6\nplan: {plan}\n")
    assert needle in run_error(capsys, ["predict", str(scenario)])


def test_a_utilisation_without_owned_pricing_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm"]
    assert "Fix: add --pricing owned, or drop --utilisation" in run_error(capsys, [*argv, "--utilisation", "0.5"])
    scenario = tmp_path / "train.yaml"
    scenario.write_text("kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\nutilisation: 0.5\n")
    assert "Fix: add pricing: owned, or drop utilisation" in run_error(capsys, ["predict", str(scenario)])


def _predict_out(capsys: pytest.CaptureFixture[str], tmp_path: Path, scenario: str, *extra: str) -> str:
    path = tmp_path / "train.yaml"
    path.write_text(scenario)
    assert run(["predict", str(path), *extra]) == 0
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


P5 = "kind: train\nmodel: llama-3.1-8b\nhardware: p5.48xlarge\nchips: 64\nseq_len: 8192\ntokens: 1e12\n"


def test_a_price_set_on_the_command_line_is_labelled_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--set h100-sxm.price=2.0 had printed 'price (on-demand, us-east-1) $2.000 per chip-hour § (a catalog
    estimate: --sources)': the price has no region, is no catalog estimate, and --sources has no price row."""
    monkeypatch.setenv("COLUMNS", "300")
    out = _predict_out(capsys, tmp_path, P5, "--set", "h100-sxm.price=2.0")
    assert "price (on-demand) $2.000 per chip-hour (set on the command line: --set h100-sxm.price=2.0)" in out
    assert "§" not in out and "us-east-1" not in out
    # a catalog price keeps its region; a catalog estimate points to --json, where its derivation is
    assert "price (on-demand, us-east-1) $6.880 per chip-hour cost" in _predict_out(capsys, tmp_path, P5)
    trn2 = P5.replace("p5.48xlarge", "trn2")
    assert (
        "price (on-demand, us-east-2) $2.730 per chip-hour § (a catalog estimate: --json price_source gives its "
        "derivation)" in _predict_out(capsys, tmp_path, trn2)
    )


def test_plan_train_marks_a_price_set_on_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """plan train had footnoted the user's H100 price as 'no rental offer in the catalog: priced by an estimate'."""
    monkeypatch.setenv("COLUMNS", "300")
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e12", "--hardware"]
    assert run([*argv, "h100-sxm,trn2", "--set", "h100-sxm.price=2.0"]) == 0
    out = capsys.readouterr().out
    assert "h100-sxm: price set on the command line: --set h100-sxm.price=2.0" in out
    notes = [line for line in out.splitlines() if line.startswith("§")]
    assert len(notes) == 1 and "trn2" in notes[0] and "h100-sxm" not in notes[0]


def test_trainium_ranks_are_neuroncores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'TP4 DP512 CP2' on 1,024 Trainium2 multiplies to 4,096: a rank is a NeuronCore, four to a chip, which neither
    predict nor plan train said."""
    monkeypatch.setenv("COLUMNS", "300")
    trn2 = P5.replace("p5.48xlarge", "trn2").replace("chips: 64", "chips: 1024").replace("8b", "70b")
    out = _predict_out(capsys, tmp_path, trn2 + "plan: {tp: 4, cp: 2}\n")
    assert "plan TP4 DP512 CP2 mb1" in out
    assert "ranks a rank is a core (4 NeuronCores a chip): tp x pp x dp x cp = 4,096 ranks on 1,024 chips" in out
    assert "ranks a rank" not in _predict_out(capsys, tmp_path, P5)
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--tokens", "1e12", "--hardware"]
    assert run([*argv, "h100-sxm,trn1"]) == 0
    out = capsys.readouterr().out
    assert "trn1: a rank is a core (2 NeuronCores a chip): tp x pp x dp x cp = 128 ranks on 64 chips" in out
    assert "h100-sxm" not in out.split("a rank is a core")[0].splitlines()[-1]
    # chips whose notes read alike share one line
    assert run([*argv, "trn2,trn3"]) == 0
    out = capsys.readouterr().out
    assert "trn3, trn2: a rank is a core (4 NeuronCores a chip): tp x pp x dp x cp = 256 ranks on 64 chips" in out


def test_zero3_with_a_pipeline_prints_its_memory_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    plan = "plan: {tp: 8, pp: 4, dp: 32, cp: 1, vpp: 1, microbatch: 1, zero: 3, recompute: full}\n"
    scenario = P5.replace("llama-3.1-8b", "llama-3.1-70b").replace("chips: 64", "chips: 1024") + plan
    out = _predict_out(capsys, tmp_path, scenario)
    assert "memory note zero 3 with pp > 1 holds 19.2 GiB per chip, more than zero 1 (19.0) would" in out


# A training cost billed for more chips than the fleet's says so: 12 H100s in EC2 Capacity Blocks rent two whole
# p5.48xlarge instances, 16 GPUs, and 12 x the price x the time had not reached the cost.


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
    assert "$248 / $248, billed for 16 chips (two 8-chip p5.48xlarge units)" in row


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
        "2 h100-sxm: billed for 16 chips (two 8-chip p5.48xlarge units) in capacity-block pricing, 4 more than it runs "
        "on: cost and $/Mtok count them, and energy at idle power"
    ]
    # on demand an H100 is rented by the GPU: no note
    assert run(argv) == 0
    assert "billed for" not in capsys.readouterr().out


def test_whole_units_need_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    """16 H100s in Capacity Blocks are two whole instances: billed as run."""
    assert run(["predict", SCENARIO.replace('"chips":12', '"chips":16')]) == 0
    assert "billed for" not in capsys.readouterr().out


# The failure rate beside the MTBF reads as a rate, not zero: 64 H100s fail once in 33 days, 0.030 a day, which one
# decimal had printed as 0.0; and a partial plan's idle chips put down to what idles them.


@pytest.mark.parametrize(
    ("per_day", "text"), [(1 / 33.0, "0.030"), (0.004567, "0.0046"), (0.0, "0"), (0.4545, "0.45"), (1234.5, "1,234.5")]
)
def test_failures_per_day_keep_two_significant_figures_below_one(per_day: float, text: str) -> None:
    assert _rate(per_day) == text


def test_predict_prints_the_rate_its_mtbf_gives(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    scenario = '{"kind":"train","model":"llama-3.1-70b","hardware":"h100-sxm","chips":64,"plan":{"tp":8,"pp":2,"dp":4}}'
    assert run(["predict", scenario]) == 0
    row = next(
        line for line in capsys.readouterr().out.splitlines() if "failures + planned stops per day / MTBF" in line
    )
    assert "0.030 + 0.0034 / 33.0 d" in row  # 8 hosts x 1.7725e-5 x 24 h planned stops


def test_idle_chips_are_put_down_to_what_leaves_them_idle() -> None:
    """A partial plan fixing dp 32 on 1,024 H100s runs on 256, its dp at micro-batch 16 taking
    the whole 512-sequence batch; that was put down to the batch ("its data parallelism divides the batch")."""
    plan = {"tp": 8, "pp": 1, "dp": 32, "vpp": 1, "microbatch": 16}
    assert _idle_reason(plan, 512) == "dp 32 x 16 sequences each take the whole 512-sequence batch"
    interleaved = {"tp": 8, "pp": 4, "dp": 16, "vpp": 2, "microbatch": 8}  # 16 x 8 x 4 = 512
    assert _idle_reason(interleaved, 512) == "dp 16 x 32 sequences each take the whole 512-sequence batch"
    assert _idle_reason({**plan, "dp": 16, "microbatch": 1}, 512) == (
        "its data parallelism divides the 512-sequence batch"
    )


RELIABILITY: dict[str, Any] = {"recovery": "checkpoint"}


@pytest.mark.parametrize(
    ("goodput", "expected_s", "text"),
    [
        (0.00091854, 182_812_844.0, "5.79 y"),
        (1e-95, 4.5e99, "1.43e+92 y"),
        (0.0, math.inf, "never"),
        (0.9, 2.0 * 86400, "2.0 d"),
    ],
)
def test_a_finite_expected_time_is_printed(goodput: float, expected_s: float, text: str) -> None:
    """The ranking's 'expected' column prints the finite time the row's cost, energy and carbon are priced on, in
    years where it is long: 405B on 1M trn3 with checkpoint-restart, goodput 0.0919%, takes 167,920.6 s / 0.00091854
    = 1.828e8 s = 5.79 years, and had read 'never' beside $268.13B and 13.8 TWh. 'never' is kept for an infinite
    time."""
    row = {"goodput": goodput, "expected_time_to_train_s": expected_s, "reliability": RELIABILITY}
    assert _expected_time(row) == text


def test_a_row_without_a_length_has_no_expected_time() -> None:
    assert _expected_time({"goodput": 0.5, "reliability": RELIABILITY}) == "-"


def test_a_run_shorter_than_a_step_says_it_trains_the_whole_step(capsys: pytest.CaptureFixture[str]) -> None:
    """'tokens: 1000' trains and prices one step of 1,048,576 tokens, which nothing had said; a run of whole steps
    (1T tokens rounds up by under 1%) says nothing."""
    from rich.table import Table

    from chipwise.interfaces.cli.train_views import _speed_rows

    def rows(tokens: str) -> dict[str, str]:
        scenario = f"{{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: {tokens}}}"
        table = Table()
        table.add_column()
        table.add_column()
        _speed_rows(table, run_json(capsys, ["predict", scenario, "--json"]))
        return dict(zip(map(str, table.columns[0].cells), map(str, table.columns[1].cells), strict=True))

    # under one batch, its own line (test_cli_prices_rows_and_counts checks its figures)
    assert rows("1000")["steps"].startswith(
        "1,000 tokens are under one 1,048,576-token batch: the run is priced as one whole step of 1,048,576 tokens ("
    )
    assert "steps" not in rows("1T")


def test_plan_train_says_which_rows_are_priced_outside_the_region(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--region eu-west-1 lists no H100 or MI300X price: the table had shown AWS us-east-1's rate with no word (only
    the JSON's price_source said), while the carbon moved to eu-west-1's grid."""
    monkeypatch.setenv("COLUMNS", "240")
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--tokens", "1T", "--chips", "512", "--hardware",
            "h100-sxm,mi300x"]  # fmt: skip
    assert run([*argv, "--region", "eu-west-1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "priced outside eu-west-1, which lists no price of them: " in out
    assert "h100-sxm at aws us-east-1" in out and "(the nearest listed; energy and CO2e are eu-west-1's)" in out
    assert run(argv) == 0
    assert "priced outside" not in capsys.readouterr().out


def test_sequence_parallelism_asked_at_tp_1_is_said_to_be_off(capsys: pytest.CaptureFixture[str]) -> None:
    """{sp: true (or 1), tp: 1} had come back as sp false with no word (normalise keeps sp beside tp > 1 only)."""
    scenario = "{kind: train, model: mixtral-8x7b, hardware: h100-sxm, chips: 64, tokens: 1e11, plan: {sp: 1, tp: %d}}"
    off = run_json(capsys, ["predict", scenario % 1, "--json"])
    assert off["plan"]["sp"] is False and off["plan_note"].startswith("sp (sequence parallelism) is off at tp 1")
    assert "plan_note" not in run_json(capsys, ["predict", scenario % 2, "--json"])
