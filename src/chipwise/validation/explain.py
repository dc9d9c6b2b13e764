"""`chipwise validate --explain ID`: how one serving row was read, the deployment simulated for it, where its
predicted time goes, and each metric it measured next to the prediction, so that a row's error can be traced to
an assumption, a catalog figure or the model."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.serving_breakdown import where_time_goes
from chipwise.planner.serving_figures import pool_figures
from chipwise.planner.serving_report import plan_dict, whole_count
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving import catalog_rows, one_line
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_simulation import compare, simulate_case


def explain_serving(catalog: Catalog, path: Path, ids: Sequence[str]) -> list[dict[str, Any]]:
    """One explanation per id, in the order given; a row that cannot be predicted says why."""
    rows = {r.id: r for r in catalog_rows(catalog, path)}
    missing = [i for i in ids if i not in rows]
    if missing:
        # the ids a near miss was meant for ('i002' for I002 had been told only to read the 'id' column)
        lower = {r.lower(): r for r in rows}
        near = [lower[c] for i in missing for c in difflib.get_close_matches(i.lower(), list(lower), n=1, cutoff=0.6)]
        did = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise ChipwiseError(
            f"no row {', '.join(repr(i) for i in missing)} in {path.name}.{did} Fix: give ids from its 'id' column."
        )
    return [_explain(catalog, rows[i]) for i in dict.fromkeys(ids)]


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
        "model": job.model.display,
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
