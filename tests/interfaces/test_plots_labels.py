"""Plots read as they say: points at the percentile their SLO line names, labels beside their own points (inside the
axes, clear of the legend and of each other), and prices that are estimates marked as the ranking table marks
them."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import pytest

from chipwise.interfaces import chart, plots

if TYPE_CHECKING:  # matplotlib is imported where a test draws, after it picks the Agg back end
    from matplotlib.axes import Axes
    from matplotlib.transforms import Bbox

#: each chip's throughput-latency front (TPOT ms, output tokens/s per chip), from `plan serve --model llama-3.1-8b`
FRONTS = {
    "h100-sxm": [(2.52, 25), (2.8, 357), (3.78, 1058), (4.88, 1641), (6.73, 2378), (9.98, 3208), (15.82, 4045),
                 (26.29, 4868), (48.16, 5316), (93.02, 5504), (122.85, 5543)],
    "h200": [(2.34, 27), (2.61, 383), (3.54, 1131), (4.42, 1808), (6.2, 2582), (8.98, 3562), (13.91, 4601),
             (24.0, 5334), (44.95, 5696), (87.57, 5847), (231.88, 5930)],
    "mi300x": [(6.32, 10), (6.65, 150), (7.01, 285), (7.75, 516), (9.25, 865), (12.16, 1316), (15.73, 2034),
               (21.48, 2980), (33.47, 3824), (58.52, 4374), (109.87, 4660), (337.61, 4852)],
    "trn2": [(9.86, 13), (11.74, 85), (13.22, 151), (15.07, 265), (18.54, 432), (23.67, 676), (33.04, 968),
             (48.05, 1332), (77.04, 1661), (125.76, 2036), (175.66, 2186)],
    "b200": [(2.17, 58), (2.49, 803), (2.8, 1430), (3.19, 2511), (3.97, 4029), (4.93, 6492), (6.57, 9743),
             (9.94, 12883), (16.92, 15134), (31.32, 16347), (60.59, 16901), (95.81, 17096)],
}  # fmt: skip


def _plan_serve(slo: dict[str, float], verified: list[tuple[str, int, dict[str, float], float]]) -> dict[str, Any]:
    return {
        "kind": "plan-serve",
        "model": "llama-3.1-8b",
        "slo": slo,
        "results": [{"hardware": c, "projected": False} for c in FRONTS],
        "pareto": {
            c: [{"tpot_s": ms / 1e3, "output_tokens_per_s_per_chip": float(t)} for ms, t in pts]
            for c, pts in FRONTS.items()
        },
        "verified": [
            {
                "hardware": hw,
                "chips": chips,
                "slo_met": True,
                "tpot_s": {k: v / 1e3 for k, v in tpot.items()},
                "output_tokens_per_s_per_chip": tput,
                "plan": {},
            }
            for hw, chips, tpot, tput in verified
        ],
    }


#: the reviewer's two plots: an SLO of 50 ms (labels had been drawn over the x-axis) and of 12 ms ("h200: 1 chip"
#: had been drawn at 3 ms beside a B200 point, its own at 7.1 ms)
LOOSE = _plan_serve(
    {"ttft_p99": 2.0, "tpot_p99": 0.05},
    [("mi300x", 1, {"p50": 11.11, "p99": 11.98}, 547.0), ("trn2", 1, {"p50": 29.73, "p99": 34.43}, 556.0),
     ("mi300x>mi300x", 2, {"p50": 10.45, "p99": 10.63}, 273.0)],
)  # fmt: skip
TIGHT = _plan_serve(
    {"ttft_p99": 0.3, "tpot_p99": 0.012},
    [("mi300x>mi300x", 2, {"p50": 11.34, "p99": 11.71}, 1253.0), ("h100-sxm", 1, {"p50": 9.08, "p99": 11.09}, 2232.0),
     ("h200", 1, {"p50": 7.12, "p99": 8.89}, 2222.0)],
)  # fmt: skip


def _drawn(report: dict[str, Any], path: Path) -> list[chart.Panel]:
    panels: list[chart.Panel] = []
    with patch("chipwise.interfaces.chart._mpl_panel", side_effect=lambda ax, panel: panels.append(panel)):
        plots.plot(report, path)
    return panels


def test_plan_serve_points_sit_at_the_percentile_of_the_slo_line(tmp_path: Path) -> None:
    """The dashed line is the SLO's tpot_p99: a point drawn at p50 TPOT beside it could sit left of the line and
    miss it at p99. The points are drawn at p99 and the axis says so."""
    report = _plan_serve(
        {"tpot_p99": 0.05}, [("gpu-a", 4, {"p50": 30.0, "p99": 62.0}, 800.0), ("gpu-b", 1, {"p50": 20.0}, 400.0)]
    )
    (panel,) = _drawn(report, tmp_path / "p.png")
    points = {s.labels[0].split(":")[0]: s.x[0] for s in panel.series if s.labels}
    assert points["gpu-a"] == pytest.approx(62.0)  # right of the 50 ms line, as its p99 is
    assert points["gpu-b"] == pytest.approx(20.0)  # no p99 in its result: drawn at what it has, and said so
    assert "p99" in panel.x_label and list(panel.ref_lines) == [("SLO tpot_p99 50 ms", 50.0)]
    svg = plots.plot(report, tmp_path / "p.svg").read_text()
    assert "TPOT p99, the SLO's percentile" in svg and "No TPOT p99 in the result of gpu-b" in svg
    # without a TPOT target the points are at p50, as before
    (plain,) = _drawn({**report, "slo": {"ttft_p99": 2.0}}, tmp_path / "q.png")
    assert {s.labels[0].split(":")[0]: s.x[0] for s in plain.series if s.labels}["gpu-a"] == pytest.approx(30.0)
    assert "p50" in plain.x_label


def _labels(report: dict[str, Any], path: Path) -> tuple[Any, list[Any], list[str]]:
    """The axes a plot was drawn on, its point labels (annotations) and the labels left out."""
    placed: list[tuple[Any, Any]] = []
    place = chart._place_labels

    def keep(ax: Any, series: Any) -> Any:
        out = place(ax, series)
        placed.append((ax, out))
        return out

    with patch("chipwise.interfaces.chart._place_labels", side_effect=keep):
        plots.plot(report, path)
    ax, left_out = placed[0]
    ax.figure.draw_without_rendering()
    return ax, list(ax.texts), list(left_out or [])


def _box(b: Any) -> tuple[float, float, float, float]:
    return (b.x0, b.y0, b.x1, b.y1)


def _text_box(note: Any) -> tuple[float, float, float, float]:
    """An annotation's text alone (its own extent takes in its leader line)."""
    from matplotlib.text import Text

    return _box(Text.get_window_extent(note))


