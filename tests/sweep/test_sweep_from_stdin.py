"""A sweep run from a script read on standard input (`python - < run.py`), whose main a spawned worker cannot
import again: its points are run in this process, as workers=1 runs them (each worker had died re-running
'<stdin>', and the sweep had ended 'a sweep worker process died')."""

import subprocess
import sys
from pathlib import Path

import pytest

from chipwise import pools

SWEEP = """\
name: stdin-sweep
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: 1e9}
grid:
  chips: [8, 16, 32]
"""

SCRIPT = """\
from chipwise.sweep import load_sweep, run_sweep
stats = run_sweep(load_sweep("sweep.yaml"), "store.duckdb", workers=2)
print(stats.backend, stats.workers, stats.ok)
"""


def test_a_sweep_from_standard_input_runs_its_points_here(tmp_path: Path) -> None:
    (tmp_path / "sweep.yaml").write_text(SWEEP)
    done = subprocess.run(
        [sys.executable, "-"], input=SCRIPT, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == "in-process 1 3"


def test_a_sensitivity_that_runs_here_reports_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its moves priced in this process, the report says 1 worker (it had said 2 where no worker started)."""
    from chipwise import api

    monkeypatch.setattr("chipwise.planner.sensitivity.main_reimportable", lambda: False)
    scenario = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "tokens": 1e9}
    assert api.sensitivity(scenario, only=["hbm_bandwidth"], workers=2)["workers"] == 1
    assert pools.main_reimportable()  # this test process itself is importable
