"""A trace with two columns that could hold one field is refused in one line naming both: the first of the names
chipwise knows had been read and the other dropped without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.errors import ChipwiseError
from chipwise.workload.traces import read_trace


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        # input_len 8,000 beside input_tokens 100 had read a mean prompt of 100 tokens
        (
            "t.csv",
            "arrival_s,input_len,input_tokens,output_tokens\n0,8000,100,10\n1,8000,100,10\n",
            "has 2 input columns, input_len and input_tokens: only one would be read. Fix: keep the one that holds "
            "the requests' input tokens (drop or rename the rest).",
        ),
        (
            "t.csv",
            "arrival_s,arrival_ms,input_tokens,output_tokens\n0,0,100,10\n1,1000,100,10\n",
            "has 2 arrival columns, arrival_s and arrival_ms: only one would be read. Fix: keep the one that holds "
            "the requests' arrival times",
        ),
        (
            "t.csv",
            "arrival_s,input_tokens,output_tokens,completion_tokens,output_length\n0,100,10,20,30\n",
            "has 3 output columns, output_tokens, completion_tokens and output_length",
        ),
        (
            "t.jsonl",
            '{"arrival_s": 0, "input_tokens": 100, "input_len": 8000, "output_tokens": 10}\n',
            "has 2 input columns, input_tokens and input_len",
        ),
        # a JSON trace's rows name their own keys: a later row's other name is a second column as well
        (
            "t.jsonl",
            '{"arrival_s": 0, "input_tokens": 100, "output_tokens": 10}\n'
            '{"arrival_s": 1, "input_len": 8000, "output_tokens": 10}\n',
            "has 2 input columns, input_tokens and input_len",
        ),
    ],
)
def test_two_columns_for_one_field_are_refused(tmp_path: Path, name: str, text: str, needle: str) -> None:
    trace = tmp_path / name
    trace.write_text(text)
    with pytest.raises(ChipwiseError) as exc:
        read_trace(str(trace))
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_one_column_for_each_field_reads_as_before(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("Arrival_MS , input_len,output_tokens,notes\n0,8000,10,a\n500,4000,20,b\n")
    read = read_trace(str(trace))
    assert read.arrival.tolist() == [0.0, 0.5] and read.input.tolist() == [8000, 4000]
    assert read.output.tolist() == [10, 20]
