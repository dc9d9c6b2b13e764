"""Sensitivity: which catalog figure matters most for one scenario (DESIGN.md's planner layer).

Each figure the prediction rests on (its `figures` and `economics_figures`: the chip's TDP, the system's power and
the rental price among them) is moved down and up by a step s (10%) with `--set ID.FIELD=x(1-s)` and `x(1+s)` (a
price, which --set takes by value only, to its value x(1-s) and x(1+s)), the plan held at the one the prediction
chose (or searched again, `replan`), and the scenario priced again. A metric m's elasticity to a figure f is the
central difference of their logarithms,

    e = ln(m(+s) / m(-s)) / ln((1 + s) / (1 - s)),

the per cent m moves for a 1% move of f (-1: the metric is inversely proportional to the figure, as a step time
bound by compute is to the chip's FLOP/s; 0: the figure does not reach it). Where one side cannot be priced (a
plan that no longer fits in 10% less memory, an efficiency already near 1) the other side's one-sided difference
stands, and the side's reason is kept; so does it, metric by metric, where one side leaves a metric still while the
other moves it (the figure is at a cap the model clamps it to, as the engine's HBM fraction at 0.95, or a TDP past
the reference power that adds energy and no FLOP/s: the local elasticity is the moving side's, not half of it).
A tile size is listed, not moved: x0.9 of a 128-row tile is no tile. A serving run is simulated with the scenario's
own seed each time (common random numbers), so a move reads the figure's effect, not another draw of arrivals; its
per-token cost, energy and carbon are read on one basis, the tokens the baseline's run delivered (a move over
capacity is priced at what it delivers, a baseline that keeps up at the offered load: the change of basis had read
as the figure's move).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass
from typing import Any

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.catalog.overrides import SET_ON_COMMAND_LINE
from chipwise.catalog.schema import Figure
from chipwise.catalog.terms import node
from chipwise.catalog.units import JOULES_PER_KWH
from chipwise.errors import ChipwiseError, one_of
from chipwise.pools import main_reimportable, spawned_pool, stop_if_rerun
from chipwise.workload.presets import allow_files, files_allowed
from chipwise.workload.serve_scenario import PoolSpec, ServePlan, ServeScenario
from chipwise.workload.train_scenario import TrainScenario

DEFAULT_STEP = 0.10
#: a step's bound, exclusive: x(1-s) keeps each figure at over half its value (a local elasticity, not another
#: chip), and the CLI, the API and the web page's field fix all name this one bound
MAX_STEP = 0.5
#: an elasticity under this reads as 'moves nothing' (a 10% move of the figure moves the metric under 0.01%)
MOVES_NOTHING = 1e-3
#: figures that are sizes or counts, not rates: x0.9 of a 128-row GEMM tile (115.2) is no tile, and its move measured
#: only the quantisation against a non-divisor (ranked among the figures that matter, +0.81% and +1.91% both ways);
#: an H100's 132 SMs moved to 118.8 and 145.2 had slowed a step both ways (+0.17%, +2.34%), the tiles' waves alike
#: a fabric tier's reach in chips (tiers.1.chips) is a count too: a move changes the step only where a group crosses it
DISCRETE = (".tile_m", ".tile_n", ".compute_units", ".chips")
#: a serving run's latency median reads a move to about this over the square root of its requests: 2,000 requests
#: had shown 10% less FLOP/s as a 0.48% faster TTFT p50 (a move reorders the batches), 10,000 the right sign. A
#: percentile q is read from the 1 - q of the requests past it, so its resolution is this over sqrt(2 n (1 - q)):
#: 1,000 requests had read TDP and FLOP/s, which cannot reach a first token there, as moving TTFT p99 by 1.8%,
#: and TDP +10% as 'capped'
RESOLUTION_REQUESTS = 0.3
#: per-token economics of a serving run, read on the baseline's delivered tokens (module docstring)
PER_TOKEN = ("cost", "energy", "co2e")


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
    name = one_of(metric or default_metric(kind, result or {}), list(METRICS[kind]), f"{kind} scenario's metric")
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


def _reason(exc: ChipwiseError) -> str:
    """A priced side's failure in a few words: the message before its fix."""
    return str(exc).split(" Fix:")[0].rstrip(".")


