"""The web page's server: the page itself (offline), the JSON endpoints, and one-line errors for bad requests; the page
writes costs and loads as the command line does."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from chipwise.__main__ import _register
from chipwise.errors import ChipwiseError
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.common import track_record_cells
from chipwise.interfaces.web.routes import POST_ROUTES, Settings
from chipwise.interfaces.web.server import MAX_BODY_BYTES, ChipwiseServer, Handler, make_server, page

_register()


def _get(srv: ChipwiseServer, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(srv.url + path.lstrip("/"), timeout=30) as res:
            return res.status, res.headers["Content-Type"], res.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def _post(srv: ChipwiseServer, path: str, body: Any) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(
        srv.url + path.lstrip("/"), data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _one_line_error(answer: Any) -> str:
    assert set(answer) == {"error"}, answer
    message = answer["error"]
    assert "\n" not in message and "Fix:" in message and "Traceback" not in message, message
    return str(message)


def test_page_is_served_and_needs_no_network(server: ChipwiseServer) -> None:
    status, ctype, body = _get(server, "/")
    html = body.decode()
    assert status == 200 and ctype.startswith("text/html")
    assert "<title>chipwise</title>" in html and "/api/plan/train" in html and "/api/predict" in html
    assert "/api/plan/serve" in html
    assert re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html) is None  # no CDN, fonts or scripts from afar
    assert "projected" in html


def test_models_and_catalog(server: ChipwiseServer) -> None:
    status, ctype, body = _get(server, "/api/models")
    assert status == 200 and ctype == "application/json"
    ids = {m["id"] for m in json.loads(body)["models"]}
    assert {"llama-3.1-8b", "llama-3.1-70b", "deepseek-v3"} <= ids
    status, _, body = _get(server, "/api/catalog")
    cat = json.loads(body)
    chips = {c["id"]: c for c in cat["chips"]}
    assert status == 200 and {"h100-sxm", "trn2", "trn4"} <= set(chips)
    assert chips["trn4"]["projected"] and not chips["h100-sxm"]["projected"]
    assert chips["h100-sxm"]["flops_bf16"] > 5e14  # SI: FLOP/s
    assert "bf16" in cat["precisions"] and "cost" in cat["objectives"] and "on-demand" in cat["pricing_modes"]
    assert "owned" in cat["pricing_modes"]  # the page offers TCO pricing, as plan train does
    assert cat["serving_precisions"][0] == "auto" and "mxfp4" in cat["serving_precisions"]


def test_plan_train_ranks_a_small_case(server: ChipwiseServer) -> None:
    body = {"model": "llama-3.1-8b", "chips": 64, "hardware": "h100-sxm,trn2", "tokens": "1T", "objective": "cost"}
    status, report = _post(server, "/api/plan/train", body)
    assert status == 200, report
    rows = report["results"]
    assert {r["hardware"] for r in rows} == {"h100-sxm", "trn2"}
    costs = [r["cost_usd"] for r in rows]
    assert costs == sorted(costs) and report["objective"] == "cost"
    assert all(r["time_to_train_s"] > 0 and 0 < r["mfu"] < 1 and r["breakdown"] for r in rows)
    assert report["pareto"] and set(report["pareto"]) <= set(range(len(rows)))
    assert 0 in report["pareto"]  # the cheapest is always on the cost-time front
    # a row's breakdown card quotes its chip family's published training runs
    assert {r["hardware"]: r["track_record"]["tokens_per_s_per_chip"]["scope"] for r in rows} == {
        "h100-sxm": "hopper",
        "trn2": "aws chips",
    }
    assert b'id="bd-track"' in _get(server, "/")[2]


def test_predict_a_training_scenario(server: ChipwiseServer) -> None:
    scenario = {"kind": "train", "model": "llama-2-7b", "hardware": "h100-sxm", "chips": 8, "tokens": 1e9}
    status, result = _post(server, "/api/predict", scenario)
    assert status == 200, result
    assert result["step_time_s"] > 0 and result["hardware"] == "h100-sxm" and result["memory_breakdown_gib"]


def test_sensitivity_over_the_api(server: ChipwiseServer) -> None:
    """POST /api/sensitivity answers as `chipwise sensitivity --json`; a model path or a bad option is one line."""
    scenario = {"kind": "train", "model": "llama-2-7b", "hardware": "h100-sxm", "chips": 8, "tokens": 1e9}
    body = {"scenario": scenario, "metric": "step_time", "figures": ["flops", "datacenter.pue"]}
    status, result = _post(server, "/api/sensitivity", body)
    assert status == 200, result
    assert result["kind"] == "sensitivity" and result["metric"] == "step_time" and result["plan_held"]
    peak = next(r for r in result["figures"] if r["figure"] == "h100-sxm.flops.bf16")
    assert -1.0 < peak["elasticity"]["step_time"] < -0.3
    status, answer = _post(server, "/api/sensitivity", {**body, "scenario": {**scenario, "model": "/etc/passwd"}})
    assert status == 400 and "the web page reads no files on the server" in answer["error"]
    status, answer = _post(server, "/api/sensitivity", {**body, "step": 2})
    assert status == 400 and "step 2" in answer["error"]


def test_predict_a_serving_scenario(server: ChipwiseServer) -> None:
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "precision": "fp8",
                "input_tokens": 512, "output_tokens": 128, "arrival_rate": 5, "requests": 200}  # fmt: skip
    status, answer = _post(server, "/api/predict", scenario)
    assert status == 200, answer
    assert answer["requests"]["finished"] == 200
    assert answer["ttft_s"]["p99"] >= answer["ttft_s"]["p50"] > 0 and answer["cost_usd_per_mtok"] > 0
    assert 0 < answer["load"]["utilisation"] < 1 < answer["load"]["capacity_requests_per_s"]
    # the page shows where a steady iteration and one prompt's prefill go
    prefill = answer["prefill_breakdown"]
    assert sum(prefill.values()) == pytest.approx(answer["prefill_one_prompt"]["seconds"], rel=1e-3)
    assert b"one prompt's prefill, alone" in _get(server, "/")[2]
    assert 0 <= answer["ttft_wait_s"]["p50"] <= answer["ttft_s"]["p50"]
    # and how far the model has been from published runs like it
    assert b"track record (published runs)" in _get(server, "/")[2]
    assert answer["track_record"]["tpot_s"]["scope"] == "trtllm on hopper"
    # the page draws the KV series the answer carries (it read 'series_replica0' after the key became 'series')
    series = answer["kv_cache_utilisation"]["series"]
    assert len(series["t_s"]) > 1 and {"role", "replica", "mean", "peak"} <= set(series)
    assert b"r.kv_cache_utilisation?.series;" in _get(server, "/")[2]


def test_plan_serve_finds_and_simulates_a_fleet(server: ChipwiseServer) -> None:
    body = {"model": "llama-3.1-8b", "rate": 10, "input_tokens": 512, "output_tokens": 128, "top": 5,
            "slo": {"ttft_p99": 2.0, "tpot_p99": 0.05}, "hardware": "h100-sxm,trn2", "precision": "fp8"}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    assert {r["hardware"] for r in report["results"]} <= {"h100-sxm", "trn2", "h100-sxm>trn2", "trn2>h100-sxm",
                                                          "h100-sxm>h100-sxm", "trn2>trn2"}  # fmt: skip
    costs = [r["cost_usd_per_hour"] for r in report["results"]]
    assert costs == sorted(costs) and len(costs) <= 5
    assert report["verified"] and all("slo_met" in v for v in report["verified"])
    best = report["best"]  # the page prints the same verdict line as the command line
    assert report["verdict"].startswith("Cheapest that meets the SLO in simulation: " + best["hardware"])
    assert report["why"].startswith(f"Why {best['hardware'].replace('>', ' -> ')}: ")  # and why it wins
    assert best["dominated_by"] in best["breakdown"]
    assert 0 <= best["ttft_wait_s"]["mean"] < best["ttft_s"]["mean"]  # what a missed TTFT's advice reads
    assert report["track_record_text"].startswith("Track record: half of the published runs like it read ")


def test_plan_serve_takes_speculative_decoding(server: ChipwiseServer) -> None:
    body = {"model": "llama-3.1-8b", "concurrency": 4, "input_tokens": 512, "output_tokens": 128, "top": 1,
            "hardware": "h100-sxm", "precision": "fp8", "disaggregated": False,
            "speculative": "eagle:3@0.8"}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    assert report["verified"][0]["plan"]["both"]["speculative"].startswith("EAGLE k=3")


def test_plan_serve_takes_a_router(server: ChipwiseServer) -> None:
    body = {"model": "llama-3.1-8b", "rate": 5, "input_tokens": 512, "output_tokens": 128, "top": 1,
            "hardware": "h100-sxm", "precision": "fp8", "disaggregated": False, "router": "power_of_two"}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    assert report["router"] == "power_of_two"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"model": "llama-3.1-8b"}, "exactly one load"),
        ({"model": "llama-3.1-8b", "rate": 5, "offline": True}, "exactly one load"),
        ({"model": "llama-3.1-8b", "rate": -5}, "not a positive number"),
        ({"model": "llama-3.1-8b", "rate": 5, "slo": {"ttft_p95": 1.0}}, "unknown SLO key"),
        ({"model": "llama-3.1-8b", "rate": 5, "slo": {"tpot_p99": -1}}, "an SLO must be positive"),
        ({"model": "llama-3.1-8b", "rate": 5, "slo": {"tpot_p99": "50 parsecs"}}, "unit 'parsecs' unknown; use s"),
        # a split asked for needs a rate or users to size its pools: it was dropped without a word
        ({"model": "llama-3.1-8b", "offline": True, "disaggregated": True}, "disaggregated: pool splits are sized"),
        ({"model": "llama-3.1-8b", "rate": 5, "hardware": "h1OO"}, "unknown chip or system"),
        ({"model": "llama-3.1-8b", "rate": 5, "colour": "red"}, "colour: unknown field"),
        ({"model": "llama-3.1-8b", "rate": 5, "speculative": "medusa:3"}, "unknown speculative method"),
        ({"model": "llama-3.1-8b", "rate": 5, "router": "random"}, "router"),
        # checked as the command line and the API check them, before the search (the page answered them)
        ({"model": "llama-3.1-70b", "rate": 0.2, "input_tokens": 140000, "hardware": "h100-sxm"}, "context of 131,072"),
        ({"model": "llama-3.1-8b", "rate": True}, "rate"),
        ({"model": "llama-3.1-8b", "rate": 1e308}, "more than a fleet of a million chips serves"),
        # flags are JSON booleans and true is not a number (a wrong chip after them: read first, they were taken)
        ({"model": "llama-3.1-8b", "offline": "yes", "hardware": "h1OO"}, "offline: 'yes' is not true or false"),
        ({"model": "llama-3.1-8b", "offline": 1, "hardware": "h1OO"}, "Fix: give true or false"),
        (
            {"model": "llama-3.1-8b", "rate": 5, "disaggregated": "no", "hardware": "h1OO"},
            "disaggregated: 'no' is not true",
        ),
        ({"model": "llama-3.1-8b", "rate": 5, "input_tokens": True, "hardware": "h1OO"}, "input_tokens: true is not"),
        ({"model": "llama-3.1-8b", "rate": 5, "top": True, "hardware": "h1OO"}, "top: true is not a number"),
    ],
)
def test_bad_serve_plan_requests_are_400_with_one_line(server: ChipwiseServer, body: Any, says: str) -> None:
    status, answer = _post(server, "/api/plan/serve", body)
    assert status == 400
    assert says in _one_line_error(answer)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"model": "llama-3.1-8b", "chips": 64, "hardware": ["h100-sxmm"]}, "unknown chip or system 'h100-sxmm'"),
        ({"model": "no-such-model", "chips": 64, "hardware": ["h100-sxm"]}, "no-such-model"),
        ({"model": "llama-3.1-8b", "chips": 0}, "chips"),
        ({"model": "llama-3.1-8b", "chips": 64, "colour": "red"}, "colour: unknown field"),
        ({"chips": 64}, "model"),
        ({"model": "llama-3.1-8b", "chips": 64, "hardware": []}, "hardware is empty"),
        ({"model": "llama-3.1-8b", "chips": 64, "hardware": ["h100-sxm"], "objective": "speed"}, "objective"),
        ([1, 2], "must be a JSON object"),
        (b"{not json", "not valid JSON"),
        # true was read as 1 chip (a wrong chip after it: read first, it was taken)
        ({"model": "llama-3.1-8b", "chips": True, "hardware": "h1OO"}, "chips: true is not a number. Fix: give a"),
        ({"model": "llama-3.1-8b", "chips": 8, "tokens": False, "hardware": "h1OO"}, "tokens: false is not a number"),
    ],
)
def test_bad_plan_requests_are_400_with_one_line(server: ChipwiseServer, body: Any, says: str) -> None:
    status, answer = _post(server, "/api/plan/train", body)
    assert status == 400
    assert says in _one_line_error(answer)


def test_bad_scenario_and_unknown_paths(server: ChipwiseServer) -> None:
    status, answer = _post(server, "/api/predict", {"kind": "train", "model": "llama-2-7b", "chips": 8})
    assert status == 400 and "hardware" in _one_line_error(answer)
    status, answer = _post(server, "/api/nothing", {})
    assert status == 404 and _one_line_error(answer)
    status, _, body = _get(server, "/nothing")
    assert status == 404 and _one_line_error(json.loads(body))
    status, _, body = _get(server, "/api/plan/serve")  # it exists: answered 404 "no page"
    assert status == 405 and "answers POST" in _one_line_error(json.loads(body))
    status, answer = _post(server, "/api/nothing", {})
    assert "/api/plan/serve" in _one_line_error(answer)


def test_plan_serve_takes_slo_times_with_units(server: ChipwiseServer) -> None:
    """As on the command line and in scenarios: '2s', '50ms' (they were refused as not numbers)."""
    body = {"model": "llama-3.1-8b", "rate": 5, "input_tokens": 512, "output_tokens": 64, "top": 1,
            "hardware": "h100-sxm", "disaggregated": False, "slo": {"ttft_p99": "2s", "tpot_p99": "50ms"}}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    assert report["slo"] == {"ttft_p99": 2.0, "tpot_p99": 0.05}


def test_plan_serve_takes_a_tpot_of_a_second_with_its_unit(server: ChipwiseServer) -> None:
    """'1500ms' is 1.5 s: read once, not refused as a bare 1.5 (the page's TPOT field is in ms)."""
    body = {"model": "llama-3.1-8b", "rate": 5, "input_tokens": 512, "output_tokens": 64, "top": 1,
            "hardware": "h100-sxm", "disaggregated": False, "slo": {"tpot_p99": "1500ms"}}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    assert report["slo"] == {"tpot_p99": 1.5}


def test_plan_serve_names_the_chips_its_engine_does_not_run_on(server: ChipwiseServer) -> None:
    """As the command line does: Neuron does not run on an H100, one line saying so (the page answered 200 'No
    option meets the SLO' to a request with no SLO)."""
    body = {"model": "llama-3.1-70b", "rate": 5, "hardware": "h100-sxm", "engine": "neuron"}
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 400
    assert "neuron does not run on h100-sxm" in _one_line_error(report)


def test_a_busy_port_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(ChipwiseError, match=r"cannot listen on 127\.0\.0\.1:\d+ .* Fix: choose another --port"):
            make_server("127.0.0.1", port)
        assert run(["web", "--port", str(port), "--no-open"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Fix:" in err


def test_web_command_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["web", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--port" in out and "--open" in out and "--no-open" in out


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_script_parses(tmp_path: Path) -> None:
    html = page().decode()
    script = html[html.index("<script>") + len("<script>") : html.index("</script>")]
    (tmp_path / "page.js").write_text(script)
    subprocess.run(["node", "--check", str(tmp_path / "page.js")], check=True, capture_output=True, timeout=30)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_quotes_a_track_record_as_the_cli_does() -> None:
    """With the median signed error, as the CLI's table gives it (the page had left out which way the model leans)."""
    html = page().decode()
    start = html.index("const RECORD_LABELS")
    source = html[start : html.index("\n}\n", html.index("function trackText")) + 3]
    tpot = {"median_ape_pct": 12.4, "p80_ape_pct": 35.2, "median_error_pct": -1.2, "n": 1711}
    ttft = {"median_ape_pct": 30.1, "p80_ape_pct": 80.4, "median_error_pct": 16.4, "n": 439}
    record = {"tpot_s": {**tpot, "scope": "any engine on hopper"}, "ttft_s": {**ttft, "scope": "vllm on hopper"}}
    script = source + f"console.log(trackText({json.dumps(record)}));"
    out = subprocess.run(["node", "-e", script], check=True, capture_output=True, text=True, timeout=30).stdout
    assert out.strip() == (
        "TPOT: half within 12%, 4 in 5 within 35%, median error -1% (1,711 runs, any engine on hopper); "
        "TTFT: half within 30%, 4 in 5 within 80%, median error +16% (439 runs, vllm on hopper)"
    )
    assert [c for r in record.values() for c in track_record_cells(r)][3::4] == ["-1%", "+16%"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_writes_serving_plans_as_the_cli_does() -> None:
    """The page's plan text names attention DP (and balancing off) and drafting, as the CLI's labels do."""
    html = page().decode()
    start = html.index("function servePlanText")
    source = html[start : html.index("\n}\n", start) + 3]
    plans = [
        {"both": {"tp": 4, "ep": 4, "attention_dp": True, "adp_balance": False, "max_batch": 64, "replicas": 1}},
        {"tp": 8, "ep": 8, "attention_dp": True, "max_batch": 256, "replicas": 2, "speculative": "mtp k=3"},
        {"prefill": {"tp": 2, "max_batch": 64, "replicas": 1}, "decode": {"tp": 4, "max_batch": 128, "replicas": 3}},
    ]
    script = source + "".join(f"console.log(servePlanText({json.dumps(p)}));" for p in plans)
    out = subprocess.run(["node", "-e", script], check=True, capture_output=True, text=True, timeout=30).stdout
    assert out.splitlines() == [
        "TP4 EP4 ADP nobal b64 x1",
        "TP8 EP8 ADP b256 +mtp k3 x2",
        "P: TP2 b64 x1 | D: TP4 b128 x3",
    ]


#: a DOM just large enough for the page's drawing code, run under node after the page's script: elements made on
#: first lookup by id, text through textContent, the form's fields from FORM, the ticked chips from CHECKED, and fetch
#: sent to the test's server at BASE
PAGE_DOM = r"""
class El {
  constructor(tag) { this.tag = tag; this.children = []; this.attrs = {}; this.text = ""; this.hidden = false;
                     this.disabled = false; this.className = ""; this.dataset = {}; this.classList = { toggle() {} }; }
  setAttribute(k, v) { this.attrs[k] = v; }
  addEventListener() {}
  append(...c) { this.children.push(...c); }
  replaceChildren(...c) { this.children = [...c]; }
  set textContent(t) { this.text = String(t); this.children = []; }
  get textContent() { return this.text + this.children.map((c) => (c instanceof El ? c.textContent : c)).join(""); }
}
const byId = {};
globalThis.Node = El;
globalThis.document = {
  getElementById: (id) => byId[id] || (byId[id] = new El("div")),
  createElement: (tag) => new El(tag), createElementNS: (ns, tag) => new El(tag),
  querySelectorAll: (sel) => (sel === "#hw-list input:checked" ? CHECKED.map((value) => ({ value })) : []),
};
globalThis.FormData = class { get(k) { return k in FORM ? FORM[k] : null; } };
const realFetch = globalThis.fetch;
globalThis.fetch = (path, opts) => realFetch(BASE + path.replace(/^\//, ""), opts);
// what was drawn, by element id: hidden, its text, its children's texts, a table's rows of cells and the texts drawn
// as warnings
const text = (c) => (c instanceof El ? c.textContent : String(c));
const warned = (e) => (e instanceof El ? (e.className === "warn" ? [e.textContent] : e.children.flatMap(warned)) : []);
const drawn = () => Object.fromEntries(Object.entries(byId).map(([id, e]) => [id, {
  hidden: e.hidden, text: e.textContent, items: e.children.map(text), warn: warned(e),
  rows: e.children.flatMap((c) => c.children || []).filter((r) => r.tag === "tr").map((r) => r.children.map(text)),
}]));
"""


def _drive_page(srv: ChipwiseServer, tmp_path: Path, call: str, form: dict[str, str], chips: list[str]) -> Any:
    """What the page's `call` (runTrain or runServe) draws from the server's real answer to `form`."""
    return _run_page(srv, tmp_path, f"{call}({{ preventDefault() {{}} }})", form, chips)


def _draw(srv: ChipwiseServer, tmp_path: Path, draw: str, answer: Any) -> Any:
    """What the page's `draw` (drawServe, drawServePlan) draws from `answer`, an endpoint's JSON."""
    return _run_page(srv, tmp_path, f"{draw}({json.dumps(answer)})", {}, [])


def _run_page(srv: ChipwiseServer, tmp_path: Path, js: str, form: dict[str, str], chips: list[str]) -> Any:
    """What the page draws once the expression `js` (a promise or not) has run, after the page's own start."""
    html = page().decode()
    script = html[html.index("<script>") + len("<script>") : html.index("</script>")]
    setup = f"const BASE = {json.dumps(srv.url)}, CHECKED = {json.dumps(chips)}, FORM = {json.dumps(form)};\n"
    run_it = f"Promise.resolve({js}).then(() => console.log(JSON.stringify(drawn())));\n"
    (tmp_path / "drive.js").write_text(script + PAGE_DOM + setup + run_it)
    out = subprocess.run(["node", str(tmp_path / "drive.js")], check=True, capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)


TRAIN_FORM = {"model": "llama-3.1-8b", "chips": "64", "precision": "bf16", "objective": "time", "pricing": "on-demand"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_lists_why_no_hardware_could_train(server: ChipwiseServer, tmp_path: Path) -> None:
    """With no result the page's error names each chip and its reason (it had said 'see the reasons below' and shown
    none below), as the serving plan's does."""
    form = {**TRAIN_FORM, "model": "llama-3.1-405b", "chips": "1", "tokens": "1T"}
    page_view = _drive_page(server, tmp_path, "runTrain", form, ["h100-sxm", "h200"])
    body = {**form, "chips": 1, "hardware": ["h100-sxm", "h200"]}
    status, report = _post(server, "/api/plan/train", body)
    assert status == 200 and not report["results"], report
    error = page_view["t-error"]
    assert not error["hidden"] and page_view["t-results"]["hidden"]
    assert error["text"].splitlines() == [
        "no hardware could run this job. Fix: add chips or choose others.",
        *[f"{sk['hardware']}: {sk['reason']}" for sk in report["skipped"]],
    ]
    assert {sk["hardware"] for sk in report["skipped"]} == {"h100-sxm", "h200"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize(("tokens", "per"), [("", " /hour"), ("1T", "")])
def test_page_heads_one_hours_figures_per_hour(server: ChipwiseServer, tmp_path: Path, tokens: str, per: str) -> None:
    """Without tokens the answer's cost, energy and CO2e are of one hour (economics_basis): the table heads them
    /hour, as plan train does; they had read as the whole run's."""
    page_view = _drive_page(server, tmp_path, "runTrain", {**TRAIN_FORM, "tokens": tokens}, ["h100-sxm"])
    assert page_view["t-error"]["hidden"], page_view["t-error"]
    head = page_view["rank"]["rows"][0]
    summed = [c for c in head if c.split(" /")[0] in ("cost", "energy", "CO2e")]
    assert summed == [f"cost{per}", f"energy{per}", f"CO2e{per}"]
    hourly = [n for n in page_view["t-notes"]["items"] if "one hour" in n]
    assert len(hourly) == (1 if per else 0)


SERVE_FORM = {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": "1", "precision": "fp8",
              "input_tokens": "512", "output_tokens": "128", "arrival_rate": "5", "requests": "200",
              "ttft_p99_s": "", "tpot_p99_ms": ""}  # fmt: skip


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("slo", [{}, {"ttft_p99_s": "2", "tpot_p99_ms": "50"}])
def test_page_shows_slo_met_only_for_an_slo(server: ChipwiseServer, tmp_path: Path, slo: dict[str, str]) -> None:
    """With no SLO the answer's slo_met is null and the page shows no SLO row, as predict prints none (it had said
    'null, 100.0% of requests within it')."""
    page_view = _drive_page(server, tmp_path, "runServe", {**SERVE_FORM, **slo}, [])
    assert page_view["s-error"]["hidden"], page_view["s-error"]
    kv = page_view["s-kv"]["items"]
    shown = dict(zip(kv[::2], kv[1::2], strict=True))
    assert "plan" in shown and "time per output token" in shown
    assert ("SLO" in shown) == ("goodput" in shown) == bool(slo)
    assert not slo or shown["SLO"] in ("met", "NOT met")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_ranks_the_figures_a_prediction_rests_on(server: ChipwiseServer, tmp_path: Path) -> None:
    """The serving tab's 'which figure matters most' table draws /api/sensitivity's answer as the CLI's table: the
    figures that move the metric, largest first, each side's move and the elasticity."""
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "precision": "fp8",
                "input_tokens": 512, "output_tokens": 128, "arrival_rate": 5, "requests": 100}  # fmt: skip
    body = {"scenario": scenario, "metric": "tpot_p50", "figures": ["hbm_bandwidth", "datacenter.pue"]}
    status, answer = _post(server, "/api/sensitivity", body)
    assert status == 200, answer
    rows = _draw(server, tmp_path, "drawSensitivity", answer)["s-sens"]["rows"]
    hbm = next(r for r in answer["figures"] if r["figure"] == "h100-sxm.hbm_bandwidth")
    assert rows[0] == ["#", "figure", "value", "status", "TPOT p50 at -10%", "at +10%", "elasticity"]
    assert rows[1][:4] == ["1", "h100-sxm.hbm_bandwidth", "3.35 TB/s", "spec"]
    assert rows[1][6] == f"{hbm['elasticity']['tpot_p50']:+.2f}"
    assert rows[1][5] == f"{100 * hbm['change']['plus']['tpot_p50']:+.2f}%"
    assert len(rows) == 2  # the PUE moves energy, not TPOT: not in a TPOT ranking


def _replicas(plan: dict[str, Any]) -> list[int]:
    return [plan["replicas"]] if "replicas" in plan else [p["replicas"] for p in plan.values()]


def _rented(row: dict[str, Any]) -> str:
    billed = row.get("billed_chips")
    return f" [{billed}]" if billed is not None and billed > row["chips"] else ""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_marks_a_check_that_resized_its_pools(server: ChipwiseServer, tmp_path: Path) -> None:
    """README's plan: each checked row is marked with the estimate's count and the check's ('10 -> 9'), and one
    whose check keeps its count but resizes its pools '9 -> 9' as the CLI marks it (plan_serve_views._settled; the
    page had marked a row only where the count changed). The README's checks all change the count since stop 100,
    so row 1's is given its check's count (and rented chips) with the estimate's pools, the case under test. The
    page had also footnoted trn2's estimated price though no row shown is trn2's."""
    body = {"model": "llama-3.1-70b", "rate": 20, "input_tokens": 1024, "output_tokens": 256,
            "slo": {"ttft_p99": 2.0, "tpot_p99": "50ms"}, "hardware": "h100-sxm,h200,b200,mi300x,trn2",
            "precision": "fp8", "kv_precision": "fp8", "top": 5}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    checks = {v["rank"]: v for v in report["verified"]}
    changed = [i for i, x in enumerate(report["results"], start=1) if i in checks and checks[i]["chips"] != x["chips"]]
    assert 1 in changed, "the README's answer: its check settled on fewer chips than the estimate's"
    first = report["results"][0]
    first["chips"], first["billed_chips"] = checks[1]["chips"], checks[1].get("billed_chips")
    assert _replicas(checks[1]["plan"]) != _replicas(first["plan"])
    page_view = _draw(server, tmp_path, "drawServePlan", report)
    cells = [row[3] for row in page_view["ps-table"]["rows"][1:]]
    for i in changed:  # the check's own count and rented chips after the arrow
        row, check = report["results"][i - 1], checks[i]
        assert cells[i - 1] == f"{row['chips']}{_rented(row)} -> {check['chips']}{_rented(check)}", cells
    assert cells[0] == f"{first['chips']}{_rented(first)} -> {first['chips']}{_rented(first)}", cells
    notes = page_view["ps-notes"]["items"]
    assert (
        "a -> b chips: the estimate's count, and the one its simulated check settled on (a -> a: its pools resized);"
        " the row's $/h and $/M are the estimate's, for a chips." in notes
    )
    assert "trn2" in report["price_estimates"] and not any(n.startswith("§") for n in notes)
    assert report["track_record_text"] and report["track_record_text"] in notes


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_words_an_estimated_price_as_the_cli_does(server: ChipwiseServer, tmp_path: Path) -> None:
    """Trn2 has no on-demand SKU: its price is an estimate. The page's § footnote had read 'priced by a catalog
    estimate (no offer found)', which the CLI's estimate_note no longer says (a mode's price derived from another's
    is not 'no offer')."""
    body = {"model": "llama-3.1-8b", "rate": 5, "input_tokens": 512, "output_tokens": 128,
            "slo": {"ttft_p99": 2.0, "tpot_p99": "50ms"}, "hardware": "trn2,h100-sxm", "top": 2}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    assert any(x.get("price_estimated") == ["trn2"] for x in report["results"]), report["results"]
    notes = _draw(server, tmp_path, "drawServePlan", report)["ps-notes"]["items"]
    cli = fmt.estimate_note(["trn2"], "price_estimates", "on-demand")
    assert cli.startswith("§ trn2: priced by an estimate, not a published on-demand price of the system's provider")
    assert [n for n in notes if n.startswith("§")] == [
        cli.split(" (--json")[0] + " (price_estimates in /api/plan/serve's answer gives its derivation)."
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_warns_where_predict_does(server: ChipwiseServer, tmp_path: Path) -> None:
    """fp8 weights on an A100 under vLLM run weight-only (precision_note), and a run that dropped requests says so
    (dropped) and that its SLO holds in that run only (slo_caveat): predict prints each in yellow; the page had shown
    none. The drop is added to a real answer, as serving_predict.dropped writes it: which lengths a simulation drops
    is the planner tests' subject."""
    from chipwise.planner.serving_predict import _slo_caveat

    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "a100-80gb", "engine": "vllm", "chips": 1,
                "precision": "fp8", "input_tokens": 512, "output_tokens": 128, "arrival_rate": 2, "requests": 200,
                "slo": {"ttft_p99_s": 10, "tpot_p99_s": 0.2}}  # fmt: skip
    status, answer = _post(server, "/api/predict", scenario)
    assert status == 200 and answer["slo_met"], answer
    assert answer["precision_note"] == (
        "a100-80gb has no FP8 units, so vllm computes in bf16: fp8 weights run weight-only (dequantised in the "
        "kernel, the matmuls in bf16)"
    )
    reason = "3 of 200 requests outgrew a replica's KV cache ... and were dropped unserved"
    answer["dropped"] = {
        "requests": 3,
        "kv_cache_tokens": 9000,
        "longest": {"input": 512, "output": 128},
        "reason": reason,
    }
    answer["slo_caveat"] = _slo_caveat(answer)
    page_view = _draw(server, tmp_path, "drawServe", answer)
    kv = page_view["s-kv"]["items"]
    shown = dict(zip(kv[::2], kv[1::2], strict=True))
    assert shown["precision"] == answer["precision_note"]
    assert shown["dropped"] == reason
    assert shown["SLO"] == "met in this run only: 3 requests were dropped unserved (see dropped)"  # as predict's
    # worded as predict's row (serve_views._goodput_text): each request within each target's limit
    within = "of requests each within 10.0 s TTFT and 200 ms TPOT"
    assert shown["goodput"] == f"{100 * answer['goodput']['fraction']:.1f}% {within}"
    assert page_view["s-kv"]["warn"] == [shown["precision"], reason, shown["SLO"]]


def test_jsonable_turns_nan_and_numpy_into_plain_json() -> None:
    import math

    import numpy as np

    from chipwise.interfaces.format import jsonable

    out = jsonable({"a": math.nan, "b": np.float64(2.5), "c": np.arange(2), "d": (np.bool_(True), math.inf)})
    assert out == {"a": None, "b": 2.5, "c": [0, 1], "d": [True, None]}
    json.dumps(out, allow_nan=False)


SERVE = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "input_tokens": 512,
         "output_tokens": 128, "arrival_rate": 5, "requests": 200}  # fmt: skip
#: what a scenario with a trace leaves out (None: dropped from the request)
NO_LENGTHS = {"input_tokens": None, "output_tokens": None, "arrival_rate": None, "requests": None}


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        # the answers said whether a file on the server existed ('does not exist' or 'no output column')
        ("/api/predict", {**SERVE, "trace": "/etc/passwd", **NO_LENGTHS}, "reads no files on the server"),
        ("/api/predict", {**SERVE, "input_tokens": "/etc/passwd", "output_tokens": None}, "reads no files"),
        ("/api/predict", {**SERVE, "model": "/etc/passwd"}, "unknown model '/etc/passwd'"),
        ("/api/plan/serve", {"model": "/etc/passwd", "rate": 5}, "reads no files on the server"),
        ("/api/plan/train", {"model": "/etc/hostname", "chips": 8}, "give a model preset (GET /api/models"),
        # rate text read as a number, or said what it is not ('rate.int: Input should be a valid integer')
        ("/api/plan/serve", {"model": "llama-3.1-8b", "rate": "abc"}, "rate 'abc' is not a positive number"),
        ("/api/plan/serve", {"model": "llama-3.1-8b", "concurrency": "2.5"}, "concurrency 2.5 is not a positive whole"),
        # text without a unit outside a scenario's _s keys, as the API and the command line refuse it
        ("/api/plan/serve", {"model": "llama-3.1-8b", "rate": 5, "slo": {"ttft_p99": "2"}}, "'2' has no unit"),
        ("/api/predict", {**SERVE, "burstiness": float("inf")}, "burstiness: Input should be a finite number"),
        ("/api/predict", {**SERVE, "arrival_rate": 1e12}, "more than a fleet of a million chips serves"),
    ],
)
def test_requests_the_page_must_not_answer(server: ChipwiseServer, path: str, body: Any, says: str) -> None:
    status, answer = _post(server, path, {k: v for k, v in body.items() if v is not None})
    assert status == 400
    assert says in _one_line_error(answer)


def test_a_number_too_long_to_read_is_400(server: ChipwiseServer) -> None:
    """A 5,000-digit integer raised in the server thread: no answer came back at all."""
    body = b'{"model": "llama-3.1-8b", "rate": 5, "input_tokens": 1' + b"0" * 5000 + b"}"
    status, answer = _post(server, "/api/plan/serve", body)
    assert status == 400 and "holds a number of more than 4,300 digits" in _one_line_error(answer)


def test_rate_as_text_and_slo_seconds_under_s_keys(server: ChipwiseServer) -> None:
    """'5' req/s is a rate; a scenario's ttft_p99_s: '2' is two seconds, as its key says."""
    body = {"model": "llama-3.1-8b", "rate": "5", "input_tokens": 512, "output_tokens": 64, "top": 1,
            "hardware": "h100-sxm", "disaggregated": False, "slo": {"ttft_p99": "2s"}}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200 and report["results"] and report["slo"] == {"ttft_p99": 2.0}
    status, result = _post(server, "/api/predict", {**SERVE, "slo": {"ttft_p99_s": "2"}})
    assert status == 200 and result["slo"] == {"ttft_p99": 2.0}


def _request(srv: ChipwiseServer, method: str, path: str, body: bytes | None = None) -> tuple[int, Any, bytes]:
    """(status, headers, body) of one request in any method."""
    host, port = srv.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port, timeout=30)
    try:
        conn.request(method, path, body=body)
        res = conn.getresponse()
        return res.status, res.headers, res.read()
    finally:
        conn.close()


def _raw_exchange(srv: ChipwiseServer, data: bytes, timeout: float = 30) -> bytes:
    """What the server answers to `data` sent as it is, read until it closes the connection."""
    host, port = srv.server_address[:2]
    # this server's own address and a JSON body, which the server asks of a request from a page (test_web_refusals)
    ours = f"Host: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n".encode()
    with socket.create_connection((str(host), port), timeout=timeout) as sock:
        sock.sendall(data.replace(b"Host: x\r\n", ours))
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    return answer


def _answers(raw: bytes) -> list[tuple[int, Any]]:
    """The (status, JSON body) of each HTTP answer in `raw`."""
    out = []
    for part in re.split(rb"(?=HTTP/1\.1 \d{3} )", raw)[1:]:
        head, _, body = part.partition(b"\r\n\r\n")
        out.append((int(head.split()[1]), json.loads(body) if body else None))
    return out


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000],
    ids=["lists", "objects"],
)
def test_a_deeply_nested_body_is_400_and_the_server_keeps_serving(server: ChipwiseServer, body: bytes) -> None:
    """The JSON parser's RecursionError was not a ValueError: the connection dropped with no answer."""
    status, answer = _post(server, "/api/plan/train", body)
    assert status == 400 and "nested too deeply" in _one_line_error(answer)
    assert _get(server, "/api/models")[0] == 200


