"""Pools of fresh (spawned) processes, and the one line a script without a `__main__` guard gets from them; pools of
copies of this process (forked), where that is safe.

A spawned worker imports the script that started its pool before it takes any work (multiprocessing's spawn start
method), so a script that calls chipwise at its top level, not under `if __name__ == "__main__":`, makes that call
again in every worker. There it would start a pool of its own, which Python refuses with a traceback in each worker,
and the caller's pool broke with another (BrokenProcessPool). The call made again stops quietly in the worker,
leaving a note for the process that started the pool, which then raises one line saying what to do.

A script no worker can import again (read from standard input, `python - < run.py`, whose `__main__.__file__` is
'<stdin>') has its calls run in this process instead (InProcess), as workers=1 runs them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from chipwise.errors import ChipwiseError


def unguarded(call: str) -> str:
    """What a script without a __main__ guard is told where `call` ('run_sweep') started the pool."""
    return (
        f"{call} was called again inside the worker processes it started, which re-ran the script that called it as "
        'they imported it. Fix: put the script\'s calls under if __name__ == "__main__":, or pass workers=1.'
    )


def rerun_note(pid: int) -> Path:
    """The file a spawned worker of process `pid` leaves where it re-ran the unguarded script that started its pool:
    the pool only sees its workers end. The user's id in its name: another user's process of the same id (a shared
    /tmp) leaves its own."""
    return Path(tempfile.gettempdir()) / f"chipwise-unguarded-{getattr(os, 'getuid', lambda: 0)()}-{pid}"


def stop_if_rerun(call: str) -> None:
    """In a worker re-running an unguarded script (it is still being bootstrapped, so parent_process() is None
    there): leave the note for the process that started the pool and end quietly, before `call` starts a pool or
    opens a file that process holds."""
    if not getattr(multiprocessing.current_process(), "_inheriting", False):
        return
    try:
        rerun_note(os.getppid()).touch()
    except OSError:  # no note: say it here
        raise SystemExit(f"error: {unguarded(call)}") from None
    raise SystemExit(0)


def raise_if_rerun(call: str) -> None:
    """In the process that started a pool that broke: the one line, where a worker left the note."""
    note = rerun_note(os.getpid())
    if note.exists():
        with contextlib.suppress(OSError):
            note.unlink()
        raise ChipwiseError(unguarded(call)) from None


def clear_note() -> None:
    """Forget a note an earlier process of the same id left, before a pool starts (where it can: a note it cannot
    remove is no reason to stop a run)."""
    with contextlib.suppress(OSError):
        rerun_note(os.getpid()).unlink(missing_ok=True)


def main_reimportable() -> bool:
    """Whether a spawned worker can import the main module again, as it does before it takes any work: a module run
    by name (`python -m`) or a script file that is there. A main with no file (`python -c`, the interactive prompt,
    a notebook) is not imported again, and starts workers as well. Standard input's ('<stdin>', `python - <
    run.py`) or a file since removed is: every worker had failed with FileNotFoundError '/cwd/<stdin>', and the
    call with a BrokenProcessPool."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return True
    path = getattr(main, "__file__", None)
    return path is None or (not str(path).startswith("<") and os.path.isfile(path))


class InProcess(Executor):
    """An executor that runs each call in this process as it is submitted: a pool's work where no worker could
    start (main_reimportable), as workers=1 runs it. An error is the future's, raised by its result(), as a
    worker's is."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # a KeyboardInterrupt stops the caller here, as it would have with workers=1
            future.set_exception(exc)
        return future


@contextmanager
def spawned_pool(
    workers: int, call: str, initializer: Callable[..., Any] | None = None, initargs: tuple[Any, ...] = ()
) -> Iterator[Executor]:
    """A pool of `workers` fresh interpreters (no threads, a progress bar's, carried over), for `call` (what the
    one line names where a worker re-ran an unguarded script); this process itself (InProcess, which needs no
    `initializer`: it carries this process's settings to a worker) where no worker could import the main module
    again."""
    stop_if_rerun(call)
    if not main_reimportable():
        yield InProcess()
        return
    clear_note()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_worker_start, initargs=(initializer, initargs)
    ) as pool:
        try:
            yield pool
        except BrokenProcessPool:
            raise_if_rerun(call)
            raise
        except KeyboardInterrupt:
            _stop(pool)
            raise


def _worker_start(initializer: Callable[..., Any] | None, initargs: tuple[Any, ...]) -> None:
    """A worker's start: Ctrl-C (sent to the whole process group) is the calling process's to handle (_stop), as a
    sweep's workers leave it (sweep.worker.pool_init); each worker had printed its own KeyboardInterrupt traceback,
    and one caught mid-task had left the caller's exit waiting on it for good."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


def _stop(pool: ProcessPoolExecutor, wait: bool = False) -> None:
    """Stop a pool at once: its workers ended and its queued calls cancelled, so that an exit on Ctrl-C does not wait
    on calls that take minutes (a serving check's simulation); `wait`: its thread seen out too, so that this process
    may fork again (fork_safe)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):  # shutdown forgets them
        process.terminate()
    pool.shutdown(wait=wait, cancel_futures=True)


def fork_available() -> bool:
    """Whether this platform starts processes as copies of this one (fork: Linux, not Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


def may_fork(workers: int) -> bool:
    """Whether work given `workers` processes may run in copies of this one (more than one, and a platform with fork):
    a terminal's progress display then turns without a thread of its own, which would keep it from forking."""
    return workers > 1 and fork_available()


def fork_safe() -> bool:
    """Whether workers may start as copies of this process (fork): the platform has fork, and no other thread runs
    here (a progress bar's refresh, a web server's requests), which could hold a lock, a stream's or a console's,
    that a copy would then wait on for good."""
    return fork_available() and threading.active_count() == 1


#: the functions the workers of forked pools run, inherited by the fork, not pickled (forked_pool)
_INHERITED: list[Callable[..., Any]] = []


def _call_inherited(*args: Any) -> Any:
    return _INHERITED[-1](*args)


class Pending(Protocol):
    """A call's result to come: a Future, or a call run when its result is asked for (forked_pool)."""

    def result(self, timeout: float | None = None) -> Any: ...


class _Deferred:
    """A call run when its result is first asked for: forked_pool's where it does not fork, so that calls submitted
    together still run one at a time, each as it is waited on (a progress bar saying which)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self._call: Callable[[], Any] | None = lambda: fn(*args)
        self._value: Any = None

    def result(self, timeout: float | None = None) -> Any:
        if self._call is not None:
            call, self._call = self._call, None
            self._value = call()
        return self._value


@contextmanager
def forked_pool(workers: int, fn: Callable[..., Any]) -> Iterator[tuple[Callable[..., Pending], int]]:
    """Calls of `fn` side by side in `workers` copies of this process, where fork_safe; else each here, when its
    result is asked for. Yields the function that submits a call of `fn` with the arguments it is given, and the
    processes the calls run on; the caller waits on every call it makes (forked_ahead ends the copies at the exit).
    A copy inherits `fn` (a closure may be) and what it reads, so only a call's arguments and result are pickled,
    and it starts in milliseconds where a spawned interpreter imports chipwise again (spawned_pool, about 0.5 s)."""
    workers = int(workers)  # 4.0 from a Python caller sizes no pool
    if workers < 2 or not fork_safe():
        yield (lambda *args: _Deferred(fn, args)), 1
        return
    with forked_ahead(workers, fn) as submit:
        yield submit, workers


@contextmanager
def forked_ahead(workers: int, fn: Callable[..., Any]) -> Iterator[Callable[..., Future[Any]]]:
    """Calls of `fn` on `workers` copies of this process (the caller has checked fork_safe): yields the function that
    submits a call; at the exit, and on Ctrl-C, the copies are ended, whatever they are still running (work started
    ahead of its need, which the caller does itself where it still needs it). A copy inherits `fn`, as
    forked_pool's."""
    _INHERITED.append(fn)
    try:
        context = multiprocessing.get_context("fork")
        # with fork, the pool makes its copies at the first call, before the thread that manages them starts
        pool = ProcessPoolExecutor(int(workers), mp_context=context, initializer=_worker_start, initargs=(None, ()))
        try:
            yield lambda *args: pool.submit(_call_inherited, *args)
        finally:
            _stop(pool, wait=True)
    finally:
        _INHERITED.pop()


def waited(future: Pending, tick: Callable[[], None] | None, every: float = 0.25) -> Any:
    """A future's result, with `tick` (where given) called once as the wait begins (a progress bar told what it
    waits on) and every `every` seconds while it runs (its elapsed time kept moving where no thread of its own
    refreshes it: fork_safe)."""
    if tick is None:
        return future.result()
    tick()
    while True:
        try:
            return future.result(timeout=every)
        except TimeoutError:
            tick()
