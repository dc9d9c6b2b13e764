"""`chipwise plan fleet` and `plan lifecycle` on the command line: the fleet table names the systems left out for the
precision, as plan serve's 'not ranked' does; their options' errors and help."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

import chipwise.planner.lifecycle
from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.app import run
from chipwise.planner.serving_inputs import LIFECYCLE_SLO
from chipwise.planner.training import make_job
from chipwise.workload.presets import load_model
from chipwise.workload.training import PRECISIONS
from cli_run import run_error

FLEET = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--slo", "ttft_p99=2s"]
FLEET += ["--slo", "tpot_p99=50ms", "--no-replay", "--precision"]


def test_the_table_names_a_system_left_out_for_the_precision(capsys: pytest.CaptureFixture[str]) -> None:
    """An A100 beside an H100 at fp8 had left the answer without a word."""
    assert run([*FLEET, "fp8", "--hardware", "a100-80gb,h100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "not considered: a100-80gb: trtllm cannot run fp8 weights on a100-80gb: the chip has no "
        "FP8 units, and the engine has no known kernels that run them in bf16"
    ) in out


def test_a_precision_typo_is_its_own_error(capsys: pytest.CaptureFixture[str]) -> None:
    """It had read 'no hardware can serve this workload within the SLO (unknown weight precision 'fp9'.; ...' once
    for each of the catalog's systems."""
    assert run_error(capsys, [*FLEET, "fp9", "--hardware", "all"]) == (
        "error: unknown weight precision 'fp9'. Did you mean 'fp8', 'fp4', 'fp16'? "
        "Fix: use one of bf16, fp16, fp8, int8, w8a16, fp4, mxfp4, int4, auto."
    )


# plan fleet's empty --slo fix, plan lifecycle's --train-chips and --train-precision, its chip count, and the training
# commands' --seq-len help.


LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T", "--serve-rate", "5"]
LIFECYCLE += ["--hardware", "h100-sxm"]


def test_plan_fleet_does_not_offer_leaving_out_its_required_slo(capsys: pytest.CaptureFixture[str]) -> None:
    """Its fix had said 'or leave --slo out', which plan fleet refuses ('Missing option --slo')."""
    argv = ["plan", "fleet", "--model", "llama-3.1-8b", "--hardware", "h100-sxm"]
    argv += ["--workload", "examples/chat-mix.yaml", "--slo", ""]
    assert run_error(capsys, argv) == (
        f"error: --slo '' names no latency target. Fix: give e.g. --slo {LIFECYCLE_SLO}."
    )


