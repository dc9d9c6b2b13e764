"""A small, backend-neutral chart description and its two renderers: matplotlib (PNG, SVG) and plotly (HTML).

`plots.py` decides *what* to draw from chipwise results; this module only draws it. A chart is one or more panels
side by side; a panel holds point series (scatter or line) or one set of horizontal bars. The file type follows the
path's suffix. Both plotting libraries are imported only when a file is written, so importing chipwise stays fast.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
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

Style = Literal["point", "hollow", "ring", "line", "curve"]
REF_COLOR = "#d62728"
#: the dashes of a panel's reference lines, 1st, 2nd, ...: (matplotlib line style, plotly dash)
REF_DASHES: tuple[tuple[Any, str], ...] = (("--", "dash"), ("-.", "dashdot"), (":", "dot"), ((0, (8, 3)), "longdash"))


@dataclass(frozen=True)
class Series:
    """Points of one kind. `point`: filled markers; `hollow`: open diamonds (projected products); `ring`: open
    circles (a figure with a caveat: a price that is an estimate); `line`: a line without markers (a Pareto front);
    `curve`: a line with markers (a throughput-latency curve)."""

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
    #: the fleet a series belongs to, where it has several (a curve and its chosen point, on two panels): one legend
    #: entry for them all in HTML, which shows or hides them together; the name where empty
    group: str = ""


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
    #: vertical reference lines (targets, a capacity): (label, x) each, told apart by REF_DASHES (one line had been
    #: drawn of an SLO's tpot_p50 and tpot_p99 targets, the one written first)
    ref_lines: Sequence[tuple[str, float]] = ()


@dataclass(frozen=True)
class Chart:
    title: str
    panels: Sequence[Panel]
    footnote: str = ""
    width_in: float = 10.0
    height_in: float = 6.0


class NothingToDrawError(ChipwiseError):
    """A result that holds nothing a figure shows (no priced fleet, no figure that moves the metric): the answer
    stands, only its figure is left out, so a command prints the answer and says so ('plot: nothing drawn')."""


def check_path(path: str | Path) -> Path:
    """The path to write, checked before any work: a known suffix, in a folder that exists and can be written to,
    and not itself a folder (each had failed only after the work, a search of minutes lost with its answer); and the
    file itself writable (check_writable)."""
    if not isinstance(path, str | os.PathLike):  # plot(result, 5) had been a TypeError from Path()
        raise ChipwiseError(
            f"cannot write a plot to {path!r}: a plot's path is a file name ({type(path).__name__} given). Fix: pass "
            "a path such as 'plot.png'."
        )
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        shown = p.suffix or "no suffix"
        raise ChipwiseError(f"cannot write a plot to '{p}' ({shown}). Fix: use .png, .svg or .html.")
    if not p.parent.exists():
        raise ChipwiseError(f"folder '{p.parent}' for the plot does not exist. Fix: create it or choose another path.")
    if not p.parent.is_dir():
        raise ChipwiseError(f"cannot write '{p}': '{p.parent}' is a file, not a folder. Fix: choose another path.")
    if p.is_dir():
        raise ChipwiseError(f"cannot write '{p}': it is a folder. Fix: name a file, e.g. '{p / ('plot' + p.suffix)}'.")
    if not os.access(p.parent, os.W_OK):
        raise ChipwiseError(f"cannot write '{p}': folder '{p.parent}' is not writable. Fix: choose another path.")
    check_writable(p)
    return p


def check_writable(p: Path) -> None:
    """Open the file as the figure will be written, leaving it as it was: an existing file for appending (nothing
    written, nothing cut), a new one created and removed. The folder's permission alone had passed an immutable or
    read-only file, and /proc or /sys, whose folders read as writable: 'predict --plot ro.svg' had failed with
    'Operation not permitted' after 8 s of simulation, its answer lost; it now fails before the work. A FIFO or a
    device is left to the writer (opening one can block)."""
    existing = p.is_file()
    try:
        if existing:
            with p.open("ab"):
                pass
        elif not p.exists():
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
            p.unlink()
    except FileExistsError:  # a link to nothing, or made meanwhile: the writer follows it, as it would have
        pass
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ChipwiseError(
            f"cannot write '{p}': {why}. Fix: choose another path, or make the file writable."
            if existing
            else f"cannot create '{p}': {why}. Fix: choose another path."
        ) from None


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
    fig.suptitle(chart.title, fontsize=11)
    _mpl_footnote(fig, chart, chart.footnote)
    # settle the layout, title and footnote included, so that point labels are placed where the axes will be (the
    # footnote added after them had moved the axes up, and labels placed inside were drawn over the x-axis)
    fig.draw_without_rendering()
    named: list[str] = []  # the labels the footnote names as left out
    left_out = _mpl_labels(axes, chart.panels)
    # labels left out for room are named in the footnote (14 of 90 points of a ranking had been left unnamed); the
    # longer footnote moves the axes, so the labels are placed again in the settled layout, until the two agree
    for _ in range(LABEL_PASSES):
        if left_out == named:
            break
        named = left_out
        _mpl_footnote(fig, chart, _footnote_naming(chart, named))
        fig.draw_without_rendering()
        left_out = _mpl_labels(axes, chart.panels, again=True)
    if left_out != named:  # still changing: the footnote names what is drawn, the axes moving by a line at most
        _mpl_footnote(fig, chart, _footnote_naming(chart, left_out))
    from matplotlib import rc_context

    with rc_context({"svg.fonttype": "none"}):  # SVG text stays text: searchable, smaller
        fig.savefig(path, format=path.suffix.lower().lstrip("."), dpi=130, metadata=_mpl_metadata(path))


#: how often labels are placed again after the footnote names those left out (it moves the axes)
LABEL_PASSES = 3


def _mpl_footnote(fig: Any, chart: Chart, text: str) -> None:
    """The footnote, wrapped; one set before is replaced (emptied where `text` is empty)."""
    if text or fig.get_supxlabel():
        width = int(chart.width_in * 18)  # characters of 7 pt text across the figure
        lines = (textwrap.fill(line, width) for line in text.splitlines())
        fig.supxlabel("\n".join(lines), fontsize=7, color="#555555")


def _mpl_labels(axes: Sequence[Any], panels: Sequence[Panel], again: bool = False) -> list[str]:
    """Label every panel's points (`again`: removing the labels placed before); the labels left out, once each."""
    left_out: list[str] = []
    for ax, panel in zip(axes, panels, strict=True):
        if again:
            for note in [t for t in ax.texts if getattr(t, POINT_LABEL, False)]:
                note.remove()
        left_out += _place_labels(ax, panel.series)
    return list(dict.fromkeys(left_out))