def _apart(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[2] <= b[0] + 0.5 or b[2] <= a[0] + 0.5 or a[3] <= b[1] + 0.5 or b[3] <= a[1] + 0.5


def _legend_extent(ax: Axes) -> Bbox:
    """Where the axes' legend was drawn (a panel with labelled series has one)."""
    legend = ax.get_legend()
    assert legend is not None
    return legend.get_window_extent()


@pytest.mark.parametrize("report", [LOOSE, TIGHT], ids=["slo-50ms", "slo-12ms"])
def test_labels_sit_beside_their_own_points_inside_the_axes_and_clear_of_the_legend(
    report: dict[str, Any], tmp_path: Path
) -> None:
    """Each label inside the axes (they had been drawn over the x-axis once the footnote moved the axes up), clear
    of the legend and of one another, and read with its own point: the labelled point nearest its text is its
    own, and of every marker, the curves' dots too, the one nearest its first letter (h200's label had ended at its
    point and begun at a B200 dot); or a leader line joins them."""
    ax, notes, left_out = _labels(report, tmp_path / "p.png")
    assert not left_out and len(notes) == len(report["verified"])
    frame = _box(ax.get_window_extent())
    legend = _box(_legend_extent(ax))
    boxes = [_text_box(t) for t in notes]
    points = [tuple(ax.transData.transform(t.xy)) for t in notes]
    dots = [tuple(ax.transData.transform((ms, t))) for pts in FRONTS.values() for ms, t in pts]
    for text, box in zip(notes, boxes, strict=True):
        label = text.get_text()
        assert frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1] and box[3] <= frame[3], label
        assert _apart(box, legend), label
    assert all(_apart(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    for k, (text, box) in enumerate(zip(notes, boxes, strict=True)):
        if text.arrow_patch is not None:
            continue  # joined to its point by a leader line

        def gap(p: tuple[float, float], box: tuple[float, ...] = box) -> float:
            return math.hypot(max(box[0] - p[0], 0.0, p[0] - box[2]), max(box[1] - p[1], 0.0, p[1] - box[3]))

        assert min(range(len(points)), key=lambda j: gap(points[j])) == k, text.get_text()
        start = (box[0], (box[1] + box[3]) / 2)  # read from its first letter

        def far(p: tuple[float, float], start: tuple[float, float] = start) -> float:
            return math.hypot(p[0] - start[0], p[1] - start[1])

        hidden = 4.5 * ax.figure.dpi / 72  # a curve's dot under the point's own marker is not seen apart from it
        seen = [d for d in dots if math.hypot(d[0] - points[k][0], d[1] - points[k][1]) > hidden]
        assert all(far(d) > far(points[k]) for d in seen + points[:k] + points[k + 1 :]), text.get_text()
        assert gap(points[k]) < 12 * ax.figure.dpi / 72, text.get_text()  # beside it: within 12 points


def test_a_label_with_no_clear_place_is_left_out_not_drawn_over_another() -> None:
    """Forty labelled points piled on one spot: those that find no clear place are left out (the legend and the
    colours still name them), never drawn over another label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [chart.Series("", [1.0 + 0.001 * i], [1.0], labels=[f"a long label for point {i}"]) for i in range(40)]
    fig, ax = plt.subplots(figsize=(4, 3))
    chart._mpl_panel(ax, chart.Panel("", "x", "y", series))
    fig.canvas.draw()
    left_out = chart._place_labels(ax, series)
    fig.canvas.draw()
    boxes = [_text_box(t) for t in ax.texts]
    assert left_out and len(boxes) + len(left_out) == 40
    assert all(_apart(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    plt.close(fig)


def _train_row(hw: str, days: float, musd: float, status: str) -> dict[str, Any]:
    return {
        "hardware": hw,
        "system": f"{hw}-system",
        "plan_rank": 1,
        "time_to_train_s": days * 86400.0,
        "cost_usd": musd * 1e6,
        "tokens_per_s": 1e12 / (days * 86400.0),
        "usd_per_million_tokens": musd,
        "projected": False,
        "price_source": {"status": status, "derivation": "ESTIMATE" if status == "estimate" else ""},
    }


def test_plan_train_marks_prices_that_are_estimates(tmp_path: Path) -> None:
    """gaudi3 and trn2 sat on the Pareto front with no caveat where the table marks their prices §: their points are
    open circles labelled §, and the footnote is the table's."""
    report = {
        "kind": "plan-train",
        "model": "llama-3.1-70b",
        "chips": 1024,
        "tokens": 1e12,
        "precision": "bf16",
        "pricing": "on-demand",
        "results": [
            _train_row("gb200", 3.0, 0.9, "spec"),
            _train_row("gaudi3", 4.8, 0.28, "estimate"),
            _train_row("trn2", 16.0, 1.1, "estimate"),
            _train_row("h100-sxm", 11.0, 1.9, "spec"),
        ],
    }
    points, _ = plots.training_points(report)
    assert [p.label for p in points] == ["gb200", "gaudi3 §", "trn2 §", "h100-sxm"]
    (panel,) = _drawn(report, tmp_path / "t.png")
    rings = {label: s.name for s in panel.series if s.style == "ring" for label in s.labels}
    assert rings == {"gaudi3 §": "on the front, price estimated §", "trn2 §": "dominated, price estimated §"}
    filled = {label for s in panel.series if s.style == "point" for label in s.labels}
    assert filled == {"gb200", "h100-sxm"}
    svg = plots.plot(report, tmp_path / "t.svg").read_text()
    assert "§ gaudi3, trn2: priced by an estimate, not a published on-demand price" in svg  # the table's words
    html = plots.plot(report, tmp_path / "t.html").read_text()
    assert "circle-open" in html and "price estimated" in html


def test_a_label_keeps_clear_of_the_legend_and_the_legend_stays_put() -> None:
    """A point just below the legend: a place to its right and above runs under the legend. The label
    goes elsewhere, and the legend ('best', worked out again at every draw, labels among what it avoids) stays where
    the points put it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [0.1 * i for i in range(1, 8)]
    curves = [
        chart.Series(f"curve {k}", xs, [s * (0.8 - x) for x in xs], style="curve", color=chart.PALETTE[k])
        for k, s in enumerate((1.0, 0.5, 0.2))
    ]

    def panel(x: float, y: float) -> chart.Panel:
        point = chart.Series("", [x], [y], labels=["a labelled point: 4 chips, SLO met"], size=9)
        return chart.Panel("", "x", "y", [*curves, point])

    fig, ax = plt.subplots(figsize=(8, 5))
    chart._mpl_panel(ax, panel(0.4, 0.02))  # the legend upper right, clear of the falling curves
    fig.canvas.draw()
    legend = _legend_extent(ax)
    # below the legend's left part, far enough from the right edge for a label to its right and above to fit
    x, y = ax.transData.inverted().transform((legend.x0 - 120, legend.y0 - 6))
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 5))
    chart._mpl_panel(ax, panel(x, y))
    fig.canvas.draw()
    assert _box(_legend_extent(ax)) == pytest.approx(_box(legend))
    chart._place_labels(ax, panel(x, y).series)
    fig.canvas.draw()
    assert len(ax.texts) == 1
    after = _box(_legend_extent(ax))
    assert after == pytest.approx(_box(legend), abs=1.0)
    assert _apart(_text_box(ax.texts[0]), after)
    plt.close(fig)
