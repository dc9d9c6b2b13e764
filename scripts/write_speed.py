"""Run every benchmark in benchmarks/ once, each in its own process, and write what they measured: docs/speed.json
(the figures and the machine), docs/speed.md (the issues' speed targets against the figures, and every figure) and
the README's speed passage, the "Fast" bullet (run: make speed, about 3.5 minutes on 2 cores).

The README's speed figures had been typed by hand, a day's figures at a time, until the bullet read as a log of
which hour of which day measured what; the page and the passage are now one run's, written from its record."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from write_accuracy import between, readme_passage  # scripts/, beside this one

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
from record import RECORD_ENV  # noqa: E402  (benchmarks/record.py, which every benchmark records through)

RECORD = ROOT / "docs" / "speed.json"
PAGE = ROOT / "docs" / "speed.md"
README = ROOT / "README.md"
README_START, README_END = "<!-- speed:start -->", "<!-- speed:end -->"
#: the benchmarks run, in this order
SCRIPTS = ("plan_speed.py", "serve_speed.py", "fleet_speed.py", "cli_startup.py", "trace_read.py", "sweep_speed.py")


@dataclass(frozen=True)
class Target:
    """A speed an issue asks for: the figure `key` at most `bound` (at least, where `at_least`)."""

    key: str
    issue: int
    what: str
    bound: float
    unit: str = "s"
    at_least: bool = False

    def met(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound


TARGETS = (
    Target("train.plans_per_s", 3, "training plans priced per second on one core", 1e6, "plans/s", at_least=True),
    Target("train.full_space_s", 3, "the full plan space of GPT-3 175B on 1,024 H100 (fp8), searched", 10.0),
    Target(
        "cli.plan train 1M_s",
        5,
        "`chipwise plan train` of Llama-3.1-405B on 1,000,000 Trainium3 (`--json`), start-up included",
        5.0,
    ),
    Target("serve.poisson_10k_s", 4, "10,000 Poisson requests of Llama-3.1-70B on 8 H100, simulated", 2.0),
    Target("serve.poisson_1m_s", 4, "1,000,000 Poisson requests of the same, simulated", 180.0),
    Target(
        "serve.plan_command_s",
        4,
        "`chipwise plan serve` of Llama-3.1-70B over every catalog chip with a TTFT/TPOT SLO, start-up included",
        5.0,
    ),
    Target("fleet.milp_worst_s", 6, "the fleet-mix programme of 20 instance types x 10 buckets (worst of 5)", 2.0),
)


def machine() -> str:
    """This machine in a few words: CPUs, their model where Linux names it, the system and Python."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")
        ]
        model = f" ({names[0]})" if names else ""
    return f"{os.cpu_count()} CPUs{model}, {platform.system()}, Python {platform.python_version()}"


def run_benchmarks() -> dict[str, Any]:
    """Every benchmark of SCRIPTS run in a fresh interpreter (its lines shown as they come), and the figures each
    recorded."""
    figures: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for script in SCRIPTS:
            path = Path(tmp) / f"{script}.jsonl"
            print(f"benchmarks/{script}", flush=True)
            env = {**os.environ, RECORD_ENV: str(path)}
            subprocess.run([sys.executable, str(BENCHMARKS / script)], env=env, check=True, cwd=ROOT)
            lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
            figures[script] = [json.loads(line) for line in lines]
    return {"generated": date.today().isoformat(), "machine": machine(), "figures": figures}


def values(record: dict[str, Any]) -> dict[str, float]:
    """Every figure of the record by its key."""
    return {f["key"]: float(f["value"]) for figs in record["figures"].values() for f in figs}


def _number(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.3f} s" if value < 1 else f"{value:.2f} s" if value < 10 else f"{value:.1f} s"
    return f"{value:,.0f} {unit}"


