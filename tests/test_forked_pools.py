"""Copies of this process (pools.forked_pool) run plan serve's chip searches and simulated checks side by side where
the process may fork (no other thread: pools.fork_safe), each call's result pickled back and merged in the order
asked for, so the answer is the one a single process gives. A worker test runs beside pytest's own threads, so the
forks are exercised in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chipwise import pools
from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.plan_serve_views import _processes_note
from chipwise.planner.training import plan_training

_SCRIPT = """
import json, os, sys
from chipwise import pools
from chipwise.catalog import load_catalog
from chipwise.planner.serving_plan import plan_serving
from chipwise.planner.training import plan_training
from chipwise.workload.load import Load


def main():
    table = {"a": 3, "b": 5}  # a closure's state, inherited by the copies, not pickled
    with pools.forked_pool(2, lambda key: (os.getpid(), table[key])) as (submit, processes):
        calls = [submit(key) for key in ("b", "a", "b")]
        answers = [call.result() for call in calls]
    catalog = load_catalog()
    args = (catalog, "llama-3.1-8b", ["h100-sxm", "mi300x", "p5.48xlarge", "trn2", "h200"], Load("rate", rate=20.0),
            1024, 256, {"ttft_p99": 1.0, "tpot_p99": 0.05})
    one, two = plan_serving(*args, workers=1), plan_serving(*args, workers=2)
    searches = [r["search"].pop(k) for r in (one, two) for k in ("seconds", "search_processes", "check_processes")]
    same = json.dumps(one, sort_keys=True, default=str) == json.dumps(two, sort_keys=True, default=str)
    trains = [plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm", "trn2", "mi300x", "tpu-v5p", "b200"],
                            tokens=1e11, top_plans=2, workers=w) for w in (1, 2)]
    for r in trains:
        r["search"].pop("seconds")
    trained = json.dumps(trains[0], sort_keys=True, default=str) == json.dumps(trains[1], sort_keys=True, default=str)
    print(json.dumps({"pid": os.getpid(), "answers": answers, "processes": processes, "safe": pools.fork_safe(),
                      "searches": searches[1:3] + searches[4:], "same": same, "verified": len(two["verified"]),
                      "best": two["best"]["hardware"], "trained": trained, "train_rows": len(trains[1]["results"])}))


if __name__ == "__main__":
    main()
"""


def test_a_fresh_process_forks_and_answers_as_one_process_does(tmp_path: Path) -> None:
    """In a fresh interpreter (no thread but its own) a forked pool runs a closure on two other processes, the results
    in the order submitted; plan serve on two workers searches the chips and simulates the checks there, and plan
    train searches its systems there, and each answer, every figure of every row and check, is the one process's."""
    (tmp_path / "forks.py").write_text(_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "forks.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["safe"] and seen["processes"] == 2
    assert [value for _, value in seen["answers"]] == [5, 3, 5]
    assert seen["pid"] not in {pid for pid, _ in seen["answers"]}
    assert seen["searches"] == [1, 1, 2, 2]  # one process, then the search and the checks on two
    assert seen["same"] and seen["verified"] >= 3 and seen["best"]
    assert seen["trained"] and seen["train_rows"] == 10  # plan train's systems searched on two processes alike


def test_a_terminals_progress_bar_does_not_keep_plan_serve_from_forking(tmp_path: Path) -> None:
    """On a terminal the progress bar is drawn at each update, not by a thread of its own (which would keep the
    process from forking, fork_safe): `plan serve --workers 2` with stderr on a terminal still searches and checks
    on two processes, and its answer is the one process's."""
    import pty

    argv = [
        sys.executable, "-m", "chipwise", "plan", "serve", "--model", "llama-3.1-8b", "--rate", "20",
        "--input-tokens", "1024", "--output-tokens", "256", "--slo", "ttft_p99=1s,tpot_p99=50ms",
        "--hardware", "h100-sxm,mi300x,trn2",
    ]  # fmt: skip

    def footer(workers: int) -> tuple[str, str]:
        leader, follower = pty.openpty()
        try:
            done = subprocess.run(
                [*argv, "--workers", str(workers)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower,
                text=True, timeout=300, check=False,
            )  # fmt: skip
        finally:
            os.close(follower)
            os.close(leader)
        assert done.returncode == 0
        table, searched = done.stdout.split("searched ", 1)
        return table, searched.splitlines()[0]

    table_two, two = footer(2)
    table_one, one = footer(1)
    assert two.endswith("(the search and the checks on 2 processes)"), two
    assert "processes" not in one and table_one == table_two


def test_a_pool_that_cannot_fork_runs_each_call_when_its_result_is_asked_for() -> None:
    """One worker (or a process that may not fork): each call runs here, once, when its result is first asked for,
    so calls submitted together still run one at a time in the order they are waited on (a progress bar can say
    which)."""
    ran: list[str] = []

    def call(key: str) -> str:
        ran.append(key)
        return key.upper()

    with pools.forked_pool(1, call) as (submit, processes):
        pending = [submit(key) for key in "xyz"]
        assert ran == [] and processes == 1
        assert pending[1].result() == "Y" and ran == ["y"]
        assert [p.result() for p in pending] == ["X", "Y", "Z"]
        assert pending[1].result() == "Y" and ran == ["y", "x", "z"]  # not run again


def test_another_thread_running_makes_forking_unsafe() -> None:
    """A thread that could hold a lock at the fork (a progress bar's refresh, a server's requests): no copies then."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not pools.fork_safe()
    finally:
        stop.set()
        thread.join()


def test_a_count_of_workers_that_is_no_whole_number_is_one_line(catalog: Catalog) -> None:
    for workers in (0, "2", 2.5):
        with pytest.raises(ChipwiseError, match=r"^workers .* is not a whole number of processes\. Fix: give e\.g\. 4"):
            plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], workers=workers)  # type: ignore[arg-type]


def test_the_footer_says_where_the_search_and_the_checks_ran() -> None:
    assert _processes_note(1, 1) == ""
    assert _processes_note(2, 2) == " (the search and the checks on 2 processes)"
    assert _processes_note(2, 1) == " (the search on 2 processes)"
    assert _processes_note(1, 3) == " (the checks on 3 processes)"
    assert _processes_note(2, 3) == " (the search on 2 processes, the checks on 3 processes)"