def _footnote_naming(chart: Chart, unlabelled: Sequence[str]) -> str:
    """The chart's footnote and a line naming the points left without a label, where there are any."""
    note = f"Not labelled, for want of room: {', '.join(unlabelled)} (an .html figure names every point on hover)."
    return "\n".join(filter(None, [chart.footnote, note if unlabelled else ""]))


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
        elif s.style in ("hollow", "ring"):
            marker = "D" if s.style == "hollow" else "o"
            ax.scatter(
                s.x,
                s.y,
                s=s.size**2,
                marker=marker,
                facecolors="none",
                edgecolors=s.color,
                linewidths=1.5,
                label=s.name,
            )
        else:  # the look's marker as a curve's: two fleets of one colour had been two alike blue dots
            marker = CURVE_LOOKS[s.look][1]
            ax.scatter(s.x, s.y, s=s.size**2, marker=marker, color=s.color, label=s.name, zorder=3)
    for log, axis, set_scale in ((panel.x_log, ax.xaxis, ax.set_xscale), (panel.y_log, ax.yaxis, ax.set_yscale)):
        if log:
            set_scale("log")
            _plain_log_ticks(axis)
    _mpl_ref_lines(ax, panel, zorder=0)
    named = sum(1 for s in panel.series if s.name) + len(panel.ref_lines)
    if named > LEGEND_INSIDE:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + named // 20, frameon=False)
    elif named:
        ax.legend(fontsize=8, loc="best")


