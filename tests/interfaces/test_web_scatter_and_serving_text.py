"""The web page's training scatter leaves fleets without a price off (and never hangs on its axes), and its serving
tabs write what the command line writes: the cost's basis, latencies to three figures, $/hour with cents, the load
the Serving plan tab needs, the sensitivity's time, and /api/models's what_if."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.serve_views import _cost_row
from chipwise.interfaces.plots import training_points
from chipwise.interfaces.web.routes import GET_ROUTES, POST_ROUTES, Settings
from chipwise.interfaces.web.server import page

from .test_web import DOM, _script, needs_node

#: the tester's fleets at capacity-block prices: gaudi3, tpu-v6e and mi300x have no such price (cost_usd null)
CAPACITY_BLOCK = {"model": "llama-3.1-8b", "chips": 256, "tokens": "1T", "pricing": "capacity-block",
                  "hardware": ["h100-sxm", "trn2", "tpu-v6e", "mi300x", "gaudi3"]}  # fmt: skip
#: what the scatter drew, run under node: its note, each point's tooltip, and the y axis's label and tick texts
SCATTER_VIEW = """
const root = byId['scatter'];
const titles = root.children.filter((c) => c.tag === 'g')
  .map((g) => g.children.find((c) => c.tag === 'title').textContent);
const labels = root.children.filter((c) => c.tag === 'text').map((c) => c.textContent);
console.log(JSON.stringify({ note: byId['scatter-note'].textContent, titles, labels }));
"""


def _answer(route: str, body: dict[str, Any], settings: Settings) -> Any:
    """An endpoint's answer as the page receives it: JSON, NaN as null."""
    return json.loads(json.dumps(fmt.jsonable(POST_ROUTES[route](body, settings)), allow_nan=False))


def _node_within(js: str, seconds: float = 20) -> list[str]:
    """node's output lines, the script on its standard input (a ranking's answer is longer than an argument may
    be); a page stuck in a loop fails here in `seconds`, not when its memory runs out."""
    out = subprocess.run(["node"], input=js, check=True, capture_output=True, text=True, timeout=seconds).stdout
    return out.splitlines()


def _scatter(report: Any) -> dict[str, Any]:
    js = _script() + DOM + f"state.report = {json.dumps(report)};\ndrawScatter(state.report);\n" + SCATTER_VIEW
    return dict(json.loads(_node_within(js)[-1]))


@needs_node
def test_fleets_without_a_price_are_named_not_drawn_at_zero() -> None:
    """null / 1e6 is 0: the three unpriced fleets had been drawn at y = 0 with the tooltip 'cost $0.00' and named
    nowhere; they are left off and named as --plot names them (plots.training_points)."""
    report = _answer("/api/plan/train", CAPACITY_BLOCK, Settings())
    costs = {r["hardware"]: r["cost_usd"] for r in report["results"]}
    assert [h for h, c in costs.items() if c is None] == ["gaudi3", "tpu-v6e", "mi300x"]
    view = _scatter(report)
    missing = training_points(report)[1]
    assert missing == ["gaudi3", "tpu-v6e", "mi300x"]
    assert view["note"].endswith(" Not plotted (no price or no finite figure): gaudi3, tpu-v6e, mi300x.")
    # trn2 marked † as plan train's table marks it: its family's training efficiencies are unfitted priors
    assert [t.split(" - ")[0] for t in view["titles"]] == ["h100-sxm", "trn2 †"]
    # the expected (goodput-adjusted) costs, $238,499 and $107,567, as the table writes them
    assert [t.split("cost ")[1].split(",")[0] for t in view["titles"]] == ["$238k", "$108k"]
    assert not any("$0.00" in t for t in view["titles"])


