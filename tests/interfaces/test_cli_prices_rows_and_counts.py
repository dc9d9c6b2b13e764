"""What the rankings say about their prices and their rows, and counts read alike on every command: plan train names
a managed service's markup; plan fleet and plan lifecycle name the prices they rank by; a ranking cut at --top says
how many rows it hides; model show --seq-len and plan serve --requests take SI suffixes; the top-level --help keeps
each command's summary in whole lines; predict says when the tokens asked are under one batch."""

from __future__ import annotations

import math
import re
from itertools import pairwise
from pathlib import Path

import pytest

from chipwise.interfaces import format as fmt
from cli_run import run, run_error, run_json

TRAIN = ["plan", "train", "--model", "llama-3-8b", "--chips", "64", "--hardware", "h100-sxm,trn2", "--tokens", "1T"]
SERVE = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--output-tokens", "64", "--requests", "200"]
FLEET = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--hardware", "h100-sxm"]
FLEET += ["--slo", "ttft_p99=2s,tpot_p99=50ms", "--no-replay"]
LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T", "--serve-rate", "5"]
LIFECYCLE += ["--hardware", "h100-sxm", "--train-chips", "64"]


def _out(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> str:
    assert run(argv) == code
    return capsys.readouterr().out


# finding 1: --managed sagemaker raised every price 15% under the same '(on-demand prices)' title


def test_a_managed_markup_is_named_in_the_title_and_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    """SageMaker's 1.15 over EC2: H100's cost moves by exactly that, and the title and --json's top level say so
    (they had read '(on-demand prices)' and "pricing": "on-demand" alone)."""
    plain = run_json(capsys, [*TRAIN, "--json"])
    managed = run_json(capsys, [*TRAIN, "--managed", "sagemaker", "--json"])
    assert (plain["managed"], plain["managed_markup"]) == (None, None)
    assert (managed["managed"], managed["managed_markup"], managed["pricing"]) == ("sagemaker", 1.15, "on-demand")
    h100 = [next(r for r in report["results"] if r["hardware"] == "h100-sxm") for report in (plain, managed)]
    assert h100[1]["cost_usd"] == pytest.approx(1.15 * h100[0]["cost_usd"], rel=1e-9)
    text = " ".join(_out(capsys, [*TRAIN, "--managed", "sagemaker"]).split())  # the title wraps at the width
    assert "- ranked by time (on-demand prices x 1.15, sagemaker's managed-service markup)" in text
    assert "- ranked by time (on-demand prices) " in " ".join(_out(capsys, TRAIN).split())
    # the region asked for, as plan serve, plan fleet and plan lifecycle name it (the title had dropped it)
    there = " ".join(_out(capsys, [*TRAIN, "--region", "eu-west-1", "--managed", "sagemaker"]).split())
    assert "(on-demand prices x 1.15, sagemaker's managed-service markup, eu-west-1)" in there
    assert "- ranked by time (on-demand prices, eu-west-1) " in " ".join(
        _out(capsys, [*TRAIN, "--region", "eu-west-1"]).split()
    )


# finding 3: plan fleet and plan lifecycle had named neither the pricing mode nor a region


def test_plan_fleet_names_its_prices_and_where_each_type_is_priced(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, [*FLEET, "--json"])
    assert (data["pricing"], data["region"]) == ("on-demand", None)
    quote = data["fleet"][0]["price_source"]
    out = " ".join(_out(capsys, FLEET).split())
    assert "within ttft_p99 2.00 s, tpot_p99 50.0 ms (on-demand prices)" in out
    assert (
        "on-demand prices, no region chosen (each offer at its own region): p5.48xlarge at "
        f"{quote['provider']} {quote['region']}"
    ) in out


def test_plan_lifecycle_names_its_prices(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, [*LIFECYCLE, "--json"])
    assert (data["pricing"], data["region"]) == ("on-demand", None)
    out = " ".join(_out(capsys, LIFECYCLE).split())
    assert "then serve 5 req/s for 12 months (ranked by cost, on-demand prices)" in out
    assert "on-demand prices, no region chosen: each fleet priced at its offer's region" in out


# finding 4: --top 2 of four rows ranked had shown two with no word of the others


def test_plan_train_top_says_how_many_rows_it_hides(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "1024", "--tokens", "15T"]
    argv += ["--hardware", "h100-sxm,trn2,gb200,mi300x"]
    ranked = len(run_json(capsys, [*argv, "--json"])["results"])
    assert ranked == 4
    assert "2 more ranked: --top 4 shows them" in _out(capsys, [*argv, "--top", "2"]).splitlines()
    assert "1 more ranked: --top 4 shows it" in _out(capsys, [*argv, "--top", "3"]).splitlines()
    assert "more ranked" not in _out(capsys, [*argv, "--top", "4"])


def test_plan_serve_top_says_how_many_rows_it_hides(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*SERVE, "--hardware", "h100-sxm,mi300x", "--no-disaggregated"]
    ranked = len(run_json(capsys, [*argv, "--top", "100", "--json"])["results"])
    assert ranked > 1
    lines = _out(capsys, [*argv, "--top", "1"]).splitlines()
    assert f"{ranked - 1} more ranked: --top {ranked} shows {'it' if ranked == 2 else 'them'}" in lines
    assert "more ranked" not in _out(capsys, [*argv, "--top", str(ranked)])


# finding 2: model show --seq-len and plan serve --requests had refused 8k and 1k


def test_model_show_seq_len_takes_8k(capsys: pytest.CaptureFixture[str]) -> None:
    text = run_json(capsys, ["model", "show", "llama3-8b", "--seq-len", "8k", "--json"])
    number = run_json(capsys, ["model", "show", "llama3-8b", "--seq-len", "8000", "--json"])
    assert text["seq_len"] == 8000 and text["flops_per_token_fwd"] == number["flops_per_token_fwd"]


def test_plan_serve_requests_takes_1k(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*SERVE[:-2], "--hardware", "h100-sxm", "--no-disaggregated", "--top", "1", "--json", "--requests"]
    text, number = (run_json(capsys, [*argv, n])["verified"][0]["simulated"]["requests"] for n in ("1k", "1000"))
    assert text == number >= 1000


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["model", "show", "llama3-8b", "--seq-len", "0"],
         "error: --seq-len '0' is not a positive finite whole number. Fix: give e.g. 8192 or 8k (8,000)."),
        ([*SERVE[:-2], "--hardware", "h100-sxm", "--requests", "1.5"],
         "error: --requests '1.5' is not a positive finite whole number. Fix: give e.g. 1200 or 2k."),
        ([*SERVE[:-2], "--hardware", "h100-sxm", "--requests", "2M"],
         "error: --requests 2,000,000 is more than the 1,000,000 a check simulates at most (a million take about a "
         "minute). Fix: give at most 1,000,000, e.g. 2k."),
    ],
)  # fmt: skip
def test_bad_counts_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    assert run_error(capsys, argv) == says


