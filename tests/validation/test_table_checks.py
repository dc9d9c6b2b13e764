"""What `chipwise validate` does with a table it cannot take at its word: a stated plan on more or fewer chips than
the row has, a cell that is no figure, a cell past the CSV reader's size limit, a repeated or blank id, a header of
both kinds, and a training row's reading notes, which its result keeps."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.app import run
from chipwise.validation.groundtruth import detect_kind, read_inference, read_training
from chipwise.validation.run import validate_path, validate_training
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_row_plan import parse_serving_plan
from cli_run import run_error
from inference_rows import inference_row as _row
from inference_rows import write_rows

#: MPT-70B on 512 H100 (MosaicML's llm-foundry benchmark table), 1,007 tokens/s per chip
TRAIN_ROW = {
    "id": "T1", "source_family": "test", "model": "MPT-70B", "arch": "dense", "params_total_B": "64.862",
    "layers": "80", "hidden": "8192", "ffn_hidden": "32768", "heads": "64", "kv_heads": "64", "vocab": "50368",
    "seq_len": "2048", "global_batch_seqs": "4096", "global_batch_tokens": "8388608", "micro_batch": "8",
    "precision": "BF16 (AMP)", "chip": "h100-sxm", "num_chips": "512", "TP": "", "PP": "", "DP": "512",
    "sharding": "FSDP FULL_SHARD", "recompute": "full activation checkpointing", "step_time_s": "",
    "tokens_per_s_total": "515636", "tokens_per_s_per_chip": "1007", "tflops_per_chip": "", "mfu_pct": "41.25",
    "hfu_pct": "55.0", "gpu_hours": "", "notes": "",
}  # fmt: skip


def _training_table(path: Path, *rows: dict[str, str]) -> Path:
    full = [{**TRAIN_ROW, **r} for r in rows]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(TRAIN_ROW))
        writer.writeheader()
        writer.writerows(full)
    return path


# --- a stated plan must use the row's chips --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plan", "reason"),
    [
        ("TP16", "TP16 needs 16 chips; the row has 8 chips"),
        ("TP3", "TP3 needs a multiple of 3 chips; the row has 8 chips"),
        ("TP3 x 2 instances", "TP3 x 2 needs 6 chips; the row has 8 chips"),
        ("TP2 PP8", "TP2 PP8 needs 16 chips; the row has 8 chips"),
    ],
)
def test_a_plan_on_other_chips_than_the_rows_is_skipped(catalog: Catalog, plan: str, reason: str) -> None:
    """It was simulated on 16 (TP16) or 6 (TP3) chips and divided by the row's 8, without a note."""
    with pytest.raises(ChipwiseError) as info:
        prepare(catalog, _row(num_chips="8", parallelism=plan))
    assert str(info.value) == reason


def test_a_plan_that_fills_the_rows_chips_is_priced(catalog: Catalog) -> None:
    """Unstated replicas still fill the chips (TP2 on 8 chips: 4 replicas), and a stated count that disagrees with
    the chips is still mended where it can be (the reading notes say so)."""
    for plan in ("TP2", "TP2 x 4", "TP8", "TP2 x 2 instances"):
        assert prepare(catalog, _row(num_chips="8", parallelism=plan)).setup.chips == 8


def test_replicas_counted_in_chips_fill_every_neuroncore(catalog: Catalog, tmp_path: Path) -> None:
    """'TP2 x 4' on 8 Trainium1 chips (two NeuronCores each) counts chips, as a training row's dp does: 8 replicas
    of TP2 over the 16 cores, not 4 over 8 of them priced per chip of all 8."""
    cells = {"chip": "trn1", "num_chips": "8", "serving_engine": "transformers-neuronx", "precision": "BF16"}
    stated, odd = read_inference(
        write_rows(
            tmp_path / "trn1.csv", {**cells, "parallelism": "TP2 x 4"}, {**cells, "id": "X2", "parallelism": "TP3"}
        ),
        known_chips=frozenset(catalog.chips),
    )
    case = prepare(catalog, stated)
    assert case.setup.chips == 8
    assert "plan counted in chips: 4 replicas x 2 NeuronCores a chip = 8 replicas" in case.notes
    with pytest.raises(ChipwiseError) as info:
        prepare(catalog, odd)
    assert str(info.value) == "TP3 needs a multiple of 3 NeuronCores; the row has 8 chips (16 NeuronCores, 2 a chip)"