def test_a_body_that_stops_arriving_is_dropped(server: ChipwiseServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Content-Length larger than the body sent held its handler forever: no read timeout on the socket."""
    monkeypatch.setattr(Handler, "timeout", 0.5)
    start = time.monotonic()
    head = b"POST /api/plan/train HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    answers = _answers(_raw_exchange(server, head + b'{"model":', timeout=10))
    assert time.monotonic() - start < 5
    assert len(answers) == 1 and answers[0][0] == 408
    assert "stopped arriving" in _one_line_error(answers[0][1])
    assert _get(server, "/api/models")[0] == 200


def test_a_body_too_large_gets_one_413_and_no_traceback(
    server: ChipwiseServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its unread bytes were read as the next request: a second answer (414) after the refusal."""
    body = b"x" * (MAX_BODY_BYTES + 5000)
    head = f"POST /api/plan/train HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    answers = _answers(_raw_exchange(server, head + body))
    assert len(answers) == 1 and answers[0][0] == 413
    assert "over 1,048,576 bytes" in _one_line_error(answers[0][1])
    assert "Traceback" not in capsys.readouterr().err


def test_a_body_answered_unread_is_not_read_as_the_next_request(server: ChipwiseServer) -> None:
    """A POST to a wrong path, then a GET on the same connection: the first body was read as the GET's line."""
    first = b'POST /api/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{"a":1}'
    second = b"GET /api/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answers = _answers(_raw_exchange(server, first + second))
    assert [status for status, _ in answers] == [404, 200]


def test_head_is_get_without_the_body(server: ChipwiseServer) -> None:
    for path in ("/", "/api/models"):
        status, headers, body = _request(server, "HEAD", path)
        assert status == 200 and body == b""
        assert int(headers["Content-Length"]) == len(_get(server, path)[2])


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/api/predict", "POST"),
        ("DELETE", "/api/plan/serve", "POST"),
        ("PATCH", "/api/plan/train", "POST"),
        ("GET", "/api/plan/serve", "POST"),
        ("PUT", "/", "GET, HEAD"),
        ("DELETE", "/api/catalog", "GET, HEAD"),
        ("POST", "/api/models", "GET, HEAD"),
    ],
)
def test_other_methods_are_405_in_json_with_allow(server: ChipwiseServer, method: str, path: str, allow: str) -> None:
    """They answered the standard library's 501 HTML page."""
    status, headers, body = _request(server, method, path, b"{}" if method != "GET" else None)
    assert status == 405 and headers["Allow"] == allow and headers["Content-Type"] == "application/json"
    assert _one_line_error(json.loads(body))


