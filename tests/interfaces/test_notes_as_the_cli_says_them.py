"""What the command line says under its answers, said on the page and in the places it had been left out or read
otherwise: plan serve's precision notes (for the chips of the rows shown only, on the page too), predict's batch
limit on the page, the stated-chips SLO check's misses in predict's units, the WHAT-IF banner over catalog list and
show, and a sweep's tie that the point id broke."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from chipwise.__main__ import _register
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.plan_serve_views import shown_precision_notes
from chipwise.interfaces.cli.sweep_cmd import _best_table
from chipwise.interfaces.web.routes import POST_ROUTES, Settings
from chipwise.planner.serving_pool import _missed_text

from .test_web import DOM, _node, _script, needs_node

_register()

NOTE = "the checkpoint's MXFP4 experts are dequantised to bf16 as neuron loads them on {}"

#: gpt-oss-20b at 2 req/s on trn1, inf2, trn2 and h100-sxm: no row of the five shown is trn1
GPT_OSS = {"model": "gpt-oss-20b", "rate": 2, "slo": {"ttft_p99": 3.0, "tpot_p99": "100ms"},
           "hardware": "trn1,inf2,trn2,h100-sxm", "top": 5}  # fmt: skip


def test_precision_notes_name_only_the_shown_rows_chips() -> None:
    """A split's two pools each count; trn1, searched but in no row shown, is not noted."""
    report = {"precision_notes": {c: NOTE.format(c) for c in ("trn1", "inf2", "trn2")}}
    shown = [{"hardware": "h100-sxm"}, {"hardware": "inf2>h100-sxm"}]
    assert shown_precision_notes(report, shown) == [NOTE.format("inf2")]
    assert shown_precision_notes(report, [*shown, {"hardware": "trn2"}]) == [NOTE.format(c) for c in ("inf2", "trn2")]
    assert shown_precision_notes({"precision_notes": None}, shown) == []


def test_plan_serve_notes_the_precision_of_the_chips_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI had printed trn1's note under six rows none of which is trn1; the page had printed none."""
    argv = ["plan", "serve", "--model", "gpt-oss-20b", "--rate", "2", "--slo", "ttft_p99=3s,tpot_p99=100ms",
            "--hardware", "trn1,inf2,trn2,h100-sxm", "--requests", "200", "--top", "5"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"precision: {NOTE.format('trn2')}" in out and f"precision: {NOTE.format('inf2')}" in out
    assert NOTE.format("trn1") not in out


@needs_node
def test_the_serving_plan_page_notes_the_precision_as_the_cli_does() -> None:
    report: dict[str, Any] = POST_ROUTES["/api/plan/serve"](GPT_OSS, Settings())
    assert report["precision_notes"]["trn1"] == NOTE.format("trn1")  # searched, and so in the answer
    shown = [c for r in report["results"] + report["verified"] for c in r["hardware"].split(">")]
    assert "trn1" not in shown and {"inf2", "trn2"} <= set(shown)
    draw = f"drawServePlan({json.dumps(report)});\nconsole.log(JSON.stringify(warned(byId['ps-notes'])));\n"
    warned = json.loads(_node(_script() + DOM + draw)[-1])
    assert [w for w in warned if w.startswith("precision: ")] == [
        f"precision: {NOTE.format('inf2')}",
        f"precision: {NOTE.format('trn2')}",
    ]


def test_a_missed_target_reads_in_predicts_units() -> None:
    """The SLO row says 'tpot_p99 <= 20.0 ms': the check's note had read 'tpot_p99 0.0451 s > 0.02 s'."""
    summary = {"ttft_s": {"p99": 2.39}, "tpot_s": {"p99": 0.0451}, "e2e_s": {"p99": float("nan")}}
    assert _missed_text(summary, "tpot_p99", 0.02) == "tpot_p99 45.1 ms > 20.0 ms"
    assert _missed_text(summary, "ttft_p99", 0.15) == "ttft_p99 2.39 s > 150 ms"
    assert _missed_text({"ttft_s": {"p99": 0.0004567}}, "ttft_p99", 0.7) == "ttft_p99 457 us > 700 ms"
    assert _missed_text(summary, "e2e_p99", 10.0) == "e2e_p99 (no value)"


@needs_node
def test_the_one_deployment_page_shows_predicts_batch_limit() -> None:
    """Llama-3.1-8B on one trn2 under a 150 ms TTFT and 20 ms TPOT p99: the searched b64 and the shapes the SLO check
    simulated, each with what it missed, as predict's 'batch limit' row says them (the page had left it out)."""
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "trn2", "chips": 1, "arrival_rate": 5,
                "input_tokens": 1024, "output_tokens": 256, "requests": 600,
                "slo": {"ttft_p99_s": 0.15, "tpot_p99_s": "20ms"}}  # fmt: skip
    answer: dict[str, Any] = POST_ROUTES["/api/predict"](scenario, Settings())
    note = answer["batch_note"]
    assert note.startswith("b64: the search's limit for this load") and "TP4 b64 x1, the search's first, missed" in note
    assert "> 20.0 ms" in note and "> 0.02 s" not in note  # in the SLO row's unit
    draw = f"drawServe({json.dumps(answer)});\nconsole.log(JSON.stringify(byId['s-kv'].children.map(text)));\n"
    kv = json.loads(_node(_script() + DOM + draw)[-1])
    assert kv[kv.index("batch limit") + 1] == note
    assert kv.index("plan") < kv.index("batch limit")


