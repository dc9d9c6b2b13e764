"""Figures of chipwise results: cost against time for a fleet ranking (the Pareto front highlighted), where one
training step's time and memory go, and serving throughput, latency and $/Mtok.

Every function takes the plain result dictionaries of `chipwise.api` (SI units), converts units only for display,
and writes the file named by `path`: .png or .svg (matplotlib) or .html (plotly, self-contained, works offline).

    import chipwise.api as cw
    from chipwise.interfaces import plots
    report = cw.plan_train("llama-3.1-70b", chips=4096, tokens=15e12, hardware=["h100-sxm", "trn2", "gb200"])
    plots.pareto_training(report, "pareto.png")
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chipwise.catalog.units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from chipwise.economics.pricing import catalog_estimate
from chipwise.errors import ChipwiseError
from chipwise.interfaces import format as fmt
from chipwise.interfaces.chart import (
    DOMINATED,
    FRONT,
    PALETTE,
    PROJECTED,
    Bars,
    Chart,
    NothingToDrawError,
    Panel,
    Series,
    Style,
    check_path,
    curve_style,
    log_scale_suits,
    write_chart,
)
from chipwise.planner.sensitivity import MOVES_NOTHING
from chipwise.serve.iteration import COMPONENT_LABELS
from chipwise.serve.plan import chip_count
from chipwise.train.explain import BREAKDOWN_LABELS

Coordinate = Callable[[Mapping[str, Any], Mapping[str, Any]], float]  # (point, its fleet row) -> value
PER_TOKENS = 1e12  # without a token count, a ranking is drawn per trillion tokens
PROJECTED_NOTE = "Projected (open diamonds): announced, not shipping; figures projected or estimated."
ESTIMATE_MARK = " §"  # a price that is a catalog estimate, marked as the ranking table marks it
CARRIED_MARK = " ‡"  # efficiencies carried from a predecessor's family, marked as the ranking table marks them
UNFITTED_MARK = " †"  # a family's unfitted prior efficiencies, marked as the ranking table marks them


def projected_bars_note(result: Mapping[str, Any]) -> str:
    """PROJECTED_NOTE of a figure of bars, which has no diamonds (it had read "Projected (open diamonds)" under the
    bars of a trn4 prediction): the projected chips named, '' where there are none."""
    if not result.get("projected"):
        return ""
    names = [str(c) for c in result.get("projected_chips") or [result.get("hardware", "?")]]
    one = len(names) == 1
    return (
        f"Projected: {', '.join(names)} {'is' if one else 'are'} announced, not shipping; "
        f"{'its' if one else 'their'} figures are projected or estimated."
    )


def _model(report: Mapping[str, Any]) -> str:
    """A report's model as the CLI's titles name it (format.model_label), '?' where it names none."""
    return fmt.model_label(report) if report.get("model") else "?"


def _check_kind(data: Any, drawer: str, kinds: Sequence[str], what: str) -> None:
    """Refuse in one line, naming what a figure draws and what it was given, a result of another kind or not a
    dictionary: a serving prediction given to breakdown_training had raised KeyError 'dp', a training prediction
    given to sensitivity_chart KeyError 'metric', a plan_serve report given to pareto_training read 'no priced
    result'. A result without a kind (built by hand, several side by side) is drawn as before."""
    if not isinstance(data, Mapping):  # as plot's own check
        raise ChipwiseError(
            f"no plot for {type(data).__name__}: {drawer} draws a result dictionary of {what}. Fix: pass what "
            f"chipwise.api returns, e.g. {drawer}(cw.predict(...), 'out.png')."
        )
    kind = str(data.get("kind") or "").replace("_", "-")
    if kind and kind not in kinds:
        raise ChipwiseError(
            f"no plot for a result of kind '{kind}': {drawer} draws {what}. Fix: draw it with plots.plot(result, "
            "path), which picks the figure of its kind."
        )


def pareto_front(xs: Sequence[float], ys: Sequence[float]) -> list[int]:
    """Indices of the points that no other point beats on both axes (both minimised), in increasing x.

    A point is dominated when another is no worse on both axes and better on one. Identical points are kept
    together; NaN or infinite points are never on the front. One sort and one sweep: O(n log n).
    """
    valid = [i for i in range(len(xs)) if math.isfinite(xs[i]) and math.isfinite(ys[i])]
    front: list[int] = []
    best_y = math.inf
    last: tuple[float, float] | None = None
    for i in sorted(valid, key=lambda i: (xs[i], ys[i])):
        if ys[i] < best_y:
            front.append(i)
            best_y = ys[i]
            last = (xs[i], ys[i])
        elif (xs[i], ys[i]) == last:
            front.append(i)
    return front


@dataclass(frozen=True)
class TrainPoint:
    """One (hardware, plan) row of a ranking in display units."""

    index: int
    label: str
    days: float
    musd: float
    projected: bool
    hover: str
    estimated: bool = False  # priced by a catalog estimate (no rental offer), as the table's § says


def estimated_price(r: Mapping[str, Any]) -> bool:
    """Whether a ranking row is priced by a catalog estimate (no offer found for its chip or system; a --set price is
    the user's): the test the ranking table makes for its § mark (it had marked a --set price the table does not)."""
    return catalog_estimate(r.get("price_source"))


