"""Nonsense in a serving ground-truth table: a row with a cell no run can have is skipped with its reason, a
missing column or an empty file is one line naming it, and an unknown engine says which profile priced it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.validation.groundtruth import detect_kind, read_inference
from chipwise.validation.run import validate_path
from chipwise.validation.serving_case import prepare
from inference_rows import BASE_ROW, write_rows
from inference_rows import inference_row as _row


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ({"input_len": "-512"}, "input_len '-512' is not a token count from 1 to 1,000,000,000"),
        ({"input_len": "0"}, "input_len '0' is not a token count"),
        ({"output_len": "inf"}, "output_len 'inf' is not a token count"),
        ({"num_chips": "0"}, "num_chips 0 is not a chip count"),
        ({"num_chips": "-2"}, "num_chips -2 is not a chip count"),
        # a billion chips ran for minutes
        ({"num_chips": "1000000000"}, "num_chips: 1,000,000,000 chips is past the largest fleet planned"),
        # a latency that is no positive time vanished from the comparison without a word
        ({"ttft_ms": "-5"}, "ttft_ms '-5' is not a positive measurement"),
        ({"ttft_ms": "0"}, "ttft_ms '0' is not a positive measurement"),
        ({"ttft_ms": "nan"}, "ttft_ms 'nan' is not a positive measurement"),
        ({"tpot_ms": "abc"}, "tpot_ms 'abc' is not a positive measurement"),
        ({"output_tokens_per_s_per_chip": "-3"}, "output_tokens_per_s_per_chip '-3' is not a positive measurement"),
        ({"output_tokens_per_s_per_chip": "1e300"}, "output_tokens_per_s_per_chip 1e+300 is past any plausible"),
        ({"ttft_ms": "1e12"}, "ttft_s 1e+09 is past any plausible measurement (at most 86400)"),
    ],
)
def test_a_cell_no_run_can_have_skips_its_row(cell: dict[str, str], reason: str) -> None:
    assert _row().skip_reason is None
    assert reason in str(_row(**cell).skip_reason)


def test_cells_that_state_nothing_read_as_blank() -> None:
    """'n/a' or '-' in a latency column says the figure was not measured: the row is predicted without it."""
    for blank in ("", "n/a", "-", "not stated"):
        row = _row(ttft_ms=blank)
        assert row.skip_reason is None and "ttft_s" not in {m.metric for m in row.measured}


def test_a_missing_column_or_no_rows_is_one_line(catalog: Catalog, tmp_path: Path) -> None:
    """Without its chip column every row was skipped as 'chip not in catalog: <empty>'; a header alone reported
    'MAPE nan%'."""
    columns = [c for c in BASE_ROW if c != "chip"]
    no_chip = tmp_path / "no_chip.csv"
    no_chip.write_text(",".join(columns) + "\n" + ",".join(BASE_ROW[c] for c in columns) + "\n")
    with pytest.raises(ChipwiseError, match=r"no_chip.csv' has no 'chip' column\. Fix: add it"):
        validate_path(catalog, no_chip)
    header_only = tmp_path / "header.csv"
    header_only.write_text(",".join(BASE_ROW) + "\n")
    with pytest.raises(ChipwiseError, match=r"has a header but no rows\. Fix: add the runs to validate"):
        validate_path(catalog, header_only)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ChipwiseError, match=r"empty.csv' is empty\. Fix:"):
        detect_kind(empty)


def test_a_file_not_in_utf8_is_named_and_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    latin = write_rows(tmp_path / "latin.csv", {"notes": "caf\u00e9"})
    latin.write_bytes(latin.read_text(encoding="utf-8").encode("latin-1"))
    with pytest.raises(ChipwiseError, match=f"data file '{latin}' is not UTF-8 text"):
        detect_kind(latin)
    bom = write_rows(tmp_path / "bom.csv", {})
    bom.write_text(bom.read_text(encoding="utf-8"), encoding="utf-8-sig")
    assert read_inference(bom, known_chips=frozenset({"h100-sxm"}))[0].id == "X1"  # its id read as ''


def test_an_unknown_engine_says_which_profile_priced_it(catalog: Catalog) -> None:
    case = prepare(catalog, _row(serving_engine="FooServe 1.0"))
    assert "serving engine 'FooServe 1.0' not recognised: priced with the default engine profile" in case.notes
    assert not any("not recognised" in n for n in prepare(catalog, _row()).notes)


def test_a_billion_chips_is_skipped_at_once(catalog: Catalog, tmp_path: Path) -> None:
    table = write_rows(tmp_path / "huge.csv", {"num_chips": "1000000000"}, {"id": "X2"})
    start = time.perf_counter()
    report = validate_path(catalog, table)
    assert time.perf_counter() - start < 60
    assert report["skipped"] == [
        {"id": "X1", "reason": "num_chips: 1,000,000,000 chips is past the largest fleet planned (at most 1,000,000)"}
    ]
    assert {r["id"] for r in report["rows"]} == {"X2"}


def test_a_file_with_no_row_to_predict_is_one_line_naming_why(catalog: Catalog, tmp_path: Path) -> None:
    """It had printed 'MAPE nan%' and three empty tables, exit 0; the unknown chip now gets a 'did you mean'."""
    table = write_rows(tmp_path / "chip.csv", {"chip": "h100-sxz"})
    with pytest.raises(ChipwiseError) as info:
        validate_path(catalog, table)
    assert str(info.value) == (
        f"no row of '{table}' could be predicted: X1 (chip not in catalog: h100-sxz; did you mean h100-sxm?). "
        "Fix: correct those rows, or add their chips and models to the catalog (--catalog)."
    )


def test_a_folder_given_as_the_data_is_named(catalog: Catalog, tmp_path: Path) -> None:
    with pytest.raises(ChipwiseError, match=rf"data file '{tmp_path}' is a folder\. Fix: name a data file in it\."):
        validate_path(catalog, tmp_path)
