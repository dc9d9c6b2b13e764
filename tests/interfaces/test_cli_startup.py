"""The `chipwise` command imports each layer when a command needs it: building the app, as `--help` does, had
imported every planner, the serving model and its simulator, the validation, scipy and DuckDB (about 0.6 s of a
0.78 s `chipwise --help`). Not timed: which modules a fresh interpreter has loaded once the command is done
(benchmarks/cli_startup.py times them)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

#: run in a fresh interpreter: the app built as the `chipwise` command builds it (validate registered), the command
#: named by the arguments run with its output kept, then what it printed, its exit code and the modules loaded
RUN = """
import contextlib, io, json, sys
import chipwise.__main__ as main
from chipwise.interfaces.cli.app import run
main._register()
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = run(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""

#: what building the app and a command that prices nothing do not need: the planners, the predictors, the serving
#: model and simulator, the validation, and the libraries only they use
HEAVY = {
    "scipy",
    "duckdb",
    "chipwise.planner.claims",
    "chipwise.planner.scenario",
    "chipwise.planner.serving_plan",
    "chipwise.planner.training",
    "chipwise.serve.iteration",
    "chipwise.serve.simulate",
    "chipwise.train.search",
    "chipwise.economics.tco",
    "chipwise.validation.run",
}
#: what a training plan does not use: the serving model, its planner and simulator (and scipy, DuckDB)
SERVING = {
    "scipy",
    "duckdb",
    "chipwise.planner.serving_plan",
    "chipwise.planner.serving_predict",
    "chipwise.serve.iteration",
    "chipwise.serve.simulate",
    "chipwise.serve.sim.run",
    "chipwise.validation.run",
}


def _run(argv: list[str]) -> tuple[str, set[str]]:
    """`chipwise ARGV` in a fresh interpreter: what it printed, and the modules it had loaded at the end."""
    done = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["code"] == 0, done.stderr
    return str(result["out"]), set(result["modules"])


@pytest.mark.parametrize(
    ("argv", "shows"),
    [
        (["--help"], "Usage: chipwise"),
        (["plan", "train", "--help"], "Usage: chipwise plan train"),
        (["catalog", "show", "h100-sxm"], "h100-sxm"),
    ],
)
def test_help_and_the_catalog_load_no_planner(argv: list[str], shows: str) -> None:
    out, modules = _run(argv)
    assert shows in out
    assert sorted(HEAVY & modules) == []


def test_a_training_plan_loads_no_serving_model() -> None:
    """planner.training prices a system with the serving economics' helper, whose simulator types are annotations
    only."""
    out, modules = _run(["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm"])
    assert "h100-sxm" in out
    assert "chipwise.planner.training" in modules  # the command did run its planner
    assert sorted(SERVING & modules) == []
