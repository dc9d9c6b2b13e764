"""A unit written after a measured time is honoured ('18410 ms' in step_time_s is 18.41 s), and a word that is no
unit of time skips its row naming the cell; a training table without its chip count column is one line; a row that
gives only a time to train says what it gives."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from chipwise.errors import ChipwiseError
from chipwise.validation.cells import parse_stat_values, parse_time, time_unit_problem
from chipwise.validation.groundtruth import read_training
from chipwise.validation.serving_row_metrics import parse_latency_ms
from inference_rows import inference_row

#: MPT-70B on 512 H100s, measured as a step time only
TRAIN_ROW = {
    "id": "T1", "source_family": "test", "model": "MPT-70B", "arch": "dense", "params_total_B": "64.862",
    "layers": "80", "hidden": "8192", "ffn_hidden": "32768", "heads": "64", "kv_heads": "64", "vocab": "50368",
    "seq_len": "2048", "global_batch_seqs": "4096", "precision": "BF16", "chip": "h100-sxm", "num_chips": "512",
    "DP": "512", "step_time_s": "16.3",
}  # fmt: skip


def _training(path: Path, row: dict[str, str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    return path


@pytest.mark.parametrize(
    ("cell", "seconds"),
    [("18.41", 18.41), ("18410 ms", 18.41), ("11 min", 660.0), ("18 minutes", 1080.0), ("2.5 h", 9000.0),
     ("1.2 us", 1.2e-6), ("1.2 \u00b5s", 1.2e-6), ("3 S", 3.0), ("~16.3 s (median)", 16.3)],
)  # fmt: skip
def test_a_step_time_is_read_in_the_unit_it_writes(tmp_path: Path, cell: str, seconds: float) -> None:
    """'18410 ms' had been read as 18,410 s (-99.9% error), '18 minutes' as 18 s (+0.9% where it is -98%)."""
    assert parse_time(cell, "step_time_s") == pytest.approx(seconds, rel=1e-12)
    (row,) = read_training(_training(tmp_path / "t.csv", {**TRAIN_ROW, "step_time_s": cell}))
    assert row.skip_reason is None and row.measured is not None
    assert row.measured.metric == "step_time_s"
    assert row.measured.value == pytest.approx(seconds, rel=1e-12)


def test_a_time_in_a_word_that_is_no_unit_skips_its_row(tmp_path: Path) -> None:
    (row,) = read_training(_training(tmp_path / "t.csv", {**TRAIN_ROW, "step_time_s": "18 fortnights"}))
    assert row.skip_reason == (
        "step_time_s '18 fortnights' is written in 'fortnights', which is no unit of time. Fix: give the figure in "
        "s, or write its unit after it (us, ms, s, min or h)."
    )
    assert parse_time("18 fortnights", "step_time_s") is None


@pytest.mark.parametrize(
    ("cell", "ms"),
    [("11 min", {"value": 660_000.0}), ("1.2 us", {"value": 0.0012}), ("0.12 s", {"value": 120.0}),
     ("120 ms", {"value": 120.0}), ("p99: 1.2 s; p50: 300 ms", {"p99": 1200.0, "p50": 300.0}),
     ("p50 1.1; p99 2.3 s", {"p50": 1100.0, "p99": 2300.0}),  # the one unit the cell writes, for each figure
     ("120 ms (mean); 0.3 s (p99)", {"mean": 120.0, "p99": 300.0}), ("p99 461.3; mean 275.9", {"p99": 461.3,
     "mean": 275.9})],
)  # fmt: skip
def test_a_latency_is_read_in_the_unit_it_writes(cell: str, ms: dict[str, float]) -> None:
    """'11 min' and '1.2 us' in ttft_ms had been read as 11 ms and 1.2 ms."""
    assert parse_latency_ms(cell, "ttft", "", []) == pytest.approx(ms, rel=1e-12)
    assert parse_stat_values(cell, "ttft_ms") == pytest.approx(ms, rel=1e-12)
    assert parse_stat_values(cell) == parse_stat_values(cell.replace(" s", "").replace(" ms", ""))  # unconverted


def test_a_serving_row_reads_its_latency_units_or_names_the_word() -> None:
    row = inference_row(ttft_ms="11 min")
    assert row.skip_reason is None
    assert {m.metric: m.value for m in row.measured}["ttft_s"] == pytest.approx(660.0)
    assert inference_row(ttft_ms="50 tok/s").skip_reason == (
        "ttft_ms '50 tok/s' is written in 'tok/s', which is no unit of time. Fix: give the figure in ms, or write its "
        "unit after it (us, ms, s, min or h)."
    )
    assert str(inference_row(e2e_latency_s="3 fortnights").skip_reason).startswith("e2e_latency_s '3 fortnights' is")
    # a per-user speed and a comment in parentheses are the table's own ways of writing a TPOT
    assert time_unit_problem("~8 (derived from 125 tok/s/user)", "tpot_ms") is None
    assert inference_row(tpot_ms="avg output speed 20-22 tok/s per user").skip_reason is None


def test_a_training_table_without_a_chip_count_column_is_one_line(tmp_path: Path) -> None:
    """Each row had been skipped as 'no chip count', and the error suggested adding the chips to the catalog."""
    row = {k: v for k, v in TRAIN_ROW.items() if k != "num_chips"}
    with pytest.raises(ChipwiseError, match=r"t.csv' has no 'num_chips' column\. Fix: add it"):
        read_training(_training(tmp_path / "t.csv", row))


def test_a_row_with_only_a_time_to_train_says_what_it_gives(tmp_path: Path) -> None:
    """MLPerf's Gaudi2 GPT-3 row (T352): 1,258,291,200 tokens in 66.24 min on 1,024 chips is 1,258,291,200 / 3,974.4 s
    / 1,024 = 309 tokens/s per chip; the table's MLPerf throughputs are the log's median training-block rate, 0.5-11%
    above their own tokens over time to train, so it is not converted."""
    cells = {
        "step_time_s": "",
        "num_chips": "1024",
        "DP": "",
        "time_to_train": "66.24 min",
        "total_tokens": "1258291200",
    }
    (row,) = read_training(_training(tmp_path / "t.csv", {**TRAIN_ROW, **cells}))
    assert row.measured is None
    assert row.skip_reason == (
        "no throughput or step time (time-to-train only: 66.24 min for 1,258,291,200 tokens is 309 tokens/s per chip "
        "over the whole timed run, evaluations included; not converted, as the table's throughputs are the training "
        "steps' own rate)"
    )
