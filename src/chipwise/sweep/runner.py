"""Run a sweep into a store: check it, skip what is stored (--resume), run the rest on a backend, write batches.

Bad input (the sweep file, its catalogs, an existing sweep of the same name without --resume) fails before the
store is written. Finished points are written in batches (every `batch_size` points or `flush_s` seconds), and
whatever finished is written when the run stops for any reason, so an interrupted sweep loses nothing it computed
(on Ray: but the points of the tasks then running) and a crash loses at most one batch; `--resume` then runs only
the points not stored ok, after dropping the stored points that the sweep file (edited since) no longer has.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.pools import main_reimportable, stop_if_rerun
from chipwise.sweep import backends
from chipwise.sweep.check import check_sweep
from chipwise.sweep.spec import Point, SweepSpec
from chipwise.sweep.store import Store
from chipwise.sweep.worker import Record

#: With the default worker count, sweeps of at most this many points run in-process: starting a pool (about two
#: seconds: each process imports chipwise and parses the catalog) costs more than it saves.
SMALL_SWEEP = 64

#: One point's CPU time, about, by kind (docs/sweep.md): time.process_time over run_sweep(workers=1), on
#: benchmarks/sweep_speed.py's 125 baseline training points (46.6 ms a point: a plan search each) and a 36-point
#: serving grid (3 models x 4 chips x 2-40 req/s on 8 chips, 1,024 in / 256 out: 306-327 ms a point, each one
#: simulated; a tester had measured 41-52 ms and 0.22-0.25 s). One figure of 25 ms had stood for both: 2 million
#: points had been told some 14 CPU-hours, where training ones take some 28 and serving ones some 167.
POINT_S: dict[str, float] = {"train": 0.05, "serve": 0.3}

#: The most points a sweep runs unless told to (`max_points`, `--yes`): a million points take some 14 CPU-hours
#: at POINT_S each (83 serving), and listing them (for their ids) a minute and a few hundred MB before the first one
#: runs; one axis too many (1,000 x 100 x 100) had run silently for minutes before the first progress.
MAX_POINTS = 1_000_000

#: progress(done, total, errors): called once with done 0 and the points the sweep file lists (before duplicates are
#: removed) as soon as the run is cleared to start, again with done 0 and its distinct points once they are listed
#: (the CLI had said '8 points listed' of a sweep of 4, plan.tp [8, 8.0]), again with done 0 and the points to run,
#: then after each task.
Progress = Callable[[int, int, int], None]


@dataclass
class RunStats:
    sweep: str
    store: str
    backend: str  # "in-process", "processes", "ray"
    workers: int
    points: int  # in the sweep (distinct)
    skipped: int  # already stored ok (--resume)
    ran: int
    ok: int
    errors: int
    seconds: float
    dropped: int = 0  # points stored before that the sweep (its file edited since) no longer has: deleted
    outdated: int = 0  # points stored ok by another revision of chipwise (code or built-in catalog): run again

    @property
    def points_per_s(self) -> float:
        return self.ran / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "points_per_s": self.points_per_s}


def _todo(spec: SweepSpec, todo: set[str]) -> Iterator[Point]:
    """The sweep's points whose ids are in `todo` (those not stored ok), each distinct point once: an id leaves the
    set as its point is yielded, so the set shrinks as the run goes."""
    for p in spec.points():
        if p.id in todo:
            todo.discard(p.id)
            yield p


def check_backend(workers: int | None, ray: bool) -> None:
    """One line where workers are given beside Ray, which places the tasks on its own cluster's CPUs: run_sweep's
    first check, and `sweep run`'s before it reads or prints anything."""
    if ray and workers is not None:
        raise ChipwiseError(
            "--workers does not apply to --ray: Ray places the tasks on its own cluster's CPUs. Fix: drop --workers "
            "(workers= from Python)."
        )


def run_sweep(
    spec: SweepSpec,
    store_path: str | Path,
    workers: int | None = None,
    ray: bool = False,
    ray_address: str | None = None,
    resume: bool = False,
    progress: Progress | None = None,
    batch_size: int = 64,
    flush_s: float = 2.0,
    max_points: int | None = MAX_POINTS,
) -> RunStats:
    """Run every point of `spec` not yet stored ok (with `resume`) into the DuckDB store at `store_path`.

    workers: processes for a local pool (None: one per CPU, but this process for small sweeps; 1: this process).
    ray: run on Ray instead (ray_address None starts a local Ray; 'auto' or 'ray://HOST:PORT' joins a cluster).
    max_points: refuse a sweep listing more points than this (None: any number).
    """
    # a script without a __main__ guard: each spawned pool worker re-runs it as it imports it, and each of those runs
    # had failed on the store the first holds open, with tracebacks and "a sweep worker process died"
    stop_if_rerun("run_sweep")
    check_backend(workers, ray)
    catalogs = check_sweep(spec)  # bad input fails here, before the store is touched
    if max_points is not None and len(spec) > max_points:
        point_s, what = POINT_S[spec.kind], "training" if spec.kind == "train" else "serving"
        raise ChipwiseError(
            f"{spec.source}: the sweep lists {len(spec):,} points, more than {max_points:,} (at some "
            f"{point_s * 1e3:g} ms a {what} point, {len(spec) * point_s / 3600:,.0f} CPU-hours). Fix: narrow its "
            "axes, or run it anyway with --yes (max_points=None from Python)."
        )
    ray_started = backends.start_ray(ray_address) if ray else False
    try:
        return _run(spec, store_path, catalogs, workers, ray, resume, progress, batch_size, flush_s)
    finally:
        if ray_started:
            backends.stop_ray()


