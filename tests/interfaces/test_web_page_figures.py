"""The web page's figures, run under node: numbers rounded on the binary value as chipwise.interfaces.format
rounds them, the One deployment tab's defaults a deployment that keeps up, and predict's SLO wording."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from chipwise.interfaces import format as fmt
from chipwise.interfaces.web.routes import POST_ROUTES, Settings, catalog_summary
from chipwise.interfaces.web.server import page

from .test_web import DOM, _node, _script, needs_node

pytestmark = needs_node

#: the page's formatters under their Python names
PAIRS = [("usd", "usd"), ("price", "price"), ("perMtok", "per_mtok"), ("latency", "latency"), ("count", "count"),
         ("energy", "energy"), ("flops", "flops"), ("bytes", "bytes_"), ("bandwidth", "bandwidth"),
         ("duration", "duration"), ("percent", "percent")]  # fmt: skip


def _formatted(calls: list[tuple[str, Any]]) -> list[str]:
    script = _script()
    source = script[script.index("const isNum") : script.index("  plan(p) {")] + "};\nconst DAY = 86400;\n"
    js = source + "".join(f"console.log(fmt.{name}({json.dumps(v)}));" for name, v in calls)
    return _node(js)


def test_ties_of_the_shortest_decimal_round_as_the_cli_does() -> None:
    """toLocaleString rounded the shortest decimal text half up: 1.555e12 B/s (1.55499... TB/s) read 1.56 TB/s and
    gaudi3's 1.835e15 FLOP/s 1.84 PFLOP/s, where the CLI reads 1.55 and 1.83. 9.995 * 10**-3 s is 9.99499... ms;
    the literal 0.009995 is 9.995000000000001 ms, and reads 10.00 ms on both."""
    cases = [("bandwidth", 1.555e12), ("flops", 1.835e15), ("usd", 9.995), ("latency", 9.995 * 10**-3),
             ("latency", 0.009995), ("percent", 0.125), ("usd", 2.125), ("count", 1.225e18),
             ("price", 3.825e15)]  # fmt: skip
    out = _formatted(cases)
    assert out == ["1.55 TB/s", "1.83 PFLOP/s", "$9.99", "9.99 ms", "10.00 ms", "12.5%", "$2.12", "1.22e+18",
                   "$3.82e+15"]  # fmt: skip
    python = dict(PAIRS)
    assert out == [getattr(fmt, python[name])(v) for name, v in cases]


def test_random_figures_read_as_the_cli_writes_them() -> None:
    """Hundreds of values, a third of them exact binary ties (an odd multiple of a half over a power of two), on
    every formatter the page shares with the CLI."""
    rng = random.Random(65)
    calls: list[tuple[str, str, float]] = []
    for k in range(600):
        name, py = PAIRS[k % len(PAIRS)]
        if k % 3 == 0:
            v = round(rng.uniform(1, 10), 3) * 10 ** rng.randint(-8, 20)
        elif k % 3 == 1:
            v = (rng.randint(1, 4000) + 0.5) / 2 ** rng.randint(0, 8) * 10 ** rng.randint(-3, 6)
        else:
            v = 10 ** rng.uniform(-8, 22)
        calls.append((name, py, -v if k % 7 == 0 and name != "duration" else v))
    out = _formatted([(name, v) for name, _, v in calls])
    wrong = [(name, v, o) for (name, py, v), o in zip(calls, out, strict=True) if o != getattr(fmt, py)(v)]
    assert not wrong


def test_the_one_deployment_tabs_defaults_keep_up() -> None:
    """The tab's defaults (70B on 8 h200, 1,024 in and out, 20 req/s) in the checkpoint's bf16 sustained 9.9 req/s:
    the first click showed 201% of capacity and an 81 s TTFT p99. In fp8, as the shipped example, they keep up."""
    html = page().decode()
    form = html[html.index('<form id="serve-form">') : html.index("</form>", html.index('<form id="serve-form">'))]
    inputs = dict(re.findall(r'<input name="(\w+)"[^>]*value="([^"]*)"', form))
    script = _script()
    chosen = re.search(r'fillSelect\("s-precision", cat\.serving_precisions, (.+?), released\)', script)
    assert chosen is not None
    offered = catalog_summary(Settings())["serving_precisions"]
    precision = "fp8" if chosen.group(1).startswith('cat.serving_precisions.includes("fp8")') else chosen.group(1)
    assert precision == "fp8" and "fp8" in offered
    body = {"kind": "serve", "model": "llama-3.1-70b", "hardware": "h200", "precision": precision,
            **{k: float(v) for k, v in inputs.items()}}  # fmt: skip
    assert inputs == {"chips": "8", "input_tokens": "1024", "output_tokens": "1024", "arrival_rate": "20",
                      "requests": "2000"}  # fmt: skip
    result = POST_ROUTES["/api/predict"](body, Settings())
    assert result["load"]["utilisation"] < 1.0, result["load"]


def _draw_serve(answer: dict[str, Any]) -> dict[str, str]:
    draw = f"drawServe({json.dumps(answer)});\nconst kv = byId['s-kv'].children.map((c) => c.textContent);\n"
    js = _script() + DOM + draw + "console.log(JSON.stringify(kv));"
    kv = json.loads(_node(js)[-1])
    return dict(zip(kv[::2], kv[1::2], strict=True))


@pytest.mark.parametrize(("met", "says"), [(True, "met"), (False, "NOT met")])
def test_slo_met_is_worded_as_predict_words_it(met: bool, says: str) -> None:
    """The row had read 'SLO met | true, 100.0% of requests within it'; predict prints 'met' or 'NOT met' and the
    goodput on a row of its own."""
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "precision": "fp8",
                "input_tokens": 512, "output_tokens": 128, "arrival_rate": 2, "requests": 100,
                "slo": {"ttft_p99_s": 10 if met else 1e-4, "tpot_p99_s": 0.2}}  # fmt: skip
    answer: dict[str, Any] = POST_ROUTES["/api/predict"](scenario, Settings())
    assert answer["slo_met"] is met
    shown = _draw_serve(answer)
    assert shown["SLO"] == says and "SLO met" not in shown
    ttft = "10.0 s" if met else "100 us"  # worded as predict's row (serve_views._goodput_text)
    within = f"of requests each within {ttft} TTFT and 200 ms TPOT"
    assert shown["goodput"] == f"{100 * answer['goodput']['fraction']:.1f}% {within}"


def test_the_breakdown_title_writes_tokens_per_second_with_separators() -> None:
    """'(2659 tok/s/chip)' beside a table that reads 2,659."""
    r = {"hardware": "h100-sxm", "plan": {"tp": 1, "dp": 8}, "step_time_s": 1.5, "tokens_per_s_per_chip": 2659.4,
         "breakdown": {"compute": 1.0, "overhead": 0.5}, "memory_per_chip_gib": 40.0,
         "memory_breakdown_gib": {"weights": 40.0}, "memory_capacity_gib": 80.0}  # fmt: skip
    js = _script() + DOM + f"drawBreakdown({json.dumps(r)});\nconsole.log(byId['bd-step'].textContent);"
    assert "step time 1.50 s (2,659 tok/s/chip)" in "\n".join(_node(js))


def test_a_splits_prefill_sizing_is_drawn_as_predicts_row() -> None:
    """/api/predict carries how the rate sized a split's prefill pool (prefill_sizing), and the One deployment tab
    draws it in a row named as predict's ('prefill replicas'); the page had shown the count alone."""
    scenario = {
        "kind": "serve", "model": "gpt-oss-120b", "hardware": "trn2", "input_tokens": 4096, "output_tokens": 1024,
        "arrival_rate": 20, "requests": 600,
        "plan": {"disaggregated": True, "prefill": {"tp": 16, "ep": 16, "attention_dp": True},
                 "decode": {"tp": 64, "ep": 64, "attention_dp": True, "replicas": 2}},
    }  # fmt: skip
    answer: dict[str, Any] = POST_ROUTES["/api/predict"](scenario, Settings())
    assert answer["prefill_sizing"].startswith("5 for 20 req/s of 4,096-token prompts")
    assert _draw_serve(answer)["prefill replicas"] == answer["prefill_sizing"]