def targets_table(record: dict[str, Any]) -> list[str]:
    """The issues' speed targets against the record's figures, one row each."""
    got = values(record)
    lines = ["| issue | what | target | measured | |", "|---:|---|---:|---:|---|"]
    for t in TARGETS:
        bound = f"{'at least' if t.at_least else 'under'} {t.bound:,.0f} {t.unit}"
        value = got.get(t.key)
        measured, verdict = (
            ("not measured", "")
            if value is None
            else (_number(value, t.unit), "met" if t.met(value) else "**not met**")
        )
        lines.append(f"| {t.issue} | {t.what} | {bound} | {measured} | {verdict} |")
    return lines


def page(record: dict[str, Any]) -> str:
    """docs/speed.md: how the figures were taken, the targets table and every benchmark's lines."""
    lines = [
        "# Speed",
        "",
        f"Generated by `make speed` (`scripts/write_speed.py`) on {record['generated']} from one run of every "
        f"benchmark in `benchmarks/`, each in its own process, on {record['machine']}: wall times (rates per "
        "second where said), a command's with its start-up. A shared virtual machine's speed drifts from hour to hour "
        "(this project's 2-core machine about twofold), so compare the figures of one run, or time two checkouts back "
        "to back (a benchmark times another checkout with `PYTHONPATH=OTHER/src`); `make bench` prints the same "
        "lines without writing anything.",
        "",
        "## Against the issues' targets",
        "",
        *targets_table(record),
        "",
        "## Every figure, by benchmark",
    ]
    for script, figures in record["figures"].items():
        lines += ["", f"`benchmarks/{script}`:", "", "```text", *(f["text"] for f in figures), "```"]
    return "\n".join(lines) + "\n"


def readme_speed(record: dict[str, Any]) -> str:
    """The README's "Fast" bullet from the record's figures: a figure per command a user runs, and where the rest
    are. A command's in-process figure is the one on one process per CPU, as the command runs it."""
    v = values(record)

    def pick(stem: str) -> float:
        return v.get(f"{stem}.per_cpu_s", v.get(f"{stem}.one_process_s", float("nan")))

    return (
        f"a vectorised model prices {v['train.plans_per_s'] / 1e6:.2f} million training plans a second on one core; "
        f"ranking every catalog chip for Llama-3.1-70B on 4,096 of each takes {pick('train.rank.llama-3.1-70b'):.2f} s "
        f"({v['cli.plan train_s']:.2f} s as a command, start-up included), a serving plan for Llama-3.1-70B over "
        f"every chip with its simulated checks {pick('serve.plan.llama-3.1-70b'):.2f} s "
        f"({v['serve.plan_command_s']:.2f} s as a command), 10,000 simulated requests {v['serve.poisson_10k_s']:.2f} s "
        f"and a million {v['serve.poisson_1m_s']:.0f} s, a training plan on a million Trainium3 "
        f"{v['cli.plan train 1M_s']:.2f} s as a command, and `chipwise --help` starts in {v['cli.--help_s']:.2f} s. "
        f"These are one run of `make speed` on {record['generated']} (machine: {record['machine']}); "
        "[docs/speed.md](docs/speed.md) has every figure and the issues' targets."
    )


def write(record: dict[str, Any]) -> None:
    """The record, the page and the README's passage."""
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    PAGE.write_text(page(record), encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    README.write_text(between(text, README_START, README_END, readme_passage(readme_speed(record))), "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--again", action="store_true", help="write the page and passage from docs/speed.json only")
    args = parser.parse_args()
    record = json.loads(RECORD.read_text(encoding="utf-8")) if args.again else run_benchmarks()
    write(record)
    got = values(record)
    missed = [t.key for t in TARGETS if t.key in got and not t.met(got[t.key])]
    print(f"wrote {RECORD.relative_to(ROOT)}, {PAGE.relative_to(ROOT)} and README.md's speed passage", end="")
    print(f"; targets missed: {', '.join(missed)}" if missed else "; every target met")


if __name__ == "__main__":
    main()
