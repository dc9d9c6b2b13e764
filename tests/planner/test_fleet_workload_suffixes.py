"""plan fleet reads as traces the files predict reads as traces (workload.traces.TRACE_SUFFIXES: a .json array and
a .tsv had been read as YAML mixes and refused, 'needs a non-empty buckets list' and 'not valid YAML'), a .json
mix as a mix, and a workload that is neither says what it expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.errors import ChipwiseError
from chipwise.planner.fleet_workload import Bucket, read_workload
from chipwise.workload.traces import TRACE_SUFFIXES


def test_the_trace_suffixes_are_read_as_traces(tmp_path: Path) -> None:
    """Three requests of 100 / 5 tokens, 0.5 s apart: two gaps over 1 s, 2 req/s, in one bucket."""
    assert TRACE_SUFFIXES == (".csv", ".tsv", ".jsonl", ".json", ".ndjson")
    rows = [{"arrival_s": t, "input_tokens": 100, "output_tokens": 5} for t in (0.0, 0.5, 1.0)]
    array = tmp_path / "arr.json"
    array.write_text(json.dumps(rows))
    tsv = tmp_path / "steady.tsv"
    tsv.write_text("arrival_s\tinput_tokens\toutput_tokens\n0\t100\t5\n0.5\t100\t5\n1\t100\t5\n")
    for path in (array, tsv):
        assert read_workload(str(path)) == [Bucket("in1-out1", 100, 5, 2.0)]


def test_a_json_mix_is_a_mix(tmp_path: Path) -> None:
    mix = tmp_path / "mix.json"
    mix.write_text(json.dumps({"buckets": [{"name": "chat", "input_tokens": 512, "output_tokens": 256, "rate": 3}]}))
    assert read_workload(str(mix)) == [Bucket("chat", 512, 256, 3.0)]


@pytest.mark.parametrize(("name", "text"), [("steady.txt", "arrival_s,input_tokens,output_tokens\n0,100,5\n"),
                                            ("w.yaml", "- 1\n- 2\n")])  # fmt: skip
def test_a_workload_that_is_neither_says_what_it_expected(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ChipwiseError) as exc:
        read_workload(str(path))
    assert str(exc.value) == (
        f"workload file '{path}' needs a non-empty 'buckets' list: a workload is a YAML bucket mix (a 'buckets' "
        "list) or a trace of requests (.csv, .tsv, .jsonl, .json, .ndjson). Fix: give the buckets "
        "(docs/hybrid.md), or name a trace by its suffix."
    )
