"""Plots, as a tester found them: an unwritable file refused before the work, an HTML chart of one bar with room to
draw it, every SLO target drawn whatever the order it was written in, small elasticities written as the table writes
them, labels left out for room named, bar charts' projected note without diamonds, per-trillion-token hovers, the
table's ‡ mark, and a result of the wrong kind refused in one line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces import chart, plots
from cli_run import run_error

SERVE = (
    '{"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 5, '
    '"input_tokens": 256, "output_tokens": 64}'
)


def _charts(draw: Any, *args: Any, **kwargs: Any) -> list[chart.Chart]:
    """The charts a plots function describes, without drawing them."""
    drawn: list[chart.Chart] = []

    def record(c: chart.Chart, p: str | Path) -> Path:
        drawn.append(c)
        return Path(p)

    with patch("chipwise.interfaces.plots.write_chart", side_effect=record):
        draw(*args, **kwargs)
    return drawn


def _plotly(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The traces and the layout of a plotly HTML file."""
    html = path.read_text()
    m = re.search(r'Plotly\.newPlot\(\s*"[^"]+",\s*(\[.*?\])\s*,\s*(\{.*?\})\s*,\s*\{"responsive', html, re.S)
    assert m is not None
    return json.loads(m.group(1)), json.loads(m.group(2))


# --- 1. a file that cannot be written is refused before the work ----------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_path_under_proc_is_refused_before_the_work(capsys: pytest.CaptureFixture[str]) -> None:
    """/proc reads as a writable folder to os.access: the plot had failed after the simulation, its answer lost."""
    with pytest.raises(ChipwiseError) as err:
        chart.check_path("/proc/chipwise-plot.png")
    assert str(err.value) == (
        "cannot create '/proc/chipwise-plot.png': No such file or directory. Fix: choose another path."
    )
    with patch("chipwise.planner.serving_predict.predict_serving", side_effect=AssertionError("simulated")):
        assert run_error(capsys, ["predict", SERVE, "--plot", "/proc/chipwise-plot.svg"]) == (
            "error: cannot create '/proc/chipwise-plot.svg': No such file or directory. Fix: choose another path."
        )


def _immutable(path: Path) -> bool:
    if shutil.which("chattr") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode == 0


