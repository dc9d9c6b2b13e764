"""The page writes a serving prediction's cost and offered load as `chipwise predict` does: a price from a million
as format.usd writes it ($1.91M, not $1,911,111.11) and a capacity from a thousand with separators (1,970, not the
1.97e+3 of toPrecision)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from chipwise.interfaces import format as fmt
from chipwise.interfaces.web.routes import POST_ROUTES, Settings
from chipwise.interfaces.web.server import page
from interfaces.test_web import PAGE_DOM

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

#: test_web's page DOM, with no ticked chips or form fields and a fetch that never answers, so the page's own start
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
