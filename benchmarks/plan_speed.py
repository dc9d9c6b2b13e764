"""How fast is the training model? Prints plans evaluated per second on one core, the full-search time of GPT-3 175B
on 1,024 H100 in fp8, a 1M-chip Trainium3 plan and whole-catalog rankings, on one process and on one per CPU (run:
make bench, or python benchmarks/plan_speed.py)."""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: NumPy's element-wise work is single-threaded anyway

import numpy as np
from record import emit, processes

from chipwise.catalog import load_catalog
from chipwise.hardware import hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.planner.training import plan_training
from chipwise.sweep.backends import cpu_count
from chipwise.train.plans import PlanArrays, enumerate_plans
from chipwise.train.search import search_plans
from chipwise.train.step import train_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def main() -> None:
    catalog = load_catalog()
    hw = hardware(catalog)
    model = load_model(catalog, "gpt3-175b")
    job = TrainingJob(model, 2048, 1536, "fp8")
    system = hw.system("h100-sxm")
    dev, topo = device_of(system), topology_of(system)

    t0 = time.perf_counter()
    search = search_plans(model, job, system, 1024)
    full = time.perf_counter() - t0
    emit(
        "train.full_space_s",
        full,
        "s",
        f"full plan space of GPT-3 175B on 1,024 H100 (fp8): {search.evaluated:,} plans, "
        f"{search.feasible:,} feasible, searched in {full:.3f} s",
    )

    base = enumerate_plans(model, job, 1024, topo.domain_ranks)
    reps = -(-1_000_000 // len(base))
    big = PlanArrays.concat([base] * reps)
    train_step(model, job, dev, topo, big.take(np.arange(1000)), 1024)  # warm-up
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        train_step(model, job, dev, topo, big, 1024)
        best = min(best, time.perf_counter() - t0)
    rate = len(big) / best
    emit(
        "train.plans_per_s",
        rate,
        "plans/s",
        f"vectorised step model: {len(big):,} plans in {best:.3f} s = {rate:,.0f} plans/s on one core",
    )

    t0 = time.perf_counter()
    plan_training(catalog, "llama-3.1-405b", 1_000_000, ["trn3"], tokens=15e12)
    wall = time.perf_counter() - t0
    emit(
        "train.million_chips_s",
        wall,
        "s",
        f"plan train, Llama-3.1-405B on 1,000,000 Trainium3 (plan, economics, reliability): {wall:.2f} s",
    )

    for name, chips in (("llama-3.1-70b", 4096), ("deepseek-v3", 2048)):
        for workers in sorted({1, cpu_count()}):  # one process, and one per CPU as the command runs it
            t0 = time.perf_counter()
            report = plan_training(catalog, name, chips, list(catalog.chips), tokens=15e12, workers=workers)
            wall = time.perf_counter() - t0
            emit(
                f"train.rank.{name}.{processes(workers)}_s",
                wall,
                "s",
                f"plan train, {name} on {chips:,} chips of each of the {len(report['results'])} catalog chips, "
                f"on {workers} process(es): {wall:.2f} s",
            )


if __name__ == "__main__":
    main()
