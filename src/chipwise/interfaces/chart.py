"""A small, backend-neutral chart description and its two renderers: matplotlib (PNG, SVG) and plotly (HTML).

`plots.py` decides *what* to draw from chipwise results; this module only draws it. A chart is one or more panels
side by side; a panel holds point series (scatter or line) or one set of horizontal bars. The file type follows the
path's suffix. Both plotting libraries are imported only when a file is written, so importing chipwise stays fast.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from chipwise.errors import ChipwiseError

SUFFIXES: tuple[str, ...] = (".png", ".svg", ".html")
PALETTE: tuple[str, ...] = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#ad494a",
    "#637939",
    "#8c6d31",
    "#7b4173",
    "#3182bd",
    "#e6550d",
    "#31a354",
    "#756bb1",
    "#636363",
)
#: ten colours that stay apart (matplotlib's tab10); curves beyond them change line and marker instead
CURVE_COLORS: tuple[str, ...] = PALETTE[:10]
#: (matplotlib line style, matplotlib marker, plotly dash, plotly symbol) of curves 0-9, 10-19, 20-29, ...
CURVE_LOOKS: tuple[tuple[str, str, str, str], ...] = (
    ("-", "o", "solid", "circle"),
    ("--", "s", "dash", "square"),
    (":", "^", "dot", "triangle-up"),
    ("-.", "v", "dashdot", "triangle-down"),
)


def curve_style(i: int) -> dict[str, Any]:
    """The colour and look of the i-th of many curves: every (colour, look) pair differs up to 40 curves."""
    return {"color": CURVE_COLORS[i % len(CURVE_COLORS)], "look": (i // len(CURVE_COLORS)) % len(CURVE_LOOKS)}


#: more named curves than this and the legend goes beside the plot, where it hides none of them
LEGEND_INSIDE = 8
FRONT = "#1f77b4"
DOMINATED = "#9a9a9a"
PROJECTED = "#e07b00"

Style = Literal["point", "hollow", "line", "curve"]


@dataclass(frozen=True)
class Series:
    """Points of one kind. `point`: filled markers; `hollow`: open diamonds (projected products); `line`: a line
    without markers (a Pareto front); `curve`: a line with markers (a throughput-latency curve)."""

    name: str
    x: Sequence[float]
    y: Sequence[float]
    style: Style = "point"
    color: str = FRONT
    labels: Sequence[str] = ()
    hover: Sequence[str] = ()
    size: float = 7.0
    #: a curve's look beyond its colour, (line, marker) from CURVE_LOOKS: the next look once the colours are used
    look: int = 0
    open_markers: bool = False  # a curve of a projected product: open diamonds, as its points are


@dataclass(frozen=True)
class Bars:
    """Horizontal bars, drawn top to bottom in the order given."""

    labels: Sequence[str]
    values: Sequence[float]
    color: str = FRONT
    text: Sequence[str] = ()


@dataclass(frozen=True)
class Panel:
    title: str
    x_label: str
    y_label: str = ""
    series: Sequence[Series] = ()
    bars: Bars | None = None
    x_log: bool = False
    y_log: bool = False
    ref_line: tuple[str, float] | None = None  # a vertical reference line (a target): (label, x)


@dataclass(frozen=True)
class Chart:
    title: str
    panels: Sequence[Panel]
    footnote: str = ""
    width_in: float = 10.0
    height_in: float = 6.0


def check_path(path: str | Path) -> Path:
    """The path to write, checked before any work: a known suffix and an existing folder."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        shown = p.suffix or "no suffix"
        raise ChipwiseError(f"cannot write a plot to '{p}' ({shown}). Fix: use .png, .svg or .html.")
    if not p.parent.exists():
        raise ChipwiseError(f"folder '{p.parent}' for the plot does not exist. Fix: create it or choose another path.")
    return p


def write_chart(chart: Chart, path: str | Path) -> Path:
    """Write the chart; the suffix picks the format (.png, .svg: matplotlib; .html: plotly, self-contained)."""
    p = check_path(path)
    try:
        if p.suffix.lower() == ".html":
            _write_plotly(chart, p)
        else:
            _write_matplotlib(chart, p)
    except OSError as exc:
        raise ChipwiseError(
            f"cannot write '{p}': {exc.strerror or exc}. Fix: check the path and permissions."
        ) from None
    return p


def log_scale_suits(values: Sequence[float]) -> bool:
    """A log axis when the positive values span more than a factor of 20."""
    pos = [v for v in values if v > 0]
    return len(pos) > 1 and max(pos) / min(pos) > 20


# --- matplotlib -------------------------------------------------------------------------------------------------


