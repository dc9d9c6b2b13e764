"""How fast is the serving simulator? Wall time of 10,000 and 1,000,000 Poisson requests of Llama-3.1-70B (fp8)
on 8 H100 (one TP8 replica), and of `plan serve` over every chip in the catalog for Llama-3.1-70B and for
DeepSeek-R1 (a MoE model: expert and attention-DP shapes make its search the largest), in process on one process
and on one per CPU as the command runs it, and the command itself with its start-up.

    python benchmarks/serve_speed.py [--skip-million]

Targets (issue 4): 10k requests under 2 s and 1M under 3 min on a 2-core machine; plan serve under 5 s.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from cli_startup import COMMANDS
from cli_startup import wall as command_wall
from record import emit, processes

from chipwise.catalog import load_catalog
from chipwise.hardware import hardware
from chipwise.planner.serving_plan import plan_serving
from chipwise.serve.build import setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.arrivals import open_loop_times
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.sim.run import Deployment, simulate
from chipwise.sweep.backends import cpu_count
from chipwise.workload import load_model
from chipwise.workload.lengths import LengthDist, LengthSpec
from chipwise.workload.load import Load


def simulate_poisson(n: int, rate: float) -> tuple[float, dict[str, object]]:
    """Wall seconds to build the replica, draw n requests, simulate and summarise them."""
    start = time.perf_counter()
    catalog = load_catalog()
    model = load_model(catalog, "llama-3.1-70b")
    system = hardware(catalog).system("h100-sxm")
    plan = ReplicaPlan(tp=8, max_batch=256, max_tokens=8192, weight_precision="fp8", kv_precision="fp8")
    setup = setup_replica(catalog, model, system, "trtllm", plan, 1024.0, 256.0)
    rng = np.random.default_rng(0)
    inputs = LengthDist.of(LengthSpec(dist="lognormal", mean=1024, std=512, max=8192)).sample(n, rng)
    outputs = LengthDist.of(LengthSpec(dist="lognormal", mean=256, std=128, max=2048)).sample(n, rng)
    arrivals = open_loop_times(Load("rate", rate=rate), n, rng)
    out = simulate(Deployment((setup.pool(1),)), inputs, outputs, np.zeros(n, dtype=np.int64), arrivals)
    summary = summarise(out, chips=8, targets={"ttft_p99": 2.0, "tpot_p99": 0.05})
    return time.perf_counter() - start, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skip-million", action="store_true", help="only the 10k run and plan serve")
    args = ap.parse_args()
    load_catalog()  # parse the catalog once, outside the timings
    wall, s = simulate_poisson(10_000, 10.0)
    ttft, tpot = s["ttft_s"], s["tpot_s"]
    assert isinstance(ttft, dict) and isinstance(tpot, dict)
    emit(
        "serve.poisson_10k_s",
        wall,
        "s",
        f"10,000 Poisson requests (10 req/s, lognormal 1024/256 tokens), Llama-3.1-70B fp8 on 8 H100 (TP8): "
        f"{wall:.2f} s wall ({wall / 10_000 * 1e6:.0f} us per request); "
        f"TTFT p99 {ttft['p99']:.3f} s, TPOT p99 {tpot['p99'] * 1e3:.1f} ms",
    )
    if not args.skip_million:
        wall, s = simulate_poisson(1_000_000, 10.0)
        emit(
            "serve.poisson_1m_s",
            wall,
            "s",
            f"1,000,000 Poisson requests: {wall:.1f} s wall ({wall / 1e6 * 1e6:.0f} us per request)",
        )
    catalog = load_catalog()
    for name, rate, inp, out in (("llama-3.1-70b", 20.0, 1024, 256), ("deepseek-r1", 5.0, 8000, 1000)):
        for workers in sorted({1, cpu_count()}):
            start = time.perf_counter()
            report = plan_serving(
                catalog,
                name,
                list(catalog.chips),
                Load("rate", rate=rate),
                inp,
                out,
                {"ttft_p99": 2.0, "tpot_p99": 0.05},
                precision="fp8",
                workers=workers,
            )
            wall, best = time.perf_counter() - start, report["best"]
            emit(
                f"serve.plan.{name}.{processes(workers)}_s",
                wall,
                "s",
                f"plan serve in-process (fp8, no start-up) on {workers} process(es), {name} at {rate:g} req/s, "
                f"{inp:,}/{out:,} tokens, TTFT p99 <= 2 s and TPOT p99 <= 50 ms, over all {len(catalog.chips)} "
                f"chips: {wall:.2f} s wall ({report['search']['evaluated']:,} replica "
                f"shapes); cheapest: {best['hardware'] if best else '-'}",
            )
    # the figure: the command as a user types it, start-up included (cli_startup.py's run of it)
    wall = command_wall(COMMANDS["plan serve"].split(), 3)
    emit(
        "serve.plan_command_s",
        wall,
        "s",
        f"chipwise plan serve (Llama-3.1-70B, 20 req/s, 1,024/256 tokens, that SLO, all chips) with start-up, "
        f"best of three runs: {wall:.2f} s",
    )


if __name__ == "__main__":
    main()
