"""Figures read as drawn: the SLO label beside its line on a log axis (HTML), training axes in units that fit the
data, HTML footnotes wrapped, one legend entry and one look per serving fleet with a log latency axis where it spans
decades, sparse log tick labels over many decades, bar values legible over a reference line."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from chipwise.interfaces import chart, plots


def _plotly(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The traces and the layout of a plotly HTML file."""
    html = path.read_text()
    m = re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\])\s*,\s*(\{.*?\})\s*,\s*\{"responsive', html, re.S)
    assert m is not None
    return json.loads(m.group(1)), json.loads(m.group(2))


def _charts(draw: Any, *args: Any) -> list[chart.Chart]:
    """The charts a plots function describes, without drawing them."""
    drawn: list[chart.Chart] = []

    def record(c: chart.Chart, p: str | Path) -> Path:
        drawn.append(c)
        return Path(p)

    with patch("chipwise.interfaces.plots.write_chart", side_effect=record):
        draw(*args)
    return drawn


def test_the_slo_label_sits_beside_its_line_on_a_log_axis(tmp_path: Path) -> None:
    """Plotly places annotations on a log axis at log10(x): the label of the 50 ms line had sat at 10^50 ms."""
    report = {
        "model": "toy-70b",
        "slo": {"tpot_p99": 0.05},
        "pareto": {"gpu-a": [{"tpot_s": 0.005, "output_tokens_per_s_per_chip": 100.0},
                             {"tpot_s": 0.4, "output_tokens_per_s_per_chip": 900.0}]},
        "results": [{"hardware": "gpu-a"}],
    }  # fmt: skip
    _, layout = _plotly(plots.pareto_serving_plan(report, tmp_path / "p.html"))
    assert layout["xaxis"]["type"] == "log"
    assert [(s["x0"], s["xref"]) for s in layout["shapes"]] == [(50.0, "x")]  # a shape: data units
    (label,) = [a for a in layout["annotations"] if a["text"] == "SLO tpot_p99 50 ms"]
    assert (label["x"], label["xref"]) == (pytest.approx(math.log10(50.0)), "x")


def test_a_small_training_ranking_is_drawn_in_minutes_and_dollars() -> None:
    """94 s and $3.02 had been drawn at 0.00108 days and "3.0" under a 1e-6 offset of $M."""

    def row(hw: str, seconds: float, usd: float) -> dict[str, Any]:
        return {"hardware": hw, "time_to_train_s": seconds, "cost_usd": usd, "tokens_per_s": 1e8 / seconds}

    report = {"kind": "plan-train", "model": "llama-3.2-1b", "chips": 8, "tokens": 1e8, "pricing": "on-demand",
              "results": [row("b200", 93.71, 3.02), row("a100-80gb", 732.0, 5.67)]}  # fmt: skip
    (small,) = _charts(plots.pareto_training, report, "x.png")
    panel = small.panels[0]
    assert (panel.x_label, panel.y_label) == ("time to train (min)", "cost ($, on-demand)")
    points = {s.labels[0]: (s.x[0], s.y[0]) for s in panel.series if s.labels}
    assert points["b200"] == pytest.approx((93.71 / 60, 3.02))
    assert points["a100-80gb"] == pytest.approx((12.2, 5.67))
    # a whole-model run keeps days and $M
    report["results"] = [row("b200", 16.0 * 86400, 19.58e6)]
    (large,) = _charts(plots.pareto_training, report, "x.png")
    assert (large.panels[0].x_label, large.panels[0].y_label) == ("time to train (days)", "cost ($M, on-demand)")
    drawn = large.panels[0].series[1]
    assert drawn.x[0] == 16.0 and drawn.y[0] == pytest.approx(19.58)


def test_html_footnotes_wrap_and_the_margin_grows(tmp_path: Path) -> None:
    """A 284-character footnote line had run past the 1,000 px figure."""
    long = "§ " + ", ".join(f"chip-{i:02d}" for i in range(30)) + ": priced by a catalog estimate."
    panel = chart.Panel("", "x", "y", [chart.Series("a", [1.0, 2.0], [1.0, 2.0])])
    _, short_layout = _plotly(chart.write_chart(chart.Chart("t", [panel], "one line."), tmp_path / "s.html"))
    _, layout = _plotly(chart.write_chart(chart.Chart("t", [panel], f"one line.\n{long}"), tmp_path / "l.html"))
    (note,) = [a for a in layout["annotations"] if a["text"].startswith("one line.")]
    lines = note["text"].split("<br>")
    assert len(long) > 280 and len(lines) == 4 and max(len(line) for line in lines) <= 140
    assert " ".join(lines[1:]) == long
    assert layout["margin"]["b"] - short_layout["margin"]["b"] == 3 * 14
    assert layout["height"] - short_layout["height"] == 3 * 14


def _fleet(hw: str, tpot: float, ttft: float) -> dict[str, Any]:
    return {"hardware": hw, "tpot_s": {"p50": tpot}, "ttft_s": {"p50": ttft}, "output_tokens_per_s_per_chip": 500.0}


def test_serving_fleets_get_one_legend_entry_one_look_and_a_log_latency_axis(tmp_path: Path) -> None:
    """Fleets 0 and 10 had been alike blue dots; every name had two HTML legend entries (one per panel); TPOT from
    5 to 360 ms sat on a linear axis."""
    report = {"model": "toy", "results": [_fleet(f"chip-{i}", 0.005 * 1.5**i, 0.2 + 0.01 * i) for i in range(11)]}
    (drawn,) = _charts(plots.serving_throughput_latency, report, "x.png")
    tpot, ttft = drawn.panels
    assert tpot.x_log and not ttft.x_log  # 5 to 288 ms; 0.2 to 0.3 s
    first, eleventh = tpot.series[0], tpot.series[10]
    assert first.color == eleventh.color and (first.look, eleventh.look) == (0, 1)
    traces, layout = _plotly(plots.serving_throughput_latency(report, tmp_path / "s.html"))
    assert layout["xaxis"]["type"] == "log"
    entries = [t["name"] for t in traces if t["showlegend"]]
    assert entries == [f"chip-{i}" for i in range(11)]  # once each, not once a panel
    chip10 = [t for t in traces if t["name"] == "chip-10"]
    assert len(chip10) == 2 and len({t["legendgroup"] for t in chip10}) == 1  # one click hides both panels'
    assert {t["marker"]["symbol"] for t in chip10} == {"square"}


def test_log_ticks_label_only_powers_of_ten_over_many_decades() -> None:
    """Seven decades with 1-2-5 labels had run together ("0.00050.0010.002")."""
    from matplotlib.figure import Figure

    def labels(lo: float, hi: float) -> list[str]:
        figure = Figure()
        ax = figure.subplots()
        ax.set_xscale("log")
        chart._plain_log_ticks(ax.xaxis)
        ax.set_xlim(lo, hi)
        figure.draw_without_rendering()
        ticks = zip(ax.get_xticks(), ax.get_xticklabels(), strict=True)
        return [t.get_text() for x, t in ticks if lo <= x <= hi and t.get_text()]

    assert labels(1e-4, 1e3) == ["0.0001", "0.001", "0.01", "0.1", "1", "10", "100", "1000"]
    assert labels(5.0, 400.0) == ["5", "10", "20", "50", "100", "200"]


def test_bar_values_are_drawn_on_a_ground_above_the_reference_line() -> None:
    """'83.8 GiB' had been drawn across the 96 GiB HBM line."""
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    bars = chart.Bars(["activations"], [83.8], text=["83.8 GiB"])
    chart._mpl_bars(ax, chart.Panel("", "GiB", bars=bars, ref_lines=[("HBM capacity 96 GiB", 96.0)]))
    (text,) = ax.texts
    (line,) = ax.get_lines()
    ground = text.get_bbox_patch()
    assert ground is not None and ground.get_facecolor()[:3] == (1.0, 1.0, 1.0)
    assert text.get_zorder() > line.get_zorder()
