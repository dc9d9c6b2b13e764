"""A CSV trace's columns are read whole (traces._csv_values) and row by row only where a value is bad: the same
requests either way, and the first bad value still named by its row."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.errors import ChipwiseError
from chipwise.workload import traces
from chipwise.workload.bounds import MAX_TOKENS
from chipwise.workload.traces import read_trace

HEADER = "arrival_s,input_tokens,output_tokens\n"


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1e6, allow_nan=False),
            st.integers(1, MAX_TOKENS),
            st.integers(1, MAX_TOKENS),
            st.sampled_from(["{}", " {} ", "{}.0", "{:.12e}"]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_whole_columns_read_what_the_rows_say(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[float, int, int, str]]
) -> None:
    """Spaces, '512.0' and '5.120000000000e+02' are the numbers float() reads, as row by row."""
    rows = sorted(rows, key=lambda r: r[0])
    lines = "".join(f"{t!r},{form.format(i)},{form.format(o)}\n" for t, i, o, form in rows)
    trace = read_trace(_write(tmp_path_factory.mktemp("t"), HEADER + lines))
    assert trace.input.tolist() == [r[1] for r in rows] and trace.output.tolist() == [r[2] for r in rows]
    assert np.array_equal(trace.arrival, np.array([r[0] for r in rows]) - rows[0][0])


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ("2,,5", "data row 2 has no input_tokens"),
        ("2,10", "data row 2 has no output_tokens"),
        ("2,ten,5", "data row 2: input_tokens 'ten' is not a number"),
        ("nan,10,5", "data row 2: arrival_s nan is out of range (a finite time)"),
        ("2,0,5", "data row 2: input_tokens 0 is out of range"),
        ("2,10,5.5", "data row 2: output_tokens 5.5 is not a whole number of tokens"),
        (f"2,10,{MAX_TOKENS + 1}", "data row 2: output_tokens"),
    ],
)
def test_a_bad_value_is_named_by_its_row(tmp_path: Path, row: str, says: str) -> None:
    text = HEADER + "1,10,5\n" + row + "\n3,10,5\n"
    assert traces._whole_columns(*_cells(text)) is None  # whole columns give way to the row-by-row reading
    with pytest.raises(ChipwiseError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_trace(_write(tmp_path, text))


def _cells(text: str) -> tuple[list[list[str]], dict[str, Callable[[Any], Any]]]:
    header, rows = traces._csv_rows(text)
    return rows, {"arrival": itemgetter(header.index("arrival_s")), "input": itemgetter(1), "output": itemgetter(2)}


def test_blank_lines_are_skipped_and_a_trailing_separator_is_let_be(tmp_path: Path) -> None:
    trace = read_trace(_write(tmp_path, "\n" + HEADER + "0,10,5,\n\n1,20,6,\n"))
    assert trace.input.tolist() == [10, 20] and trace.output.tolist() == [5, 6]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"arrival_s": 2, "input_tokens": true, "output_tokens": 5}', "line 2: input_tokens 'True' is not a number"),
        ('{"arrival_s": 2, "output_tokens": 5}', "line 2 has no input_tokens"),
        ('{"arrival_s": 2, "input_tokens": 10, "output_tokens": 1' + "0" * 400 + "}", "line 2: output_tokens"),
        ('{"arrival_s": 2, "input_tokens": "ten", "output_tokens": 5}', "line 2: input_tokens 'ten' is not a number"),
    ],
)
def test_a_json_traces_bad_value_is_named_by_its_line(tmp_path: Path, line: str, says: str) -> None:
    """A JSON trace's columns are read whole too, and declined where a value is a JSON true (float() reads it 1),
    missing, past a float's range or not a number."""
    first = '{"arrival_s": 1, "input_tokens": 10, "output_tokens": 5}'
    path = tmp_path / "t.jsonl"
    path.write_text(f"{first}\n{line}\n", encoding="utf-8")
    with pytest.raises(ChipwiseError, match=says):
        read_trace(str(path))


def test_a_json_trace_reads_as_its_csv_does(tmp_path: Path) -> None:
    """Numbers, numbers as text and whole floats, as in a CSV."""
    path = tmp_path / "t.jsonl"
    lines = ['{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}', '{"arrival_s": "1.5", "input_tokens": 20.0}']
    path.write_text(lines[0] + "\n" + lines[1][:-1] + ', "output_tokens": "6"}\n', encoding="utf-8")
    trace = read_trace(str(path))
    assert trace.arrival.tolist() == [0.0, 1.5] and trace.input.tolist() == [10, 20] and trace.output.tolist() == [5, 6]
