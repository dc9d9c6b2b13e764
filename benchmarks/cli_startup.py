"""How fast does the `chipwise` command start? Prints the wall time, best of N runs each in a fresh process, of
`chipwise --help`, `catalog list`, a `plan train` over every chip, one on a million Trainium3 and a `plan serve` over
every chip, then the time the CLI takes to import (its commands built, `validate` registered) against the floor of
the libraries every command needs (run: python benchmarks/cli_startup.py [--runs N]; PYTHONPATH=OTHER/src times
another checkout)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from record import emit

#: the commands timed, by label, as typed after `chipwise` (issue 5 asks the million-chip plan in under 5 s)
COMMANDS = {
    "--help": "--help",
    "catalog list": "catalog list",
    "plan train": "plan train --model llama-3.1-70b --tokens 15e12 --chips 4096 --hardware all",
    "plan train 1M": "plan train --model llama-3.1-405b --tokens 15e12 --chips 1000000 --hardware trn3 --json",
    "plan serve": "plan serve --model llama-3.1-70b --rate 20 --input-tokens 1024 --output-tokens 256 "
    "--slo ttft_p99=2s,tpot_p99=50ms --hardware all",
}
#: the CLI's import, timed inside the process: the app with its commands and `validate`, as `chipwise` builds it
CLI_IMPORT = "import chipwise.__main__ as m; m._register()"
#: what any command imports whatever chipwise does: the interpreter's own start-up is not counted
FLOOR_IMPORT = "import typer, rich.console, rich.table, numpy, pydantic, yaml"


def wall(args: list[str], runs: int) -> float:
    """The best wall time of `python -m chipwise ARGS` over `runs` runs (its output discarded)."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "chipwise", *args], stdout=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - t0)
    return best


def import_time(statement: str, runs: int) -> float:
    """The best time `statement` takes in a fresh interpreter, timed inside it, over `runs` runs."""
    code = f"import time; t0 = time.perf_counter(); {statement}; print(time.perf_counter() - t0)"
    return min(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs of each command; the best is shown")
    args = parser.parse_args()
    for label, command in COMMANDS.items():
        best = wall(command.split(), args.runs)
        emit(f"cli.{label}_s", best, "s", f"chipwise {label:<13} {best:6.3f} s wall (best of {args.runs})")
    cli, floor = import_time(CLI_IMPORT, args.runs), import_time(FLOOR_IMPORT, args.runs)
    emit(
        "cli.import_s",
        cli,
        "s",
        f"import of the CLI      {cli:6.3f} s (typer, rich, numpy, pydantic and yaml alone: {floor:.3f} s)",
    )


if __name__ == "__main__":
    main()
