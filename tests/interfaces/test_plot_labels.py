"""What the plots write beside their bars and above them: a capped side as the table says it, and results of
several models named as such."""

from __future__ import annotations

from pathlib import Path

import chipwise.api as cw
from chipwise.interfaces.plots import plot, sensitivity_chart

CAPPED = {
    "kind": "sensitivity", "metric": "tpot_p50", "metrics": {"tpot_p50": {"label": "TPOT p50"}}, "step": 0.1,
    "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "plan_held": False,
    "figures": [{"figure": "efficiency.hopper.memory", "elasticity": {"tpot_p50": -0.55},
                 "change": {"minus": {"tpot_p50": 0.06}, "plus": {"tpot_p50": 0.0}}, "capped": {"tpot_p50": "plus"}}],
}  # fmt: skip


def test_a_capped_side_reads_capped(tmp_path: Path) -> None:
    """'+10%: +0.0%' beside an elasticity of -0.55 had read as a contradiction; the table says 'capped'."""
    text = sensitivity_chart(CAPPED, tmp_path / "s.svg").read_text()
    assert "-0.55; +10%: capped" in text and "+0.0%" not in text


def test_results_of_several_models_are_titled_so(tmp_path: Path) -> None:
    """Two predictions side by side, of two models: the first one's model had titled both."""
    serve = "{kind: serve, model: MODEL, hardware: h100-sxm, chips: 1, input_tokens: 512, output_tokens: 64, "
    serve += "arrival_rate: 1, requests: 40}"
    runs = [cw.predict(serve.replace("MODEL", m)) for m in ("llama-3.1-8b", "qwen3-8b")]
    text = plot({"results": runs}, tmp_path / "side.svg").read_text()
    assert "several models serving" in text