def test_an_unknown_method_is_answered_in_json(server: ChipwiseServer) -> None:
    status, headers, body = _request(server, "BREW", "/")
    assert status == 501 and headers["Content-Type"] == "application/json"
    assert "'BREW'" in _one_line_error(json.loads(body))


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/plan/serve", {"model": "llama-3.1-70b", "rate": 1, "speculative": "draft:{}:3@0.7"}),
        ("/api/plan/serve", {"model": "llama-3.1-8b", "rate": 1, "speculative": "none,mtp:1,draft:{}:3@0.7"}),
        ("/api/predict", {**SERVE, "speculative": "draft:{}:3@0.7"}),
    ],
)  # fmt: skip
def test_a_draft_model_is_a_preset_not_a_file_on_the_server(server: ChipwiseServer, path: str, body: Any) -> None:
    """The draft model was loaded as a config.json: '/etc/shadow' is not valid JSON, a missing path 'does not
    exist', so a request told which server files exist. It is refused as a model that is no preset is."""
    answers = []
    for draft in ("/etc/passwd", "/no/such/file.json"):
        sent = {k: v.format(draft) if k == "speculative" else v for k, v in body.items()}
        status, answer = _post(server, path, sent)
        assert status == 400
        answers.append(_one_line_error(answer).replace(draft, "PATH"))
    assert answers[0] == answers[1]
    assert "unknown model 'PATH'" in answers[0] and "reads no files on the server" in answers[0]


