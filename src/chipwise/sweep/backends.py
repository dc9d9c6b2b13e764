"""Where points run: in this process, in a local process pool, or on a Ray cluster.

Each backend takes tasks (chunks of points that share a what-if) and yields (points, records) as tasks finish, in
completion order. A bounded number of tasks is in flight, so a sweep of millions of points never sits in memory.
"""

from __future__ import annotations

import importlib
import math
import multiprocessing
import os
import socket
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, as_completed, wait
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.pools import clear_note, raise_if_rerun
from chipwise.sweep.spec import Point
from chipwise.sweep.worker import _CATALOGS, Record, Task, error_line, pool_init, run_task, run_task_with

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
    # one point a task: Ctrl-C, raised inside a point, then loses only that unfinished point (tasks of 8 had lost the
    # points of the task finished so far)
    for group, task in tasks(points, 1):
        yield group, run_task(task)


def process_pool(points: Iterable[Point], total: int, workers: int) -> Generator[Done, None, None]:
    """Run points on `workers` fresh (spawned) processes; each loads a what-if's catalog once, on first use."""
    source = tasks(points, chunk_size(total, workers))
    pending: dict[Future[list[Record]], list[Point]] = {}
    clear_note()
    spawn = multiprocessing.get_context("spawn")
    stop = spawn.Event()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=spawn, initializer=pool_init, initargs=(stop,))
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
                    raise_if_rerun("run_sweep")
                    raise ChipwiseError(
                        f"a sweep worker process died ({error_line(exc)}); the points finished so far are stored. "
                        "Fix: rerun with --resume (with fewer --workers if memory ran out)."
                    ) from None
                yield points, records
            fill()
    except KeyboardInterrupt:
        # the workers ignore Ctrl-C (pool_init): the tasks they hold stop after their current point and hand back
        # the points they finished, the tasks not started are cancelled; another Ctrl-C stops at once
        stop.set()
        for future in pending:
            future.cancel()
        for future in as_completed([f for f in pending if not f.cancelled()]):
            try:
                records = future.result()
            except Exception:  # the pool broke (a worker killed as it started): --resume runs those points
                continue
            yield pending[future][: len(records)], records
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


#: what installs Ray as the sweep runs it (with its client, for ray://HOST:PORT addresses)
RAY_INSTALL = "pip install 'chipwise[ray]' (or 'ray[client]>=2.9')"

#: seconds to wait for a Ray address to accept a connection: Ray itself retries an address nothing answers at for
#: minutes, printing a warning every few seconds
RAY_CONNECT_TIMEOUT_S = 5.0

#: seconds to wait for ray.init to join a cluster at an address that accepts connections: something other than Ray
#: listening there (a dashboard's HTTP port, a proxy) had left Ray retrying for minutes
RAY_INIT_TIMEOUT_S = 10.0

#: the port a ray:// address without one means (Ray Client's)
RAY_CLIENT_PORT = 10001


