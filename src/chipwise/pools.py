"""Pools of fresh (spawned) processes, and the one line a script without a `__main__` guard gets from them.

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
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once on Ctrl-C: its queued calls cancelled and its workers ended, so that the exit does not
    wait on calls that take minutes (a serving check's simulation)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