def expected(r: Mapping[str, Any], key: str) -> float:
    """The expected (goodput-adjusted: failures, restarts, spares) figure when the result has one, else the ideal."""
    value = r.get(f"expected_{key}")
    return _float(value) if value is not None else _float(r.get(key))


def uses_expected(report: Mapping[str, Any]) -> bool:
    return any(r.get("expected_cost_usd") is not None for r in report.get("results", []))


def training_points(report: Mapping[str, Any]) -> tuple[list[TrainPoint], list[str]]:
    """The plottable rows of a `plan_train` report (days, $M) and the names of rows left out (no price).

    With a token count the axes are the whole run; without one, the run of `PER_TOKENS` tokens. Expected figures
    (goodput-adjusted) are used where the results have them, as in the ranking table.
    """
    whole_run = bool(report.get("tokens"))
    # the hover says what the axes say (it had read "time 2.1 days, cost $1.2M", of 1 T tokens, as the whole run)
    per = "" if whole_run else f" per {fmt.count(PER_TOKENS)} tokens"
    points: list[TrainPoint] = []
    missing: list[str] = []
    for i, r in enumerate(report.get("results", [])):
        name = str(r.get("hardware", f"#{i + 1}"))
        if int(r.get("plan_rank", 1)) > 1:
            name += f" plan {r['plan_rank']}"
        if whole_run and r.get("time_to_train_s") is not None:
            seconds, usd = expected(r, "time_to_train_s"), expected(r, "cost_usd")
        else:
            goodput = _float(r.get("goodput", 1.0))
            seconds = PER_TOKENS / _float(r.get("tokens_per_s")) / (goodput if goodput > 0 else math.nan)
            usd = expected(r, "usd_per_million_tokens") * PER_TOKENS / 1e6
        if not (math.isfinite(usd) and math.isfinite(seconds)):
            missing.append(name)
            continue
        projected = bool(r.get("projected"))
        estimated = estimated_price(r)
        # ‡ as the table marks it (train_views._hardware): 'mi455x ‡' in the table had been 'mi455x §' here
        carried = CARRIED_MARK if r.get("efficiency_carried_from") else ""
        carried += UNFITTED_MARK if r.get("efficiency_unfitted") else ""
        marks = (" (projected)" if projected else "") + carried + (ESTIMATE_MARK if estimated else "")
        label = name + marks
        hover = "<br>".join(
            [
                # the hover names the point as its label does (it had read '<b>trn2</b> - trn2.48xlarge' beside the
                # label 'trn2 †'; it now reads '<b>trn2</b> † - trn2.48xlarge', as the page's tooltip does)
                f"<b>{name}</b>{marks} - {r.get('system', '')}",
                f"plan {fmt.plan(r['plan'])}" if "plan" in r else "",
                f"time {fmt.duration(seconds)}, cost {fmt.usd(usd)}{per}" + (" (price estimated)" if estimated else ""),
                f"MFU {fmt.percent(r['mfu'])}" if "mfu" in r else "",
            ]
        )
        points.append(TrainPoint(i, label, seconds / SECONDS_PER_DAY, usd / 1e6, projected, hover, estimated))
    return points, missing