def _write_matplotlib(chart: Chart, path: Path) -> None:
    from matplotlib.figure import Figure  # the object API: no pyplot state, no display, safe in threads

    n = len(chart.panels)
    fig = Figure(figsize=(chart.width_in, chart.height_in), layout="constrained")
    axes = fig.subplots(1, n, squeeze=False)[0]
    for ax, panel in zip(axes, chart.panels, strict=True):
        _mpl_panel(ax, panel)
    fig.draw_without_rendering()  # settle the layout, so that point labels can be placed apart from each other
    for ax, panel in zip(axes, chart.panels, strict=True):
        _place_labels(ax, panel.series)
    fig.suptitle(chart.title, fontsize=11)
    if chart.footnote:
        width = int(chart.width_in * 18)  # characters of 7 pt text across the figure
        lines = (textwrap.fill(line, width) for line in chart.footnote.splitlines())
        fig.supxlabel("\n".join(lines), fontsize=7, color="#555555")
    from matplotlib import rc_context

    with rc_context({"svg.fonttype": "none"}):  # SVG text stays text: searchable, smaller
        fig.savefig(path, format=path.suffix.lower().lstrip("."), dpi=130, metadata=_mpl_metadata(path))


def _mpl_metadata(path: Path) -> dict[str, Any]:
    if path.suffix.lower() == ".svg":
        return {"Date": None}  # reproducible SVG files
    return {"Software": "chipwise (matplotlib)"}


def _mpl_panel(ax: Any, panel: Panel) -> None:
    ax.set_title(panel.title, fontsize=10)
    ax.set_xlabel(panel.x_label)
    ax.set_ylabel(panel.y_label)
    ax.grid(True, alpha=0.3, which="both")
    if panel.bars is not None:
        _mpl_bars(ax, panel)
        return
    for s in panel.series:
        if s.style == "line":
            ax.plot(s.x, s.y, color=s.color, linewidth=1.5, alpha=0.6, label=s.name, zorder=1)
            continue
        if s.style == "curve":
            line, marker, _, _ = CURVE_LOOKS[s.look]
            if s.open_markers:
                marker = "D"
            ax.plot(
                s.x,
                s.y,
                line,
                color=s.color,
                linewidth=1.2,
                marker=marker,
                markersize=s.size / 2 + (1 if s.open_markers else 0),
                markerfacecolor="none" if s.open_markers else s.color,
                label=s.name,
            )
        elif s.style == "hollow":
            ax.scatter(
                s.x, s.y, s=s.size**2, marker="D", facecolors="none", edgecolors=s.color, linewidths=1.5, label=s.name
            )
        else:
            ax.scatter(s.x, s.y, s=s.size**2, color=s.color, label=s.name, zorder=3)
    for log, axis, set_scale in ((panel.x_log, ax.xaxis, ax.set_xscale), (panel.y_log, ax.yaxis, ax.set_yscale)):
        if log:
            set_scale("log")
            _plain_log_ticks(axis)
    if panel.ref_line is not None:
        label, x = panel.ref_line
        ax.axvline(x, color="#d62728", linestyle="--", linewidth=1.2, label=label, zorder=0)
    named = sum(1 for s in panel.series if s.name) + (panel.ref_line is not None)
    if named > LEGEND_INSIDE:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + named // 20, frameon=False)
    elif named:
        ax.legend(fontsize=8, loc="best")


LABEL_PT = 7.0  # font size of point labels
_CANDIDATES = (  # label offsets from the point (points) and alignment, in order of preference
    (4, 3, "left"),
    (4, -10, "left"),
    (-4, 3, "right"),
    (-4, -10, "right"),
    (4, 11, "left"),
    (4, -18, "left"),
    (-4, 11, "right"),
    (-4, -18, "right"),
    (4, 19, "left"),
    (4, -26, "left"),
    (-4, 19, "right"),
    (-4, -26, "right"),
)


