"""A trace's times are taken from its first arrival, so one that starts before 0 is shifted as any other (-5 s and
-4 s had been refused: 'arrival_s -5 is out of range', without the range)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.errors import ChipwiseError
from chipwise.workload.traces import read_trace


def test_a_trace_before_zero_is_taken_from_its_first_arrival(tmp_path: Path) -> None:
    path = tmp_path / "negstart.csv"
    path.write_text("arrival_s,input_tokens,output_tokens\n-5,100,50\n-4,200,60\n-2.5,300,70\n")
    trace = read_trace(str(path))
    assert trace.arrival.tolist() == [0.0, 1.0, 2.5]
    assert trace.input.tolist() == [100, 200, 300] and trace.output.tolist() == [50, 60, 70]


def test_a_time_that_is_not_finite_names_the_range(tmp_path: Path) -> None:
    path = tmp_path / "inf.csv"
    path.write_text("arrival_s,input_tokens,output_tokens\n0,100,50\ninf,200,60\n")
    with pytest.raises(ChipwiseError, match=r"data row 2: arrival_s inf is out of range \(a finite time\)"):
        read_trace(str(path))
