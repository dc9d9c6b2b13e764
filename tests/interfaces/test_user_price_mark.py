"""A price set with --set is the user's, not a catalog estimate, on every serving path (predict, /api/plan/serve, the
web page's script) and on the training plot, as plan train's table already had it."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chipwise.interfaces import plots
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.web import routes
from chipwise.interfaces.web.server import page


def _row(hw: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"hardware": hw, "time_to_train_s": 10 * 86400.0, "cost_usd": 1e6, "tokens_per_s": 1e6,
            "price_source": source}  # fmt: skip


def test_the_training_plot_leaves_a_set_price_unmarked() -> None:
    """As the table beside it: the plot had labelled 'h100-sxm §' a price set on the command line."""
    report = {"tokens": 1e12, "results": [
        _row("b200", {"status": "published", "provider": "aws"}),
        _row("h100-sxm", {"status": "estimate", "provider": "user"}),
        _row("trn2", {"status": "estimate", "provider": "aws"}),
    ]}  # fmt: skip
    points, missing = plots.training_points(report)
    assert [(p.label, p.estimated) for p in points] == [("b200", False), ("h100-sxm", False), ("trn2 §", True)]
    assert missing == [] and all(math.isclose(p.days, 10.0) for p in points)


def test_predict_calls_a_set_price_the_users(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It had read '(price of h100-sxm a catalog estimate: --json price_sources)' under its own WHAT-IF line."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\ninput_tokens: 256\noutput_tokens: 32\n"
        "arrival_rate: 2\nrequests: 50\n"
    )
    assert run(["predict", str(scenario), "--set", "h100-sxm.price=2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "$2.00/h" in out and "estimate" not in out


def test_plan_serve_over_the_api_leaves_a_set_price_unmarked(quick_plans: None) -> None:
    body = {"model": "llama-3.1-8b", "rate": 5, "hardware": "h100-sxm", "disaggregated": False}
    report = routes.plan_serve(body, routes.Settings(sets=("h100-sxm.price=2",)))
    assert report["results"] and all(r["price_estimated"] == [] for r in report["results"])
    assert report["price_estimates"] == {}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_marks_as_the_command_line_does() -> None:
    """The page's one rule (economics.pricing.catalog_estimate) for a price_source and for each of price_sources."""
    html = page().decode()
    start = html.index("const catalogEstimate")
    source = html[start : html.index("\n", html.index("const estimatedPrice")) + 1]
    sources = [{"status": "estimate", "provider": "user"}, {"status": "estimate", "provider": "aws"},
               {"status": "published", "provider": "aws"}, None]  # fmt: skip
    script = source + (
        f"const s = {json.dumps(sources)};"
        "console.log(JSON.stringify([s.map(catalogEstimate), s.map((q) => estimatedPrice({price_source: q}))]));"
    )
    out = subprocess.run(["node", "-e", script], check=True, capture_output=True, text=True, timeout=30).stdout
    assert json.loads(out) == [[False, True, False, False]] * 2
