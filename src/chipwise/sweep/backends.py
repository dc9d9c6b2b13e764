"""Where points run: in this process, in a local process pool, or on a Ray cluster.

Each backend takes tasks (chunks of points that share a what-if) and yields (points, records) as tasks finish, in
completion order. A bounded number of tasks is in flight, so a sweep of millions of points never sits in memory.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.sweep.spec import Point
from chipwise.sweep.worker import _CATALOGS, Record, Task, error_line, run_task, run_task_with

Done = tuple[list[Point], list[Record]]


def cpu_count() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def chunk_size(points: int, slots: int, most: int = 16) -> int:
    """Points per task: about four tasks per worker slot, so the work balances, and at most `most`."""
    return max(1, min(most, math.ceil(points / max(1, slots * 4))))


def tasks(points: Iterable[Point], size: int) -> Iterator[tuple[list[Point], Task]]:
    """Consecutive points grouped into tasks of at most `size` points that share one what-if variant."""
    group: list[Point] = []
    for p in points:
        if group and (len(group) >= size or p.variant.digest != group[0].variant.digest):
            yield group, _task(group)
            group = []
        group.append(p)
    if group:
        yield group, _task(group)


def _task(group: list[Point]) -> Task:
    v = group[0].variant
    return Task(v.digest, v.files, v.sets, tuple((p.id, p.scenario) for p in group))


def in_process(points: Iterable[Point], catalogs: dict[str, Catalog]) -> Generator[Done, None, None]:
    """Run every point here, reusing the catalogs the sweep check already loaded."""
    for digest, cat in catalogs.items():
        _CATALOGS.setdefault(digest, cat)
    for group, task in tasks(points, 8):
        yield group, run_task(task)


def process_pool(points: Iterable[Point], total: int, workers: int) -> Generator[Done, None, None]:
    """Run points on `workers` fresh (spawned) processes; each loads a what-if's catalog once, on first use."""
    source = tasks(points, chunk_size(total, workers))
    pending: dict[Future[list[Record]], list[Point]] = {}
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    try:

        def fill() -> None:
            while len(pending) < 2 * workers:
                item = next(source, None)
                if item is None:
                    return
                pending[pool.submit(run_task, item[1])] = item[0]

        fill()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                points = pending.pop(future)
                try:
                    records = future.result()
                except Exception as exc:  # a worker died (out of memory, killed): the pool is broken
                    raise ChipwiseError(
                        f"a sweep worker process died ({error_line(exc)}); the points finished so far are stored. "
                        "Fix: rerun with --resume (with fewer --workers if memory ran out)."
                    ) from None
                yield points, records
            fill()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def import_ray() -> Any:
    """The ray module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ChipwiseError(
            "--ray needs Ray, which is not installed. Fix: install chipwise's ray extra (pip install 'ray>=2.9'), "
            "or run without --ray (a local process pool)."
        ) from None
    return ray


def start_ray(address: str | None) -> bool:
    """Start or join Ray: address None starts a local Ray (or joins RAY_ADDRESS); 'auto' or 'ray://HOST:PORT' joins
    a cluster. True when this call initialised Ray (so the caller shuts it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    try:
        if address is None:
            ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        else:
            ray.init(address=address, logging_level="ERROR")
    except Exception as exc:
        first = " ".join(str(exc).split()).split(". ")[0].rstrip(".")
        raise ChipwiseError(
            f"cannot start or reach Ray at {address or 'a local instance'} ({type(exc).__name__}: {first}). "
            "Fix: check the address (auto, or ray://HOST:10001) and that the cluster is up."
        ) from None
    return True


def stop_ray() -> None:
    import_ray().shutdown()


def ray_cluster(points: Iterable[Point], total: int, catalogs: dict[str, Catalog]) -> Generator[Done, None, None]:
    """Run points on the Ray that start_ray joined. Catalogs go through the object store, so the nodes need chipwise
    installed but not the user's catalog files."""
    ray = import_ray()
    refs = {digest: ray.put(cat) for digest, cat in catalogs.items()}
    remote = ray.remote(run_task_with)
    slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
    source = tasks(points, chunk_size(total, slots, most=64))
    pending: dict[Any, list[Point]] = {}

    def fill() -> None:
        while len(pending) < 2 * slots:
            item = next(source, None)
            if item is None:
                return
            pending[remote.remote(item[1], [refs[item[1].digest]])] = item[0]

    fill()
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        group = pending.pop(ready[0])
        try:
            records: list[Record] = ray.get(ready[0])
        except ray.exceptions.RayError as exc:  # the task's worker died: its points are errors, --resume retries
            first = " ".join(str(exc).split())[:200]
            line = f"the Ray task running this point failed ({type(exc).__name__}: {first}). Fix: rerun with --resume."
            now = time.time()
            records = [Record(p.id, "error", line, now, now, 0.0, None) for p in group]
        yield group, records
        fill()