def test_plan_serve_still_offers_leaving_it_out(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5", "--slo", ","]
    assert "or leave --slo out (plan serve then plans with no SLO" in run_error(capsys, argv)


def _capture(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The arguments plan lifecycle passes its planner, which stops there with one line (the real search takes
    80 s)."""
    calls: list[tuple[Any, ...]] = []

    def fake(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(args)
        raise ChipwiseError("stopped by the test")

    monkeypatch.setattr(chipwise.planner.lifecycle, "plan_lifecycle", fake)
    return calls


@pytest.mark.parametrize(("given", "chips"), [("100k", 100_000), ("1e5", 100_000), ("4096", 4096)])
def test_train_chips_reads_counts_as_plan_trains_chips(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, given: str, chips: int
) -> None:
    """'100k' had been refused ('Input should be a valid integer') where plan train --chips takes it."""
    calls = _capture(monkeypatch)
    assert run_error(capsys, [*LIFECYCLE, "--train-chips", given]) == "error: stopped by the test"
    train_chips = calls[0][6]
    assert train_chips == chips and isinstance(train_chips, int)


@pytest.mark.parametrize("given", ["0", "-5", "10.5", "nan", "5GB"])
def test_a_bad_train_chip_count_is_one_line(capsys: pytest.CaptureFixture[str], given: str) -> None:
    err = run_error(capsys, [*LIFECYCLE, "--train-chips", given])
    assert err.startswith(f"error: --train-chips '{given}' is not a positive finite whole number. Fix: give e.g. 64")


def test_train_precision_help_lists_what_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """It had said 'bf16, fp8 or fp4' and taken int8 too."""
    run(["plan", "lifecycle", "--help"])
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert ", ".join(PRECISIONS) in out and "bf16, fp8 or fp4" not in out
    assert "(4096, 1e5 or 100k" in out


def test_the_lifecycle_title_writes_the_chip_count_with_separators(capsys: pytest.CaptureFixture[str]) -> None:
    """'on 4096 chips' where every other command writes 4,096."""
    from chipwise.interfaces.cli.plan_fleet_cmd import print_lifecycle

    report: dict[str, Any] = {
        "model": "llama-3.1-8b",
        "objective": "cost",
        "training": {"tokens": 1e12, "chips": 4096},
        "serving": {"rate_per_s": 5.0, "months": 12.0},
        "top": [],
        "best_single_vendor": None,
    }
    with contextlib.suppress(KeyError, IndexError):  # only the table's title is checked
        print_lifecycle(report)
    out = " ".join(capsys.readouterr().out.split())
    assert "on 4,096 chips" in out


@pytest.mark.parametrize("command", ["train", "hetero"])
def test_seq_len_help_states_the_training_default(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """It had said 'Sequence length.' while training runs on min(8,192, context), not model show's 4,096 (F8)."""
    run(["plan", command, "--help"])
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "Sequence length (default: 8192, or the model's context where that is shorter; 4096 where the model " in out
    spec = load_model(load_catalog(), "llama-3.1-70b")  # the default the help states is the one a job takes
    assert make_job(spec, None, None, 1, "bf16", None).seq_len == 8192


# plan lifecycle labels a projected chip on any row it shows; plan fleet marks an estimated price.


def _pair(train: str, serve: str, cost: float, projected: tuple[bool, bool]) -> dict[str, Any]:
    side = {"time_s": 3600.0, "cost": cost, "vendor": "v", "price_estimated": False}
    return {
        "train": {**side, "hardware": train, "system": train, "projected": projected[0]},
        "serve": {
            "hardware": serve,
            "system": serve,
            "projected": projected[1],
            "chips": 1,
            "usd_per_hour": 6.88,
            "price_estimated": False,
        },
        "cost_usd": cost,
        "energy_j": 3.6e9,
        "co2e_kg": 100.0,
    }


def test_lifecycle_labels_a_projected_chip_on_a_row_below_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    """trn4 ranked #2 (train side) and inside a split (serve side) had printed no PROJECTED line and no mark."""
    from chipwise.interfaces.cli.plan_fleet_cmd import print_lifecycle

    top = [
        _pair("gb200", "h100-sxm", 1.0e5, (False, False)),
        _pair("trn4", "h100-sxm", 2.0e5, (True, False)),
        _pair("gb200", "trn4>h100-sxm", 3.0e5, (False, True)),
    ]
    report: dict[str, Any] = {
        "model": "llama-3.1-8b",
        "objective": "cost",
        "training": {"tokens": 1e12, "chips": 512},
        "serving": {"rate_per_s": 5.0, "months": 12.0},
        "top": top,
        "best_single_vendor": top[0],
        "best": {**top[0], "cross_vendor": False},
        "saving_vs_single_vendor": None,
    }
    report["best"]["train"]["vendor"] = "nvidia"
    print_lifecycle(report)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("PROJECTED: trn4 - announced, not shipping")  # the split's part, not 'trn4>h100-sxm'
    rows = {line.split()[0]: line for line in lines if line.startswith("#")}
    assert "*" not in rows["#1"] and rows["#2"].split()[1:3] == ["trn4", "*"]
    assert rows["#3"].split()[5:8] == ["trn4>h100-sxm", "*", "x1"]  # gb200 1.00 h $300k, then the serve cell


FLEET_GB200 = [*FLEET[:-1], "--hardware", "gb200"]


def test_plan_fleet_marks_an_estimated_price(capsys: pytest.CaptureFixture[str]) -> None:
    """gb200's $12.20 a GPU-hour is the catalog's estimate (capacity blocks only): two of them, $24.40, had read
    as a published price, and the JSON had no price source."""
    assert run(FLEET_GB200) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("gb200 "))
    assert "$24.40 §" in row
    footnote = "§ gb200: priced by an estimate, not a published on-demand price of the system's provider"
    assert footnote in " ".join(out.split())  # wrapped at the terminal's width
    assert run([*FLEET_GB200, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (f,) = report["fleet"]
    assert f["usd_per_hour"] == pytest.approx(2 * 12.20) and f["price_estimated"] is True
    assert f["price_source"]["status"] == "estimate" and f["price_source"]["entry"] == "gb200"
    assert "ESTIMATE (ranking fallback)" in f["price_source"]["derivation"]
    assert all(t["price_estimated"] for t in report["instance_types"])


def test_plan_fleet_leaves_a_published_price_unmarked(capsys: pytest.CaptureFixture[str]) -> None:
    """p5.48xlarge's $55.04 is AWS's own on-demand price: $6.88 a GPU-hour, no §."""
    assert run([*FLEET[:-1], "--hardware", "h100-sxm", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert all(not f["price_estimated"] and f["price_source"]["status"] != "estimate" for f in report["fleet"])
    assert all(f["usd_per_hour"] == pytest.approx(6.88 * f["chips"]) for f in report["fleet"])