def pareto_training(report: Mapping[str, Any], path: str | Path) -> Path:
    """Cost ($M) against time to train (days) of every (hardware, plan) in a `plan_train` report.

    The Pareto front (nothing else is both faster and cheaper) is drawn as a line through filled blue points;
    dominated fleets are grey; projected products are open orange diamonds labelled "projected"; a fleet priced
    by a catalog estimate (no rental offer, § in the ranking table) is an open circle labelled §, with the table's
    footnote; a fleet whose efficiencies are carried from a predecessor's family is labelled ‡, and one whose family
    runs on unfitted prior efficiencies †, as the table marks them, each with its footnote.
    """
    _check_kind(report, "pareto_training", ("plan-train",), "a plan_train report (kind 'plan-train')")
    check_path(path)
    points, missing = training_points(report)
    if not points:
        raise NothingToDrawError(
            "the ranking has no priced result to plot. Fix: choose hardware with a price in the catalog "
            "(see 'chipwise catalog list') or another --pricing."
        )
    on_front = set(pareto_front([p.days for p in points], [p.musd for p in points]))
    front_pts = sorted((p for k, p in enumerate(points) if k in on_front), key=lambda p: p.days)
    t_size, t_unit = fmt.unit_for([p.days * SECONDS_PER_DAY for p in points], TIME_UNITS)
    usd_size, usd_unit = fmt.unit_for([p.musd * 1e6 for p in points], COST_UNITS)
    days_per, musd_per = SECONDS_PER_DAY / t_size, 1e6 / usd_size  # axis units per day and per $M

    def xs(pts: Sequence[TrainPoint]) -> list[float]:
        return [p.days * days_per for p in pts]

    def ys(pts: Sequence[TrainPoint]) -> list[float]:
        return [p.musd * musd_per for p in pts]

    series = [Series("Pareto front", xs(front_pts), ys(front_pts), style="line", color=FRONT)]
    shipping = [(k in on_front, p) for k, p in enumerate(points) if not p.projected]
    groups: list[tuple[str, list[TrainPoint], Style, str]] = [
        ("on the front", [p for front, p in shipping if front and not p.estimated], "point", FRONT),
        ("on the front, price estimated §", [p for front, p in shipping if front and p.estimated], "ring", FRONT),
        ("dominated", [p for front, p in shipping if not front and not p.estimated], "point", DOMINATED),
        ("dominated, price estimated §", [p for front, p in shipping if not front and p.estimated], "ring", DOMINATED),
        ("projected", [p for p in points if p.projected], "hollow", PROJECTED),
    ]
    for name, pts, style, color in groups:
        if pts:
            series.append(
                Series(
                    name,
                    xs(pts),
                    ys(pts),
                    style=style,
                    color=color,
                    labels=[p.label for p in pts],
                    hover=[p.hover for p in pts],
                    size=8 if name.startswith("on the front") else 6,
                )
            )
    per = "" if report.get("tokens") else f" per {fmt.count(PER_TOKENS)} tokens"
    exp = "expected " if uses_expected(report) else ""
    panel = Panel(
        title="",
        x_label=f"{exp}time to train{per} ({t_unit})",
        y_label=f"{exp}cost{per} ({usd_unit}, {report.get('pricing', 'on-demand')})",
        series=series,
        x_log=log_scale_suits(xs(points)),
        y_log=log_scale_suits(ys(points)),
    )
    notes = ["Pareto front: no other fleet is both faster and cheaper."]
    if exp:
        notes.append("Expected = goodput-adjusted (failures, restarts, spare chips).")
    if any(p.projected for p in points):
        notes.append(PROJECTED_NOTE)
    estimated = [str(report["results"][p.index].get("hardware", p.label)) for p in points if p.estimated]
    if estimated:  # the ranking table's footnote to its § mark
        notes.append(
            f"{fmt.estimate_note(estimated, 'price_source', report.get('pricing', ''))}; drawn as open circles."
        )
    drawn = [report["results"][p.index] for p in points]
    notes.extend(
        f"{note}." for note in (fmt.carried_efficiency_note(drawn), fmt.unfitted_efficiency_note(drawn)) if note
    )
    if missing:
        notes.append(f"Not plotted (no price or no finite figure): {', '.join(missing)}.")
    skipped = [str(s.get("hardware")) for s in report.get("skipped", [])]
    if skipped:
        notes.append(f"Not ranked (no plan fits): {', '.join(skipped)}.")
    return write_chart(Chart(_workload_title(report) + ": cost vs time to train", [panel], "\n".join(notes)), path)


#: the units of a training ranking's axes, largest first, as (size in seconds or dollars, name)
TIME_UNITS: tuple[tuple[float, str], ...] = (
    (SECONDS_PER_DAY, "days"),
    (SECONDS_PER_HOUR, "h"),
    (60.0, "min"),
    (1.0, "s"),
)
COST_UNITS: tuple[tuple[float, str], ...] = ((1e6, "$M"), (1e3, "$k"), (1.0, "$"))
# (a 94-second run on 8 chips had been drawn at 0.00108 days, and $3 as "3.0" under a "1e-6" offset of $M)


def _workload_title(report: Mapping[str, Any]) -> str:
    tokens = f", {fmt.count(float(report['tokens']))} tokens" if report.get("tokens") else ""
    return f"{_model(report)} on {int(report.get('chips', 0)):,} chips, {report.get('precision', '')}{tokens}"


def breakdown_training(result: Mapping[str, Any], path: str | Path, memory: bool = True) -> Path:
    """Where one training step's time goes (seconds per component) and, with `memory`, the memory per chip."""
    _check_kind(result, "breakdown_training", ("train",), "a training prediction (kind 'train')")
    check_path(path)
    panels = [_step_panel(result)]
    if memory and result.get("memory_breakdown_gib"):
        panels.append(_memory_panel(result))
    return write_chart(
        Chart(_prediction_title(result), panels, projected_bars_note(result), height_in=4.5),
        path,
    )


def memory_training(result: Mapping[str, Any], path: str | Path) -> Path:
    """The memory per chip of one training prediction, by component, against the chip's HBM capacity."""
    _check_kind(result, "memory_training", ("train",), "a training prediction (kind 'train')")
    check_path(path)
    note = projected_bars_note(result)
    return write_chart(Chart(_prediction_title(result), [_memory_panel(result)], note, 7.0, 4.5), path)


def _prediction_title(r: Mapping[str, Any]) -> str:
    hw = str(r.get("hardware", "?")) + (" (projected)" if r.get("projected") else "")
    plan = f": {fmt.plan(r['plan'])}" if "plan" in r else ""
    return f"{_model(r)} on {int(r.get('chips', 0)):,} x {hw}, {r.get('precision', '')}{plan}"


