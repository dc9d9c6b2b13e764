"""Sensitivity: which catalog figure matters most for one scenario (DESIGN.md's planner layer).

Each figure the prediction rests on (its `figures` and `economics_figures`, and the chip's power figures) is moved
down and up by a step s (10%) with `--set ID.FIELD=x(1-s)` and `x(1+s)`, the plan held at the one the prediction
chose (or searched again, `replan`), and the scenario priced again. A metric m's elasticity to a figure f is the
central difference of their logarithms,

    e = ln(m(+s) / m(-s)) / ln((1 + s) / (1 - s)),

the per cent m moves for a 1% move of f (-1: the metric is inversely proportional to the figure, as a step time
bound by compute is to the chip's FLOP/s; 0: the figure does not reach it). Where one side cannot be priced (a
plan that no longer fits in 10% less memory, an efficiency already near 1) the other side's one-sided difference
stands, and the side's reason is kept. A serving run is simulated with the scenario's own seed each time (common
random numbers), so a move reads the figure's effect, not another draw of arrivals.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from chipwise.catalog.loader import SET_ON_COMMAND_LINE, Catalog, load_catalog
from chipwise.catalog.units import JOULES_PER_KWH
from chipwise.errors import ChipwiseError
from chipwise.planner.scenario import predict_scenario
from chipwise.workload.presets import allow_files, files_allowed
from chipwise.workload.scenario import TrainScenario
from chipwise.workload.serving import PoolSpec, ServePlan, ServeScenario

DEFAULT_STEP = 0.10
#: a step's bound, exclusive: x(1-s) keeps each figure at over half its value (a local elasticity, not another
#: chip), and the CLI, the API and the web page's field fix all name this one bound
MAX_STEP = 0.5
#: an elasticity under this reads as 'moves nothing' (a 10% move of the figure moves the metric under 0.01%)
MOVES_NOTHING = 1e-3


@dataclass(frozen=True)
class Metric:
    """A metric a sensitivity reads from a prediction: its label, its unit and where the result holds it."""

    label: str
    unit: str
    read: Callable[[Mapping[str, Any]], Any]


def _key(name: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: r.get(name)


def _per(per_unit: Any, amount: float) -> float | None:
    """`amount` over a rate (J per token from tokens per joule), None where the rate is missing or 0."""
    return amount / per_unit if isinstance(per_unit, int | float) and per_unit > 0 else None


def _stat(name: str, stat: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: (r.get(name) or {}).get(stat)


#: what a sensitivity can rank by, per scenario kind; the first of each is shown beside the ranked metric
METRICS: dict[str, dict[str, Metric]] = {
    "train": {
        "step_time": Metric("step time", "s", _key("step_time_s")),
        "time_to_train": Metric("time to train", "s", _key("expected_time_to_train_s")),
        "cost": Metric("$/M tokens", "USD", _key("expected_usd_per_million_tokens")),
        "energy": Metric("energy/token", "J", lambda r: _per(r.get("expected_tokens_per_joule"), 1.0)),
        "co2e": Metric(
            "CO2e/M tokens",
            "kg",
            lambda r: _per(
                r.get("expected_tokens_per_joule"), 1e6 * (r.get("grid_kg_co2e_per_kwh") or 0.0) / JOULES_PER_KWH
            ),
        ),
    },
    "serve": {
        "e2e_p50": Metric("e2e p50", "s", _stat("e2e_s", "p50")),
        "ttft_p50": Metric("TTFT p50", "s", _stat("ttft_s", "p50")),
        "ttft_p99": Metric("TTFT p99", "s", _stat("ttft_s", "p99")),
        "tpot_p50": Metric("TPOT p50", "s", _stat("tpot_s", "p50")),
        "tpot_p99": Metric("TPOT p99", "s", _stat("tpot_s", "p99")),
        "throughput": Metric("output tok/s", "tokens/s", _key("output_tokens_per_s")),
        "cost": Metric("$/M output tokens", "USD", _key("cost_usd_per_mtok")),
        "energy": Metric("energy/M output tokens", "J", _key("energy_j_per_mtok")),
        "co2e": Metric("CO2e/M output tokens", "kg", _key("co2e_kg_per_mtok")),
    },
}


def default_metric(kind: str, result: Mapping[str, Any]) -> str:
    """What a sensitivity ranks by when none is asked for: a training run's step time; a serving load's end-to-end
    latency where arrivals come at a rate, its throughput where users or a batch keep it full."""
    if kind == "train":
        return "step_time"
    return "e2e_p50" if (result.get("load") or {}).get("kind") == "rate" else "throughput"


def check_metric(kind: str, metric: str | None, result: Mapping[str, Any] | None) -> str:
    """The metric to rank by (the default for the result where None), or one line: a name the kind has not, or a
    metric the result has no value of (None: the name alone is checked)."""
    name = metric or default_metric(kind, result or {})
    if name not in METRICS[kind]:
        raise ChipwiseError(
            f"metric '{name}' is not one of a {kind} scenario's ({', '.join(METRICS[kind])}). Fix: give one of those."
        )
    if result is not None and _value(METRICS[kind][name], result) is None:
        need = " (give the scenario tokens: to train on)" if name == "time_to_train" else ""
        raise ChipwiseError(f"this prediction has no {METRICS[kind][name].label}{need}. Fix: rank by another metric.")
    return name


def check_step(step: float) -> float:
    if not (isinstance(step, int | float) and math.isfinite(step) and 0.0 < step < MAX_STEP):
        raise ChipwiseError(f"step {step!r} is not a fraction in (0, {MAX_STEP:g}). Fix: give e.g. 0.1 for +/-10%.")
    return float(step)


def _value(metric: Metric, result: Mapping[str, Any]) -> float | None:
    value = metric.read(result)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) and value > 0 else None


def _fixed_plan(sc: TrainScenario | ServeScenario, plan: Mapping[str, Any]) -> TrainScenario | ServeScenario:
    """The scenario with the plan its prediction chose written in full (so no move of a figure re-plans it)."""
    if isinstance(sc, TrainScenario):
        return sc.model_copy(update={"plan": dict(plan)})

    def knobs(fields: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in given.items() if k in fields and v is not None and not isinstance(v, dict)}

    own = sc.plan.model_dump(exclude_none=True) if sc.plan is not None else {}
    if plan.get("disaggregated"):
        pools = {role: PoolSpec(**knobs(PoolSpec.model_fields, plan[role])) for role in ("prefill", "decode")}
        keep = {k: v for k, v in own.items() if k not in ("prefill", "decode", "disaggregated")}
        fixed = ServePlan(**{**keep, "disaggregated": True, **pools})
    else:
        fixed = ServePlan(**{**own, **knobs(ServePlan.model_fields, plan), "disaggregated": False})
    return sc.model_copy(update={"plan": fixed})


def candidate_figures(result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The figures a prediction rests on with a number as value: its `figures` and `economics_figures` (a text
    figure, or one named per chip family, 'engines.E.F (hopper)', has none a scale reaches)."""
    out: dict[str, dict[str, Any]] = {}
    for name, fig in {**(result.get("figures") or {}), **(result.get("economics_figures") or {})}.items():
        value = fig.get("value")
        if " " not in name and isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = fig
    return out


