"""plan fleet's searches side by side in copies of the process (planner.fleet._run_ahead): the search over all the
types in one copy while others run each chip's search alone ahead of its need, then the fleets' confirming runs;
the replays each copy ran are sent back and kept on the catalog, where the searches this process runs after find
them, so the answer is the one a single process gives. Pytest's own threads make its process unsafe to fork, so the
forks are exercised in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.planner import fleet as fleet_mod
from chipwise.planner import fleet_replay
from chipwise.planner.fleet_mix import FleetSolution
from chipwise.planner.fleet_replay import SettledFleet

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat-mix.yaml"

_SCRIPT = """
import json, sys, threading, time
from chipwise import pools
from chipwise.catalog import load_catalog
from chipwise.planner.fleet import plan_fleet


def main():
    with pools.forked_ahead(2, time.sleep) as submit:
        quick, slow, queued = submit(0.05), submit(60), submit(60)
        quick.result()
        start = time.perf_counter()
    ended = time.perf_counter() - start  # the copies still working ended at the exit, not awaited
    answers = []
    for workers in (1, 2):
        report = plan_fleet(load_catalog(), "llama-3.1-8b", sys.argv[1], {"ttft_p99": 1.0, "tpot_p99": 0.03},
                            ["h100-sxm", "trn2"], workers=workers)
        answers.append(report)
    processes = [r.pop("search_processes") for r in answers]
    for r in answers:
        r.pop("seconds")
    same = json.dumps(answers[0], sort_keys=True, default=str) == json.dumps(answers[1], sort_keys=True, default=str)
    broken = [type(f.exception()).__name__ for f in (slow, queued)]
    print(json.dumps({"ended": ended, "broken": broken, "safe": pools.fork_safe(), "threads": threading.active_count(),
                      "processes": processes, "same": same,
                      "cost": answers[1]["cost_usd_per_hour"], "met": answers[1]["slo_met_in_replay"]}))


if __name__ == "__main__":
    main()
"""


def test_two_processes_answer_as_one_does(tmp_path: Path) -> None:
    """In a fresh interpreter: the copies forked_ahead started are ended at its exit (a call of a minute not awaited,
    one queued: both end unfinished) and its thread is gone, so the process may fork again; plan fleet over two chips
    on two processes (each chip's search run ahead, then the confirming runs) gives the one process's answer in every
    figure."""
    (tmp_path / "fleet_forks.py").write_text(_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "fleet_forks.py", str(EXAMPLE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ended"] < 5 and seen["broken"] == ["BrokenProcessPool"] * 2
    assert seen["safe"] and seen["threads"] == 1
    assert seen["processes"] == [1, 2]
    assert seen["same"] and seen["met"] and seen["cost"] > 0


def test_a_terminals_spinner_does_not_keep_plan_fleet_from_forking(tmp_path: Path) -> None:
    """On a terminal the spinner is turned by the search's waits, not by a thread of its own (Rich's status starts
    one, which would keep the process from forking): `plan fleet --workers 2` with stderr on a terminal still runs
    on two processes, and its footer says so."""
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "chipwise", "plan", "fleet", "--model", "llama-3.1-8b", "--workload", str(EXAMPLE),
             "--slo", "ttft_p99=1s,tpot_p99=30ms", "--hardware", "h100-sxm,trn2", "--workers", "2"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower, text=True, timeout=300, check=False,
        )  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    assert " on 2 processes." in done.stdout


def test_the_replays_a_work_ran_are_what_it_kept() -> None:
    """replays_run gives a work's value and the replays it added to the catalog, not those there before; a work that
    ends in a chipwise error gives None and the replays run before it; remember_replays keeps them, at most
    REPLAY_MEMO."""
    catalog = load_catalog(sets=["h100-sxm.hbm_bandwidth=x1"])  # a catalog of its own
    fleet_replay.remember_replays(catalog, [(("old",), {"slo_met": True})])

    def work() -> int:
        fleet_replay.remember_replays(catalog, [(("new",), {"slo_met": False})])
        return 7

    assert fleet_replay.replays_run(catalog, work) == (7, [(("new",), {"slo_met": False})])

    def failing() -> int:
        fleet_replay.remember_replays(catalog, [(("last",), {"slo_met": True})])
        raise InfeasibleError("no fleet")

    assert fleet_replay.replays_run(catalog, failing) == (None, [(("last",), {"slo_met": True})])
    many = [((k,), {"slo_met": True}) for k in range(fleet_replay.REPLAY_MEMO + 3)]
    fleet_replay.remember_replays(catalog, many)
    memo = catalog.memo["fleet_replays"]
    assert len(memo) == fleet_replay.REPLAY_MEMO and ("old",) not in memo and (fleet_replay.REPLAY_MEMO + 2,) in memo


def test_another_error_is_not_swallowed() -> None:
    catalog = load_catalog(sets=["h100-sxm.hbm_bandwidth=x1"])

    def broken() -> None:
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        fleet_replay.replays_run(catalog, broken)


def _settled(counts: list[int], cost: float, met: bool = True) -> SettledFleet:
    sol = FleetSolution(np.array(counts), np.ones((len(counts), 2)), cost, np.zeros(len(counts)))
    return SettledFleet(sol, {}, np.ones((len(counts), 2)), None if met else "missed", cost)


def test_the_fleets_to_confirm_are_those_met_cheapest_first_each_once() -> None:
    a, b, c, d = _settled([1, 0], 10.0), _settled([0, 2], 8.0), _settled([1, 0], 10.0), _settled([3, 0], 5.0, False)
    assert fleet_replay.to_confirm([a, b, c, d]) == [b, a]


def test_nothing_runs_ahead_on_one_process_or_where_it_may_not_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker, one work, or a process that may not fork (another thread: pytest's own): nothing runs, the works
    are left to the searches this process runs."""
    ran: list[int] = []
    catalog = load_catalog()
    works: list[Any] = [lambda: ran.append(1), lambda: ran.append(2)]
    assert fleet_mod._run_ahead(catalog, works, 1, 1, lambda: None) == ([None], 1)
    assert fleet_mod._run_ahead(catalog, works[:1], 1, 4, lambda: None) == ([None], 1)
    monkeypatch.setattr(fleet_mod, "fork_safe", lambda: False)
    assert fleet_mod._run_ahead(catalog, works, 2, 4, lambda: None) == ([None, None], 1)
    assert ran == []


def test_each_chips_types_are_grouped_where_there_are_two_chips_or_more() -> None:
    class _T:
        def __init__(self, chip: str) -> None:
            self.system = type("S", (), {"chip": type("C", (), {"id": chip})()})()

    mixed: Any = [_T("h100-sxm"), _T("mi300x"), _T("h100-sxm"), _T("trn2")]
    assert fleet_mod._chip_groups(mixed) == [[0, 2], [1], [3]]
    assert fleet_mod._chip_groups(mixed[:1] + mixed[2:3]) == []


def test_workers_that_are_no_whole_number_are_one_line() -> None:
    for workers in (0, "2", 2.5):
        with pytest.raises(ChipwiseError, match=r"^workers .* is not a whole number of processes"):
            fleet_mod.plan_fleet(
                load_catalog(),
                "llama-3.1-8b",
                str(EXAMPLE),
                {"ttft_p99": 1.0},
                ["h100-sxm"],
                workers=workers,  # type: ignore[arg-type]
            )