@pytest.mark.parametrize(
    "argv",
    [
        ["catalog", "list"],
        ["catalog", "show", "trn2"],
        ["catalog", "show", "h100-sxm"],
        ["catalog", "show", "efficiency.hopper"],
    ],
)
def test_catalog_list_and_show_say_the_what_if(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """trn2's HBM at x1.1 is 2.9 x 1.1 = 3.19 TB/s: catalog list had printed it in a row of status spec unsaid."""
    what_if = ["--set", "trn2.hbm_bandwidth=x1.1"]
    assert run([*argv, *what_if]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("WHAT-IF: trn2.hbm_bandwidth = 3.19 TB/s (catalog 2.9 TB/s), set on the command line")
    assert run([*argv, *what_if, "--json"]) == 0
    assert "WHAT-IF" not in capsys.readouterr().out
    assert run(argv) == 0
    assert "WHAT-IF" not in capsys.readouterr().out


#: max_batch 16, 32 and 64 of a load that never fills 16: alike on every ranked figure
BATCHES = """\
name: ties
base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 512,
       output_tokens: 128, arrival_rate: 2, requests: 200, slo: {ttft_p99_s: 2, tpot_p99_s: 0.1}, plan: {tp: 1}}
grid: {plan.max_batch: [16, 32, 64]}
"""


def test_a_tie_the_point_id_broke_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note had read 'the tie goes to the lowest TPOT p99, then $/M out' of three points alike in both."""
    (tmp_path / "ties.yaml").write_text(BATCHES, encoding="utf-8")
    store = str(tmp_path / "t.duckdb")
    assert run(["sweep", str(tmp_path / "ties.yaml"), "--store", store, "--workers", "1"]) == 0
    ran = capsys.readouterr().out
    assert run(["sweep", "show", store]) == 0
    shown = capsys.readouterr().out
    for out in (ran, shown):
        text = " ".join(out.split())  # a note wraps at the console's width
        assert (
            "† time baseline: tied on TTFT p99 with 2 other points, and on TPOT p99 and $/M out too; the tie goes "
            "to the first by point id"
        ) in text
        assert (
            "† cost baseline: tied on $/M out with 2 other points, and on TTFT p99 and TPOT p99 too; the tie goes "
            "to the first by point id"
        ) in text


def test_a_tie_the_id_broke_among_some_names_how_many() -> None:
    """Tied on $/M out with 3 others, 1 of which ties on TTFT and TPOT p99 too; a tie the tie-breaks broke is
    worded as before."""
    row = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "what_if": "baseline",
           "scenario": {"engine": "vllm"}, "plan": {"tp": 1, "max_batch": 32, "replicas": 1},
           "output_tokens_per_s": 256.0, "ttft_p99_s": 0.0577, "tpot_p99_s": 0.00449, "slo_met": True,
           "cost_usd_per_mtok": 7.465}  # fmt: skip
    rows = [{**row, "best_by": "time", "tied_with": 1}, {**row, "best_by": "cost", "tied_with": 3}]
    console = Console(width=200, record=True)
    console.print(_best_table("ties", rows, ["engine"], [0, 1]))
    assert console.export_text().splitlines()[-2:] == [
        "† time baseline: tied on TTFT p99 with 1 other point; the tie goes to the lowest TPOT p99, then $/M out",
        "† cost baseline: tied on $/M out with 3 other points, and with 1 of them on TTFT p99 and TPOT p99 too; the "
        "tie goes to the first by point id",
    ]


@pytest.mark.parametrize("argv", [["model", "list"], ["model", "show", "llama-3.1-8b"]])
def test_model_tables_say_the_what_if(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """model list and show took --set and said it in --json alone, their tables reading as the catalog's own."""
    assert run([*argv, "--set", "h100-sxm.tdp=800W"]) == 0
    assert "WHAT-IF: h100-sxm.tdp = 800 W (catalog 700 W), set on the command line" in capsys.readouterr().out
