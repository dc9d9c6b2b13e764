"""A JSONL trace's errors name a request by its line in the file, blank lines counted; a CSV header that names a
column twice is refused in one line (csv.DictReader had read the last of them without a word)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.errors import ChipwiseError
from chipwise.workload.traces import read_trace

ROW = '{{"arrival_s": {t}, "input_tokens": 100, "output_tokens": 5}}\n'


def _refusal(path: Path, text: str) -> str:
    path.write_text(text)
    with pytest.raises(ChipwiseError) as exc:
        read_trace(str(path))
    assert "\n" not in str(exc.value)
    return str(exc.value)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # a record on line 4, below a blank line 2, had been named line 3 (its place among the requests)
        (ROW.format(t=0) + "\n" + ROW.format(t=1) + '{"arrival_s": 2, "input_tokens": 100}\n', "line 4 has no "),
        (ROW.format(t=0) + "\n\n" + "[1, 2]\n", "line 4 is not a JSON object"),
        (
            ROW.format(t=0) + "\n" + ROW.format(t=5) + "\n" + ROW.format(t=3),
            "line 5 arrives at arrival_s 3, before line 3 (5)",
        ),
    ],
)
def test_a_jsonl_error_names_the_line_in_the_file(tmp_path: Path, text: str, needle: str) -> None:
    assert needle in _refusal(tmp_path / "t.jsonl", text)


def test_a_csv_error_names_the_data_row(tmp_path: Path) -> None:
    """A CSV trace counts its data rows (blank lines, which csv skips, aside), as its errors say."""
    text = "arrival_s,input_tokens,output_tokens\n0,100,10\n\n\n1,100,x\n"
    assert "data row 2: output_tokens 'x' is not a number" in _refusal(tmp_path / "t.csv", text)


def test_a_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    """input_tokens 100 then input_tokens 8,000 had read a mean prompt of 8,000 tokens, exit 0."""
    text = "arrival_s,input_tokens,input_tokens,output_tokens\n0,100,8000,10\n1,100,8000,10\n"
    assert _refusal(tmp_path / "t.csv", text) == (
        f"trace '{tmp_path / 't.csv'}' header names input_tokens more than once: only the last column of that name "
        "would be read. Fix: keep one column of each name (drop or rename the others)."
    )
    twice = "arrival_s,note,input_tokens,note,output_tokens,arrival_s\n0,a,100,b,10,0\n"
    assert "header names arrival_s, note more than once" in _refusal(tmp_path / "u.csv", twice)


def test_blank_names_of_trailing_separators_are_let_be(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens,,\n0,100,10,,\n1,200,20,,\n")
    assert read_trace(str(trace)).input.tolist() == [100, 200]