def import_ray() -> Any:
    """The ray module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ChipwiseError(
            f"--ray needs Ray, which is not installed. Fix: {RAY_INSTALL}, or run without --ray (a local process pool)."
        ) from None
    return ray


def ray_target(address: str | None) -> tuple[str, str, int] | None:
    """(the address as Ray will read it, host, port) for an address that names a host and port: `address`, or
    RAY_ADDRESS where the address is None or 'auto' (as ray.init reads it); None where Ray finds or starts the
    cluster itself (no address, or 'auto' without RAY_ADDRESS) or the address names no port (Ray's own error)."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    given = env if env and address in (None, "auto") else address
    if not given or given == "auto":
        return None
    scheme, sep, rest = given.partition("://")
    if not sep:
        scheme, rest = "", given
    rest = rest.split("/", 1)[0]
    host, colon, port = rest.rpartition(":")
    if not colon and scheme == "ray":
        host, port = rest, str(RAY_CLIENT_PORT)
    if not port.isdigit() or not host.strip("[]"):
        return None
    return given, host.strip("[]"), int(port)


#: what an HTTP/2 client sends first (RFC 9113 3.4: the preface, then an empty SETTINGS frame); Ray's GCS and Ray
#: Client speak gRPC, so their first reply is a SETTINGS frame (type 4, the fourth byte of its header)
H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
H2_SETTINGS = 4


def _check_reachable(shown: str, host: str, port: int, from_env: bool) -> None:
    """A one-line error, within RAY_CONNECT_TIMEOUT_S, where nothing accepts a connection at host:port, or what does
    does not answer as gRPC (Ray's protocol): a dashboard or Jobs port (8265, what RAY_ADDRESS often holds for the
    Jobs CLI) had left ray.init retrying for minutes, printing a warning every few seconds."""
    fix = (
        "correct RAY_ADDRESS (auto, or ray://HOST:10001) or unset it for a local Ray, and check that the cluster is up"
        if from_env
        else "check the address (auto, or ray://HOST:10001) and that the cluster is up"
    )
    try:
        conn = socket.create_connection((host, port), timeout=RAY_CONNECT_TIMEOUT_S)
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise ChipwiseError(
            f"cannot start or reach Ray at {shown}: nothing accepts connections at {host}:{port} ({why}, "
            f"waited at most {RAY_CONNECT_TIMEOUT_S:g} s). Fix: {fix}."
        ) from None
    with conn:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return  # a TLS handshake comes first: ray.init's own deadline covers it
        try:
            conn.sendall(H2_HELLO)
            head = conn.recv(9)
        except OSError:  # closed on us, or no answer within the timeout
            head = b""
    if len(head) < 4 or head[3] != H2_SETTINGS:
        said = f"it answered {head[:8]!r}" if head else "it did not answer"
        raise ChipwiseError(
            f"cannot start or reach Ray at {shown}: something at {host}:{port} accepts connections but does not speak "
            f"Ray's protocol (gRPC; {said}: an HTTP port such as the dashboard's 8265?). Fix: {fix}."
        )


def _has_ray_client() -> bool:
    """Whether Ray Client's dependency is installed (grpcio, what the ray[client] extra adds and what Ray checks)."""
    try:
        importlib.import_module("grpc")
    except ImportError:
        return False
    return True


def _client_missing(shown: str) -> ChipwiseError:
    return ChipwiseError(
        f"joining Ray at {shown} goes through Ray Client, which needs the package ray[client] (not installed). "
        f"Fix: {RAY_INSTALL}."
    )


def start_ray(address: str | None) -> bool:
    """Start or join Ray: address None starts a local Ray (or joins RAY_ADDRESS); 'auto' or 'ray://HOST:PORT' joins
    a cluster. True when this call initialised Ray (so the caller shuts it down).

    An address is checked first (Ray Client installed for ray://, something answering as gRPC at its host and port
    within RAY_CONNECT_TIMEOUT_S), and joining it is given RAY_INIT_TIMEOUT_S, so a wrong one is one line in
    seconds, not minutes of Ray's retries."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    target = ray_target(address)
    if target is not None:
        from_env = target[0] != address
        shown = f"{target[0]} (RAY_ADDRESS)" if from_env else target[0]
        if target[0].startswith("ray://") and not _has_ray_client():
            raise _client_missing(shown)
        _check_reachable(shown, target[1], target[2], from_env)
    try:
        _init(ray, address, RAY_INIT_TIMEOUT_S if target is not None else None)
    except Exception as exc:
        where = address or os.environ.get("RAY_ADDRESS") or "a local instance"
        if "ray[client]" in str(exc):  # Ray's own check, where ours above did not catch it
            raise _client_missing(where) from None
        first = " ".join(str(exc).split()).split(". ")[0].rstrip(".")
        raise ChipwiseError(
            f"cannot start or reach Ray at {where} ({type(exc).__name__}: {first}). "
            "Fix: check the address (auto, or ray://HOST:10001) and that the cluster is up."
        ) from None
    return True


def _init(ray: Any, address: str | None, deadline_s: float | None) -> None:
    """ray.init, within `deadline_s` (None: as long as it takes, for a local Ray it starts itself): a gRPC server
    that is not Ray's passes _check_reachable, and ray.init would retry it for minutes."""
    outcome: list[BaseException | None] = []

    def init() -> None:
        try:
            if address is None:
                ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
            else:
                ray.init(address=address, logging_level="ERROR")
            outcome.append(None)
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    if deadline_s is None:
        init()
    else:  # a thread left retrying is a daemon: it does not hold the process at exit
        worker = threading.Thread(target=init, name="ray-init", daemon=True)
        worker.start()
        worker.join(deadline_s)
    if not outcome:
        raise TimeoutError(f"joining did not finish within {deadline_s:g} s")
    if outcome[0] is not None:
        raise outcome[0]


def stop_ray() -> None:
    import_ray().shutdown()


def ray_slots() -> int:
    """The CPUs of the Ray cluster start_ray joined: the tasks it runs at once (a --ray run reports them as its
    workers)."""
    return max(1, int(import_ray().cluster_resources().get("CPU", 1)))


def ray_cluster(points: Iterable[Point], total: int, catalogs: dict[str, Catalog]) -> Generator[Done, None, None]:
    """Run points on the Ray that start_ray joined. Catalogs go through the object store, so the nodes need chipwise
    installed but not the user's catalog files."""
    ray = import_ray()
    refs = {digest: ray.put(cat) for digest, cat in catalogs.items()}
    remote = ray.remote(run_task_with)
    slots = ray_slots()
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