def _step_panel(r: Mapping[str, Any]) -> Panel:
    breakdown = {k: float(v) for k, v in (r.get("breakdown") or {}).items() if float(v) > 0}
    if not breakdown:
        raise NothingToDrawError("the result has no step-time breakdown to plot. Fix: plot a training prediction.")
    step = float(r.get("step_time_s") or sum(breakdown.values()))
    return Panel(
        title=f"step time {fmt.duration(step)}",
        x_label="seconds per step",
        bars=_time_shares(breakdown, BREAKDOWN_LABELS, step, 1.0, FRONT),
    )


def _time_shares(parts: Mapping[str, float], labels: Mapping[str, str], total: float, scale: float, color: str) -> Bars:
    """Where a step's time goes, largest first: each part's time (x `scale` on the axis) and its share of `total`."""
    items = sorted(parts.items(), key=lambda kv: -kv[1])
    return Bars(
        [labels.get(k, k) for k, _ in items],
        [scale * v for _, v in items],
        color,
        [f"{fmt.duration(v)} ({fmt.percent(v / total)})" for _, v in items],
    )


def _memory_panel(r: Mapping[str, Any]) -> Panel:
    parts = {k: float(v) for k, v in (r.get("memory_breakdown_gib") or {}).items() if float(v) > 0}
    if not parts:
        raise NothingToDrawError("the result has no memory breakdown to plot. Fix: plot a training prediction.")
    items = sorted(parts.items(), key=lambda kv: -kv[1])
    cap = r.get("memory_capacity_gib")
    total = float(r.get("memory_per_chip_gib") or sum(parts.values()))
    return Panel(
        title=f"memory per chip {total:.1f} GiB" + (f" of {float(cap):.0f} GiB" if cap else ""),
        x_label="GiB per chip",
        bars=Bars([k for k, _ in items], [v for _, v in items], PALETTE[2], [f"{v:.1f} GiB" for _, v in items]),
        ref_lines=[(f"HBM capacity {float(cap):.0f} GiB", float(cap))] if cap else (),
    )


# --- serving ----------------------------------------------------------------------------------------------------


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


#: the figures of a latency, in the order one is read where the percentile asked for is absent
LATENCY_FIGURES = ("p50", "p90", "p99", "mean")


def latency(value: Any, percentile: str = "p50") -> float:
    """A latency given as seconds or as {p50, p90, p99}: the percentile asked for, else the nearest one present."""
    return latency_at(value, percentile)[0]


def latency_at(value: Any, percentile: str = "p50") -> tuple[float, str]:
    """`latency` and which figure it read: the percentile asked for or the one it fell back to ('mean' for a
    `plan serve` row's TPOT), '' for plain seconds, which name none. An axis is labelled with it: a plan's mean TPOT
    and p99 TTFT had been drawn under the 'p50' asked for."""
    if isinstance(value, Mapping):
        for key in (percentile, *LATENCY_FIGURES):
            if key in value:
                return _float(value[key]), key
        return math.nan, ""
    return _float(value), ""


def _per_chip_throughput(point: Mapping[str, Any], row: Mapping[str, Any]) -> float:
    if "output_tokens_per_s_per_chip" in point:
        return _float(point["output_tokens_per_s_per_chip"])
    chips = _float(point.get("chips", row.get("chips")))
    return _float(point.get("output_tokens_per_s")) / chips if chips > 0 else math.nan


