"""`chipwise validate --explain ID`: how one serving row was read, the deployment simulated for it, where its
predicted time goes, and each metric it measured next to the prediction, so that a row's error can be traced to
an assumption, a catalog figure or the model. A training row: how it was read, the plan priced (the row's stated
parallelism, the search filling the rest), its step's breakdown and the figures it rests on, as `chipwise predict`
gives them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.planner.serving_breakdown import where_time_goes
from chipwise.planner.serving_figures import pool_figures
from chipwise.planner.serving_report import plan_dict, whole_count
from chipwise.train.explain import plan_result
from chipwise.train.search import PlanSearch
from chipwise.train.step import train_step
from chipwise.validation import training
from chipwise.validation.groundtruth import read_training, require_unique_ids
from chipwise.validation.report import RowResult
from chipwise.validation.rows import InferenceRow, TrainingRow
from chipwise.validation.serving import catalog_rows, one_line
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_simulation import compare, simulate_case

Row = TypeVar("Row")


def explain_serving(catalog: Catalog, path: Path, ids: Sequence[str]) -> list[dict[str, Any]]:
    """One explanation per id, in the order given; a row that cannot be predicted says why."""
    rows = _named({r.id: r for r in catalog_rows(catalog, path)}, ids, path)
    return [_explain(catalog, row) for row in rows]


def explain_training(catalog: Catalog, path: Path, ids: Sequence[str]) -> list[dict[str, Any]]:
    """One explanation per id of a training file, in the order given; a row that cannot be predicted says why
    (`--explain` had refused training files, where README's 'Explained' promises any published row)."""
    rows = read_training(path, known_chips=frozenset(catalog.chips), aliases=hardware(catalog).chip_aliases())
    require_unique_ids(path, [r.id for r in rows])
    return [_explain_training(catalog, row) for row in _named({r.id: r for r in rows}, ids, path)]


def _named(rows: Mapping[str, Row], ids: Sequence[str], path: Path) -> list[Row]:
    """The rows `ids` name, each once, in the order given; one line naming the ids the file lacks."""
    missing = [i for i in ids if i not in rows]
    if missing:
        # the ids a near miss was meant for ('i002' for I002 had been told only to read the 'id' column)
        lower = {r.lower(): r for r in rows}
        near = [lower[c] for i in missing for c in difflib.get_close_matches(i.lower(), list(lower), n=1, cutoff=0.6)]
        did = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise ChipwiseError(
            f"no row {', '.join(repr(i) for i in missing)} in {path.name}.{did} Fix: give ids from its 'id' column."
        )
    return [rows[i] for i in dict.fromkeys(ids)]


def _explain_training(catalog: Catalog, row: TrainingRow) -> dict[str, Any]:
    """A training row as validate predicts it (validation.training.predict_row: its metric, plan and notes), with
    what `chipwise predict` reports of that plan (train.explain.plan_result: step time, throughput, memory, the
    step's breakdown and what dominates it, the figures used) and the parallelism the row states."""
    head = {"id": row.id, "chip": row.chip, "source_family": row.source_family}
    if row.skip_reason:
        return {**head, "predicted": False, "reason": one_line(row.skip_reason)}
    try:
        p = training.predict_row(catalog, row)
        case = training.prepare(catalog, row)
    except ChipwiseError as exc:
        return {**head, "predicted": False, "reason": one_line(str(exc))}
    _, best, _ = training.evaluate(case)  # the plan predict_row chose, as validate prices it
    res = train_step(case.model, case.job, device_of(case.system), topology_of(case.system), case.plans, case.chips)
    search = PlanSearch(case.system, case.chips, case.job, res, np.array([best]), len(case.plans), 0.0)
    result = RowResult(p.id, p.chip, p.metric, p.measured, p.predicted, p.plan_source, p.source_family, stat=p.stat)
    return {
        **plan_result(search, best),
        **head,
        "predicted": True,
        "reading": [n for n in p.notes.split("; ") if n],
        "plan_source": p.plan_source,
        # the knobs the row states, as validation reads them (a plan in chips made one in ranks); the search chose
        # the rest
        "plan_stated": case.fixed,
        "metrics": [
            {
                "metric": result.metric,
                "stat": result.stat,
                "measured": result.measured,
                "predicted": result.predicted,
                "error_pct": result.error_pct,
            }
        ],
    }


def _explain(catalog: Catalog, row: InferenceRow) -> dict[str, Any]:
    head = {"id": row.id, "chip": row.chip, "source_family": row.source_family}
    try:
        case = prepare(catalog, row)
    except ChipwiseError as exc:
        return {**head, "predicted": False, "reason": one_line(str(exc))}
    sim = simulate_case(case)
    job, setup = case.job, case.setup
    return {
        **head,
        "predicted": True,
        "model": job.model.name,
        "model_alias": job.model.alias or None,  # as given, where not the id ("model" had read "alias = id")
        "engine": case.group[0],
        "chips": whole_count(row.num_chips or setup.chips),
        "reading": [*sim.notes, *(n for n in row.notes.split("; ") if n)],
        "plan_source": case.plan_source,
        "plan": [plan_dict(p.setup, p.replicas, p.role) for p in setup.pools],
        "load": {
            "label": job.load.label(),
            # a load generator that issues for a window: the requests it got to issue, not the simulation's cap
            "requests": job.requests if job.duration_s is None else sim.summary["requests"]["issued"],
            "issued_for_s": job.duration_s,
            "throughput_basis": case.basis,
            "input_tokens_mean": job.mean_input,
            "output_tokens_mean": job.mean_output,
        },
        "ttft_wait_s": sim.latencies["ttft_wait_s"],
        # the iterations of the run its latencies are read from (a run at the measured occupancy, where one was made)
        **where_time_goes(setup, job.model, job, sim.latencies),
        "metrics": [
            {
                "metric": r.metric,
                "stat": r.stat,
                "measured": r.measured,
                "predicted": r.predicted,
                "error_pct": r.error_pct,
            }
            for r in compare(case, sim)
        ],
        "figures": pool_figures(setup.pools, job.model),
    }
