"""`chipwise predict` says how the load's rate sized a split's prefill pool (`prefill_sizing`, its "prefill replicas"
row, and the web page's): it had printed 'TP16 EP16 ADP b64 x8 (partial)' with no word of where the 8 came from."""

from __future__ import annotations

import math
import re

import pytest

from chipwise.planner.serving_deployment import PREFILL_SIZING_LOAD
from cli_run import run, run_json

#: gpt-oss-120b on trn2 at 20 req/s of 4,096-token prompts: TP16 EP16 attention-DP prefill replicas, 4 chips each,
#: four to a trn2.48xlarge; the decode pool given
SPLIT = (
    "{kind: serve, model: gpt-oss-120b, hardware: trn2, input_tokens: 4096, output_tokens: 1024, arrival_rate: 20, "
    "requests: 600, plan: {disaggregated: true, prefill: {tp: 16, ep: 16, attention_dp: true PREFILL}, decode: "
    "{tp: 64, ep: 64, attention_dp: true, replicas: 2}}}"
)
NOTE = re.compile(
    r"(\d+) for 20 req/s of 4,096-token prompts \(81,920 prompt tok/s\), each replica encoding ([\d,]+) tok/s \(its 16 "
    r"attention-DP ranks a prompt each\) at most 70% busy; (\d+) fill whole trn2\.48xlarge"
)


def _sized(note: str) -> tuple[int, float, int]:
    found = NOTE.fullmatch(note)
    assert found is not None, note
    return int(found.group(1)), float(found.group(2).replace(",", "")), int(found.group(3))


def test_predict_says_how_the_rate_sized_the_prefill_pool(capsys: pytest.CaptureFixture[str]) -> None:
    """The note's figures are the sizing's own: ceil(81,920 / (0.7 x what a replica encodes)) replicas, then as
    many as whole trn2.48xlarge hold (four a system), the count the plan runs."""
    result = run_json(capsys, ["predict", SPLIT.replace(" PREFILL", ""), "--json"])
    wanted, encodes, held = _sized(result["prefill_sizing"])
    assert wanted == math.ceil(20 * 4096 / (PREFILL_SIZING_LOAD * encodes))
    assert held == 4 * math.ceil(wanted / 4) > wanted
    assert result["plan"]["prefill"]["replicas"] == held
    assert "batch_note" not in result
    assert run(["predict", SPLIT.replace(" PREFILL", "")]) == 0
    table = " ".join(capsys.readouterr().out.replace("│", " ").split())  # the cell's wrapped lines, joined
    assert f"prefill replicas {result['prefill_sizing']}" in table


def test_no_note_where_the_rate_did_not_size_the_pool(capsys: pytest.CaptureFixture[str]) -> None:
    """The prefill replicas given, under a rate or a closed loop: nothing was sized, nothing is said."""
    given = SPLIT.replace(" PREFILL", ", replicas: 3")
    for scenario in (given, given.replace("arrival_rate: 20", "concurrency: 16")):
        result = run_json(capsys, ["predict", scenario, "--json"])
        assert result["plan"]["prefill"]["replicas"] == 3 and "prefill_sizing" not in result