@needs_node
def test_a_log_cost_axis_with_an_unpriced_fleet_does_not_hang() -> None:
    """trn2 at $0.05 an hour beside h100-sxm makes the cost axis log; gaudi3's null cost, read as 0, had set its
    lower bound to 0 and logTicks(0, hi) pushed ticks from e = -Infinity until node died ('invalid size error')."""
    body = {**CAPACITY_BLOCK, "hardware": ["h100-sxm", "trn2", "gaudi3"]}
    report = _answer("/api/plan/train", body, Settings(sets=("trn2.48xlarge.price.capacity-block=0.05",)))
    view = _scatter(report)
    assert view["note"].endswith(" Not plotted (no price or no finite figure): gaudi3.")
    assert [t.split(" - ")[0] for t in view["titles"]] == ["h100-sxm", "trn2 †"]
    # expected costs of $150 and $238,499: a factor of 1,586, so a log axis from 0.000150 / 1.25 to 0.238 x 1.25
    # ($M), ticked 1-2-5 from 0.0002 to 0.2
    assert "expected cost ($M, capacity-block, log)" in view["labels"]
    ticks = ["0.0002", "0.0005", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2"]
    assert [t for t in view["labels"] if t.startswith("0.")] == ticks


@needs_node
def test_ticks_and_scales_never_loop_on_a_bound_they_cannot_place() -> None:
    """A bound of 0, a negative or an infinite one gives no ticks instead of a loop; a zero among log-suited values
    turns the axis linear (a log axis cannot place it), and every coordinate stays finite."""
    js = (
        _script()
        + DOM
        + """
console.log(JSON.stringify([logTicks(0, 10), logTicks(-1, 10), logTicks(1, Infinity), logTicks(NaN, 10),
                            niceTicks(0, Infinity, 6), niceTicks(-Infinity, 1, 6)]));
console.log(niceTicks(1e17, 1e17 + 16, 6).length <= 13);
console.log(logSuits([0, 1, 100]), logSuits([1, 100]));
const s = scale([0, 1, 100], 0, 100, true);
console.log(JSON.stringify([s(0), s(100), s.ticks]));
"""
    )
    out = _node_within(js)
    assert json.loads(out[0]) == [[], [], [], [], [], []]
    assert out[1] == "true"
    assert out[2] == "false true"
    # linear: 0 - 8 padded to 0, 100 + 8 = 108: 0 at 0, 100 at 100 / 108 of the way
    lo, hi, ticks = json.loads(out[3])
    assert lo == 0 and hi == pytest.approx(100 / 108 * 100) and ticks == [0, 20, 40, 60, 80, 100]


def _draw_serve(answer: dict[str, Any]) -> dict[str, str]:
    draw = f"drawServe({json.dumps(answer)});\nconst kv = byId['s-kv'].children.map((c) => c.textContent);\n"
    kv = json.loads(_node_within(_script() + DOM + draw + "console.log(JSON.stringify(kv));")[-1])
    return dict(zip(kv[::2], kv[1::2], strict=True))


#: the One deployment tab's defaults (70B in fp8 on 8 h200, 1,024 in and out, 20 req/s)
DEFAULTS = {"kind": "serve", "model": "llama-3.1-70b", "hardware": "h200", "chips": 8, "precision": "fp8",
            "input_tokens": 1024, "output_tokens": 1024, "arrival_rate": 20}  # fmt: skip


@needs_node
def test_a_short_runs_cost_says_what_it_divides_by() -> None:
    """500 requests of the defaults under an SLO: arrivals span 25 s, under two request latencies. predict reads
    '$1.48 per M output tokens (at the throughput of the batch filling: see 'run too short')'; the page had read
    '$1.48' alone."""
    scenario = {**DEFAULTS, "requests": 500, "slo": {"ttft_p99_s": 0.16, "tpot_p99_s": 0.05}}
    answer = _answer("/api/predict", scenario, Settings())
    assert "arrival_span_s" in answer["short_run"]
    qualifier = " (at the throughput of the batch filling: see 'run too short')"
    cost = fmt.price(answer["cost_usd_per_mtok"])
    assert _cost_row(answer, answer["short_run"])[1].endswith(f"{cost} per M output tokens{qualifier}")
    assert _draw_serve(answer)["$ per million output tokens"] == cost + qualifier
    # a window of a few requests' output, priced at the load it keeps up with (2 req/s x 256 tokens): the load's
    # rate, as predict says it (it had read 'at the throughput of a short run', a basis it was not priced at)
    few = {**DEFAULTS, "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "input_tokens": 1024,
           "output_tokens": 256, "arrival_rate": 2, "requests": 10}  # fmt: skip
    answer = _answer("/api/predict", few, Settings())
    assert "window_requests" in answer["short_run"] and answer["priced_output_tokens_per_s"] == 512.0
    shown = _draw_serve(answer)["$ per million output tokens"]
    note = " (per the load's 512 output tok/s, which the run keeps up with)"
    assert shown == fmt.price(answer["cost_usd_per_mtok"]) + note
    assert _cost_row(answer, answer["short_run"])[1].endswith(
        f"{fmt.price(answer['cost_usd_per_mtok'])} per M output tokens{note}"
    )


@needs_node
def test_a_cost_priced_at_the_load_says_so_as_predict_does() -> None:
    """A steady run whose throughput window reads 5% under the load it keeps up with is priced at the load's rate:
    predict says '(per the load's N output tok/s, which the run keeps up with)' beside the cost."""
    answer = _answer("/api/predict", {**DEFAULTS, "requests": 2000}, Settings())
    answer.pop("short_run", None)
    answer["priced_output_tokens_per_s"] = 1.05 * answer["output_tokens_per_s"]
    rate = fmt.significant(answer["priced_output_tokens_per_s"])
    note = f" (per the load's {rate} output tok/s, which the run keeps up with)"
    assert note in _cost_row(answer, None)[1]
    assert _draw_serve(answer)["$ per million output tokens"] == fmt.price(answer["cost_usd_per_mtok"]) + note


@needs_node
def test_one_deployments_iteration_and_prefill_read_three_figures() -> None:
    """predict writes a lone prompt's prefill as '119 ms' (fmt.latency); the page had written '118.7 ms'."""
    answer = _answer("/api/predict", {**DEFAULTS, "requests": 2000}, Settings())
    shown = _draw_serve(answer)
    steady = sum(v for v in answer["breakdown"].values() if v > 0)
    prefill = sum(v for v in answer["prefill_breakdown"].values() if v > 0)
    assert shown["steady iteration"].startswith(fmt.latency(steady) + ", mostly ")
    assert shown["one prompt's prefill, alone"].startswith(fmt.latency(prefill) + ", mostly ")
    assert fmt.latency(prefill) == fmt.latency(answer["prefill_one_prompt"]["seconds"])  # predict's row
    assert shown["one prompt's prefill, alone"].split(",")[0].count(".") == 0  # 3 figures of ms: no decimals here


#: a serving plan's answer with the figures the review read: $110.08 an hour, an 8.39 ms KV handover, a check run
#: again at 83.8% of its capacity, a quarter of the fleet simulated
PLAN = {
    "model": "llama-3.1-70b", "input_tokens": 1024, "output_tokens": 256, "lengths": "1,024 in / 256 out",
    "precision": "fp8", "pricing": "on-demand",
    "slo": {}, "load": {"label": "20 req/s"}, "search": {"evaluated": 10, "seconds": 0.5}, "verdict": "v",
    "results": [{"hardware": "h200>h200", "chips": 16, "cost_usd_per_hour": 110.08, "cost_usd_per_mtok": 2.5,
                 "plan": {"tp": 8, "max_batch": 64, "replicas": 2}, "estimate": {"tpot_s": 0.03, "ttft_p99_s": 1.0},
                 "disaggregated": True}],
    "verified": [{"rank": 1, "hardware": "h200>h200", "chips": 16, "engine": "trtllm>trtllm", "slo_met": True,
                  "plan": {"prefill": {"tp": 8, "max_batch": 64, "replicas": 1},
                           "decode": {"tp": 8, "max_batch": 64, "replicas": 1}},
                  "kv_transfer": {"seconds_for_mean_prompt": 0.00839, "fabric": "EFA"}, "cost_usd_per_mtok": 2.5,
                  "simulated": {"requests": 4000, "confirming": True, "rerun": "loaded", "utilisation": 0.838,
                                "fleet_share": 0.25}}],
}  # fmt: skip


@needs_node
def test_serving_plan_writes_cost_handover_and_shares_as_plan_serve_does() -> None:
    """plan serve writes $/hour with cents ('$110.08', fmt.price), the KV handover to three figures ('8.39 ms'),
    a check's load and slice as fmt.percent ('83.8%', '25.0%'); the page had read $110, 8.4 ms, 84% and 25%."""
    draw = f"drawServePlan({json.dumps(PLAN)});\n"
    notes = "byId['ps-notes'].children.map((c) => c.textContent)"
    view = f"console.log(JSON.stringify([byId['ps-table'].textContent, {notes}]));"
    table, notes = json.loads(_node_within(_script() + DOM + draw + view)[-1])
    assert "$110.08" in table and fmt.price(110.08) == "$110.08"
    assert "h200>h200: the KV cache of a mean prompt moves in 8.39 ms over EFA." in notes
    assert any(n.startswith("h200>h200: at 83.8% of what it delivers with its batch full") for n in notes), notes
    assert "h200>h200: a 25.0% slice of the fleet was simulated under its share of the load." in notes


@needs_node
def test_serving_plan_without_a_rate_says_to_enter_one() -> None:
    """The arrival rate cleared: the API's 'give exactly one load: rate (requests/s), concurrency (users) or
    offline' named fields the tab does not have; the tab says what to enter, and sends nothing."""
    form = {"model": "llama-3.1-8b", "rate": "", "input_tokens": "1024", "output_tokens": "256", "ttft_p99": "2",
            "tpot_p99_ms": "50", "precision": "auto", "hardware": "h100-sxm", "disaggregated": "yes"}  # fmt: skip
    refused = "give exactly one load: rate (requests/s), concurrency (users) or offline. Fix: pick one."
    js = (
        _script() + DOM + f"Object.assign(FORM, {json.dumps(form)});\nconst sent = [];\n"
        f"globalThis.fetch = (path) => {{ sent.push(path); return Promise.resolve({{ ok: false, status: 400, "
        f"json: async () => ({{ error: {json.dumps(refused)} }}) }}); }};\n"
        "runServePlan({ preventDefault() {} }).then(() => "
        "console.log(JSON.stringify([byId['ps-error'].textContent, sent])));"
    )
    error, sent = json.loads(_node_within(js)[-1])
    assert error == (
        "no load. Fix: enter an arrival rate in requests/s, e.g. 20, a number of concurrent users, or choose offline."
    )
    assert sent == []


@needs_node
def test_the_figure_ranking_says_how_long_it_takes() -> None:
    """The ranking runs the prediction's 2,000 requests twice per figure (57 runs for the defaults): the page had
    shown a spinner alone for the minute it took on a busy machine, while saying 'keep the requests few'. It says
    what each run costs while it works, and what the runs took when done."""
    answer = {"predictions": 57, "requests": 2000, "seconds": 11.8, "metric": "tpot_p50", "step": 0.1,
              "figures": [], "metrics": {"tpot_p50": {"label": "TPOT p50"}}}  # fmt: skip
    js = (
        _script() + DOM + f"lastServe = {json.dumps({**DEFAULTS, 'requests': 2000})}; lastServeSeconds = 0.5;\n"
        "let resolve; globalThis.fetch = () => new Promise((r) => { resolve = r; });\n"
        "const done = runSensitivity();\n"
        "console.log(byId['s-sens-status'].textContent);\n"
        f"resolve({{ ok: true, status: 200, json: async () => ({json.dumps(answer)}) }});\n"
        "done.then(() => console.log(byId['s-sens-status'].textContent));"
    )
    working, finished = _node_within(js)[-2:]
    assert working == (
        "moving each figure 10% down and up: two runs of 2,000 requests per figure, each about as long as the "
        "prediction took (500.0 ms), side by side on the server's cores..."
    )
    assert finished == "57 runs of 2,000 requests in 11.80 s"
    assert "A simulation per move: keep the requests few." not in page().decode()


def test_models_carry_the_what_if_as_model_list_json_does(capsys: pytest.CaptureFixture[str]) -> None:
    """A server started with --set h100-sxm.tdp=500: /api/models had answered {"models"} alone, where
    `chipwise model list --json` answers {"models", "what_if"}."""
    sets = ("h100-sxm.tdp=500",)
    answer = GET_ROUTES["/api/models"](Settings(sets=sets))
    assert run(["model", "list", "--json", "--set", sets[0]]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert set(answer) == set(cli) == {"models", "what_if"}
    assert answer["what_if"] == cli["what_if"] == ["h100-sxm.tdp = 500 W (catalog 700 W), set on the command line"]
    assert GET_ROUTES["/api/models"](Settings())["what_if"] == []