def test_a_disaggregated_rows_pools_must_fit_its_chips(catalog: Catalog) -> None:
    row = _row(num_chips="8", parallelism="prefill: TP4 x 2; decode: TP8", serving_engine="Dynamo + TensorRT-LLM")
    with pytest.raises(ChipwiseError) as info:
        prepare(catalog, row)
    assert str(info.value) == "decode pool TP8 needs 8 chips; the row's 8 chips leave 0 after its prefill pool's 8"


@pytest.mark.parametrize("text", ["TP2x4", "TP2X4", "TP2 x4", "TP2 x 4", "4x TP2", "4xTP2"])
def test_replicas_glued_to_the_plan_are_read(text: str) -> None:
    """'TP2x4' was one replica: a row without a chip count was given 2 chips, not 8."""
    assert parse_serving_plan(text, "h100-sxm", None, "dense", []).dp == 4
    row = _row(num_chips="", parallelism=text)
    assert row.num_chips == 8 and row.skip_reason is None


# --- a cell that is no figure skips its row with that reason ---------------------------------------------------


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        # both were predicted as 'num_chips not stated; 1 from the plan'
        ({"num_chips": "eight"}, "num_chips 'eight' is not a whole number of chips"),
        ({"num_chips": "1.5"}, "num_chips '1.5' is not a whole number of chips"),
        # compared at its p99 without a word
        ({"ttft_ms": "p99 579.3; mean abc"}, "ttft_ms 'p99 579.3; mean abc': its mean has no number"),
        ({"tpot_ms": "p50 20; p99 -3"}, "tpot_ms 'p50 20; p99 -3': its p99 -3 is not a positive, finite time"),
        # a tail below the median: one figure is mistyped, and it had been compared at the p50 without a word
        ({"ttft_ms": "p99 10; p50 50"}, "ttft_ms 'p99 10; p50 50': its p99 (10 ms) is below its p50 (50 ms)"),
        (
            {"tpot_ms": "median 13; p90 20; p99 15"},
            "tpot_ms 'median 13; p90 20; p99 15': its p99 (15 ms) is below its p90 (20 ms)",
        ),
    ],
)
def test_a_serving_cell_that_is_no_figure_skips_its_row(cells: dict[str, str], reason: str) -> None:
    assert _row(**cells).skip_reason == reason


@pytest.mark.parametrize(
    "cells",
    [
        {"num_chips": "n/a", "parallelism": "TP4"},
        {"num_chips": "1 node (8 GPUs)", "parallelism": "TP8"},
        {"tpot_ms": "median 13.64 (median ITL; file has no TPOT)"},
        {"tpot_ms": "avg output speed 20-22 tok/s per user"},
        {"ttft_ms": "45.3 (p50)", "tpot_ms": "p99 TPOT 33; mean 20"},
        {"ttft_ms": "p50 20; mean 35; p99 30", "tpot_ms": "p50 20; p99 20"},  # a few long tails lift a mean past p99
        {"ttft_ms": "p99: 1.2 s; p50: 300 ms"},  # each figure in its own unit (the seconds had read as ms)
    ],
)
def test_cells_the_tables_write_still_read(cells: dict[str, str]) -> None:
    assert _row(**cells).skip_reason is None


@pytest.mark.parametrize(
    ("cells", "reason"),
    [
        # skipped as 'MFU only (peak FLOP/s denominator not given)' without a total; with one, read as total / chips
        ({"tokens_per_s_per_chip": "-5"}, "tokens_per_s_per_chip '-5' is not a positive measurement"),
        ({"tokens_per_s_per_chip": "abc"}, "tokens_per_s_per_chip 'abc' is not a positive measurement"),
        ({"tokens_per_s_per_chip": "1e999"}, "tokens_per_s_per_chip '1e999' is not a positive measurement"),
        (
            {"tokens_per_s_per_chip": "-5", "tokens_per_s_total": ""},
            "tokens_per_s_per_chip '-5' is not a positive measurement",
        ),
        ({"step_time_s": "abc"}, "step_time_s 'abc' is not a positive measurement"),
        # accepted, and reported at -100% error
        (
            {"tokens_per_s_per_chip": "5e9"},
            "tokens_per_s_per_chip 5e+09 is past any plausible measurement (at most 1e+07)",
        ),
        # 'no valid plan with the row's knobs {'dp': 0, ...}' and 'no chip count'
        ({"num_chips": "0"}, "num_chips 0 is not a chip count"),
        ({"num_chips": "eight"}, "num_chips 'eight' is not a whole number of chips"),
        ({"num_chips": "512.5"}, "num_chips '512.5' is not a whole number of chips"),
        ({"num_chips": "1000000000", "DP": ""}, "num_chips: 1,000,000,000 chips is past the largest fleet planned"),
    ],
)
def test_a_training_cell_that_is_no_figure_skips_its_row(tmp_path: Path, cells: dict[str, str], reason: str) -> None:
    (ok,) = read_training(_training_table(tmp_path / "ok.csv", {}))
    assert ok.skip_reason is None
    (row,) = read_training(_training_table(tmp_path / "bad.csv", cells))
    assert row.skip_reason is not None and row.skip_reason.startswith(reason)


