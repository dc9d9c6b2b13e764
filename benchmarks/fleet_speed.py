"""How fast is the fleet-mix optimisation? The MILP at the issue's size (20 instance types x 10 buckets, target
under 2 s), and `plan fleet` end to end on examples/chat-mix.yaml (shape search, MILP, simulator replay) on one
process and on one per CPU (the searches side by side in copies of the process, planner.fleet._run_ahead), each in a
fresh interpreter (a catalog keeps the replays it ran, and the first run's would serve the second).

    python benchmarks/fleet_speed.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the random problems the tests solve too

import numpy as np
from record import emit, processes

from chipwise.catalog import load_catalog
from chipwise.planner.fleet import plan_fleet
from chipwise.planner.fleet_mix import solve
from chipwise.sweep.backends import cpu_count
from fleet_problems import random_problem

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "chat-mix.yaml"


def main() -> None:
    times = []
    for seed in range(5):
        p = random_problem(np.random.default_rng(seed), 20, 10, limit=1000)
        t0 = time.perf_counter()
        solve(p)
        times.append(time.perf_counter() - t0)
    emit(
        "fleet.milp_worst_s",
        max(times),
        "s",
        f"fleet MILP, 20 types x 10 buckets: median {np.median(times):.3f} s, worst {max(times):.3f} s (5 instances)",
    )

    for workers in dict.fromkeys((1, cpu_count())):
        subprocess.run([sys.executable, __file__, "--fleet", str(workers)], check=True)


def time_fleet(workers: int) -> None:
    """plan fleet on the README's four chip types, on `workers` processes."""
    start = time.perf_counter()
    report = plan_fleet(
        load_catalog(),
        "llama-3.1-70b",
        str(EXAMPLE),
        {"ttft_p99": 2.0, "tpot_p99": 0.05},
        ["h100-sxm", "h200", "mi300x", "trn2"],
        workers=workers,
    )
    wall = time.perf_counter() - start
    emit(
        f"fleet.plan.{processes(workers)}_s",
        wall,
        "s",
        f"plan fleet, Llama-3.1-70B on {EXAMPLE.name} over 4 chips, {report['search_processes']} process(es): "
        f"{wall:.2f} s (${report['cost_usd_per_hour']:,.2f}/hour, SLO met in replay: {report['slo_met_in_replay']})",
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fleet"]:
        time_fleet(int(sys.argv[2]))
    else:
        main()