def test_a_draft_model_preset_is_still_taken(server: ChipwiseServer) -> None:
    status, answer = _post(server, "/api/predict", {**SERVE, "speculative": "draft:llama-3.2-1b:4@0.7"})
    assert status == 200, answer
    assert answer["plan"]["speculative"].startswith("draft llama-3.2-1b k=4")


@pytest.mark.parametrize(
    ("path", "body", "key"),
    [
        ("/api/predict", b'{"kind": "train", "model": "llama-2-7b", "model": "llama-3.1-8b", "hardware": "h100-sxm", '
         b'"chips": 8}', "model"),
        ("/api/plan/train", b'{"model": "llama-3.1-8b", "chips": 64, "chips": 8, "hardware": "h100-sxm"}', "chips"),
        ("/api/plan/serve", b'{"model": "llama-3.1-8b", "rate": 5, "slo": {"ttft_p99": 2, "ttft_p99": "1s"}}',
         "ttft_p99"),
    ],
)  # fmt: skip
def test_a_key_given_twice_is_400(server: ChipwiseServer, path: str, body: bytes, key: str) -> None:
    """The last one was taken silently, where the command line refuses a scenario that repeats a key."""
    status, answer = _post(server, path, body)
    assert status == 400
    assert f"gives the key '{key}' twice. Fix: give each key once" in _one_line_error(answer)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [("OPTIONS", "/api/catalog", "GET, HEAD"), ("OPTIONS", "/api/plan/train", "POST"), ("TRACE", "/", "GET, HEAD")],
)
def test_options_and_trace_are_405_with_allow(server: ChipwiseServer, method: str, path: str, allow: str) -> None:
    """They answered 501 without an Allow header, where docs/web.md promises 405 with one."""
    status, headers, body = _request(server, method, path)
    assert status == 405 and headers["Allow"] == allow and headers["Content-Type"] == "application/json"
    assert _one_line_error(json.loads(body))


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/api/plan/train", {"model": "llama-3.1-8b", "chips": 0},
         "chips: Input should be greater than 0. Fix: give a whole number above 0, e.g. 64"),
        ("/api/plan/train", {"model": "llama-3.1-8b", "chips": 1.5}, "Fix: give a whole number above 0"),
        ("/api/plan/train", {"model": "llama-3.1-8b", "chips": 8, "tokens": "lots"}, "Fix: give a number above 0"),
        ("/api/plan/train", {"model": "llama-3.1-8b", "chips": 8, "tokenz": "1T"},
         "tokenz: unknown field. Fix: rename it 'tokens'"),
        ("/api/plan/train", {"model": "llama-3.1-8b", "chips": 8, "hardware": ["h100-sxm", 5]},
         "hardware[1]: Input should be a valid string. Fix: give a list of chip or system ids"),
        ("/api/plan/train", {"chips": 8}, "model: Field required. Fix: give a model preset's name"),
        ("/api/plan/serve", {"model": "llama-3.1-8b", "rate": True},
         "rate: true is not a number. Fix: give requests/s as a number above 0, e.g. 5, or numeric text"),
        ("/api/plan/serve", {"model": "llama-3.1-8b", "concurrency": False}, "concurrency: false is not a number"),
        ("/api/plan/serve", {"model": "llama-3.1-8b", "rate": 5, "slo": [2]}, 'Fix: give an object such as {"ttft'),
        ("/api/plan/serve", {"model": "llama-3.1-8b", "rate": 5, "region": 5}, "region: Input should be a valid "
         "string. Fix: give text"),
    ],
)  # fmt: skip
def test_refused_fields_name_a_concrete_fix(server: ChipwiseServer, path: str, body: Any, says: str) -> None:
    """They ended 'Fix: correct the request', and true for a rate was 'not text' though a number is asked for."""
    status, answer = _post(server, path, body)
    assert status == 400
    message = _one_line_error(answer)
    assert says in message and "correct the request" not in message and "list[str]" not in message, message