def serving_rows(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The per-fleet results of a serving report, or the result itself when given one prediction."""
    results = report.get("results")
    if isinstance(results, list):
        fronts = report.get("pareto")
        fronts = fronts if isinstance(fronts, Mapping) else {}
        return [_as_prediction(r, fronts) for r in results if isinstance(r, Mapping)]
    return [report] if "hardware" in report else []


def _as_prediction(row: Mapping[str, Any], fronts: Mapping[str, Any]) -> Mapping[str, Any]:
    """A `plan serve` row in a prediction's keys: its figures are the search's estimate, a mean TPOT and a p99 TTFT
    (keyed so, for the axes to name them), and its curve the chip's front from the report's `pareto` (a split
    deployment has none)."""
    est = row.get("estimate")
    if not isinstance(est, Mapping) or "tpot_s" in row:
        return row
    front = None if row.get("disaggregated") else fronts.get(str(row.get("hardware")))
    return {
        **row,
        "tpot_s": {"mean": est.get("tpot_s")},
        "ttft_s": {"p99": est.get("ttft_p99_s")},
        "output_tokens_per_s": est.get("output_tokens_per_s"),
        "pareto": front or [],
    }


def _serving_series(
    report: Mapping[str, Any], metric: str, scale: float, percentile: str, y_of: Coordinate
) -> tuple[list[Series], str]:
    """For each fleet: its curve from the `pareto` list (if any) and its chosen point, skipping what is absent, with
    the latency `metric` (x `scale`) at `percentile` on x; and the axis's name for the figures drawn ('p50', 'mean',
    'p99 / p50' where some points lack the percentile asked for, '' for plain seconds)."""
    series: list[Series] = []
    drawn: set[str] = set()  # the figures read

    def point(p: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[float, float]:
        x, stat = latency_at(p.get(metric), percentile)
        y = y_of(p, row)
        if stat and math.isfinite(x) and math.isfinite(y):
            drawn.add(stat)
        return x * scale, y

    for i, row in enumerate(serving_rows(report)):
        name = str(row.get("hardware", row.get("system", f"#{i + 1}")))
        projected = bool(row.get("projected"))
        label = name + (" (projected)" if projected else "")
        style = curve_style(i)  # its look as well as its colour: fleets 0 and 10 had been alike blue dots
        curve = [point(p, row) for p in row.get("pareto") or [] if isinstance(p, Mapping)]
        curve = sorted((x, y) for x, y in curve if math.isfinite(x) and math.isfinite(y))
        group = f"{label} #{i + 1}"  # the fleet's curve and point on every panel: one legend entry in HTML
        if curve:
            xs, ys = [x for x, _ in curve], [y for _, y in curve]
            series.append(Series(label, xs, ys, style="curve", open_markers=projected, group=group, **style))
        x, y = point(row, row)
        if math.isfinite(x) and math.isfinite(y):
            series.append(
                Series(
                    "" if curve else label,
                    [x],
                    [y],
                    style="hollow" if projected else "point",
                    labels=[label],
                    hover=[f"<b>{label}</b><br>{_serve_plan(row)}"],
                    size=9,
                    group=group,
                    **style,
                )
            )
    return series, " / ".join(k for k in dict.fromkeys((percentile, *LATENCY_FIGURES)) if k in drawn)


def _spans(series: Sequence[Series]) -> bool:
    """A log latency axis where the series' latencies span more than `log_scale_suits`'s factor: TPOT from 5 to 360
    ms had sat in the left seventh of a linear axis."""
    return log_scale_suits([x for s in series for x in s.x if math.isfinite(x)])


def _latency_label(what: str, stat: str, unit: str) -> str:
    """'time per output token, p50 (ms)': the axis of a latency, with the figures `_serving_series` drew."""
    return f"{what}{', ' + stat if stat else ''} ({unit})"


def _serve_plan(row: Mapping[str, Any]) -> str:
    plan = row.get("plan")
    if isinstance(plan, Mapping):
        return " ".join(f"{k}={v}" for k, v in plan.items())
    return str(plan or "")


def _serving_title(report: Mapping[str, Any], what: str) -> str:
    if report.get("model"):
        return f"{_model(report)} serving: {what}"
    # results side by side name their model where they share one, and say so where they do not (the first row's
    # had titled them all)
    models = list(dict.fromkeys(_model(r) for r in serving_rows(report) if r.get("model")))
    return f"{models[0] if len(models) == 1 else 'several models'} serving: {what}"


def _need(series: list[Series], what: str) -> None:
    if not series:
        raise NothingToDrawError(
            f"the serving result has no points with {what}. Fix: plot a serving prediction or plan report."
        )


#: the results the serving figures draw side by side, and how their errors name them
SERVING_KINDS = ("serve", "plan-serve")
SERVING_WHAT = "serving results (a serving prediction, a plan_serve report, or several predictions side by side)"


def _check_percentile(percentile: str) -> None:
    """A percentile the serving figures read ('p75' had drawn p50, the axis saying so, with no word)."""
    if percentile not in LATENCY_FIGURES:
        raise ChipwiseError(
            f"no latency figure '{percentile}' to draw: results hold {', '.join(LATENCY_FIGURES)}. Fix: use one of "
            "those."
        )


def serving_throughput_latency(report: Mapping[str, Any], path: str | Path, percentile: str = "p50") -> Path:
    """Output tokens/s per chip against time per output token (and against time to first token when present)."""
    _check_kind(report, "serving_throughput_latency", SERVING_KINDS, SERVING_WHAT)
    _check_percentile(percentile)
    check_path(path)
    tpot_series, tpot_stat = _serving_series(report, "tpot_s", 1e3, percentile, _per_chip_throughput)
    ttft_series, ttft_stat = _serving_series(report, "ttft_s", 1.0, percentile, _per_chip_throughput)
    _need(tpot_series or ttft_series, "latency and output tokens/s per chip")
    panels = []
    tput = "output tokens/s per chip"
    if tpot_series:
        x_label = _latency_label("time per output token", tpot_stat, "ms")
        panels.append(Panel("", x_label, tput, tpot_series, x_log=_spans(tpot_series)))
    if ttft_series:
        x_label = _latency_label("time to first token", ttft_stat, "s")
        panels.append(Panel("", x_label, tput, ttft_series, x_log=_spans(ttft_series)))
    title = _serving_title(report, "throughput vs latency")
    return write_chart(Chart(title, panels, _serving_note(report), 6.0 * len(panels) + 1, 5.0), path)


def serving_cost_latency(report: Mapping[str, Any], path: str | Path, percentile: str = "p50") -> Path:
    """Dollars per million output tokens against time per output token."""
    _check_kind(report, "serving_cost_latency", SERVING_KINDS, SERVING_WHAT)
    _check_percentile(percentile)
    check_path(path)

    def cost(p: Mapping[str, Any], row: Mapping[str, Any]) -> float:
        return _float(p.get("cost_usd_per_mtok"))

    series, stat = _serving_series(report, "tpot_s", 1e3, percentile, cost)
    _need(series, "tpot_s and cost_usd_per_mtok")
    x_label = _latency_label("time per output token", stat, "ms")
    # cost_usd_per_mtok: per output token
    panel = Panel("", x_label, "$ per million output tokens", series, x_log=_spans(series))
    title = _serving_title(report, "$ per million output tokens vs TPOT")
    return write_chart(Chart(title, [panel], _serving_note(report), 8, 5.5), path)


def pareto_serving_plan(report: Mapping[str, Any], path: str | Path) -> Path:
    """Output tokens/s per chip against time per output token for a `plan_serving` report: each chip's
    throughput-latency front at saturation (the estimate) as a curve, and the simulated check of the cheapest
    options as points, labelled with their plan, at the percentile of TPOT the SLO names (its tpot_p99 target is
    drawn as a line: a point at p50 beside it had sat left of the line while missing it at p99; p50 without a TPOT
    target), the highest where it names several, each drawn as a line (only the one written first had been drawn,
    and the points' percentile had been its: tpot_p50=15ms,tpot_p99=25ms drew p50, the same SLO written the other
    way round p99). Projected chips are open diamonds."""
    _check_kind(report, "pareto_serving_plan", ("plan-serve",), "a plan_serve report (kind 'plan-serve')")
    check_path(path)
    targets = slo_targets(report, "tpot")
    percentile = targets[-1][0].split("_", 1)[1] if targets else "p50"
    fronts = report.get("pareto") or {}
    projected = {str(r.get("hardware")) for r in report.get("results", []) if r.get("projected")}
    series: list[Series] = []
    styles: dict[str, dict[str, Any]] = {}
    for i, (chip, front) in enumerate(fronts.items()):
        style = curve_style(i)
        styles[chip] = style
        pts = sorted(
            (p["tpot_s"] * 1e3, p["output_tokens_per_s_per_chip"])
            for p in front
            if math.isfinite(p["tpot_s"]) and p["output_tokens_per_s_per_chip"] > 0
        )
        if pts:
            label = chip + (" (projected)" if chip in projected else "")
            xs, ys = [x for x, _ in pts], [y for _, y in pts]
            series.append(Series(label, xs, ys, style="curve", open_markers=chip in projected, **style))
    elsewhere: list[str] = []  # points whose result has no figure at that percentile, drawn at what it has
    for v in report.get("verified", []):
        tpot = v.get("tpot_s")
        x, y = latency(tpot, percentile) * 1e3, _float(v.get("output_tokens_per_s_per_chip"))
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        name = str(v.get("hardware"))
        if not (isinstance(tpot, Mapping) and percentile in tpot):
            elsewhere.append(name)
        proj = bool(v.get("projected")) or name in projected
        met = {True: "SLO met", False: "SLO missed"}.get(v.get("slo_met"), "no SLO")
        chips = _float(v.get("chips"))
        label = f"{name}: {chip_count(chips)}, {met}"
        series.append(
            Series(
                "",
                [x],
                [y],
                style="hollow" if proj else "point",
                labels=[label],
                hover=[f"<b>{label}</b><br>TPOT {percentile} {fmt.latency(x / 1e3)}<br>{_serve_plan(v)}"],
                size=9,
                **styles.get(name.rsplit(">", maxsplit=1)[-1], {"color": PROJECTED if proj else FRONT}),
            )
        )
    _need(series, "a throughput-latency front")
    panel = Panel(
        "",
        f"time per output token (ms, log scale): points at {percentile}, curves the estimate",
        "output tokens/s per chip",
        series,
        x_log=True,  # the fronts span 5 ms to seconds; the SLO's region is their first tens of ms
        ref_lines=[(f"SLO {k} {v * 1e3:g} ms", v * 1e3) for k, v in targets],
    )
    which = f"TPOT {percentile}, the SLO's percentile" if targets else f"TPOT {percentile}"
    if len(targets) > 1:
        drawn = " and ".join(k for k, _ in targets)
        which = f"TPOT {percentile}, the highest of the SLO's percentiles; dashed lines: its {drawn} targets"
    notes = [
        "Curves: each chip's best output tokens/s per chip at a given TPOT (steady-state estimate, saturated);"
        f" points: the simulated check of the cheapest fleets ({which})."
    ]
    if elsewhere:
        shown = ", ".join(dict.fromkeys(elsewhere))
        notes.append(f"No TPOT {percentile} in the result of {shown}: drawn at the figure it has.")
    if projected:
        notes.append(PROJECTED_NOTE)
    title = _serving_title(report, "throughput vs time per output token")
    return write_chart(Chart(title, [panel], "\n".join(notes), 8.5, 5.5), path)


def prediction_serving(result: Mapping[str, Any], path: str | Path) -> Path:
    """One serving prediction: its TTFT and TPOT percentiles against the SLO, one replica's KV-cache utilisation
    over the simulated run (a split's decode replica), and where a steady iteration's and one prompt's prefill's
    time goes."""
    _check_kind(result, "prediction_serving", ("serve",), "a serving prediction (kind 'serve')")
    check_path(path)
    steady = _iteration_panel(result)
    if steady is None:
        raise NothingToDrawError("the result has no iteration breakdown to plot. Fix: plot a serving prediction.")
    # an end-to-end panel where the SLO has an end-to-end target, for its line (e2e_p99=30s had been drawn nowhere,
    # the footnote saying every target was a dashed line)
    e2e = _latency_panel(result, "e2e") if slo_targets(result, "e2e") else None
    latencies = (_latency_panel(result, "ttft"), _latency_panel(result, "tpot"), e2e)
    panels = [p for p in (*latencies, _kv_panel(result)) if p]
    panels += [steady, *filter(None, [_iteration_panel(result, "prefill_breakdown")])]
    load = result.get("load") or {}
    notes = [f"Load: {load.get('label', '?')}"]
    if "utilisation" in load:
        notes[0] += f", {fmt.load_share(load)}"
    goodput = (result.get("goodput") or {}).get("fraction")
    if result.get("slo") and goodput is not None:
        notes.append(f"Goodput: {fmt.percent(_float(goodput))} of requests within every SLO target (dashed lines).")
    if result.get("projected"):
        notes.append(projected_bars_note(result))
    hw = f"{fmt.serving_fleet(result)} ({_engines(result)})"
    title = f"{_model(result)} on {hw}, {result.get('precision', '')} weights"
    return write_chart(Chart(title, panels, "\n".join(notes), 4.0 * len(panels) + 1.0, 4.5), path)


def _engines(result: Mapping[str, Any]) -> str:
    """A prediction's engine: 'trtllm', or a split's 'neuron prefill, trtllm decode' where its pools' differ."""
    engines = str(result.get("engine", "?")).split(">")
    return engines[0] if len(set(engines)) == 1 else f"{engines[0]} prefill, {engines[1]} decode"


_LATENCY_TITLES = {"ttft": "time to first token", "tpot": "time per output token", "e2e": "end-to-end latency"}
#: each latency panel's axis: (unit, per second)
_LATENCY_UNITS = {"ttft": ("ms", 1e3), "tpot": ("ms", 1e3), "e2e": ("s", 1.0)}


def _latency_panel(r: Mapping[str, Any], metric: str) -> Panel | None:
    stats = r.get(f"{metric}_s")
    if not isinstance(stats, Mapping):
        return None
    keys = [k for k in ("p50", "p90", "p99", "mean") if math.isfinite(_float(stats.get(k)))]
    if not keys:
        return None
    unit, scale = _LATENCY_UNITS[metric]
    return Panel(
        title=_LATENCY_TITLES[metric],
        x_label=unit,
        bars=Bars(
            keys,
            [_float(stats[k]) * scale for k in keys],
            FRONT,
            [fmt.duration(_float(stats[k])) for k in keys],
        ),
        ref_lines=[(f"SLO {k} {fmt.duration(v)}", v * scale) for k, v in slo_targets(r, metric)],
    )


def slo_targets(result: Mapping[str, Any], metric: str) -> list[tuple[str, float]]:
    """The SLO's targets of one latency (`metric` 'ttft', 'tpot' or 'e2e') as (key, seconds), by percentile (p50
    first) whatever the order they were written in."""
    slo = result.get("slo")
    found = [(str(k), _float(v)) for k, v in (slo if isinstance(slo, Mapping) else {}).items()]
    mine = [(k, v) for k, v in found if k.startswith(f"{metric}_") and math.isfinite(v)]
    order = {f"{metric}_{stat}": i for i, stat in enumerate(LATENCY_FIGURES)}
    return sorted(mine, key=lambda kv: order.get(kv[0], len(order)))


def _kv_panel(r: Mapping[str, Any]) -> Panel | None:
    """One replica's KV cache over the simulated run (a split's decode replica, where the cache limits it), titled
    with that replica's own mean and peak; a result saved before the series named its replica, replica 0 with the
    mean and peak over all replicas."""
    kv = r.get("kv_cache_utilisation") or {}
    series = kv.get("series") or kv.get("series_replica0") or {}
    t, u = list(series.get("t_s") or []), list(series.get("utilisation") or [])
    if len(t) < 2:
        return None
    if "series" in kv:
        role = str(series.get("role", "both"))
        replica = f"{role} replica" if role != "both" else "replica"
        mean, peak = fmt.percent(_float(series.get("mean"))), fmt.percent(_float(series.get("peak")))
        title = f"KV cache, {replica} {series.get('replica', 0)} (mean {mean}, peak {peak})"
    else:
        mean, peak = fmt.percent(_float(kv.get("mean"))), fmt.percent(_float(kv.get("peak")))
        title = f"KV cache, replica 0 (mean {mean}, peak {peak} over all replicas)"
    curve = Series("", t, [100.0 * v for v in u], style="line", color=PALETTE[2])
    return Panel(title, "simulated time (s)", "% of the KV cache in use", [curve])


def _iteration_panel(r: Mapping[str, Any], key: str = "breakdown") -> Panel | None:
    """Where a steady iteration's (`breakdown`) or one prompt's prefill's (`prefill_breakdown`) time goes."""
    parts = {k: _float(v) for k, v in (r.get(key) or {}).items() if _float(v) > 0}
    if not parts:
        return None
    total = sum(parts.values())
    what, unit = (
        ("a steady iteration", "iteration") if key == "breakdown" else ("one prompt's prefill, alone", "prompt")
    )
    return Panel(
        title=f"{what}: {fmt.duration(total)}",
        x_label=f"ms per {unit}",
        bars=_time_shares(parts, COMPONENT_LABELS, total, 1e3, PALETTE[1]),
    )


#: what a `plan serve` report's points and curves are where a serving figure draws it (its axes name the figures)
PLAN_ESTIMATE_NOTE = (
    "Points: each option's steady-state estimate from the search (TPOT the mean step, TTFT p99); curves: each chip's"
    " estimated front. 'chipwise plan serve --plot' draws the simulated check."
)


def _serving_note(report: Mapping[str, Any]) -> str:
    notes = [PLAN_ESTIMATE_NOTE] if report.get("kind") == "plan-serve" else []
    if any(r.get("projected") for r in serving_rows(report)):
        notes.append(PROJECTED_NOTE)
    return "\n".join(notes)


def sensitivity_chart(result: Mapping[str, Any], path: str | Path, top: int = 12) -> Path:
    """Which figures matter most for a scenario (a sensitivity result): each figure's elasticity of the ranked
    metric, largest first, as bars of its size, the sign and the metric's move at +step written beside each."""
    _check_kind(result, "sensitivity_chart", ("sensitivity",), "a sensitivity result (kind 'sensitivity')")
    check_path(path)
    ranked = str(result["metric"])
    label = result["metrics"][ranked]["label"]
    step = float(result["step"])
    rows = [r for r in result.get("figures", []) if abs(r["elasticity"].get(ranked) or 0.0) >= MOVES_NOTHING][:top]
    if not rows:
        raise NothingToDrawError(f"no figure moves {label}: nothing to plot. Fix: rank by another metric (--metric).")

    def text(row: Mapping[str, Any]) -> str:
        plus = row["change"].get("plus", {}).get(ranked)
        # a side the model caps moves nothing, as the table says ('capped'): "+0.0%" beside an elasticity of -0.55
        # had read as a contradiction
        capped = (row.get("capped") or {}).get(ranked) == "plus"
        # written as the table writes them: an elasticity of 0.002 had read "+0.00; +10%: +0.0%" where the table
        # reads +0.002 and +0.02%; it now reads "+0.002; +10%: +0.02%"
        moved = f"; +{step:.0%}: capped" if capped else (f"; +{step:.0%}: {plus:+.2%}" if plus is not None else "")
        return f"{fmt.elasticity(row['elasticity'][ranked])}{moved}"

    hw = str(result.get("hardware", "?")) + (" (projected)" if result.get("projected") else "")
    panel = Panel(
        title=f"elasticity of {label} (its % move for a 1% move of the figure)",
        x_label=f"|elasticity| of {label}",
        bars=Bars(
            [str(r["figure"]) for r in rows],
            [abs(r["elasticity"][ranked]) for r in rows],
            FRONT,
            [text(r) for r in rows],
        ),
    )
    held = "plan held: " + fmt.any_plan(result["plan"]) if result.get("plan_held") else "plan searched again"
    title = f"Sensitivity: {_model(result)} on {int(result.get('chips', 0)):,} x {hw} ({held})"
    note = projected_bars_note(result)
    return write_chart(Chart(title, [panel], note, 10.0, 1.2 + 0.35 * len(rows)), path)


#: the result kinds `plot` draws, as the error for any other kind names them
PLOTTED_KINDS = "predict (train or serve), plan_train, plan_serve and sensitivity results"


def plot(data: Mapping[str, Any], path: str | Path) -> Path:
    """The default figure of a predict, plan_train, plan_serve or sensitivity result: a ranking's Pareto plot, a
    training prediction's breakdown, a serving prediction's latencies, KV-cache use and iteration breakdown, a
    sensitivity's elasticities; and serving results without a kind (e.g. several predictions side by side) as
    throughput against latency. Any other kind (tco, claims, plan_hetero, plan_fleet, plan_lifecycle, model) is
    refused naming what is drawn: a tco result has a `hardware` key, and had been taken for a serving result missing
    its latencies."""
    if not isinstance(data, Mapping):  # plot(None, ...) had been an AttributeError
        raise ChipwiseError(
            f"no plot for {type(data).__name__}: plot draws a result dictionary of {PLOTTED_KINDS}. Fix: pass what "
            "chipwise.api returns, e.g. plot(cw.predict(...), 'out.png')."
        )
    kind = str(data.get("kind", ""))
    if kind == "plan-train":
        return pareto_training(data, path)
    if kind == "train":
        return breakdown_training(data, path)
    if kind == "plan-serve":
        return pareto_serving_plan(data, path)
    if kind == "sensitivity":
        return sensitivity_chart(data, path)
    if kind == "serve" and data.get("breakdown"):
        return prediction_serving(data, path)
    if kind == "serve" or (not kind and serving_rows(data)):
        return serving_throughput_latency(data, path)
    what = f"a result of kind '{kind}'" if kind else "a result with no kind"
    raise ChipwiseError(f"no plot for {what}: plot draws {PLOTTED_KINDS}. Fix: plot one of those.")