def test_a_training_result_keeps_the_rows_reading_notes(catalog: Catalog, tmp_path: Path) -> None:
    """The notes made while reading a row ('stated dp=3 gives 3 ranks ...') were dropped from its result."""
    table = _training_table(tmp_path / "train.csv", {"DP": "3"})
    (result,) = validate_training(catalog, table)["rows"]
    assert "stated dp=3 gives 3 ranks, not 512; dp set to 512" in result["notes"]
    assert result["notes"].startswith("row dimensions")  # the prediction's own notes first, as serving's


# --- the file itself ------------------------------------------------------------------------------------------


def test_a_cell_past_the_csv_limit_is_one_line(
    catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'internal error: Error: field larger than field limit', exit 1."""
    table = write_rows(tmp_path / "huge.csv", {}, {"id": "X2", "notes": "x" * 200_000})
    with pytest.raises(ChipwiseError) as info:
        validate_path(catalog, table)
    assert str(info.value).startswith(
        f"data file '{table}', line 3: cannot be read as CSV (a cell is longer than 131,072 characters). Fix:"
    )
    assert "line 3" in run_error(capsys, ["validate", "--data", str(table)])


@pytest.mark.parametrize(
    ("ids", "problem"),
    [
        (("X1", "X1"), "rows 1 and 2 under the header have the same id 'X1'"),
        (("X1", " "), "row 2 under the header has no id"),
    ],
)
def test_ids_must_be_unique_and_not_blank(
    catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str], ids: tuple[str, str], problem: str
) -> None:
    """A row given twice was counted once ('1 of 1 rows predicted')."""
    serving = write_rows(tmp_path / "serve.csv", *({"id": i} for i in ids))
    training = _training_table(tmp_path / "train.csv", *({"id": i} for i in ids))
    fix = "Fix: give every row an id of its own (ids must be unique and non-empty)."
    for table in (serving, training):
        with pytest.raises(ChipwiseError) as info:
            validate_path(catalog, table)
        assert str(info.value) == f"data file '{table}': {problem}. {fix}"
    assert problem in run_error(capsys, ["validate", "--data", str(serving)])


def test_a_header_of_both_kinds_is_refused(tmp_path: Path) -> None:
    """It was read as a training table without a word."""
    both = tmp_path / "both.csv"
    both.write_text("id,model,chip,num_chips,tokens_per_s_per_chip,output_tokens_per_s_per_chip\nX,m,h100-sxm,8,1,1\n")
    with pytest.raises(ChipwiseError, match=r"has both training columns \(tokens_per_s_per_chip\) and serving"):
        detect_kind(both)


def test_a_latency_cell_mixing_units_reads_each_in_its_own() -> None:
    """'p99: 1.2 s; p50: 300 ms' had read 1.2 ms for the p99 (the cell writes ms elsewhere)."""
    from chipwise.validation.serving_row_metrics import parse_latency_ms

    notes: list[str] = []
    assert parse_latency_ms("p99: 1.2 s; p50: 300 ms", "ttft", "", notes) == {"p99": 1200.0, "p50": 300.0}
    assert notes == ["ttft given in s (p99: 1.2 s; p50: 300 ms)"]


def test_the_headline_counts_measurements_and_metrics(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three training rows measure one metric three times: the headline had said '3 metrics'."""
    lines = (shared_data / "groundtruth_training.csv").read_text().splitlines()
    table = tmp_path / "three.csv"
    table.write_text("\n".join(lines[:4]) + "\n")
    assert run(["validate", "--data", str(table)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # however the terminal wraps it
    assert "3 of 3 rows predicted (100%), 3 measurements of 1 metric; MAPE" in out