FORMATTED: list[tuple[str, str, Any]] = [
    ("usd", "usd", 3799), ("usd", "usd", 1.2e13), ("usd", "usd", 1.2e16), ("usd", "usd", 12.5),
    ("price", "price", 0.000357), ("price", "price", 2.164), ("perMtok", "per_mtok", 0.0038),
    ("perMtok", "per_mtok", 0.16), ("perMtok", "per_mtok", 2.08e29), ("latency", "latency", 0.1641),
    ("latency", "latency", 0.00745), ("latency", "latency", 0.00085), ("latencies", "latencies", [0.118, 0.318, 1.37]),
    ("percent", "percent", 230.08), ("count", "count", 1e18), ("count", "count", 15e12),
    ("duration", "duration", 3.15576e13), ("energy", "energy", 1.5264e17),
]  # fmt: skip


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_formats_figures_as_the_cli_does() -> None:
    """The page's fmt mirrors chipwise.interfaces.format: $/Mtok had read 0.00 for the CLI's 0.0038, $3799 for
    $3,799, $12000.00B for $12.00T, $0.000 for $0.000357 and 164.1 ms for 164 ms."""
    html = page().decode()
    script = html[html.index("<script>") + len("<script>") : html.index("</script>")]
    source = script[script.index("const isNum") : script.index("  plan(p) {")] + "};\nconst DAY = 86400;\n"
    calls = "".join(f"console.log(fmt.{js}({json.dumps(v)}));" for js, _, v in FORMATTED)
    out = subprocess.run(["node", "-e", source + calls], check=True, capture_output=True, text=True, timeout=30).stdout
    assert out.splitlines() == [getattr(fmt, py)(v) for _, py, v in FORMATTED]
    assert out.splitlines()[:5] == ["$3,799", "$12.00T", "$1.20e+16", "$12.50", "$0.000357"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_marks_estimated_prices_and_neuroncore_ranks(server: ChipwiseServer, tmp_path: Path) -> None:
    """Spot prices are all estimates: the Training tab marks them § with the CLI's footnote and an open ring on the
    scatter, and says that a trn2 rank is a NeuronCore (TP1 DP128 CP2 on 64 chips had read as twice the chips)."""
    form = {**TRAIN_FORM, "tokens": "1T", "pricing": "spot"}
    view = _drive_page(server, tmp_path, "runTrain", form, ["gaudi3", "trn2"])
    assert view["t-error"]["hidden"], view["t-error"]
    rows = view["rank"]["rows"]
    cost, per_mtok = rows[0].index("cost"), rows[0].index("$/Mtok")
    status, report = _post(server, "/api/plan/train", {**form, "chips": 64, "hardware": ["gaudi3", "trn2"]})
    assert status == 200
    for row, r in zip(rows[1:], report["results"], strict=True):
        assert r["price_source"]["status"] == "estimate"
        assert row[cost] == fmt.usd(r["expected_cost_usd"]) + " §"
        assert row[per_mtok] == fmt.per_mtok(r["expected_usd_per_million_tokens"])
    notes = view["t-notes"]["items"]
    names = ", ".join(r["hardware"] for r in report["results"])
    assert (
        f"§ {names}: priced by an estimate, not a published spot price of the system's provider (price_source in "
        "/api/plan/train's answer gives its derivation)." in notes
    )
    trn2 = next(r for r in report["results"] if r["hardware"] == "trn2")
    ranks = trn2["chips_used"] * 4
    assert f"trn2: a rank is a core (4 NeuronCores a chip): tp x pp x dp x cp = {ranks} ranks on 64 chips" in notes
    # a point's text: its label, then its hover title's first line ('trn2 § - trn2.48xlarge ...')
    marked = sorted(t.split(" - ")[0] for t in view["scatter"]["items"] if " § - " in t)
    assert marked == ["gaudi3 † §gaudi3 † §", "trn2 † §trn2 † §"]  # † : unfitted families, as plan train marks


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_says_a_serving_rank_on_trainium_is_a_neuroncore(server: ChipwiseServer, tmp_path: Path) -> None:
    """As plan serve prints it: 'a rank on Trainium and Inferentia is a NeuronCore: trn2 has 4 per chip, ...'."""
    body = {"model": "llama-3.1-8b", "rate": 5, "input_tokens": 512, "output_tokens": 128, "hardware": "trn2",
            "disaggregated": False, "top": 1}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200, report
    x = report["results"][0]
    per = round(x["plan"]["tp"] * x["plan"].get("pp", 1) * x["plan"]["replicas"] / x["chips"])
    assert per > 1, "the case under test: NeuronCore ranks"
    notes = _draw(server, tmp_path, "drawServePlan", report)["ps-notes"]["items"]
    said = [n for n in notes if n.startswith("a rank on Trainium and Inferentia is a NeuronCore: ")]
    assert len(said) == 1 and said[0].startswith(
        f"a rank on Trainium and Inferentia is a NeuronCore: trn2 has {per} per chip"
    )


# The page writes a serving prediction's cost and offered load as `chipwise predict` does: a price from a million as
# format.usd writes it ($1.91M, not $1,911,111.11) and a capacity from a thousand with separators (1,970, not the
# 1.97e+3 of toPrecision).


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

#: PAGE_DOM, with no ticked chips or form fields and a fetch that never answers, so the page's own start
#: waits and draws nothing
DOM = "const CHECKED = [], FORM = {};\n" + PAGE_DOM + "globalThis.fetch = () => new Promise(() => {});\n"


def _script() -> str:
    html = page().decode()
    return html[html.index("<script>") + len("<script>") : html.index("</script>")]


def _node(js: str) -> list[str]:
    out = subprocess.run(["node", "-e", js], check=True, capture_output=True, text=True, timeout=60).stdout
    return out.splitlines()


LOADS: list[dict[str, float]] = [
    {"utilisation": 0.039, "capacity_requests_per_s": 25344.52085741914},  # the review's: 2.53e+4 on the page
    {"utilisation": 0.279, "capacity_requests_per_s": 35795.2},
    {"utilisation": 0.8, "capacity_requests_per_s": 25.0},  # 25, not toPrecision's 25.0
    {"utilisation": 1.3, "capacity_requests_per_s": 0.4567},
    {"utilisation": 0.5, "capacity_requests_per_s": 999.4},
]


@needs_node
def test_page_writes_large_prices_and_capacities_as_the_cli_does() -> None:
    script = _script()
    source = script[script.index("const isNum") : script.index("  plan(p) {")] + "};\nconst DAY = 86400;\n"
    prices = [1911111.11, 6.88e6, 999999.0, 2.164, 0.000357, 1.2e13]
    calls = "".join(f"console.log(fmt.price({json.dumps(v)}));" for v in prices)
    calls += "".join(f"console.log(fmt.loadShare({json.dumps(x)}));" for x in LOADS)
    out = _node(source + calls)
    assert out == [fmt.price(v) for v in prices] + [fmt.load_share(x) for x in LOADS]
    assert out[:2] == ["$1.91M", "$6.88M"] and out[2] == "$999,999.00"
    assert out[6:9] == [
        "3.9% of the 25,345 req/s the deployment sustains",
        "27.9% of the 35,795 req/s the deployment sustains",
        "80.0% of the 25 req/s the deployment sustains",
    ]


@needs_node
def test_serving_tab_shows_a_predictions_cost_and_load_as_predict_does() -> None:
    """A one-chip H100 at 0.001 req/s: predict prints '$1.91M per M output tokens' and '0.0% of the 1,970 req/s';
    the page had shown $1,911,111.11 and 1.97e+3."""
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 0.001,
                "input_tokens": 16, "output_tokens": 1, "requests": 20}  # fmt: skip
    answer: dict[str, Any] = POST_ROUTES["/api/predict"](scenario, Settings())
    draw = f"drawServe({json.dumps(answer)});\nconst kv = byId['s-kv'].children.map((c) => c.textContent);\n"
    out = _node(_script() + DOM + draw + "console.log(JSON.stringify(kv));")
    kv = json.loads(out[-1])
    shown = dict(zip(kv[::2], kv[1::2], strict=True))
    assert shown["$ per million output tokens"].startswith(fmt.price(answer["cost_usd_per_mtok"]))
    assert shown["$ per million output tokens"].startswith("$1.91M")
    assert shown["offered load"] == fmt.load_share(answer["load"])
    assert shown["offered load"].startswith("0.0% of the 1,9") and "e+" not in shown["offered load"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_says_what_a_reserved_cost_rests_on(server: ChipwiseServer, tmp_path: Path) -> None:
    """A reserved row's cost is its run's own hours at the rate; the Training tab says what the term commits, as
    plan train's table does (the page had shown the cost with no word of the term)."""
    form = {**TRAIN_FORM, "tokens": "10G", "pricing": "reserved-1y"}
    view = _drive_page(server, tmp_path, "runTrain", form, ["h100-sxm"])
    assert view["t-error"]["hidden"], view["t-error"]
    notes = view["t-notes"]["items"]
    assert any(n.startswith("a reserved-1y reservation is paid every hour of its 8,766 h term") for n in notes), notes


def test_plan_serve_keeps_the_rows_its_checks_point_to_under_top(server: ChipwiseServer, tmp_path: Path) -> None:
    """`top` cuts the ranking as `plan serve --top --json` does, keeping every row a simulated check's rank indexes:
    it had cut results to `top` while a check still pointed to rank 3."""
    body = {"model": "llama-3.1-8b", "rate": 5, "input_tokens": 512, "output_tokens": 128,
            "slo": {"ttft_p99": 2.0, "tpot_p99": "50ms"}, "hardware": "trn2,h100-sxm,a100-80gb", "top": 2}  # fmt: skip
    status, report = _post(server, "/api/plan/serve", body)
    assert status == 200
    assert all(v["rank"] <= len(report["results"]) for v in report["verified"])
    if shutil.which("node") is not None:  # headed as the command line heads it, the precision planned included
        title = _draw(server, tmp_path, "drawServePlan", report)["ps-title"]["text"]
        assert title.startswith("llama-3.1-8b: 5 req/s, 512 in / 128 out, bf16 - ttft_p99"), title


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_says_capped_where_the_model_caps_a_figure(server: ChipwiseServer, tmp_path: Path) -> None:
    """Hopper's memory efficiency +10% leaves TPOT p50 still (the model caps it): the page had drawn '+0.00%', which
    reads as a figure that does not matter; the CLI says 'capped'."""
    # bf16: under fp8 TensorRT-LLM fuses its input quantises, and the decode launches that had held TPOT still past
    # +10% of memory efficiency are fewer
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "precision": "bf16",
                "input_tokens": 512, "output_tokens": 128, "arrival_rate": 5, "requests": 100}  # fmt: skip
    body = {"scenario": scenario, "metric": "tpot_p50", "figures": ["hbm_bandwidth", "efficiency"]}
    status, answer = _post(server, "/api/sensitivity", body)
    assert status == 200, answer
    capped = [r for r in answer["figures"] if r.get("capped", {}).get("tpot_p50")]
    assert capped, "no capped figure in the answer"
    rows = _draw(server, tmp_path, "drawSensitivity", answer)["s-sens"]["rows"]
    row = next(r for r in rows if r[1] == capped[0]["figure"])
    side = 5 if capped[0]["capped"]["tpot_p50"] == "plus" else 4
    assert row[side] == "capped"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_training_tab_says_what_plan_train_says_under_its_tables(server: ChipwiseServer, tmp_path: Path) -> None:
    """fp4 on an H100 computes in fp8 and gaudi3 has no capacity-block price: plan train says both under its
    tables, and the page had said neither (a run labelled fp4, a cost of '-' with no reason)."""
    form = {**TRAIN_FORM, "tokens": "1T", "precision": "fp4", "pricing": "capacity-block"}
    view = _drive_page(server, tmp_path, "runTrain", form, ["h100-sxm", "gaudi3"])
    assert view["t-error"]["hidden"], view["t-error"]
    notes = " ".join(view["t-notes"]["items"])
    assert "h100-sxm: computes in fp8: h100-sxm has no fp4 units, so this run is no faster than at fp8" in notes
    assert "no price: gaudi3: " in notes
    assert "[dim]" not in notes and "[yellow]" not in notes  # plain text, not the terminal's markup


