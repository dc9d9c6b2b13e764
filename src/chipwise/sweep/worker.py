"""Evaluate points in a worker (this process, a pool process or a Ray worker): one record per point, never raising.

A worker keeps each what-if's catalog (and with it the typed hardware and model caches) for its lifetime, so a
catalog is loaded once per what-if variant and worker, not once per point. A point that fails records its error as
one line; the sweep goes on.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.errors import ChipwiseError
from chipwise.sweep.columns import flatten
from chipwise.workload.scenario import load_scenario


@dataclass(frozen=True)
class Record:
    """What a worker reports for one point (timestamps: seconds since the epoch, UTC)."""

    id: str
    status: str  # "ok" or "error"
    error: str | None
    started_at: float
    finished_at: float
    elapsed_s: float
    row: tuple[Any, ...] | None  # the results-table row (columns.COLUMNS order) when ok


@dataclass(frozen=True)
class Task:
    """A chunk of points that share one what-if variant: (point id, scenario) pairs."""

    digest: str
    files: tuple[str, ...]
    sets: tuple[str, ...]
    points: tuple[tuple[str, dict[str, Any]], ...]


_CATALOGS: dict[str, Catalog] = {}

#: set by the sweep's process on Ctrl-C (in a pool worker; empty elsewhere): the worker stops after its current point
_STOP: list[Any] = []


def pool_init(stop: Any) -> None:
    """A pool worker's start: Ctrl-C (sent to the whole process group) is the sweep's process's to handle, which
    sets `stop` so each task hands back the points it finished; a worker killed by it had lost them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STOP[:] = [stop]


def cached_catalog(digest: str, load: Callable[[], Catalog]) -> Catalog:
    """This worker's catalog for a what-if variant, loaded on first use."""
    cat = _CATALOGS.get(digest)
    if cat is None:
        cat = _CATALOGS[digest] = load()
    return cat


def error_line(exc: BaseException) -> str:
    """An exception as one line: the problem and, for bad input, the fix."""
    text = str(exc) if isinstance(exc, ChipwiseError) else f"internal error: {type(exc).__name__}: {exc}"
    return " ".join(text.split())


def predict_point(catalog: Catalog, scenario: dict[str, Any]) -> dict[str, Any]:
    """One prediction, training or serving, as `chipwise predict --json` gives it."""
    from chipwise.planner.scenario import predict_scenario  # on the first point, not on importing the sweep package

    return predict_scenario(catalog, load_scenario(json.dumps(scenario)))


def run_points(catalog: Catalog | Callable[[], Catalog], points: Sequence[tuple[str, dict[str, Any]]]) -> list[Record]:
    """Evaluate points under one catalog (or a loader, called once); every point gets a record, but those a pool
    worker skips once the sweep is interrupted (the records are then the first points')."""
    out: list[Record] = []
    cat: Catalog | None = catalog if isinstance(catalog, Catalog) else None
    for pid, scenario in points:
        if _STOP and _STOP[0].is_set():
            break
        started, t0 = time.time(), time.perf_counter()
        try:
            if cat is None:
                cat = catalog() if callable(catalog) else catalog
            row = flatten(predict_point(cat, scenario))
            status, error = "ok", None
        except Exception as exc:  # a failing point is recorded, it never stops the sweep
            row, status, error = None, "error", error_line(exc)
        elapsed = time.perf_counter() - t0
        out.append(Record(pid, status, error, started, started + elapsed, elapsed, row))
    return out


def run_task(task: Task) -> list[Record]:
    """A process-pool task: load (or reuse) the variant's catalog from its files and overrides, run the points."""
    return run_points(lambda: cached_catalog(task.digest, lambda: load_catalog(task.files, task.sets)), task.points)


def run_task_with(task: Task, catalog_ref: list[Any]) -> list[Record]:
    """A Ray task: the catalog comes from the object store (no shared file system needed), once per worker."""
    import ray

    return run_points(lambda: cached_catalog(task.digest, lambda: ray.get(catalog_ref[0])), task.points)