Side = dict[str, Any]  # a metric's value by name, or {"error": reason}


def _side(files: Sequence[Any], sets: Sequence[str], sc: TrainScenario | ServeScenario, kind: str) -> Side:
    """One move priced: every metric's value, or the reason it could not be priced (a serving move's with the tokens
    it was priced on over those it delivered, `basis`, for _rebase)."""
    from chipwise.planner.scenario import predict_scenario

    try:
        moved = predict_scenario(load_catalog(files, sets), sc)
    except ChipwiseError as exc:
        return {"error": _reason(exc)}
    return {k: _value(m, moved) for k, m in METRICS[kind].items()} | _basis(moved)


def _basis(result: Mapping[str, Any]) -> dict[str, float]:
    """A serving result's priced tokens/s over its delivered ones ({} where either is missing: a training run)."""
    priced, delivered = result.get("priced_output_tokens_per_s"), result.get("output_tokens_per_s")
    ok = all(isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in (priced, delivered))
    return {"basis": float(priced) / float(delivered)} if ok else {}  # type: ignore[arg-type]


def _rebase(side: Side, basis: float | None) -> Side:
    """A serving side's per-token economics on the baseline's basis: its value x its priced / delivered tokens (the
    delivered-token figure) x the baseline's delivered / priced tokens (`basis`). The baseline kept up and was priced
    at the offered 20,480 tok/s, delivering 19,031; 10% less FLOP/s fell behind and was priced at the 16,719 it
    delivered: +22.5% cost where the throughput moved 13.8%."""
    own = side.get("basis")
    if basis is None or not isinstance(own, float):
        return side
    return {k: v * own / basis if k in PER_TOKEN and isinstance(v, float) else v for k, v in side.items()}


def _moved_sets(name: str, fig: Mapping[str, Any], factor: float, sets: Sequence[str]) -> list[str]:
    """The --sets of one move: the user's and the figure scaled (`NAME=x0.9`); a figure the user's own --set gives
    is moved from the value set, that --set replaced (both had been refused as giving the figure twice)."""
    derivation = str(fig.get("derivation") or "")
    own = (
        derivation.removeprefix(f"{SET_ON_COMMAND_LINE}: --set ") if derivation.startswith(SET_ON_COMMAND_LINE) else ""
    )
    if own in sets or ".price." in name:  # a price --set takes by value only (the cost moves with it one for one)
        unit = str(fig.get("unit") or "")
        value = f"{float(fig['value']) * factor:.12g}"
        return [*(a for a in sets if a != own), f"{name}={value}{'' if unit == '1' else unit}"]
    return [*sets, f"{name}=x{factor:.12g}"]


Scenario = TrainScenario | ServeScenario
#: one move to price: the figure, its side, the --sets and the scenario it is priced with (_move)
Task = tuple[str, str, list[str], Scenario]


def _move(
    name: str, fig: Mapping[str, Any], factor: float, sets: Sequence[str], sc: Scenario
) -> tuple[list[str], Scenario]:
    """A move's --sets and scenario: a figure the scenario gives (an owned fleet's utilisation) is moved there, as no
    --set reaches it ('unknown catalog id utilisation' had listed it unmoved), a catalog figure by --set."""
    if name in type(sc).model_fields:
        return list(sets), sc.model_copy(update={name: float(fig["value"]) * factor})
    return _moved_sets(name, fig, factor, sets), sc


def _priced(tasks: Sequence[Task], files: Sequence[Any], kind: str, workers: int) -> Iterator[tuple[str, str, Side]]:
    """Each (figure, side, --sets, scenario) task priced, in this process or over `workers` processes (as they
    finish)."""
    if workers <= 1:
        for name, side, sets, sc in tasks:
            yield name, side, _side(files, sets, sc, kind)
        return
    # each worker reads model names as this process does (files_allowed: the web page's no_files)
    with spawned_pool(workers, "sensitivity", allow_files, (files_allowed(),)) as pool:
        futures = {pool.submit(_side, files, sets, sc, kind): (name, side) for name, side, sets, sc in tasks}
        for future in as_completed(futures):
            yield (*futures[future], future.result())