def test_predict_gives_a_serving_runs_warnings_for_the_page(server: ChipwiseServer, tmp_path: Path) -> None:
    """A run of 10 requests, whose throughput window holds a few requests' output: predict's table says 'run too
    short' (its throughput and cost read a request's output off), and the page had drawn the cost with no caveat."""
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "precision": "fp8",
                "input_tokens": 1024, "output_tokens": 256, "arrival_rate": 2, "requests": 10}  # fmt: skip
    status, answer = _post(server, "/api/predict", scenario)
    assert status == 200, answer
    (label, text), *_ = answer["caveats"]
    assert label == "run too short" and text.startswith("the throughput window holds") and "run at least 25" in text
    if shutil.which("node") is not None:
        kv = _draw(server, tmp_path, "drawServe", answer)["s-kv"]["items"]
        shown = dict(zip(kv[::2], kv[1::2], strict=True))
        assert shown["run too short"] == text


def test_a_what_if_server_says_so_in_its_catalog(tmp_path: Path) -> None:
    """A server started with --set answers from the changed catalog: /api/catalog gives the CLI's WHAT-IF lines,
    which the page shows above its tabs (it had shown the answers with no word)."""
    from chipwise.interfaces.web.routes import catalog_summary
    from chipwise.interfaces.web.server import serve_in_thread

    changed = catalog_summary(Settings(sets=("h100-sxm.hbm_bandwidth=x1.5",)))["what_if"]
    assert changed == ["h100-sxm.hbm_bandwidth = 5.025 TB/s (catalog 3.35 TB/s), set on the command line"]
    assert catalog_summary(Settings())["what_if"] == []
    if shutil.which("node") is None:
        return
    srv = make_server("127.0.0.1", 0, Settings(sets=("h100-sxm.hbm_bandwidth=x1.5",)))
    serve_in_thread(srv)
    try:
        banner = _run_page(srv, tmp_path, "start()", {}, [])["whatif"]  # the page's start, its catalog loaded
    finally:
        srv.shutdown()
        srv.server_close()
    assert not banner["hidden"] and banner["text"] == "WHAT-IF: " + changed[0]


