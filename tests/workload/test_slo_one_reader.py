"""One reader of SLO targets (workload.slo.slo_target): a scenario, `chipwise plan serve --slo` and
chipwise.api.plan_serve give the same answer to the same target. Text needs its unit, but under a scenario's keys,
whose _s names seconds (ttft_p99_s: '2' is 2 s; {'ttft_p99': '2'} names no unit), a number is seconds, and a TPOT of
a second or more given as a number is a unit slip with one message."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypedDict

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from cli_run import run_error, run_json, scenario_error
from scenario_kinds import serve_scenario

SERVE = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\narrival_rate: 5\ninput_tokens: 512\noutput_tokens: 64\n"
PLAN = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5", "--input-tokens", "512"]


class Small(TypedDict):
    """The API's request shape and search, small, beside the load and the SLO each test gives."""

    input_tokens: int
    output_tokens: int
    hardware: str
    disaggregated: bool
    top: int


SMALL: Small = {"input_tokens": 512, "output_tokens": 64, "hardware": "h100-sxm", "disaggregated": False, "top": 1}


def _scenario(slo: Mapping[str, float | str]) -> str:
    return SERVE + "slo: {" + ", ".join(f"{k}_s: {v!r}" for k, v in slo.items()) + "}\n"


def _targets(text: str) -> dict[str, float]:
    """A serving scenario's SLO targets, in seconds."""
    slo = serve_scenario(text).slo
    assert slo is not None, text
    return slo.targets()


def _api(slo: Mapping[str, float | str]) -> dict[str, float]:
    report = cw.plan_serve("llama-3.1-8b", rate=5, slo=slo, verify=1, requests=100, **SMALL)
    return dict(report["slo"])


def test_targets_with_units_read_alike(capsys: pytest.CaptureFixture[str]) -> None:
    """2 s to the first token and 1.5 s a token, given with their units, stand in all three."""
    slo = {"ttft_p99": "2s", "tpot_p99": "1.5s"}
    want = {"ttft_p99": 2.0, "tpot_p99": 1.5}
    assert _targets(_scenario(slo)) == want
    assert _api(slo) == want
    argv = [*PLAN, "--output-tokens", "64", "--no-disaggregated", "--top", "1", "--requests", "100", "--json"]
    assert run_json(capsys, [*argv, "--slo", "ttft_p99=2s,tpot_p99=1.5s"])["slo"] == want


@pytest.mark.parametrize(
    ("key", "text", "fix"),
    [
        ("ttft_p99", "2", "(2) or a time with a unit ('2s')"),
        ("tpot_p99", "50", "(0.05) or a time with a unit ('50ms')"),
    ],
)
def test_text_without_a_unit_is_refused_where_the_key_names_none(
    capsys: pytest.CaptureFixture[str], key: str, text: str, fix: str
) -> None:
    said = f"'{text}' has no unit"
    with pytest.raises(ChipwiseError, match=f"^SLO {key} = {said}. Fix: give seconds as a number "):
        _api({key: text})
    unit = fix.rsplit("'", 2)[1]
    assert f"SLO {key}={said}. Fix: write e.g. {key}={unit}." in run_error(capsys, [*PLAN, "--slo", f"{key}={text}"])


def test_a_scenario_keys_s_names_its_unit() -> None:
    """ttft_p99_s: '2' is two seconds, as its key says, and tpot_p99_s: '50' the same unit slip as a bare 50."""
    assert _targets(_scenario({"ttft_p99": "2"})) == {"ttft_p99": 2.0}
    said = "50 s per output token is not a plausible target (for 50 seconds, write '50s')"
    assert f"slo.tpot_p99_s: {said}" in scenario_error(_scenario({"tpot_p99": "50"}))


def test_a_bare_tpot_of_a_second_or_more_is_one_message() -> None:
    """A number is seconds, and 50 s a token is a unit slip: the same words from a scenario and the API."""
    said = "50 s per output token is not a plausible target (for 50 seconds, write '50s')"
    fix = "give seconds as a number (0.05) or a time with a unit ('50ms')"
    assert f"slo.tpot_p99_s: {said}; {fix}" in scenario_error(SERVE + "slo: {tpot_p99_s: 50}\n")
    with pytest.raises(ChipwiseError, match="^" + re.escape(f"SLO tpot_p99 = {said}. Fix: {fix}.") + "$"):
        _api({"tpot_p99": 50})
    assert _targets(SERVE + "slo: {ttft_p99_s: 2, tpot_p99_s: 0.05}\n") == {
        "ttft_p99": 2.0,
        "tpot_p99": 0.05,
    }