#: a serving move's simulation holds its own catalog and trace: past this many processes at once the memory, not the
#: cores, runs out first on a large machine (the --workers help and the guide say 'every core, up to 8')
MAX_WORKERS = 8


def default_workers(kind: str) -> int:
    """Processes a sensitivity prices its moves over: a serving run's simulations are worth a process each, on up to
    every core; a training move (about 0.05 s, most of it the catalog built again) is not worth a process's start (a
    second or two to import chipwise)."""
    return min(os.cpu_count() or 1, MAX_WORKERS) if kind == "serve" else 1


def _figures_to_move(
    base: Mapping[str, Any], only: Sequence[str]
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The baseline's figures split three ways: those to move, those at 0 (a share of 0 is 0) and the tile sizes
    (DISCRETE); with `only`, those whose name holds one of its texts, one line where none does."""
    figures = candidate_figures(base)  # its chips' TDP, systems' power and rental price are economics figures
    if only:
        figures = {name: fig for name, fig in figures.items() if any(text in name for text in only)}
        if not figures:
            raise ChipwiseError(
                f"no figure of this prediction's names {' or '.join(repr(t) for t in only)}. Fix: give part of a "
                "name 'chipwise predict SCENARIO --sources' lists (e.g. hbm_bandwidth), or leave the filter out."
            )
    # a tile size or a unit count is listed, not moved (DISCRETE): no share of one moves it to another
    discrete = {name: fig for name, fig in figures.items() if name.endswith(DISCRETE)}
    zeros = {name: fig for name, fig in figures.items() if fig["value"] == 0 and name not in discrete}
    figures = {name: fig for name, fig in figures.items() if name not in zeros and name not in discrete}
    return figures, zeros, discrete


def _catalog_value(catalog: Catalog, name: str) -> float | None:
    """The catalog's own number for a datacenter figure named as --set takes it (None: another section's, or no
    number there). The economics figures are the ones a deployment sets aside (economics.power, economics.tco); the
    reliability section's detection time, 0 for every prediction, stays a figure at 0."""
    section, *path = name.split(".")
    if section != "datacenter" or not path:
        return None
    fig = node(catalog, section, *path)
    return float(fig.value) if isinstance(fig, Figure) and isinstance(fig.value, int | float) else None