def test_the_page_answers_carry_their_what_if_and_draw_what_predict_prints(
    server: ChipwiseServer, tmp_path: Path
) -> None:
    """The POST answers carry `what_if` as the CLI's --json does ([] on a plain server; they had carried none), and a
    split's prediction is drawn as predict prints it: its pools by chip and role, each pool's engine, its KV
    handover, the rack's one site; a vLLM run its front end apart from the wait to start."""
    split = {
        "kind": "serve", "model": "llama-3.1-70b", "hardware": "trn4-gb300-fusion-rack", "chips": 10,
        "input_tokens": 2048, "output_tokens": 256, "arrival_rate": 5, "requests": 100,
        "plan": {"disaggregated": True, "prefill": {"hardware": "trn4", "replicas": 1, "tp": 8},
                 "decode": {"hardware": "gb300", "replicas": 1, "tp": 8}},
    }  # fmt: skip
    status, answer = _post(server, "/api/predict", split)
    assert status == 200 and answer["what_if"] == []
    if shutil.which("node") is None:
        return
    view = _draw(server, tmp_path, "drawServe", answer)
    assert view["s-title"]["text"].startswith("llama-3.1-70b on 2 x trn4 (prefill) + 8 x gb300 (decode)")
    shown = dict(zip(view["s-kv"]["items"][::2], view["s-kv"]["items"][1::2], strict=True))
    assert shown["plan"].endswith("(neuron prefill, trtllm decode)")
    assert "from neuron to trtllm: no shipping engine pair" in shown["KV transfer per mean prompt"]
    assert shown["site"] == answer["site_note"]
    vllm = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "engine": "vllm", "chips": 1,
            "input_tokens": 512, "output_tokens": 128, "arrival_rate": 0.5, "requests": 60}  # fmt: skip
    status, answer = _post(server, "/api/predict", vllm)
    kv = _draw(server, tmp_path, "drawServe", answer)["s-kv"]["items"]
    shown = dict(zip(kv[::2], kv[1::2], strict=True))
    assert shown["of it, the engine's front end"] == "30.0 ms a request (its HTTP server and tokenising)"
    assert shown["of it, waiting to start"].endswith("(past the front end)")