def _power_figures(catalog: Catalog, result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The chip TDPs and system powers of the prediction's hardware (its energy's inputs the power model derives
    the host's share from)."""
    out: dict[str, dict[str, Any]] = {}
    for chip, system in zip(
        str(result.get("hardware", "")).split(">"), str(result.get("system", "")).split(">"), strict=False
    ):
        for name, entry, field in (
            (f"{chip}.tdp", catalog.chips.get(chip), "tdp"),
            (f"{system}.power", catalog.systems.get(system), "power"),
        ):
            fig = getattr(entry, field, None) if entry is not None else None
            if fig is not None and isinstance(fig.value, int | float) and fig.value > 0:
                # with its derivation: a TDP the user's --set gives is moved from the value set (_moved_sets)
                derivation = {"derivation": fig.derivation} if fig.derivation else {}
                out[name] = {"value": fig.value, "unit": fig.unit, "status": fig.status, "source": fig.source}
                out[name].update(derivation)
    return out


def figures_moved(catalog: Catalog, result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every figure a sensitivity moves for a prediction: those it lists, and its chips' TDP and systems' power."""
    return {**candidate_figures(result), **_power_figures(catalog, result)}


def _reason(exc: ChipwiseError) -> str:
    """A priced side's failure in a few words: the message before its fix."""
    return str(exc).split(" Fix:")[0].rstrip(".")


Side = dict[str, Any]  # a metric's value by name, or {"error": reason}


def _side(files: Sequence[Any], sets: Sequence[str], sc: TrainScenario | ServeScenario, kind: str) -> Side:
    """One move priced: every metric's value, or the reason it could not be priced."""
    try:
        moved = predict_scenario(load_catalog(files, sets), sc)
    except ChipwiseError as exc:
        return {"error": _reason(exc)}
    return {k: _value(m, moved) for k, m in METRICS[kind].items()}


def _moved_sets(name: str, fig: Mapping[str, Any], factor: float, sets: Sequence[str]) -> list[str]:
    """The --sets of one move: the user's and the figure scaled (`NAME=x0.9`); a figure the user's own --set gives
    is moved from the value set, that --set replaced (both had been refused as giving the figure twice)."""
    derivation = str(fig.get("derivation") or "")
    own = (
        derivation.removeprefix(f"{SET_ON_COMMAND_LINE}: --set ") if derivation.startswith(SET_ON_COMMAND_LINE) else ""
    )
    if own in sets:
        unit = str(fig.get("unit") or "")
        value = f"{float(fig['value']) * factor:.12g}"
        return [*(a for a in sets if a != own), f"{name}={value}{'' if unit == '1' else unit}"]
    return [*sets, f"{name}=x{factor:.12g}"]


def _priced(
    tasks: Sequence[tuple[str, str, list[str]]],
    files: Sequence[Any],
    sc: TrainScenario | ServeScenario,
    kind: str,
    workers: int,
) -> Iterator[tuple[str, str, Side]]:
    """Each (figure, side, --sets) task priced, in this process or over `workers` processes (as they finish)."""
    if workers <= 1:
        for name, side, sets in tasks:
            yield name, side, _side(files, sets, sc, kind)
        return
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads (a progress bar's) carried over
    # each worker reads model names as this process does (files_allowed: the web page's no_files)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=allow_files, initargs=(files_allowed(),)
    ) as pool:
        futures = {pool.submit(_side, files, sets, sc, kind): (name, side) for name, side, sets in tasks}
        for future in as_completed(futures):
            yield (*futures[future], future.result())


def default_workers(kind: str) -> int:
    """Processes a sensitivity prices its moves over: a serving run's simulations are worth a process each, on up to
    every core; a training move (about 0.05 s, most of it the catalog built again) is not worth a process's start (a
    second or two to import chipwise)."""
    return min(os.cpu_count() or 1, 8) if kind == "serve" else 1


def sensitivity(
    sc: TrainScenario | ServeScenario,
    files: Sequence[Any] = (),
    sets: Sequence[str] = (),
    step: float = DEFAULT_STEP,
    metric: str | None = None,
    replan: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    only: Sequence[str] = (),
    catalog: Catalog | None = None,
) -> dict[str, Any]:
    """Each figure the scenario's prediction rests on moved by -step and +step; the metrics' elasticities, the
    figures ranked by the chosen metric's (largest first). `files` and `sets` are the catalog the scenario is priced
    on. A figure a --set of the user's gives is moved from the value set. `only`: move just the figures whose name
    holds one of these texts ('hbm', 'efficiency.hopper.'), where each move is a long simulation. `catalog`: the one
    `files` and `sets` load, where the caller has it already."""
    step = check_step(step)
    kind = "train" if isinstance(sc, TrainScenario) else "serve"
    if metric is not None:
        check_metric(kind, metric, None)  # a name it cannot rank by is refused before any work
    started = time.perf_counter()
    catalog = catalog if catalog is not None else load_catalog(files, sets)
    base = predict_scenario(catalog, sc)
    ranked = check_metric(kind, metric, base)
    metrics = METRICS[kind]
    fixed = sc if replan else _fixed_plan(sc, base["plan"])
    figures = figures_moved(catalog, base)
    if only:
        figures = {name: fig for name, fig in figures.items() if any(text in name for text in only)}
        if not figures:
            raise ChipwiseError(
                f"no figure of this prediction's names {' or '.join(repr(t) for t in only)}. Fix: give part of a "
                "name 'chipwise predict SCENARIO --sources' lists (e.g. hbm_bandwidth), or leave the filter out."
            )
    zeros = {name: fig for name, fig in figures.items() if fig["value"] == 0}
    figures = {name: fig for name, fig in figures.items() if name not in zeros}
    base_values = {name: _value(m, base) for name, m in metrics.items()}
    tasks = [
        (name, side, _moved_sets(name, fig, factor, sets))
        for name, fig in figures.items()
        for side, factor in (("minus", 1.0 - step), ("plus", 1.0 + step))
    ]
    sides: dict[str, dict[str, Side]] = {name: {} for name in figures}
    n = workers if workers is not None else default_workers(kind)
    for done, (name, side, priced) in enumerate(_priced(tasks, files, fixed, kind, n), start=1):
        sides[name][side] = priced
        if progress is not None:
            progress(done, len(tasks))
    rows: list[dict[str, Any]] = []
    unmoved = [
        {**_record(name, fig), "kind": "zero", "reason": "a move by a share leaves 0 at 0"}
        for name, fig in zeros.items()
    ]
    for name, fig in figures.items():
        minus, plus = sides[name]["minus"], sides[name]["plus"]
        record = _record(name, fig)
        if "error" in minus and "error" in plus:
            # a figure the model derives (a host's power per chip) is no catalog field: it moves with its inputs
            derived = "unknown figure" in minus["error"]
            unmoved.append({**record, "kind": "derived" if derived else "unpriced", "reason": minus["error"]})
            continue
        rows.append(
            {
                **record,
                "minus": minus,
                "plus": plus,
                "change": {"minus": _changes(base_values, minus), "plus": _changes(base_values, plus)},
                "elasticity": {k: _elasticity(base_values[k], minus, plus, k, step) for k in metrics},
            }
        )

    def weight(row: dict[str, Any]) -> float:
        e = row["elasticity"].get(ranked)
        return -1.0 if e is None else abs(e)

    rows.sort(key=weight, reverse=True)
    return {
        "kind": "sensitivity",
        "scenario_kind": kind,
        "model": base["model"],
        "hardware": base["hardware"],
        "system": base["system"],
        "chips": base["chips"],
        "plan": base["plan"],
        "plan_held": not replan,
        "only": list(only),
        "step": step,
        "metric": ranked,
        "projected": bool(base.get("projected")),
        "baseline": base_values,
        "metrics": {k: {"label": m.label, "unit": m.unit} for k, m in metrics.items()},
        "figures": rows,
        "not_priced": unmoved,
        "predictions": 1 + len(tasks),
        "workers": n,
        "seconds": time.perf_counter() - started,
    }


def _record(name: str, fig: Mapping[str, Any]) -> dict[str, Any]:
    """A figure as a sensitivity reports it: its name (as --set takes it), value, unit, status and sources."""
    return {
        "figure": name,
        "value": fig.get("value"),
        "unit": fig.get("unit"),
        "status": fig.get("status"),
        "source": fig.get("source", []),
        **({"derivation": fig["derivation"]} if fig.get("derivation") else {}),
    }


def _changes(base: Mapping[str, float | None], side: Side) -> dict[str, float | None]:
    """Each metric's relative change from the baseline on one side (None where either is missing)."""
    out: dict[str, float | None] = {}
    for k, b in base.items():
        v = side.get(k)
        out[k] = v / b - 1.0 if isinstance(v, float) and b else None
    return out


def _elasticity(base: float | None, minus: Side, plus: Side, key: str, step: float) -> float | None:
    """d ln(metric) / d ln(figure) by the central difference of the two sides, or the one side priced."""
    lo, hi = minus.get(key), plus.get(key)
    if isinstance(lo, float) and isinstance(hi, float):
        return math.log(hi / lo) / math.log((1.0 + step) / (1.0 - step))
    if base is None:
        return None
    if isinstance(hi, float):
        return math.log(hi / base) / math.log(1.0 + step)
    if isinstance(lo, float):
        return math.log(lo / base) / math.log(1.0 - step)
    return None