def test_an_immutable_file_is_refused_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`chattr +i ro.svg`: 'predict --plot ro.svg' had simulated for 8 s, then printed only the error."""
    ro = tmp_path / "ro.svg"
    ro.write_text("old figure")
    if not _immutable(ro):
        pytest.skip("needs root and chattr on a file system that keeps the immutable flag")
    try:
        with patch("chipwise.planner.serving_predict.predict_serving", side_effect=AssertionError("simulated")):
            assert run_error(capsys, ["predict", SERVE, "--plot", str(ro)]) == (
                f"error: cannot write '{ro}': Operation not permitted. Fix: choose another path, or make the file "
                "writable."
            )
    finally:
        subprocess.run(["chattr", "-i", str(ro)], check=False)
    assert ro.read_text() == "old figure"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes a read-only file")
def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    ro = tmp_path / "ro.png"
    ro.write_text("old figure")
    ro.chmod(0o444)
    with pytest.raises(ChipwiseError, match=r"^cannot write '.*ro\.png': Permission denied\. Fix: choose another"):
        chart.check_path(ro)


def test_the_check_leaves_files_as_they_were(tmp_path: Path) -> None:
    """An existing file is opened for appending, not cut; a new one is created and removed again."""
    old = tmp_path / "old.svg"
    old.write_text("old figure")
    assert chart.check_path(old) == old and old.read_text() == "old figure"
    new = tmp_path / "new.png"
    assert chart.check_path(new) == new and not new.exists()


def test_a_path_that_is_not_a_name_is_one_line(tmp_path: Path) -> None:
    """plot(result, 5) had been a TypeError from Path()."""
    with pytest.raises(ChipwiseError) as err:
        plots.plot({"kind": "train"}, 5)  # type: ignore[arg-type]
    assert str(err.value) == (
        "cannot write a plot to 5: a plot's path is a file name (int given). Fix: pass a path such as 'plot.png'."
    )


# --- 2. an HTML chart of one bar has room to draw it -----------------------------------------------------------------


def _sensitivity(rows: list[tuple[str, float, float]], projected: bool = False) -> dict[str, Any]:
    """A sensitivity result of step time: (figure, elasticity, the metric's move at +10%) each."""
    return {
        "kind": "sensitivity", "metric": "step_time", "metrics": {"step_time": {"label": "step time"}}, "step": 0.1,
        "model": "llama-3.1-70b", "hardware": "trn2", "chips": 1024, "plan_held": False, "projected": projected,
        "figures": [{"figure": f, "elasticity": {"step_time": e}, "change": {"plus": {"step_time": c}}}
                    for f, e, c in rows],
    }  # fmt: skip


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_an_html_sensitivity_chart_of_few_rows_has_a_plot_area(tmp_path: Path, rows: int) -> None:
    """1.2 + 0.35 in a row: one row had been 154 px high under plotly's default top margin of 100 px and a bottom
    one of 60, a plot area of -6 px; two 30 px, three 65 px. Now 80 px above and at least 120 px of plot: 260 px."""
    result = _sensitivity([(f"fig.{i}", -0.9 + 0.1 * i, -0.08) for i in range(rows)])
    _, layout = _plotly(plots.sensitivity_chart(result, tmp_path / "s.html"))
    assert layout["margin"] == {"t": 80, "b": 60}
    assert layout["height"] == 260
    assert layout["height"] - layout["margin"]["t"] - layout["margin"]["b"] == 120


def test_a_tall_html_chart_keeps_its_height(tmp_path: Path) -> None:
    panel = chart.Panel("", "x", bars=chart.Bars(["a", "b"], [1.0, 2.0]))
    _, layout = _plotly(chart.write_chart(chart.Chart("t", [panel], "", 10.0, 6.0), tmp_path / "t.html"))
    assert layout["height"] == 600 and layout["margin"]["t"] == 80


# --- 3. every SLO target is drawn, whatever the order it was written in ----------------------------------------------


def _serve_prediction(slo: dict[str, float]) -> dict[str, Any]:
    return {
        "kind": "serve", "model": "llama-3.1-70b", "hardware": "h200", "engine": "trtllm", "chips": 8,
        "precision": "fp8", "load": {"label": "20 req/s"}, "slo": slo, "goodput": {"fraction": 0.05},
        "ttft_s": {"p50": 0.1, "p90": 0.12, "p99": 0.18, "mean": 0.11},
        "tpot_s": {"p50": 0.035, "p90": 0.038, "p99": 0.04, "mean": 0.033},
        "e2e_s": {"p50": 35.75, "p90": 39.5, "p99": 40.5, "mean": 33.9},
        "breakdown": {"gemm": 0.02, "attention": 0.005},
    }  # fmt: skip


def test_every_slo_target_of_a_prediction_is_a_line() -> None:
    """slo {ttft_p99_s: 2.0, tpot_p99_s: 0.05, tpot_p50_s: 0.030, e2e_p99_s: 30}: only ttft_p99 and the TPOT target
    written first had been drawn, e2e_p99 nowhere, under a footnote saying every target was a dashed line."""
    slo = {"ttft_p99": 2.0, "tpot_p99": 0.05, "tpot_p50": 0.03, "e2e_p99": 30.0}
    (drawn,) = _charts(plots.prediction_serving, _serve_prediction(slo), "p.png")
    by_title = {p.title: p for p in drawn.panels}
    tpot = by_title["time per output token"].ref_lines
    assert [label for label, _ in tpot] == ["SLO tpot_p50 30.0 ms", "SLO tpot_p99 50.0 ms"]
    assert [x for _, x in tpot] == pytest.approx([30.0, 50.0])
    assert list(by_title["time to first token"].ref_lines) == [("SLO ttft_p99 2.00 s", 2000.0)]
    e2e = by_title["end-to-end latency"]
    assert e2e.x_label == "s" and list(e2e.ref_lines) == [("SLO e2e_p99 30.00 s", 30.0)]
    assert list(e2e.bars.values) == [35.75, 39.5, 40.5, 33.9]  # type: ignore[union-attr]
    assert "within every SLO target (dashed lines)" in drawn.footnote
    # no end-to-end target, no end-to-end panel
    (plain,) = _charts(plots.prediction_serving, _serve_prediction({"ttft_p99": 2.0}), "p.png")
    assert "end-to-end latency" not in [p.title for p in plain.panels]


def _plan_serve(slo: dict[str, float]) -> dict[str, Any]:
    return {
        "kind": "plan-serve", "model": "llama-3.1-8b", "slo": slo, "results": [{"hardware": "h200"}],
        "pareto": {"h200": [{"tpot_s": 0.005, "output_tokens_per_s_per_chip": 1000.0},
                            {"tpot_s": 0.05, "output_tokens_per_s_per_chip": 5000.0}]},
        "verified": [{"hardware": "h200", "chips": 1, "slo_met": True, "tpot_s": {"p50": 0.006, "p99": 0.0066},
                      "output_tokens_per_s_per_chip": 1270.0}],
    }  # fmt: skip


def test_the_plan_serve_plot_draws_every_tpot_target_whatever_the_order(tmp_path: Path) -> None:
    """--slo tpot_p50=15ms,tpot_p99=25ms had drawn the p50 line and the points at p50; written the other way round,
    the p99 line and the points at p99. Both lines now, the points at p99, either way."""
    seen = []
    for slo in ({"tpot_p50": 0.015, "tpot_p99": 0.025}, {"tpot_p99": 0.025, "tpot_p50": 0.015}):
        (drawn,) = _charts(plots.pareto_serving_plan, _plan_serve(slo), "p.png")
        (panel,) = drawn.panels
        point = next(s for s in panel.series if s.labels)
        seen.append((list(panel.ref_lines), point.x[0], panel.x_label, drawn.footnote))
    assert seen[0] == seen[1]
    lines, x, x_label, footnote = seen[0]
    assert lines == [("SLO tpot_p50 15 ms", 15.0), ("SLO tpot_p99 25 ms", 25.0)]
    assert x == pytest.approx(6.6) and "points at p99" in x_label
    assert "(TPOT p99, the highest of the SLO's percentiles; dashed lines: its tpot_p50 and tpot_p99 targets)" in (
        footnote
    )
    _, layout = _plotly(plots.pareto_serving_plan(_plan_serve({"tpot_p99": 0.025, "tpot_p50": 0.015}),
                                                  tmp_path / "p.html"))  # fmt: skip
    assert [(s["x0"], s["line"]["dash"]) for s in layout["shapes"]] == [(15.0, "dash"), (25.0, "dashdot")]
    labels = {a["text"]: a["yshift"] for a in layout["annotations"] if a["text"].startswith("SLO")}
    assert labels == {"SLO tpot_p50 15 ms": 0, "SLO tpot_p99 25 ms": 13}  # the second above the first
    svg = plots.pareto_serving_plan(_plan_serve({"tpot_p99": 0.025, "tpot_p50": 0.015}), tmp_path / "p.svg")
    assert "SLO tpot_p50 15 ms" in svg.read_text() and "SLO tpot_p99 25 ms" in svg.read_text()


# --- 4. small elasticities as the table writes them ------------------------------------------------------------------


def test_sensitivity_labels_are_written_as_the_table_writes_them() -> None:
    """kernel_overhead's elasticity 0.002 (+0.02% at +10%) had read '+0.00; +10%: +0.0%'; the table, +0.002 and
    +0.02%."""
    rows = [("trn2.flops.bf16", -0.94, -0.0854), ("efficiency.trainium2.kernel_overhead", 0.002, 0.0002)]
    result = _sensitivity(rows)
    (drawn,) = _charts(plots.sensitivity_chart, result, "s.png")
    bars = drawn.panels[0].bars
    assert bars is not None and list(bars.text) == ["-0.94; +10%: -8.54%", "+0.002; +10%: +0.02%"]


# --- 5. labels left out for room are named ---------------------------------------------------------------------------


def _crowded_ranking(n: int) -> dict[str, Any]:
    """n fleets packed into a corner of the figure: there is no room to label them all."""
    rows = [
        {"hardware": f"chip-{i:02d}", "time_to_train_s": (10 + 0.4 * i) * 86400, "cost_usd": (20 + 0.2 * i) * 1e6,
         "tokens_per_s": 1e9} for i in range(n)
    ]  # fmt: skip
    rows.append({"hardware": "far-away", "time_to_train_s": 100 * 86400, "cost_usd": 90e6, "tokens_per_s": 1e9})
    return {"kind": "plan-train", "model": "toy-70b", "chips": 1024, "precision": "bf16", "tokens": 15e12,
            "results": rows}  # fmt: skip


def test_labels_left_out_for_room_are_named_in_the_footnote(tmp_path: Path) -> None:
    """14 of 90 points of a ranking had been drawn without their name and with no word of it."""
    passes: list[list[str]] = []
    place = chart._place_labels

    def keep(ax: Any, series: Any) -> list[str]:
        out = place(ax, series)
        passes.append(out)
        return out

    with patch("chipwise.interfaces.chart._place_labels", side_effect=keep):
        svg = plots.pareto_training(_crowded_ranking(40), tmp_path / "c.svg").read_text()
    left_out = passes[-1]
    assert left_out and len(passes) >= 2  # placed again under the longer footnote
    texts = [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]
    start = next(i for i, t in enumerate(texts) if t.startswith("Not labelled"))
    note = " ".join(texts[start:])  # the footnote's last lines, wrapped
    names = ", ".join(left_out)
    assert note == f"Not labelled, for want of room: {names} (an .html figure names every point on hover)."
    labelled = {t for t in texts[:start] if re.fullmatch(r"chip-\d\d", t)}
    assert labelled and labelled | set(left_out) == {f"chip-{i:02d}" for i in range(40)}  # every point named once
    assert not labelled & set(left_out)


@pytest.mark.parametrize(
    ("passes", "named"),
    [
        ([["chip-a"], [], []], ""),  # room under the longer footnote: it is taken back
        ([["chip-a"], ["chip-a"]], "chip-a"),  # settled on the second pass
        ([["chip-a"], ["chip-b"], ["chip-a"], ["chip-b"]], "chip-b"),  # never settles: the last (4th) pass's
    ],
)
def test_the_footnote_names_the_labels_of_the_last_pass(tmp_path: Path, passes: list[list[str]], named: str) -> None:
    panel = chart.Panel("", "x", "y", [chart.Series("", [1.0], [1.0], labels=["chip-a"])])
    with patch("chipwise.interfaces.chart._place_labels", side_effect=passes) as place:
        svg = chart.write_chart(chart.Chart("t", [panel]), tmp_path / "p.svg").read_text()
    assert place.call_count == len(passes)
    notes = re.findall(r"Not labelled, for want of room: ([^ ]*) \(", svg)
    assert notes == ([named] if named else [])


def test_a_figure_with_room_for_every_label_has_no_such_note(tmp_path: Path) -> None:
    svg = plots.pareto_training(_crowded_ranking(2), tmp_path / "c.svg").read_text()
    assert "Not labelled" not in svg and "chip-00" in svg and "chip-01" in svg


# --- 6. a bar chart's projected note names no diamonds ---------------------------------------------------------------


def _train_prediction(projected: bool = True) -> dict[str, Any]:
    return {
        "kind": "train", "model": "llama-3.1-70b", "hardware": "trn4", "chips": 1024, "precision": "bf16",
        "plan": {"tp": 8, "pp": 1, "dp": 128, "cp": 1, "ep": 1, "vpp": 1, "microbatch": 1, "zero": 1},
        "step_time_s": 1.5, "breakdown": {"compute": 1.0, "tp_comm": 0.5}, "memory_per_chip_gib": 50.0,
        "memory_capacity_gib": 144.0, "memory_breakdown_gib": {"weights": 20.0, "activations": 30.0},
        "projected": projected,
    }  # fmt: skip


def test_bar_charts_of_a_projected_product_name_no_diamonds() -> None:
    """'Projected (open diamonds)' had been written under bars, where no diamond is drawn: the chips are named."""
    serve = {**_serve_prediction({}), "hardware": "trn4", "projected": True, "projected_chips": ["trn4"]}
    sens = _sensitivity([("trn4.flops.bf16", -0.9, -0.08)], projected=True)
    drawn = [
        *_charts(plots.breakdown_training, _train_prediction(), "b.png"),
        *_charts(plots.memory_training, _train_prediction(), "m.png"),
        *_charts(plots.prediction_serving, serve, "p.png"),
        *_charts(plots.sensitivity_chart, {**sens, "hardware": "trn4"}, "s.png"),
    ]
    for c in drawn:
        assert "diamond" not in c.footnote
        assert "Projected: trn4 is announced, not shipping; its figures are projected or estimated." in c.footnote
    split = {**serve, "hardware": "trn3>trn4", "projected_chips": ["trn3", "trn4"]}
    (c,) = _charts(plots.prediction_serving, split, "p.png")
    assert "Projected: trn3, trn4 are announced, not shipping; their figures are projected or estimated." in c.footnote
    assert plots.projected_bars_note(_train_prediction(projected=False)) == ""


# --- 7, 8. the training plot's hover and marks say what the table says -----------------------------------------------


def _ranking(tokens: float | None) -> dict[str, Any]:
    row = {
        "hardware": "mi455x",
        "system": "mi455x-rack",
        "time_to_train_s": 20 * 86400,
        "cost_usd": 4e6,
        "tokens_per_s": 1e12 / (2 * 86400),
        "usd_per_million_tokens": 1.2,
        "efficiency_carried_from": "cdna4",
    }
    other = {
        "hardware": "h100-sxm",
        "system": "p5",
        "time_to_train_s": 40 * 86400,
        "cost_usd": 8e6,
        "tokens_per_s": 1e12 / (4 * 86400),
        "usd_per_million_tokens": 2.4,
    }
    return {"kind": "plan-train", "model": "llama-3.1-70b", "chips": 4096, "tokens": tokens,
            "results": [row, other]}  # fmt: skip


def test_a_per_trillion_token_hover_says_so() -> None:
    """The axes said 'per 1.00 T tokens' and the hover did not: 'time 2.00 days' read as the whole run."""
    points, _ = plots.training_points(_ranking(None))
    assert "time 2.0 d, cost $1.20M per 1.00 T tokens<br>" in points[0].hover
    points, _ = plots.training_points(_ranking(15e12))
    assert "time 20.0 d, cost $4.00M<br>" in points[0].hover


def test_carried_efficiencies_are_marked_as_the_table_marks_them() -> None:
    """The table reads 'mi455x ‡' with its footnote; the plot had no ‡ and no footnote."""
    (drawn,) = _charts(plots.pareto_training, _ranking(15e12), "p.png")
    labels = [label for s in drawn.panels[0].series for label in s.labels]
    assert sorted(labels) == ["h100-sxm", "mi455x ‡"]
    assert (
        "‡ no training run of these chips' families is in the fit: their efficiencies are a predecessor's "
        "(mi455x from cdna4; 'chipwise catalog show ID --sources')."
    ) in drawn.footnote.splitlines()


# --- 9. a result of the wrong kind is refused in one line ------------------------------------------------------------

FIX = "Fix: draw it with plots.plot(result, path), which picks the figure of its kind."
SERVING_WHAT = "serving results (a serving prediction, a plan_serve report, or several predictions side by side)"


@pytest.mark.parametrize(
    ("draw", "given", "message"),
    [
        (plots.breakdown_training, "serve", "'serve': breakdown_training draws a training prediction (kind 'train')"),
        (plots.memory_training, "serve", "'serve': memory_training draws a training prediction (kind 'train')"),
        (plots.prediction_serving, "train", "'train': prediction_serving draws a serving prediction (kind 'serve')"),
        (plots.sensitivity_chart, "train",
         "'train': sensitivity_chart draws a sensitivity result (kind 'sensitivity')"),
        (plots.pareto_training, "plan-serve",
         "'plan-serve': pareto_training draws a plan_train report (kind 'plan-train')"),
        (plots.pareto_serving_plan, "plan-train",
         "'plan-train': pareto_serving_plan draws a plan_serve report (kind 'plan-serve')"),
        (plots.serving_throughput_latency, "train", f"'train': serving_throughput_latency draws {SERVING_WHAT}"),
    ],
)  # fmt: skip
def test_a_result_of_another_kind_is_one_line(tmp_path: Path, draw: Any, given: str, message: str) -> None:
    """breakdown_training of a serving prediction had raised KeyError 'dp'; sensitivity_chart of a training one
    KeyError 'metric'; prediction_serving of a training one AttributeError; pareto_training of a plan_serve report
    had read 'no priced result'."""
    results = {"serve": _serve_prediction({}), "train": _train_prediction(), "plan-serve": _plan_serve({}),
               "plan-train": _ranking(15e12)}  # fmt: skip
    with pytest.raises(ChipwiseError) as err:
        draw(results[given], tmp_path / "x.png")
    assert str(err.value) == f"no plot for a result of kind {message}. {FIX}"
    assert not (tmp_path / "x.png").exists()


def test_not_a_result_and_an_unknown_percentile_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ChipwiseError) as err:
        plots.breakdown_training(None, tmp_path / "x.png")  # type: ignore[arg-type]
    assert str(err.value) == (
        "no plot for NoneType: breakdown_training draws a result dictionary of a training prediction (kind 'train'). "
        "Fix: pass what chipwise.api returns, e.g. breakdown_training(cw.predict(...), 'out.png')."
    )
    for draw in (plots.serving_throughput_latency, plots.serving_cost_latency):  # p75 had drawn p50 with no word
        with pytest.raises(ChipwiseError) as err:
            draw(_serve_prediction({}), tmp_path / "x.png", percentile="p75")
        assert str(err.value) == (
            "no latency figure 'p75' to draw: results hold p50, p90, p99, mean. Fix: use one of those."
        )


def test_a_result_without_a_kind_is_drawn_as_before(tmp_path: Path) -> None:
    bare = {k: v for k, v in _train_prediction(projected=False).items() if k != "kind"}
    assert "matmul compute" in plots.breakdown_training(bare, tmp_path / "b.svg").read_text()


def test_unfitted_efficiencies_are_marked_as_the_table_marks_them() -> None:
    """A family on unfitted prior efficiencies reads '†' in the table with its footnote; the plot had neither."""
    report = _ranking(15e12)
    report["results"][1] = {**report["results"][1], "hardware": "gaudi3", "efficiency_unfitted": True}
    (drawn,) = _charts(plots.pareto_training, report, "p.png")
    labels = [label for s in drawn.panels[0].series for label in s.labels]
    assert sorted(labels) == ["gaudi3 †", "mi455x ‡"]
    assert any(line.startswith("† no published training run of these chips' families") and "(gaudi3;" in line
               for line in drawn.footnote.splitlines())  # fmt: skip