# finding 5: the top-level --help had broken tco's and validate's summaries at their docstrings' line breaks


def _panel_rows(text: str) -> dict[str, list[str]]:
    """The Commands panel of a --help screen: each command's description, line by line."""
    panel = text.split("Commands")[1].splitlines()[1:]
    rows: dict[str, list[str]] = {}
    name = ""
    for line in panel:
        m = re.match(r"│ (\S*)\s+(.*?)\s*│$", line)
        if m is None:
            break
        name = m.group(1) or name
        rows.setdefault(name, []).append(m.group(2))
    return rows


@pytest.mark.parametrize(("path", "commands"), [([], ("tco", "validate")), (["catalog"], ("show", "engine"))])
def test_help_lists_each_summary_wrapped_to_the_width(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: list[str], commands: tuple[str, ...]
) -> None:
    """Each line of a summary is as full as the column lets it be: at 100 columns tco's had ended at
    'depreciated, operations,' with 'colocation' fitting beside it, and validate's at 'by chip and by'."""
    monkeypatch.setenv("COLUMNS", "100")
    rows = _panel_rows(_out(capsys, [*path, "--help"]))
    width = 100 - 4 - (max(map(len, rows)) + 2)  # the box's borders and pads, and the name column
    for name in commands:
        lines = rows[name]
        assert all(len(a) + 1 + len(b.split()[0]) > width for a, b in pairwise(lines)), lines
    if not path:
        assert " ".join(rows["validate"]).endswith("report the errors by chip and by source family.")


