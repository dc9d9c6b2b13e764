"""Bad workload input that had been accepted: tokens to train on past any run (1e40 priced a run at $2.55e+33), NaN
in a bounded fraction read as 'less than or equal to 1', fractional token counts in a trace rounded without a word,
and an empty --slo or --speculative that silently meant none (and dropped plan lifecycle's default SLO)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.planner.serving_inputs import check_slo, speculation_options
from chipwise.workload.counts import MAX_TRAIN_TOKENS, read_count
from chipwise.workload.slo import parse_slo
from chipwise.workload.traces import read_trace
from cli_run import run_error, scenario_error
from scenario_kinds import train_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat-mix.yaml"
TRAIN = "kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 64\n"
SERVE = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\ninput_tokens: 512\noutput_tokens: 128\n"
SERVE_LOAD = SERVE + "arrival_rate: 5\n"
PAST = "more than a million chips train on in a year (at most 1e+18"


# ---------------------------------------------------------------------------------------- tokens to train on
@pytest.mark.parametrize("name", ["--tokens", "--train-tokens", "tokens", "train_tokens"])
@pytest.mark.parametrize("value", [1e40, "1e19", "2000P"])
def test_tokens_past_any_run_are_refused(name: str, value: object) -> None:
    with pytest.raises(
        ChipwiseError, match=f"^{name} .* tokens is {re.escape(PAST)}.*Fix: give the tokens of one training run"
    ):
        read_count(value, name)


def test_tokens_up_to_the_bound_stand_and_other_counts_keep_theirs() -> None:
    assert read_count("15T", "--tokens") == 15e12
    assert read_count(MAX_TRAIN_TOKENS, "--train-tokens") == MAX_TRAIN_TOKENS
    assert read_count("1e19", "--global-batch-tokens") == 1e19  # not tokens trained on: its own checks apply


def test_a_scenarios_tokens_past_any_run_are_refused() -> None:
    assert f"tokens: 1e+40 tokens is {PAST}" in scenario_error(TRAIN + "tokens: 1e40\n")
    assert train_scenario(TRAIN + "tokens: 15T\n").tokens == 15e12


MODEL = ["--model", "llama-3.1-8b", "--hardware", "h100-sxm"]
LIFECYCLE = ["plan", "lifecycle", *MODEL, "--train-chips", "64", "--serve-rate", "5"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["plan", "train", *MODEL, "--tokens", "1e40"], "--tokens 1e+40"),
        ([*LIFECYCLE, "--train-tokens", "1e40"], "--train-tokens 1e+40"),
    ],
)
def test_the_commands_refuse_tokens_past_any_run(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert f"{needle} tokens is {PAST}" in run_error(capsys, argv)


def test_the_api_refuses_tokens_past_any_run() -> None:
    with pytest.raises(ChipwiseError, match=re.escape(f"tokens 1e+40 tokens is {PAST}")):
        cw.plan_train("llama-3.1-8b", 8, tokens=1e40)


# ----------------------------------------------------------------------------------- NaN in a bounded fraction
@pytest.mark.parametrize(
    ("text", "key"),
    [
        (TRAIN + "pricing: owned\nutilisation: .nan\n", "utilisation"),
        (SERVE_LOAD + "plan: {memory_fraction: .nan}\n", "plan.memory_fraction"),
        (SERVE_LOAD + "plan: {batch_wait_ratio: .nan}\n", "plan.batch_wait_ratio"),
    ],
)
def test_nan_in_a_bounded_fraction_is_not_finite(text: str, key: str) -> None:
    message = scenario_error(text)
    assert f"{key}: Input should be a finite number" in message and "less than" not in message


# ----------------------------------------------------------------------------------- fractional trace lengths
def _trace(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,512.5,128\n", "data row 1: input_tokens 512.5"),
        ("t.csv", "arrival_s,input_tokens,output_tokens\n0,512,64\n1,256,64.25\n", "data row 2: output_tokens 64.25"),
        ("t.jsonl", json.dumps({"arrival_s": 0, "input_tokens": 512, "output_tokens": 128.5}), "line 1: output_tok"),
    ],
)
def test_a_fractional_token_count_in_a_trace_is_refused(tmp_path: Path, name: str, text: str, where: str) -> None:
    path = _trace(tmp_path, name, text)
    with pytest.raises(ChipwiseError) as exc:
        read_trace(path)
    message = str(exc.value)
    assert message.startswith(f"trace '{path}' {where}") and "is not a whole number of tokens. Fix:" in message
    assert "\n" not in message


@pytest.mark.parametrize("last", ["1e300", "31700000.5", "3.2e10"])
def test_a_trace_spanning_more_than_a_year_is_refused(tmp_path: Path, last: str) -> None:
    """A request at 1e300 s had run: its times lost to rounding (1e300 + 0.02 == 1e300), TTFT 0, and the run priced at
    $2.55e+302 per M output tokens, exit 0."""
    path = _trace(tmp_path, "t.csv", f"arrival_s,input_tokens,output_tokens\n0,100,10\n{last},100,5\n")
    with pytest.raises(ChipwiseError) as exc:
        read_trace(path)
    assert str(exc.value).startswith(f"trace '{path}' spans {float(last):.3g} s from its first arrival to its last, ")
    assert "more than a year. Fix: check the arrival_s column's times and unit" in str(exc.value)
    # epoch times, a day apart, in seconds and in milliseconds, stand
    day = read_trace(_trace(tmp_path, "e.csv", "time_s,input_tokens,output_tokens\n1.7e9,100,10\n1700086400,9,9\n"))
    assert day.arrival.tolist() == [0.0, 86400.0]


def test_whole_token_counts_written_as_decimals_stand(tmp_path: Path) -> None:
    trace = read_trace(_trace(tmp_path, "t.csv", "arrival_s,input_tokens,output_tokens\n0,512.0,1e2\n"))
    assert trace.input.tolist() == [512] and trace.output.tolist() == [100]


def test_a_scenario_naming_a_fractional_trace_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _trace(tmp_path, "frac.csv", "arrival_s,input_tokens,output_tokens\n0,512.5,128\n")
    scenario = _trace(tmp_path, "s.yaml", SERVE.replace("input_tokens: 512\noutput_tokens: 128\n", "trace: frac.csv\n"))
    assert "data row 1: input_tokens 512.5 is not a whole number" in run_error(capsys, ["predict", scenario])


# ------------------------------------------------------------------------------------ empty --slo, --speculative
@pytest.mark.parametrize("text", ["", " ", ",", " , ,"])
def test_an_slo_that_names_no_target_is_refused(text: str) -> None:
    with pytest.raises(ChipwiseError, match=re.escape("names no latency target. Fix: give e.g. --slo ttft_p99=2s")):
        parse_slo(text)


def test_no_slo_given_is_still_none() -> None:
    """Omission (None) and the web page's empty mapping still mean no SLO; a stray comma beside a target stands."""
    assert check_slo(None) == {} and check_slo({}) == {}
    assert parse_slo("ttft_p99=2s,") == {"ttft_p99": 2.0}


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5", "--slo", ""],
        [*LIFECYCLE, "--train-tokens", "1T", "--slo", ""],
        ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", str(EXAMPLE), "--slo", ","],
    ],
)
def test_every_command_refuses_an_empty_slo(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert "names no latency target" in run_error(capsys, argv)


@pytest.mark.parametrize("text", ["", ",", " , "])
def test_a_speculative_list_that_names_no_option_is_refused(text: str) -> None:
    with pytest.raises(ChipwiseError, match=re.escape("names no option. Fix: give e.g. mtp:3")):
        speculation_options(text)


def test_speculative_options_given_or_left_out_stand() -> None:
    assert speculation_options(None) == [None]
    assert speculation_options("none,mtp:3,") == [None, "mtp:3"]


def test_plan_serve_refuses_an_empty_speculative(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5", "--speculative", ","]
    assert "--speculative ',' names no option" in run_error(capsys, argv)