def _zero_row(name: str, fig: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    """A figure the prediction reports at 0, listed: 'unused' where the catalog gives it another value (the model set
    the figure aside for this deployment: the scale-out network's 100 W and $6,600 a chip, for replicas each inside
    one system, had read "is 0, which a move by a share leaves at 0"; a move of the catalog's figure moves nothing
    there), else 'zero' (a move by a share leaves 0 at 0)."""
    own = _catalog_value(catalog, name)
    if own is None or own == 0:
        return {**_record(name, fig), "kind": "zero", "reason": "a move by a share leaves 0 at 0"}
    why = str(fig.get("derivation") or "the model does not read it here")
    shown = f"{own:,.4g}" + ("" if fig.get("unit") in (None, "", "1") else f" {fig['unit']}")
    return {**_record(name, fig), "kind": "unused", "reason": f"not used by this deployment ({why}; catalog {shown})"}


def _listed_unmoved(
    zeros: Mapping[str, Mapping[str, Any]], discrete: Mapping[str, Mapping[str, Any]], step: float, catalog: Catalog
) -> list[dict[str, Any]]:
    """The figures listed, not moved, with why: those at 0 (or not used, _zero_row), then the tile sizes and unit
    counts."""
    return [_zero_row(name, fig, catalog) for name, fig in zeros.items()] + [
        {
            **_record(name, fig),
            "kind": "discrete",
            "reason": (
                f"a tile size: x{1 - step:g} of it is no tile; --set it to another size to compare"
                if name.endswith((".tile_m", ".tile_n"))
                else f"a count of {'chips under a tier' if name.endswith('.chips') else 'compute units'}: "
                f"x{1 - step:g} of it is no count; --set it to another to compare"
            ),
        }
        for name, fig in discrete.items()
    ]


def _moved_row(
    record: Mapping[str, Any],
    minus: Side,
    plus: Side,
    base_values: Mapping[str, float | None],
    step: float,
    noise: Mapping[str, float],
) -> dict[str, Any]:
    """A moved figure's row: both sides, each metric's change on each, and its elasticity (the moving side's where
    the other leaves the metric still, _capped). A latency metric both of whose moves are under its run's
    resolution (`noise`), not both exactly still (_within), has elasticity None and is named in `below_resolution`:
    the run cannot tell them from its own noise (it had read 0.0, which the docs read as 'the figure does not reach
    it': HBM bandwidth -10% and +10% moved a 600-request TTFT p99 of 59.6 ms by -0.07% and +1.0%, under its 8.7%).
    A side that leaves a metric exactly still, the other not priced, reads 0.0, not -0.0."""
    change = {"minus": _changes(base_values, minus), "plus": _changes(base_values, plus)}
    capped = _capped(change, noise)  # a metric that side leaves still: the figure is at a cap there
    below = [k for k in base_values if _within(change, k, noise.get(k, 0.0))]
    elasticity = {
        k: None
        if k in below
        else _plain_zero(
            _elasticity(
                base_values[k],
                {} if capped.get(k) == "minus" else minus,
                {} if capped.get(k) == "plus" else plus,
                k,
                step,
            )
        )
        for k in base_values
    }
    return {
        **record,
        "minus": minus,
        "plus": plus,
        "change": change,
        "elasticity": elasticity,
        **({"capped": capped} if capped else {}),
        **({"below_resolution": below} if below else {}),
    }


def _plain_zero(value: float | None) -> float | None:
    """-0.0 as 0.0 (ln 1 / ln 0.9 is -0.0: dp_overlap at its bound of 1 had read "step_time": -0.0)."""
    return None if value is None else value + 0.0


def _priced_sides(
    tasks: Sequence[Task],
    names: Iterable[str],
    files: Sequence[Any],
    kind: str,
    workers: int,
    basis: float | None,
    progress: Callable[[int, int], None] | None,
) -> dict[str, dict[str, Side]]:
    """Each figure's sides priced (_priced) on the baseline's basis (_rebase), by figure name and side, with
    `progress` told of each priced."""
    sides: dict[str, dict[str, Side]] = {name: {} for name in names}
    for done, (name, side, priced) in enumerate(_priced(tasks, files, kind, workers), start=1):
        sides[name][side] = _rebase(priced, basis)
        if progress is not None:
            progress(done, len(tasks))
    return sides


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
    # here, not at the top: the CLI's --help reads METRICS and DEFAULT_STEP without loading every predictor
    from chipwise.planner.scenario import predict_scenario

    stop_if_rerun("sensitivity")  # a worker re-running an unguarded script: before its baseline, not after
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
    figures, zeros, discrete = _figures_to_move(base, only)
    base_values = {name: _value(m, base) for name, m in metrics.items()}
    tasks: list[Task] = [
        (name, side, *_move(name, fig, factor, sets, fixed))
        for name, fig in figures.items()
        for side, factor in (("minus", 1.0 - step), ("plus", 1.0 + step))
    ]
    n = workers if workers is not None else default_workers(kind)
    if not main_reimportable():  # spawned_pool runs the moves here (a script read from standard input): say one worker
        n = 1
    sides = _priced_sides(tasks, figures, files, kind, n, _basis(base).get("basis"), progress)
    rows: list[dict[str, Any]] = []
    unmoved = _listed_unmoved(zeros, discrete, step, catalog)
    noise = resolutions(metrics, _requests(base))
    for name, fig in figures.items():
        minus, plus = sides[name]["minus"], sides[name]["plus"]
        record = _record(name, fig)
        if "error" in minus and "error" in plus:
            # a figure the model derives (a host's power per chip) is no catalog field: it moves with its inputs
            derived = "unknown figure" in minus["error"]
            unmoved.append({**record, "kind": "derived" if derived else "unpriced", "reason": minus["error"]})
            continue
        rows.append(_moved_row(record, minus, plus, base_values, step, noise))

    def weight(row: dict[str, Any]) -> float:
        e = row["elasticity"].get(ranked)
        if e is None:  # under the run's resolution: as a figure that moves nothing; not priced: last
            return 0.0 if ranked in row.get("below_resolution", ()) else -1.0
        return abs(float(e))

    rows.sort(key=weight, reverse=True)
    return {
        "kind": "sensitivity",
        "scenario_kind": kind,
        "model": base["model"],
        "model_alias": base.get("model_alias"),
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
        # the moves priced: a derived figure's (a host's power per chip) is refused as it loads, never predicted
        # (train-llama70b-trn2.yaml had read 85 predictions, 4 of them refused)
        "predictions": 1 + sum("error" not in side for by_side in sides.values() for side in by_side.values()),
        **(
            {"requests": n_req, "resolution": RESOLUTION_REQUESTS / math.sqrt(n_req), "resolutions": noise}
            if (n_req := _requests(base))
            else {}
        ),
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


def resolutions(metrics: Mapping[str, Metric], n_req: int) -> dict[str, float]:
    """Each latency metric's resolution on a serving run of `n_req` requests (RESOLUTION_REQUESTS): a relative move
    under it is noise of the run, not the figure's."""
    out: dict[str, float] = {}
    for key, m in metrics.items():
        if m.unit != "s" or n_req <= 0:
            continue
        q = int(key.rsplit("_p", 1)[1]) / 100.0 if "_p" in key else 0.5  # a mean reads about as a median
        out[key] = RESOLUTION_REQUESTS / math.sqrt(2.0 * n_req * (1.0 - q))
    return out


def _requests(result: Mapping[str, Any]) -> int:
    """The requests a serving run simulated (0: a training run)."""
    total = (result.get("requests") or {}).get("total") if isinstance(result.get("requests"), dict) else None
    return int(total) if isinstance(total, int | float) and total > 0 else 0


#: two moves under a run's resolution read as the figure's, not noise, where they go opposite ways within this
#: factor of each other (HBM bandwidth +-5% moved a 1,000-request TPOT p99 by +3.2% and -2.8%)
CONSISTENT_MOVES = 3.0


def _within(change: Mapping[str, Mapping[str, float | None]], key: str, resolution: float) -> bool:
    """Whether the moves of `key` are a run's noise: both under its `resolution` (where it has one) and not a
    consistent pair, opposite ways and alike in size (TDP, which cannot reach a first token, had read -1.8% and 0;
    FLOP/s +0.03% and -1.37%). Every move reruns the same arrivals, so a consistent pair under the resolution of
    the percentile's sampling is the figure's own effect. Both moves exactly still (under 1e-12, as _capped reads
    still) are no noise either: the same arrivals rerun to the same latencies, so the figure does not reach it (a
    PUE, or an H100's HBM capacity, had read null and below_resolution for every latency of a 300-request run
    whose both moves changed them by 0.0; they now read 0.0)."""
    lo, hi = change["minus"].get(key), change["plus"].get(key)
    if resolution <= 0 or lo is None or hi is None or max(abs(lo), abs(hi)) >= resolution:
        return False
    if max(abs(lo), abs(hi)) < 1e-12:
        return False
    consistent = lo * hi < 0 and max(abs(lo), abs(hi)) <= CONSISTENT_MOVES * min(abs(lo), abs(hi))
    return not consistent


def _capped(change: Mapping[str, Mapping[str, float | None]], noise: Mapping[str, float]) -> dict[str, str]:
    """Each metric's side ('minus' or 'plus') on which the move leaves it still while the other side moves it (past
    the run's resolution, `noise`, where it has one): the model clamps the figure there (the engine's HBM fraction
    0.87 x 1.13 is at its 0.95 cap already; an H100's TDP past its reference power adds no FLOP/s, though it adds
    energy), so the central difference had halved the slope (-0.22 where the moving side gives -0.42)."""
    out: dict[str, str] = {}
    for k in change["minus"]:
        lo, hi = change["minus"].get(k), change["plus"].get(k)
        if lo is None or hi is None:
            continue
        floor = max(1e-12, noise.get(k, 0.0))
        if abs(hi) < 1e-12 and abs(lo) >= floor:
            out[k] = "plus"
        elif abs(lo) < 1e-12 and abs(hi) >= floor:
            out[k] = "minus"
    return out


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