LABEL_PT = 7.0  # font size of point labels
LABEL_GAP = 1.5  # points between a marker's edge and its label
#: where a label goes around its point, in order of preference: (side, vertical) with side -1 left, 0 centred above
#: or below, +1 right, and vertical the label's middle as a share of its height above the point's centre
_BESIDE = ((1, 0.0), (-1, 0.0), (1, 0.6), (1, -0.6), (-1, 0.6), (-1, -0.6), (0, 1.0), (0, -1.0))
#: farther places, joined to the point by a leader line: (distance from the marker's edge in points, angle in degrees)
_LEADER = tuple(
    (r, a) for r in (14.0, 26.0, 40.0, 60.0, 85.0) for a in (30, -30, 150, -150, 60, -60, 120, -120, 0, 180)
)
#: a place off a leader line is taken over one beside the point only where that one reads worse (Place.penalty)
LEADER_PENALTY = 3.0

Box = tuple[float, float, float, float]
POINT_LABEL = "_chipwise_point_label"  # the attribute that marks a point's label among an axes' texts


def _place_labels(ax: Any, series: Sequence[Series]) -> list[str]:
    """Label each point beside itself (greedy, top to bottom): inside the axes, clear of the legend, of the other
    labels and of the other labelled points, and nearer to its own point than to any other labelled one. Of those
    places, the one that reads best (clear of other markers, lines and curves: _Place.penalty); farther off with a
    leader line where every place beside it reads worse; or not at all where none is clear (the footnote names it,
    _write_matplotlib). Returns the labels left out."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    px = ax.figure.dpi / 72.0  # pixels per point
    frame = ax.get_window_extent()
    inner = (frame.x0 + 1, frame.y0 + 1, frame.x1 - 1, frame.y1 - 1)
    blocked: list[Box] = []
    legend = ax.get_legend()
    if legend is not None:
        lb = legend.get_window_extent()
        if _overlap((lb.x0, lb.y0, lb.x1, lb.y1), inner):
            blocked.append((lb.x0 - 2, lb.y0 - 2, lb.x1 + 2, lb.y1 + 2))
            # 'best' is worked out again at every draw, and labels are among what it avoids: keep it where it is
            legend.set_loc(tuple(ax.transAxes.inverted().transform((lb.x0, lb.y0))))
    items = [
        (x, y, t, s.size / 2 if s.style != "curve" else s.size / 4 + 0.5)
        for s in series
        for x, y, t in zip(s.x, s.y, s.labels, strict=False)
        if t and math.isfinite(x) and math.isfinite(y)
    ]
    anchors = [tuple(ax.transData.transform((x, y))) for x, y, _, _ in items]
    marks = [
        (*ax.transData.transform((x, y)), (s.size / 4 + 0.5 if s.style == "curve" else s.size / 2) * px)
        for s in series
        if s.style != "line"
        for x, y in zip(s.x, s.y, strict=True)
        if math.isfinite(x) and math.isfinite(y)
    ]
    labelled = [(qx, qy, r * px) for (qx, qy), (_, _, _, r) in zip(anchors, items, strict=True)]
    lines = [  # the segments of lines and curves, which a label is better not drawn across
        (*a, *b)
        for s in series
        if s.style in ("line", "curve")
        for a, b in pairwise(tuple(ax.transData.transform(xy)) for xy in zip(s.x, s.y, strict=True))
    ]
    prop = FontProperties(size=LABEL_PT)
    taken: list[Box] = []
    leaders: list[tuple[float, float, float, float]] = []
    left_out: list[str] = []
    order = sorted(range(len(items)), key=lambda k: (-anchors[k][1], anchors[k][0]))
    for k in order:
        x, y, text, radius = items[k]
        pxx, pyy = anchors[k]
        w_pt, h_pt, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
        width, height = (w_pt + 1.0) * px, (max(h_pt, LABEL_PT) + 2.0) * px
        reach = (radius + LABEL_GAP) * px
        own = (pxx, pyy)
        # the other labelled points, but those whose marker overlaps this one's (no place tells them apart)
        others = [
            q for j, q in enumerate(labelled) if j != k and math.hypot(q[0] - pxx, q[1] - pyy) >= q[2] + radius * px
        ]
        hidden = radius * px  # markers under this one's (a curve's dot at the point) are not read apart from it
        around = [m for m in marks if math.hypot(m[0] - pxx, m[1] - pyy) > hidden]
        place = _Place(inner, [*blocked, *taken], leaders, others, around, lines)
        beside = [(_beside_box(pxx, pyy, side, v, width, height, reach), False) for side, v in _BESIDE]
        far = [(_leader_box(pxx, pyy, r * px + reach, angle, width, height), r) for r, angle in _LEADER]
        far = [  # a leader line crosses no other label, and passes no other labelled point
            (b, r)
            for b, r in far
            if not any(_crosses(_segment(pxx, pyy, b), t) for t in taken)
            and not any(_crosses(_segment(pxx, pyy, b), (qx - q, qy - q, qx + q, qy + q)) for qx, qy, q in others)
        ]
        scored = [  # a leader line costs LEADER_PENALTY, and a little more the longer it is
            (place.penalty(box, own) + (LEADER_PENALTY + reach_pt / 100 if reach_pt else 0.0), n, box, bool(reach_pt))
            for n, (box, reach_pt) in enumerate([(b, 0.0) for b, _ in beside] + far)
            if place.clear(box) and (reach_pt or place.nearest(box, own))
        ]
        if not scored:
            left_out.append(text)
            continue
        _, _, chosen, leader = min(scored)
        taken.append(chosen)
        # the text's lower-left corner, as an offset in points from the point
        dx, dy = (chosen[0] - pxx) / px + 0.5, (chosen[1] - pyy) / px + 1.0
        extra: dict[str, Any] = {}
        if leader:
            leaders.append(_segment(pxx, pyy, chosen))
            extra["arrowprops"] = {"arrowstyle": "-", "color": "#888888", "linewidth": 0.6, "shrinkA": 1.0,
                                   "shrinkB": radius + 0.5}  # fmt: skip
        note = ax.annotate(
            text,
            (x, y),
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left",
            va="bottom",
            fontsize=LABEL_PT,
            color="#333333",
            annotation_clip=True,
            **extra,
        )
        note.set_in_layout(False)  # placed in the settled layout: it must not move the axes
        setattr(note, POINT_LABEL, True)  # removed where labels are placed again
    return left_out


@dataclass(frozen=True)
class _Place:
    """What a label's box must keep clear of: the axes' inner frame, boxes (the legend, placed labels), leader
    lines and the other labelled points' markers; and, where it can, every other marker (x, y, radius in px) and
    the segments of lines and curves."""

    inner: Box
    boxes: Sequence[Box]
    leaders: Sequence[tuple[float, float, float, float]]
    labelled: Sequence[tuple[float, float, float]]
    marks: Sequence[tuple[float, float, float]]
    lines: Sequence[tuple[float, float, float, float]]

    def clear(self, box: Box) -> bool:
        f = self.inner
        return (
            f[0] <= box[0] and box[2] <= f[2] and f[1] <= box[1] and box[3] <= f[3]
            and not any(_overlap(box, b) for b in self.boxes)
            and not any(_overlap(box, (x - r, y - r, x + r, y + r)) for x, y, r in self.labelled)
            and not any(_crosses(seg, box) for seg in self.leaders)
        )  # fmt: skip

    def penalty(self, box: Box, own: tuple[float, float]) -> float:
        """How badly a clear place reads: over another marker, its first letter nearer to another marker than to
        its own point (read as that one's label), across lines and curves."""
        over = any(_overlap(box, (x - r, y - r, x + r, y + r)) for x, y, r in self.marks)
        # a label is read from its first letter: "h200: 1 chip" ending at its point and beginning at a B200 dot
        # had read as B200's
        start = (box[0], (box[1] + box[3]) / 2)
        mine = math.hypot(start[0] - own[0], start[1] - own[1])
        nearer = any(math.hypot(start[0] - x, start[1] - y) - r < mine for x, y, r in self.marks)
        crossed = sum(_crosses(seg, box) for seg in self.lines)
        return 5.0 * over + 5.0 * nearer + min(crossed, 3)

    def nearest(self, box: Box, own: tuple[float, float]) -> bool:
        """Read with its own point: nearer to it than to any other labelled point's marker."""
        mine = _distance(box, *own)
        return all(_distance(box, x, y) - r > mine for x, y, r in self.labelled)


def _beside_box(px: float, py: float, side: int, v: float, width: float, height: float, reach: float) -> Box:
    """A label's box beside a point: to its right (side 1), left (-1) or centred above or below (0)."""
    if side == 0:
        y0 = py + reach if v > 0 else py - reach - height
        return (px - width / 2, y0, px + width / 2, y0 + height)
    x0 = px + reach if side > 0 else px - reach - width
    mid = py + v * height
    return (x0, mid - height / 2, x0 + width, mid + height / 2)


def _leader_box(px: float, py: float, dist: float, angle: float, width: float, height: float) -> Box:
    """A label's box `dist` pixels from a point in the direction `angle`, its near corner or edge towards it."""
    cx, cy = px + dist * math.cos(math.radians(angle)), py + dist * math.sin(math.radians(angle))
    dxs = math.cos(math.radians(angle))
    x0 = cx if dxs > 0.3 else cx - width if dxs < -0.3 else cx - width / 2
    dys = math.sin(math.radians(angle))
    y0 = cy if dys > 0.3 else cy - height if dys < -0.3 else cy - height / 2
    return (x0, y0, x0 + width, y0 + height)


def _segment(px: float, py: float, box: Box) -> tuple[float, float, float, float]:
    """The leader line from a point to the nearest point of its label's box."""
    return (px, py, min(max(px, box[0]), box[2]), min(max(py, box[1]), box[3]))


def _crosses(seg: tuple[float, float, float, float], box: Box) -> bool:
    """Whether a line segment passes through a box's interior (Liang-Barsky clipping)."""
    x0, y0, x1, y1 = seg
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
        if p == 0:
            if q <= 0:
                return False  # parallel to this edge and outside it
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo >= hi:
            return False
    return True


def _distance(box: Box, x: float, y: float) -> float:
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return math.hypot(dx, dy)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


#: a log axis spanning more decades than this labels only its powers of ten: the 2s and 5s of seven decades had run
#: together ("0.00050.0010.002")
LABELLED_DECADES = 3.0


def _plain_log_ticks(axis: Any) -> None:
    """Log-axis ticks as plain numbers (20, 50, 100), not powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    def label(v: float, _pos: int | None) -> str:
        lo, hi = sorted(axis.get_view_interval())
        wide = lo > 0 and math.log10(hi / lo) > LABELLED_DECADES
        return "" if wide and not math.isclose(math.log10(v), round(math.log10(v))) else f"{v:g}"

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(label))
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
        # on a white ground above the reference line: "83.8 GiB" had been drawn across the 96 GiB HBM line
        ground = {"facecolor": "white", "edgecolor": "none", "pad": 0.5}
        ax.annotate(text, (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7, bbox=ground,
                    zorder=3)  # fmt: skip
    if panel.ref_lines:
        _mpl_ref_lines(ax, panel, zorder=2)
        ax.legend(fontsize=8, loc="lower right")
    ax.margins(x=0.18)


def _mpl_ref_lines(ax: Any, panel: Panel, zorder: float) -> None:
    for (label, x), (dash, _) in zip(panel.ref_lines, _ref_dashes(len(panel.ref_lines)), strict=True):
        ax.axvline(x, color=REF_COLOR, linestyle=dash, linewidth=1.2, label=label, zorder=zorder)


def _ref_dashes(n: int) -> list[tuple[Any, str]]:
    return [REF_DASHES[i % len(REF_DASHES)] for i in range(n)]


# --- plotly -----------------------------------------------------------------------------------------------------


#: pixels above the plot area of an HTML figure: its title and, below it, the panels' titles
PLOTLY_TOP_PX = 80
#: the least height of an HTML figure's plot area, in pixels: room for a single bar with its value
PLOTLY_MIN_AREA_PX = 120


def _write_plotly(chart: Chart, path: Path) -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = len(chart.panels)
    fig = make_subplots(rows=1, cols=n, subplot_titles=[p.title for p in chart.panels], horizontal_spacing=0.12)
    shown: set[str] = set()  # legend groups with an entry: a fleet on two panels is one entry, which hides both
    for col, panel in enumerate(chart.panels, start=1):
        for trace in _plotly_traces(go, panel, shown):
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(title_text=panel.x_label, type="log" if panel.x_log else None, row=1, col=col)
        fig.update_yaxes(title_text=panel.y_label, type="log" if panel.y_log else None, row=1, col=col)
        if panel.bars is not None:
            fig.update_yaxes(autorange="reversed", row=1, col=col)
        dashes = _ref_dashes(len(panel.ref_lines))
        for i, ((label, x), (_, dash)) in enumerate(zip(panel.ref_lines, dashes, strict=True)):
            fig.add_vline(x=x, line_dash=dash, line_color=REF_COLOR, row=1, col=col)
            # the label as its own annotation: on a log axis plotly places an annotation at log10 of x (a shape at
            # x), and add_vline's own had put "SLO tpot_p99 50 ms" at 10^50 ms, widening the axis to it; a second
            # line's label above the first's
            fig.add_annotation(
                x=math.log10(x) if panel.x_log and x > 0 else x,
                y=1.0,
                yshift=13 * i,
                xref=f"x{col if col > 1 else ''}",
                yref=f"y{col if col > 1 else ''} domain",
                text=label,
                showarrow=False,
                xanchor="left",
                yanchor="bottom",
                font={"size": 10, "color": REF_COLOR},
            )
    # wrapped as the matplotlib footnote is (a 284-character line had run past the figure's edge), and the bottom
    # margin grown by its lines
    width = int(chart.width_in * 14)  # characters of 10 px text across the figure
    lines = [wrapped for line in chart.footnote.splitlines() for wrapped in textwrap.wrap(line, width) or [""]]
    extra = 14 * len(lines)
    bottom = 80 + extra if lines else 60
    # the top margin set (plotly's default is 100 px) and the plot area kept at least PLOTLY_MIN_AREA_PX: a
    # sensitivity chart of one figure, 154 px high with 100 above and 60 below, had a plot area of -6 px (none
    # drawn), of two 30 px, of three 65 px; they now read 260 px high, a plot area of 120 px
    height = int(chart.height_in * 100) + (extra + 20 if lines else 0)
    fig.update_layout(
        title={"text": chart.title, "x": 0.5},
        template="plotly_white",
        width=int(chart.width_in * 100),
        height=max(height, PLOTLY_TOP_PX + bottom + PLOTLY_MIN_AREA_PX),
        legend={"font": {"size": 11}},
        margin={"t": PLOTLY_TOP_PX, "b": bottom},
    )
    if lines:  # below the x-axis title, whatever the plot's height
        fig.add_annotation(
            text="<br>".join(lines),
            xref="paper",
            yref="paper",
            x=0,
            y=0,
            yshift=-60,
            xanchor="left",
            yanchor="top",
            showarrow=False,
            align="left",
            font={"size": 10},
        )
    fig.write_html(str(path), include_plotlyjs=True, full_html=True)  # plotly.js inline: works offline


def _plotly_traces(go: Any, panel: Panel, shown: set[str]) -> list[Any]:
    """The panel's traces; a series' legend entry only where its group (its fleet) has none yet in `shown`."""
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
        group = s.group or s.name
        legend = {"legendgroup": group or None, "showlegend": bool(s.name) and group not in shown}
        if legend["showlegend"]:
            shown.add(group)
        if s.style == "line":
            traces.append(
                go.Scatter(
                    x=list(s.x), y=list(s.y), mode="lines", name=s.name, line={"color": s.color}, opacity=0.6, **legend
                )
            )
            continue
        marker: dict[str, Any] = {"color": s.color, "size": s.size + 3, "symbol": CURVE_LOOKS[s.look][3]}
        if s.style == "curve":
            marker.update(size=s.size)
        if s.style == "hollow" or s.open_markers:
            marker.update(symbol="diamond-open", line={"width": 2, "color": s.color})
        elif s.style == "ring":
            marker.update(symbol="circle-open", line={"width": 2, "color": s.color})
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
                **legend,
            )
        )
    return traces