def _place_labels(ax: Any, series: Sequence[Series]) -> None:
    """Label each point where its text overlaps no other label and no other point (greedy, first fit)."""
    px_per_pt = ax.figure.dpi / 72.0
    items = [(x, y, t) for s in series for x, y, t in zip(s.x, s.y, s.labels, strict=False) if t]
    anchors = [tuple(ax.transData.transform((x, y))) for x, y, _ in items]
    marked = [(x, y) for s in series if s.style != "line" for x, y in zip(s.x, s.y, strict=True)]
    dots = [tuple(ax.transData.transform(xy)) for xy in marked]
    taken: list[tuple[float, float, float, float]] = []
    frame = ax.get_window_extent()  # a label inside the axes is not clipped at the figure's edge
    for (x, y, text), (px, py) in sorted(zip(items, anchors, strict=True), key=lambda it: -it[1][1]):
        width, height = (len(text) * 0.55 * LABEL_PT + 2) * px_per_pt, (LABEL_PT + 1) * px_per_pt
        fits: list[tuple[bool, bool, tuple[int, int, str]]] = []
        for dx, dy, ha in _CANDIDATES:
            x0 = px + dx * px_per_pt - (width if ha == "right" else 0.0)
            box = (x0, py + dy * px_per_pt, x0 + width, py + dy * px_per_pt + height)
            inside = box[0] >= frame.x0 and box[2] <= frame.x1 and box[1] >= frame.y0 and box[3] <= frame.y1
            clear = inside and not any(_overlap(box, t) for t in taken)
            free = not any(_overlap(box, (qx - 3, qy - 3, qx + 3, qy + 3)) for qx, qy in dots if (qx, qy) != (px, py))
            fits.append((clear, free, (dx, dy, ha)))
        # first a place clear of the other labels and points, then one clear of the labels (over a curve's dots
        # rather than over another label), else the first
        dx, dy, ha = next((c for ok, free, c in fits if ok and free), next((c for ok, _, c in fits if ok), fits[0][2]))
        x0 = px + dx * px_per_pt - (width if ha == "right" else 0.0)
        taken.append((x0, py + dy * px_per_pt, x0 + width, py + dy * px_per_pt + height))
        ax.annotate(
            text,
            (x, y),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            fontsize=LABEL_PT,
            color="#333333",
            annotation_clip=True,
        )


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _plain_log_ticks(axis: Any) -> None:
    """Log-axis ticks as plain numbers (20, 50, 100), not powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda _v, _pos: ""))


def _mpl_bars(ax: Any, panel: Panel) -> None:
    bars = panel.bars
    assert bars is not None
    ys = list(range(len(bars.labels)))
    ax.barh(ys, bars.values, color=bars.color)
    ax.set_yticks(ys, labels=list(bars.labels), fontsize=8)
    ax.invert_yaxis()
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    for y, v, text in zip(ys, bars.values, bars.text, strict=False):
        ax.annotate(text, (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    if panel.ref_line is not None:
        label, x = panel.ref_line
        ax.axvline(x, color="#d62728", linestyle="--", linewidth=1.2, label=label)
        ax.legend(fontsize=8, loc="lower right")
    ax.margins(x=0.18)


# --- plotly -----------------------------------------------------------------------------------------------------


def _write_plotly(chart: Chart, path: Path) -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = len(chart.panels)
    fig = make_subplots(rows=1, cols=n, subplot_titles=[p.title for p in chart.panels], horizontal_spacing=0.12)
    for col, panel in enumerate(chart.panels, start=1):
        for trace in _plotly_traces(go, panel):
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(title_text=panel.x_label, type="log" if panel.x_log else None, row=1, col=col)
        fig.update_yaxes(title_text=panel.y_label, type="log" if panel.y_log else None, row=1, col=col)
        if panel.bars is not None:
            fig.update_yaxes(autorange="reversed", row=1, col=col)
        if panel.ref_line is not None:
            label, x = panel.ref_line
            fig.add_vline(x=x, line_dash="dash", line_color="#d62728", annotation_text=label, row=1, col=col)
    footnote = chart.footnote.replace("\n", "<br>")
    fig.update_layout(
        title={"text": chart.title, "x": 0.5},
        template="plotly_white",
        width=int(chart.width_in * 100),
        height=int(chart.height_in * 100) + (40 if footnote else 0),
        legend={"font": {"size": 11}},
        margin={"b": 110 if footnote else 60},
    )
    if footnote:
        fig.add_annotation(
            text=footnote, xref="paper", yref="paper", x=0, y=-0.2, showarrow=False, align="left", font={"size": 10}
        )
    fig.write_html(str(path), include_plotlyjs=True, full_html=True)  # plotly.js inline: works offline


def _plotly_traces(go: Any, panel: Panel) -> list[Any]:
    if panel.bars is not None:
        b = panel.bars
        return [
            go.Bar(
                x=list(b.values),
                y=list(b.labels),
                orientation="h",
                marker_color=b.color,
                text=list(b.text) or None,
                textposition="outside",
                showlegend=False,
            )
        ]
    traces = []
    for s in panel.series:
        if s.style == "line":
            traces.append(
                go.Scatter(x=list(s.x), y=list(s.y), mode="lines", name=s.name, line={"color": s.color}, opacity=0.6)
            )
            continue
        marker: dict[str, Any] = {"color": s.color, "size": s.size + 3}
        if s.style == "curve":
            marker.update(symbol=CURVE_LOOKS[s.look][3], size=s.size)
        if s.style == "hollow" or s.open_markers:
            marker.update(symbol="diamond-open", line={"width": 2, "color": s.color})
        mode = "lines+markers" if s.style == "curve" else "markers"
        if s.labels:
            mode += "+text"
        traces.append(
            go.Scatter(
                x=list(s.x),
                y=list(s.y),
                mode=mode,
                name=s.name,
                marker=marker,
                line={"color": s.color, "dash": CURVE_LOOKS[s.look][2]} if s.style == "curve" else None,
                text=list(s.labels) or None,
                textposition="top right",
                textfont={"size": 10},
                hovertext=list(s.hover) or None,
                hoverinfo="text" if s.hover else "x+y+name",
            )
        )
    return traces