def _moved(store: Store, spec: SweepSpec, stored: str) -> bool:
    """Whether the sweep stored from file `stored` is `spec`'s own, its file since moved (a repository moved or
    cloned): that file is gone or reads the same as this one, and every stored point is one of this sweep's (the
    ids do not depend on the path). Such a sweep resumes, its recorded source now this file."""
    old = Path(stored)
    if old.exists():
        try:
            if old.read_bytes() != Path(spec.source).read_bytes():
                return False
        except OSError:  # unreadable: not shown to be the same file
            return False
    return store.stored_ids(spec.name) <= {p.id for p in spec.points()}


def _handed_back(stream: Generator[backends.Done, None, None]) -> Iterator[backends.Done]:
    """What a backend yields once the interrupt is thrown into it (it re-raises the interrupt after; a backend with
    nothing to hand back, or one already stopped, raises it at once)."""
    yield stream.throw(KeyboardInterrupt())
    yield from stream


def _run(
    spec: SweepSpec,
    store_path: str | Path,
    catalogs: dict[str, Catalog],
    workers: int | None,
    ray: bool,
    resume: bool,
    progress: Progress | None,
    batch_size: int,
    flush_s: float,
) -> RunStats:
    n_workers = max(1, workers if workers is not None else backends.cpu_count())
    with Store(store_path) as store:
        stored = store.source(spec.name)
        # another file's sweep: --resume would drop its points as edited away; a moved one is re-homed (register)
        if stored is not None and stored != spec.source and not _moved(store, spec, stored):
            raise ChipwiseError(
                f"store '{store_path}' holds a sweep '{spec.name}' from another file, {stored}, not {spec.source}. "
                "Fix: give this sweep another name (--name, or name: in its file), or another --store."
            )
        if store.has_sweep(spec.name) and not resume:
            raise ChipwiseError(
                f"store '{store_path}' already holds sweep '{spec.name}'. Fix: add --resume to run only the points "
                "not stored ok, or give another --store or sweep name."
            )
        if progress:
            progress(0, len(spec), 0)  # before listing the points, which takes a while for a large sweep
        ids = {p.id for p in spec.points()}
        if progress:
            progress(0, len(ids), 0)
        dropped = store.register(spec, ids)  # first: points the edited sweep no longer has are dropped
        done = store.done_ids(spec.name) if resume else set()
        outdated = store.outdated(spec.name) if resume else 0
        retry = store.stored_ids(spec.name) - done if resume else set()
        todo = ids - done
        points, total = len(ids), len(todo)
        del ids
        if ray:
            n_workers = backends.ray_slots()  # the cluster's CPUs (it had reported this machine's)
            backend, stream = "ray", backends.ray_cluster(_todo(spec, todo), total, catalogs)
        # a main that spawned workers cannot import again (a script read from standard input) runs here, as workers=1
        # (they had died re-running '<stdin>': 'a sweep worker process died')
        elif n_workers > 1 and total > (1 if workers is not None else SMALL_SWEEP) and main_reimportable():
            n_workers = min(n_workers, total)
            backend, stream = "processes", backends.process_pool(_todo(spec, todo), total, n_workers)
        else:
            n_workers = 1
            backend, stream = "in-process", backends.in_process(_todo(spec, todo), catalogs)
        stats = RunStats(
            spec.name, str(store_path), backend, n_workers, points, points - total, 0, 0, 0, 0.0, dropped, outdated
        )
        start = last_flush = time.perf_counter()
        batch: list[tuple[Point, Record]] = []
        if progress:
            progress(0, total, 0)

        def take(done: Iterable[backends.Done]) -> None:
            nonlocal batch, last_flush
            for group, records in done:
                for p, r in zip(group, records, strict=True):
                    batch.append((p, r))
                    stats.ran += 1
                    stats.ok += r.status == "ok"
                    stats.errors += r.status != "ok"
                if len(batch) >= batch_size or time.perf_counter() - last_flush >= flush_s:
                    store.write(spec.name, batch, retry)
                    batch, last_flush = [], time.perf_counter()
                if progress:
                    progress(stats.ran, total, stats.errors)

        try:
            try:
                take(stream)
            except KeyboardInterrupt:
                # Ctrl-C here, between tasks, goes to the backend too: a pool hands back what its workers finished
                # (each stops after its current point); where it came inside the backend, that already happened
                take(_handed_back(stream))
                raise
        finally:
            stream.close()
            store.write(spec.name, batch, retry)  # whatever finished is kept, however the run stopped
            stats.seconds = time.perf_counter() - start
    return stats