# finding 7: a run shorter than one batch had been priced as a step with $/Mtok of that step and no word of it


def _lora(tmp_path: Path, tokens: str) -> Path:
    f = tmp_path / "lora.yaml"
    f.write_text(
        "kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\nglobal_batch_tokens: 262144\n"
        f"tokens: {tokens}\nlora: true\n"
    )
    return f


def test_predict_says_a_run_under_one_batch_is_priced_as_one_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """1,000 tokens of 262,144-token batches: one step is priced, and $/Mtok is its rate; over the 1,000 tokens the
    cost is 262.144 times that rate a million."""
    data = run_json(capsys, ["predict", str(_lora(tmp_path, "1000")), "--json"])
    assert data["steps"] == 1
    per_asked = data["cost_usd"] / 1000 * 1e6
    assert per_asked == pytest.approx(data["usd_per_million_tokens"] * 262.144, rel=1e-9)
    note = (
        "1,000 tokens are under one 262,144-token batch: the run is priced as one whole step of 262,144 tokens "
        f"({fmt.usd(data['cost_usd'])} ideal); $/Mtok is that step's rate "
        f"({fmt.per_mtok(data['usd_per_million_tokens'])} ideal), not the cost over the 1,000 tokens asked "
        f"({fmt.usd(per_asked)} a million)"
    )
    assert data["batch_note"] == note
    assert note in " ".join(re.sub(r"[│┃]", " ", _out(capsys, ["predict", str(_lora(tmp_path, "1000"))])).split())
    many = run_json(capsys, ["predict", str(_lora(tmp_path, "1e9")), "--json"])
    assert "batch_note" not in many and math.isfinite(many["usd_per_million_tokens"])


def test_plan_train_says_its_rows_are_priced_as_one_step_under_one_batch(capsys: pytest.CaptureFixture[str]) -> None:
    """plan train with 1,000 tokens asked of 1,048,576-token batches: each row is one step, and its note gives the
    first row's cost over the tokens asked (it had ranked $0.25 beside 0.25 $/Mtok with nothing between them)."""
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "8", "--hardware", "h100-sxm", "--tokens", "1000"]
    row = run_json(capsys, [*argv, "--json"])["results"][0]
    assert row["steps"] == 1 and row["global_batch_tokens"] == 1_048_576
    cost = row["expected_cost_usd"]
    text = " ".join(_out(capsys, argv).split())
    assert (
        "the 1,000 tokens asked are under one batch (1,048,576 tokens on every row): each run is priced as one whole "
        "step, and $/Mtok is that step's rate, not the cost over the tokens asked "
        f"(1 h100-sxm: {fmt.usd(cost)} over 1,000 tokens is {fmt.usd(cost / 1000 * 1e6)} a million)"
    ) in text
    assert "under one batch" not in " ".join(_out(capsys, [*argv[:-1], "1T"]).split())


def test_the_api_and_the_web_page_give_a_training_predictions_batch_note(tmp_path: Path) -> None:
    """chipwise.api.predict and /api/predict carry predict --json's batch_note (only the command line had)."""
    from chipwise import api
    from chipwise.interfaces.web.routes import POST_ROUTES, Settings

    scenario = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "lora": True}
    scenario |= {"global_batch_tokens": 262144, "tokens": 1000}
    note = api.predict(scenario)["batch_note"]
    assert note.startswith("1,000 tokens are under one 262,144-token batch: the run is priced as one whole step")
    assert POST_ROUTES["/api/predict"](scenario, Settings())["batch_note"] == note
    assert "batch_note" not in api.predict({**scenario, "tokens": 1e9})
