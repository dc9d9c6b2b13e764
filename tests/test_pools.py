"""A script without a `__main__` guard that starts chipwise's worker processes: each spawned worker re-ran the script as
it imported it, and a serving sensitivity from such a script ended in tracebacks from every worker and a
BrokenProcessPool (run_sweep already said it in one line). Both now end with the same one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chipwise import pools
from chipwise.errors import ChipwiseError


def _run(script: str, where: Path) -> subprocess.CompletedProcess[str]:
    (where / "unguarded.py").write_text(script, encoding="utf-8")
    argv = [sys.executable, "unguarded.py"]
    return subprocess.run(argv, cwd=where, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(
    ("script", "call"),
    [
        (
            "import chipwise.api as cw\n"
            'cw.sensitivity({"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1,\n'
            '                "arrival_rate": 2, "requests": 50, "output_tokens": 64}, only=["hbm"], workers=2)\n',
            "sensitivity",
        ),
    ],
    ids=["sensitivity"],  # run_sweep's: tests/sweep/test_sweep_run.py
)
def test_an_unguarded_script_gets_one_line(script: str, call: str, tmp_path: Path) -> None:
    done = _run(script, tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"chipwise.errors.ChipwiseError: {pools.unguarded(call)}"
    # no worker's traceback, and the pool's own breakage is not what the caller sees
    assert "RuntimeError" not in done.stderr and "BrokenProcessPool" not in done.stderr
    assert done.stderr.count("Traceback") == 1


def test_the_message_names_the_call_and_both_fixes() -> None:
    text = pools.unguarded("sensitivity")
    assert text.startswith("sensitivity was called again inside the worker processes it started")
    assert 'if __name__ == "__main__":' in text and "workers=1" in text


def test_a_note_left_for_this_process_is_the_one_line() -> None:
    pools.rerun_note(os.getpid()).touch()
    with pytest.raises(ChipwiseError, match=r"^run_sweep was called again"):
        pools.raise_if_rerun("run_sweep")
    assert not pools.rerun_note(os.getpid()).exists()
    pools.raise_if_rerun("run_sweep")  # no note: nothing to say


def test_a_worker_bootstrap_stops_quietly_and_leaves_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a spawned worker's bootstrap nothing stops; inside it, the call ends the worker with exit code 0 and
    leaves the note for its parent (here this test's parent process)."""
    import multiprocessing

    pools.stop_if_rerun("sensitivity")  # this process is no spawned worker: returns
    note = pools.rerun_note(os.getppid())
    note.unlink(missing_ok=True)
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(SystemExit) as stop:
        pools.stop_if_rerun("sensitivity")
    assert stop.value.code == 0 and note.exists()
    note.unlink()


#: a serving sensitivity under a __main__ guard, as a script read from standard input runs it (its moves on 2 workers)
GUARDED = (
    "import chipwise.api as cw\n"
    'S = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 2,\n'
    '     "input_tokens": 512, "output_tokens": 64, "requests": 50}\n'
    'if __name__ == "__main__":\n'
    '    r = cw.sensitivity(S, only=["hbm"], workers=2)\n'
    '    print("figures", [f["figure"] for f in r["figures"]])\n'
)


def test_a_script_read_from_standard_input_runs_its_moves_here(tmp_path: Path) -> None:
    """`python - < run.py`: every worker had failed to import '<stdin>' (FileNotFoundError '/cwd/<stdin>') and the
    call raised BrokenProcessPool; the moves are now priced in the calling process, as with workers=1: HBM's
    bandwidth and its capacity, the two figures whose names hold 'hbm'."""
    done = subprocess.run(
        [sys.executable, "-"], input=GUARDED, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == "figures ['h100-sxm.hbm_bandwidth', 'h100-sxm.hbm_capacity']"


def test_a_script_given_with_c_still_starts_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -c` (no __file__) and the interactive prompt are not imported again by a spawned worker: they keep
    their pool, as a script file and `python -m` do; standard input's '<stdin>' and a file since removed do not."""
    main = type(sys)("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)
    main.__spec__ = None
    assert pools.main_reimportable()  # -c, the prompt: no __file__
    main.__file__ = "<stdin>"
    assert not pools.main_reimportable()
    main.__file__ = "/no/such/folder/run.py"
    assert not pools.main_reimportable()
    main.__file__ = __file__
    assert pools.main_reimportable()
    main.__file__ = "<stdin>"
    main.__spec__ = type("Spec", (), {"name": "runner"})()  # python -m runner
    assert pools.main_reimportable()


def test_the_pool_of_an_unimportable_script_is_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call runs as it is submitted, in this process; an error is its future's, as a worker's is."""
    main = type(sys)("__main__")
    main.__spec__, main.__file__ = None, "<stdin>"
    monkeypatch.setitem(sys.modules, "__main__", main)
    with pools.spawned_pool(2, "sensitivity") as pool:
        assert isinstance(pool, pools.InProcess)
        assert pool.submit(os.getpid).result() == os.getpid()
        failed = pool.submit(int, "x")
        with pytest.raises(ValueError, match="invalid literal"):
            failed.result()


def test_ctrl_c_stops_a_pools_workers_at_once() -> None:
    """Ctrl-C in the calling process ends the pool's running calls and workers at once: the exit had waited on a
    worker's call (a serving check's simulation) for many seconds, and each worker printed its own
    KeyboardInterrupt traceback, Ctrl-C reaching the whole process group; a worker now ignores it."""
    import signal
    import time

    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), pools.spawned_pool(2, "test") as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
        pool.submit(time.sleep, 60)
        raise KeyboardInterrupt
    assert time.perf_counter() - started < 30


def test_an_interrupted_command_says_so(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Typer turns Ctrl-C into a return of 130, so run's own 'interrupted' line had never been printed: a run
    stopped by Ctrl-C read as one that had finished with nothing to say."""
    from chipwise.interfaces.cli.app import run

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("chipwise.interfaces.cli.model_cmd.preset_summaries", interrupted)
    assert run(["model", "list"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
