"""How far the steady-state serving estimate (serve/estimate.py, serve/operating.py) is from the simulator it ranks
candidates for.

Per replica: one replica per case, Poisson arrivals at 30%, 60% and 85% of the estimated saturation rate, 1,500
requests of fixed lengths; TPOT (estimate / simulated p50, p99 / p99), TTFT (mean / mean, p99 / p99) and the share
of the offered output tokens/s the simulation delivered.

Fleets of one shape: 4 and 16 replicas behind the router (--router, least-loaded by default) at the same loads per
replica; the p99 TTFT estimate for the fleet (its prompt queue pooled over the replicas) against the simulated
fleet's.

Per fleet (behind the same router): `plan serve` picks the cheapest replica count from the estimate, then the
simulator adds replicas until the SLO holds, or takes them away while it still holds, and narrows the gap between
the fleet that missed and the one that passed; the ratio of the two chip counts is what the estimate missed (above
1: too few chips, below 1: too many).

--sweep runs only the TPOT p99 of the replica cases at fp8 and bf16 and at 50%, 70% and 90% of capacity; --closed
only the TPOT and TTFT p99 of closed loops at half and nine tenths of the batch slots, of fixed and of lognormal
lengths; --random SEED only the random `plan serve` cases of that seed, a --closed-share of them closed loops (0.3),
with --splits prefill/decode pool splits tried too and the three cheapest options simulated.
Run: .venv/bin/python scripts/estimator_vs_simulator.py [--router least_loaded|power_of_two|round_robin] [--sweep]
[--closed] [--random SEED [--closed-share 1.0] [--splits]]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

from chipwise.catalog import load_catalog
from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.perf.device import topology_of
from chipwise.planner.serving_inputs import engine_for, precisions
from chipwise.planner.serving_plan import plan_serving
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.candidates import enumerate_candidates
from chipwise.serve.decode_tail import answer_probabilities
from chipwise.serve.engine import engine_profile
from chipwise.serve.estimate import estimate
from chipwise.serve.operating import at_rate, closed_loop
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.policies import ROUTERS
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.workload import load_model
from chipwise.workload.lengths import LengthDist, read_length
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import DEFAULT_ROUTER
from chipwise.workload.serving_job import ServingJob

#: model, load (a rate in req/s, or closed-loop users), input and output tokens, SLO, chips to try
CASES = [
    ("llama-3.1-70b", Load("rate", rate=10.0), 16384, 256, {"ttft_p99": 3.0, "tpot_p99": 0.05},
     ["gaudi3", "mi325x", "h200", "trn2"]),
    ("llama-3.1-70b", Load("rate", rate=20.0), 1024, 256, {"ttft_p99": 2.0, "tpot_p99": 0.05},
     ["h100-sxm", "mi300x", "trn2", "b200"]),
    ("llama-3.1-8b", Load("rate", rate=50.0), 2048, 512, {"ttft_p99": 1.0, "tpot_p99": 0.03},
     ["h100-sxm", "a100-80gb", "trn2", "tpu-v6e"]),
    ("llama-3.1-70b", Load("rate", rate=20.0), 8192, 512, {"ttft_p99": 2.0, "tpot_p99": 0.04}, ["trn4", "gb300"]),
    ("deepseek-r1", Load("rate", rate=2.0), 1000, 1000, {"ttft_p99": 3.0, "tpot_p99": 0.03}, ["h200", "b200"]),
    ("qwen3-30b-a3b", Load("rate", rate=20.0), 2048, 512, {"ttft_p99": 1.0, "tpot_p99": 0.03}, ["h100-sxm", "mi300x"]),
    ("gpt-oss-120b", Load("rate", rate=10.0), 1024, 1024, {"ttft_p99": 1.0, "tpot_p99": 0.02}, ["h100-sxm", "b200"]),
    ("llama-3.1-70b", Load("closed", concurrency=256), 1024, 256, {"ttft_p99": 3.0, "tpot_p99": 0.05},
     ["h100-sxm", "mi300x", "b200", "trn2"]),
    ("llama-3.1-8b", Load("closed", concurrency=128), 2048, 512, {"ttft_p99": 2.0, "tpot_p99": 0.03},
     ["h100-sxm", "tpu-v6e", "gaudi3"]),
    ("qwen3-30b-a3b", Load("closed", concurrency=200), 1000, 1000, {"tpot_p99": 0.04}, ["h200", "b200", "mi325x"]),
    ("deepseek-r1", Load("closed", concurrency=128), 1000, 1000, {"tpot_p99": 0.05}, ["b200", "h200"]),
]  # fmt: skip

#: model, system, TP, batch limit, prompt tokens, output tokens
REPLICA_CASES = [
    ("llama-3.1-70b", "mi355x", 1, 128, 1000, 200),
    ("llama-3.1-70b", "h100-sxm", 4, 128, 1000, 200),
    ("llama-3.1-70b", "h200", 2, 256, 2000, 500),
    ("llama-3.1-8b", "h100-sxm", 1, 256, 1000, 1000),
    ("llama-3.1-8b", "b200", 1, 256, 4000, 300),
    ("qwen3-30b-a3b", "h200", 1, 256, 1000, 1000),
    ("llama-3.1-70b", "gaudi3", 4, 64, 1000, 200),
    ("llama-3.1-70b", "tpu-v7", 2, 128, 1000, 200),
    ("llama-3.1-8b", "trn2", 4, 16, 1000, 200),
    ("llama-3.1-70b", "trn2", 16, 8, 2000, 400),
    ("deepseek-r1", "b200", 8, 256, 1000, 1000),
    ("gpt-oss-120b", "h100-sxm", 1, 256, 1000, 1000),
    # prompts longer than the room beside the decodes: each runs as chunks, and prompts arriving meanwhile share them
    ("llama-3.1-70b", "gaudi3", 8, 512, 2000, 400),
    ("llama-3.1-8b", "h100-sxm", 1, 256, 16000, 256),
    ("qwen3-32b", "mi300x", 2, 256, 12000, 500),
]
LOADS = (0.3, 0.6, 0.85)  # open loops: shares of the estimated saturation rate
USERS = (0.1, 0.5, 1.0)  # closed loops: shares of the batch limit (steady users, serve.simulate.phase_ramp)


def _case(
    catalog: Catalog, name: str, sid: str, tp: int, max_batch: int, inp: int, out: int, precision: str = ""
) -> tuple[Any, ...]:
    """One replica case: the model, system, engine profile, the estimate of its one shape, its weight and KV
    precisions (`precision` for both, else the checkpoint's and the engine's default), the simulated replica and a
    label."""
    model = load_model(catalog, name)
    system = hardware(catalog).system(sid)
    engine = engine_for(system, None, model)
    eng = engine_profile(catalog, engine, system.chip.family)
    weight, kv = (precision, precision) if precision else precisions("auto", None, eng, model, system)
    fixed = {"tp": tp, "pp": 1, "ep": 1, "attention_dp": 0, "max_batch": max_batch}
    cand = enumerate_candidates(model, topology_of(system), None, fixed)
    est = estimate(model, system, eng, cand, weight, kv, float(inp), float(out), eng.max_tokens)
    plan = ReplicaPlan(tp=tp, max_batch=max_batch, weight_precision=weight, kv_precision=kv)
    replica = setup_replica(catalog, model, system, engine, plan, float(inp), float(out), inp + out)
    return model, system, eng, est, weight, kv, replica, f"{name} {sid} {engine} TP{tp} b{max_batch} {inp}/{out}"


def _alone(
    model: ModelSpec, replica: ReplicaSetup, inp: int, out: int, load: Load, requests: int = 1500, steady: bool = False
) -> dict[str, Any]:
    """The simulation of one replica under `load`, every request of `inp` and `out` tokens (seed 0; `steady`: the
    latencies of the steady state only, as a closed loop's users reach it)."""
    job = ServingJob(model, LengthDist.fixed(inp), LengthDist.fixed(out), load, requests)
    return run_job(job, ServingSetup((Pool(replica, 1),)), seed=0, steady_latencies=steady)[0]


def replicas(catalog: Catalog) -> None:
    print(f"{'case':48s} {'load':>4s}  {'TPOT ms est/sim':>15s} {'p99 est/sim':>13s}  {'TTFT ms est/sim':>15s}"
          f" {'p99 est/sim':>13s} {'kept up':>7s}")  # fmt: skip
    tpot_err: list[float] = []
    ttft_err: list[float] = []
    tail_err: list[float] = []
    slow_err: list[float] = []
    for case in REPLICA_CASES:
        model, system, eng, est, weight, kv, replica, label = _case(catalog, *case)
        inp, out = case[4], case[5]
        for load in LOADS:
            rate = load * float(est.throughput[0]) / out
            op = at_rate(model, system, eng, est, weight, kv, float(inp), float(out), np.asarray([rate]))
            sim = _alone(model, replica, inp, out, Load("rate", rate=rate))
            tpot, ttft = sim["tpot_s"], sim["ttft_s"]
            kept = float(sim["output_tokens_per_s"]) / (rate * out)
            if np.isfinite(op.tpot[0]):
                tpot_err.append(abs(op.tpot[0] / tpot["p50"] - 1.0))
                ttft_err.append(abs(op.ttft[0] / ttft["mean"] - 1.0))
                tail_err.append(abs(op.ttft_p99[0] / ttft["p99"] - 1.0))
                slow_err.append(abs(op.tpot_p99[0] / tpot["p99"] - 1.0))
            print(
                f"{label:48s} {load:4.2f}  {op.tpot[0] * 1e3:7.1f}/{tpot['p50'] * 1e3:<7.1f} "
                f"{op.tpot_p99[0] * 1e3:6.1f}/{tpot['p99'] * 1e3:<6.1f}  "
                f"{op.ttft[0] * 1e3:7.0f}/{ttft['mean'] * 1e3:<7.0f} "
                f"{op.ttft_p99[0] * 1e3:6.0f}/{ttft['p99'] * 1e3:<6.0f} {kept:7.2f}"
            )
            label = ""
    print(
        f"\nmean |estimate / simulation - 1| over {len(tpot_err)} points the estimate finds within capacity: "
        f"TPOT {100 * np.mean(tpot_err):.1f}% (p99 {100 * np.mean(slow_err):.1f}%), TTFT mean "
        f"{100 * np.mean(ttft_err):.1f}%, TTFT p99 {100 * np.mean(tail_err):.1f}%"
    )


SWEEP_LOADS = (0.5, 0.7, 0.9)  # --sweep: shares of a replica's capacity (its decode or its prompts', the lower)


def sweep(catalog: Catalog) -> None:
    """--sweep: the TPOT p99 of every REPLICA_CASES shape at fp8 and bf16 (weights and KV cache) and at 50%, 70% and
    90% of its capacity (the lower of its decode's and its prompts' own), 1,500 requests of fixed lengths each,
    against the simulation: the mean and signed mean error and the points beyond 20%."""
    errors: list[float] = []
    for case in REPLICA_CASES:
        for precision in ("fp8", "bf16"):
            try:
                model, system, eng, est, weight, kv, replica, label = _case(catalog, *case, precision=precision)
            except ChipwiseError as exc:
                print(f"{case[0]} {case[1]} {precision}: {exc}")
                continue
            inp, out = case[4], case[5]
            capacity = min(float(est.throughput[0]) / out, 1.0 / float(est.prefill_work_s[0]))
            for share in SWEEP_LOADS:
                rate = share * capacity
                op = at_rate(model, system, eng, est, weight, kv, float(inp), float(out), np.asarray([rate]))
                if not np.isfinite(op.tpot_p99[0]):
                    continue
                sim = _alone(model, replica, inp, out, Load("rate", rate=rate))
                errors.append(float(op.tpot_p99[0] / sim["tpot_s"]["p99"] - 1.0))
                print(f"{label:48s} {precision:4s} {share:4.2f}  TPOT p99 ms {op.tpot_p99[0] * 1e3:6.1f}/"
                      f"{sim['tpot_s']['p99'] * 1e3:<6.1f} {errors[-1]:+.0%}")  # fmt: skip
    e = np.asarray(errors)
    print(
        f"\nsweep: TPOT p99 estimate / simulation - 1 over {e.size} points: mean |.| {100 * np.mean(np.abs(e)):.1f}%, "
        f"mean {100 * np.mean(e):+.1f}%, beyond 20% {int((np.abs(e) > 0.2).sum())}"
    )


#: replica cases whose lengths are drawn: lognormal prompts and answers of the case's means, a standard deviation of
#: three quarters of each, clipped at eight (prompts) and five (answers) times the mean
DRAWN_CASES = [REPLICA_CASES[i] for i in (0, 1, 2, 4, 6, 12)]


def _drawn(mean: int, spread: float, name: str) -> LengthDist:
    """Lognormal lengths of `mean`, a standard deviation of three quarters of it, clipped at `spread` times it."""
    return read_length(f"lognormal:mean={mean},std={0.75 * mean:g},max={int(spread * mean)}", name, "")


def drawn_lengths(catalog: Catalog) -> None:
    """The replicas of DRAWN_CASES at 30%, 60% and 85% of their estimated capacity under lognormal lengths: the TTFT
    p99 estimate (its prefill at the 99th-percentile prompt where that is longer than the mean's: serve.estimate's
    `tail`) and the TPOT against the simulation's."""
    print(f"{'case':48s} {'load':>4s}  {'TPOT ms est/sim':>15s} {'p99 est/sim':>13s}  {'TTFT p99 ms est/sim':>19s}")
    tpot_err: list[float] = []
    slow_err: list[float] = []
    tail_err: list[float] = []
    for case in DRAWN_CASES:
        model, system, eng, est, weight, kv, replica, label = _case(catalog, *case)
        inp, out = _drawn(case[4], 8.0, "input tokens"), _drawn(case[5], 5.0, "output tokens")
        cand = est.cand
        tail = inp.quantile(0.99)
        est = estimate(model, system, eng, cand, weight, kv, inp.expected, out.expected, eng.max_tokens, tail=tail)
        for load in LOADS:
            rate = load * float(est.throughput[0]) / out.expected
            job = ServingJob(model, inp, out, Load("rate", rate=rate), 3000)
            answers = np.asarray(job.answer_spread(answer_probabilities()))
            args = (inp.expected, out.expected, np.asarray([rate]))
            op = at_rate(model, system, eng, est, weight, kv, *args, answers=answers)
            sim, _ = run_job(job, ServingSetup((Pool(replica, 1),)), seed=0)
            tpot, ttft = sim["tpot_s"], sim["ttft_s"]
            if np.isfinite(op.tpot[0]):
                tpot_err.append(abs(op.tpot[0] / tpot["p50"] - 1.0))
                slow_err.append(abs(op.tpot_p99[0] / tpot["p99"] - 1.0))
                tail_err.append(abs(op.ttft_p99[0] / ttft["p99"] - 1.0))
            print(
                f"{label:48s} {load:4.2f}  {op.tpot[0] * 1e3:7.1f}/{tpot['p50'] * 1e3:<7.1f} "
                f"{op.tpot_p99[0] * 1e3:6.1f}/{tpot['p99'] * 1e3:<6.1f}  "
                f"{op.ttft_p99[0] * 1e3:9.0f}/{ttft['p99'] * 1e3:<9.0f}"
            )
            label = ""
    print(
        f"\nlognormal lengths: mean |estimate / simulation - 1| over {len(tpot_err)} points: TPOT "
        f"{100 * np.mean(tpot_err):.1f}% (p99 {100 * np.mean(slow_err):.1f}%), TTFT p99 {100 * np.mean(tail_err):.1f}%"
    )


#: model, system, TP, batch limit, prompt tokens, output tokens: fleets of them behind a router
FLEET_CASES = [
    ("llama-3.1-70b", "h200", 4, 8, 16384, 256),
    ("llama-3.1-70b", "h200", 8, 64, 16384, 256),
    ("llama-3.1-70b", "h100-sxm", 2, 64, 2000, 256),
    ("llama-3.1-8b", "h100-sxm", 1, 256, 1000, 1000),
    ("llama-3.1-70b", "trn2", 16, 8, 2000, 400),
    ("llama-3.1-70b", "h200", 8, 4, 100000, 200),
    ("llama-3.1-8b", "h100-sxm", 1, 32, 8000, 100),
]
FLEET_REPLICAS = (4, 16)


def fleets(catalog: Catalog, router: str) -> None:
    """Fleets of 4 and 16 replicas behind `router` at 30%, 60% and 85% of a replica's capacity each: the p99 TTFT
    estimate (at_rate with the fleet's rate: the prompt queue pooled over the replicas) against the simulated
    fleet's."""
    print(f"{'case':48s} {'fleet':>5s} {'load':>4s}  {'TTFT p99 s est/sim':>19s}  error  {'TPOT p99 ms est/sim':>19s}")
    errors: dict[int, list[float]] = {n: [] for n in FLEET_REPLICAS}
    tpot_errors: dict[int, list[float]] = {n: [] for n in FLEET_REPLICAS}
    for case in FLEET_CASES:
        model, system, eng, est, weight, kv, replica, label = _case(catalog, *case)
        inp, out = case[4], case[5]
        cap = min(float(est.throughput[0]) / out, 1.0 / float(est.prefill_work_s[0]))
        for n in FLEET_REPLICAS:
            for load in LOADS:
                rate = load * cap
                op = at_rate(model, system, eng, est, weight, kv, float(inp), float(out), np.asarray([rate]), None,
                             n * rate, router)  # fmt: skip
                job = ServingJob(model, LengthDist.fixed(inp), LengthDist.fixed(out), Load("rate", rate=n * rate),
                                 max(1500, 200 * n))  # fmt: skip
                sim, _ = run_job(job, ServingSetup((Pool(replica, n),), router), seed=0)
                err = float(op.ttft_p99[0] / sim["ttft_s"]["p99"] - 1.0)
                tpot = (float(op.tpot_p99[0]), float(sim["tpot_s"]["p99"]))
                if math.isfinite(err):
                    errors[n].append(err)
                    tpot_errors[n].append(tpot[0] / tpot[1] - 1.0)
                print(f"{label:48s} {n:5d} {load:4.2f}  {op.ttft_p99[0]:9.3f}/{sim['ttft_s']['p99']:<9.3f}  {err:+.0%}"
                      f"  {tpot[0] * 1e3:9.1f}/{tpot[1] * 1e3:<9.1f}")  # fmt: skip
                label = ""
    for n, e in errors.items():
        a, t = np.asarray(e), np.asarray(tpot_errors[n])
        print(f"{n} replicas: TTFT p99 estimate / simulation - 1 over {a.size} points: mean |.| "
              f"{np.abs(a).mean():.1%}, mean {a.mean():+.1%}, range {a.min():+.0%} to {a.max():+.0%}; TPOT p99 mean "
              f"|.| {np.abs(t).mean():.1%}, mean {t.mean():+.1%}")  # fmt: skip


def closed_loops(catalog: Catalog) -> None:
    """The same replicas under closed loops of steady users (closed_loop against the simulation's steady state)."""
    print(f"{'case':48s} {'users':>5s}  {'TPOT ms est/sim':>15s}  {'TTFT ms est/sim':>15s} {'p99 est/sim':>13s}"
          f"  {'tok/s est/sim':>13s}")  # fmt: skip
    errors: list[tuple[float, float, float]] = []
    for case in REPLICA_CASES:
        model, system, eng, est, weight, kv, replica, label = _case(catalog, *case)
        inp, out = case[4], case[5]
        for share in USERS:
            users = max(1, round(share * float(est.batch[0])))
            op = closed_loop(model, system, eng, est, weight, kv, float(inp), float(out), np.asarray([float(users)]))
            sim = _alone(model, replica, inp, out, Load("closed", concurrency=users), max(1500, 8 * users), steady=True)
            tpot, ttft = sim["tpot_s"], sim["ttft_s"]
            tokens = float(op.rho[0] * est.throughput[0])
            errors.append((op.tpot[0] / tpot["p50"] - 1.0, op.ttft[0] / ttft["mean"] - 1.0,
                           tokens / float(sim["output_tokens_per_s"]) - 1.0))  # fmt: skip
            print(
                f"{label:48s} {users:5d}  {op.tpot[0] * 1e3:7.1f}/{tpot['p50'] * 1e3:<7.1f}  "
                f"{op.ttft[0] * 1e3:7.0f}/{ttft['mean'] * 1e3:<7.0f} "
                f"{op.ttft_p99[0] * 1e3:6.0f}/{ttft['p99'] * 1e3:<6.0f}"
                f"  {tokens:6.0f}/{float(sim['output_tokens_per_s']):<6.0f}"
            )
            label = ""
    e = np.abs(np.asarray(errors))
    print(
        f"\nmean |estimate / simulation - 1| over {len(errors)} closed-loop points: TPOT {100 * e[:, 0].mean():.1f}%, "
        f"TTFT mean {100 * e[:, 1].mean():.1f}%, output tok/s {100 * e[:, 2].mean():.1f}%"
    )


CLOSED_SHARES = (0.5, 0.9)  # --closed: users as shares of the batch limit


def closed_tails(catalog: Catalog) -> None:
    """--closed: the TPOT p99 (serve.decode_tail's closed_excess) and TTFT p99 of closed loops against the
    simulation's steady state, the replica cases of fixed lengths and DRAWN_CASES of lognormal ones, at
    CLOSED_SHARES of the batch."""
    print(f"{'case':52s} {'users':>5s}  {'TPOT ms est/sim':>15s} {'p99 est/sim':>13s}  {'TTFT p99 ms est/sim':>19s}")
    errors: dict[str, list[tuple[float, float]]] = {"fixed": [], "lognormal": []}
    for kind, cases in (("fixed", REPLICA_CASES), ("lognormal", DRAWN_CASES)):
        for case in cases:
            model, system, eng, est, weight, kv, replica, label = _case(catalog, *case)
            inp, out = LengthDist.fixed(case[4]), LengthDist.fixed(case[5])
            if kind == "lognormal":
                inp, out = _drawn(case[4], 8.0, "input tokens"), _drawn(case[5], 5.0, "output tokens")
                args = (inp.expected, out.expected, eng.max_tokens)
                est = estimate(model, system, eng, est.cand, weight, kv, *args, tail=inp.quantile(0.99))
            for share in CLOSED_SHARES:
                users = max(1, round(share * float(est.batch[0])))
                job = ServingJob(model, inp, out, Load("closed", concurrency=users), max(1500, 8 * users))
                answers = np.asarray(job.answer_spread(answer_probabilities())) if kind == "lognormal" else None
                op = closed_loop(model, system, eng, est, weight, kv, inp.expected, out.expected,
                                 np.asarray([float(users)]), answers=answers)  # fmt: skip
                sim = run_job(job, ServingSetup((Pool(replica, 1),)), seed=0, steady_latencies=True)[0]
                tpot, ttft = sim["tpot_s"], sim["ttft_s"]
                errors[kind].append((op.tpot_p99[0] / tpot["p99"] - 1.0, op.ttft_p99[0] / ttft["p99"] - 1.0))
                print(f"{(kind[:3] + ' ' + label):52s} {users:5d}  {op.tpot[0] * 1e3:7.1f}/{tpot['p50'] * 1e3:<7.1f} "
                      f"{op.tpot_p99[0] * 1e3:6.1f}/{tpot['p99'] * 1e3:<6.1f}  "
                      f"{op.ttft_p99[0] * 1e3:9.0f}/{ttft['p99'] * 1e3:<9.0f}")  # fmt: skip
                label = ""
    for kind, e in errors.items():
        a = np.asarray(e)
        print(f"closed loops, {kind} lengths, estimate / simulation - 1 over {len(a)} points: TPOT p99 mean |.| "
              f"{np.abs(a[:, 0]).mean():.1%} (mean {a[:, 0].mean():+.1%}), TTFT p99 mean |.| "
              f"{np.abs(a[:, 1]).mean():.1%} (mean {a[:, 1].mean():+.1%})")  # fmt: skip


def random_cases(
    catalog: Catalog, router: str, count: int = 40, seed: int = 7, closed_share: float = 0.3, splits: bool = False
) -> None:
    """`plan serve` on random loads (7 models, 13 chips, open and closed loops, 256-16,000-token prompts, three SLO
    levels): the estimate's chip count against the simulated one, and whether the simulated option meets its SLO
    and keeps up with its load. `splits`: prefill/decode splits tried too (open and closed loops), the three
    cheapest options simulated, and how many cases the best simulated option meets, how many of those are splits,
    and how many of the splits simulated met their SLO."""
    rng = np.random.default_rng(seed)
    models = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "qwen3-32b", "gpt-oss-120b", "deepseek-r1",
              "mixtral-8x7b"]  # fmt: skip
    chips = ["h100-sxm", "h200", "b200", "gb200", "mi300x", "mi355x", "gaudi3", "trn2", "tpu-v6e", "tpu-v7",
             "a100-80gb", "inf2", "trn1"]  # fmt: skip
    ratios: list[float] = []
    healthy = 0
    best_met = best_split = checked_splits = met_splits = 0
    for _ in range(count):
        model, chip = models[rng.integers(len(models))], chips[rng.integers(len(chips))]
        inp, out = int(rng.choice([256, 1024, 4096, 16000])), int(rng.choice([64, 256, 1024]))
        closed = rng.random() < closed_share
        users, rate = int(rng.choice([8, 64, 512])), float(rng.choice([1, 5, 20, 60]))
        load = Load("closed", concurrency=users) if closed else Load("rate", rate=rate)
        slo = {"ttft_p99": float(rng.choice([1.0, 3.0, 10.0])), "tpot_p99": float(rng.choice([0.03, 0.06, 0.12]))}
        try:
            r = plan_serving(
                catalog, model, [chip], load, inp, out, slo, disaggregated=splits, verify=3 if splits else 1,
                router=router,
            )  # fmt: skip
        except ChipwiseError:
            continue
        if not r["results"] or not r["verified"]:
            continue
        if splits:
            best = r["verified"][0]
            best_met += bool(best["slo_met"] and best["keeps_up"])
            best_split += bool(best["slo_met"] and best["keeps_up"] and best["disaggregated"])
            split_checks = [v for v in r["verified"] if v["disaggregated"]]
            checked_splits += len(split_checks)
            met_splits += sum(bool(v["slo_met"] and v["keeps_up"]) for v in split_checks)
            kind = f"{users} users" if closed else f"{rate:g} req/s"
            print(f"{model:14s} {chip:9s} {kind:10s} {inp:6d}/{out:<5d} {slo} -> {best['hardware']} "
                  f"{best['chips']} chips met={best['slo_met']} ${best['cost_usd_per_mtok']:.2f}/M")  # fmt: skip
        est, sim = r["results"][0]["chips"], r["verified"][0]
        ratios.append(sim["chips"] / est)
        healthy += bool(sim["slo_met"] and sim["keeps_up"])
    a = np.asarray(ratios)
    if splits:
        print(
            f"random plan-serve cases with splits: {a.size}; the best simulated option meets its SLO and keeps up in "
            f"{best_met}, a split in {best_split}; splits simulated {checked_splits}, meeting {met_splits}"
        )
        return
    print(
        f"random plan-serve cases: {a.size}; at the simulated count {int((a == 1.0).sum())}; simulated options that "
        f"meet their SLO and keep up {healthy}; ratio {a.min():.2f}-{a.max():.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--router", default=DEFAULT_ROUTER, choices=list(ROUTERS), help="the fleets' router")
    parser.add_argument("--sweep", action="store_true", help="only the TPOT p99 sweep over precisions and loads")
    parser.add_argument("--closed", action="store_true", help="only the closed loops' TPOT and TTFT p99")
    parser.add_argument("--random", type=int, metavar="SEED", help="only the random plan-serve cases of this seed")
    parser.add_argument("--closed-share", type=float, default=0.3, help="with --random: the share of closed loops")
    parser.add_argument("--splits", action="store_true", help="with --random: prefill/decode splits tried too")
    args = parser.parse_args()
    router = args.router
    catalog = load_catalog()
    if args.sweep:
        return sweep(catalog)
    if args.closed:
        return closed_tails(catalog)
    if args.random is not None:
        return random_cases(catalog, router, seed=args.random, closed_share=args.closed_share, splits=args.splits)
    replicas(catalog)
    print()
    closed_loops(catalog)
    print()
    closed_tails(catalog)
    print()
    drawn_lengths(catalog)
    print()
    fleets(catalog, router)
    print()
    start = time.perf_counter()
    print(f"{'model':14s} {'load':>10s} {'in/out':>11s} {'chip':10s} {'estimate':>9s} {'simulated':>10s} {'ratio':>6s}"
          "  SLO met")  # fmt: skip
    for model, load, inp, out, slo, chips in CASES:
        for chip in chips:
            try:
                r = plan_serving(
                    catalog, model, [chip], load, inp, out, slo, precision="fp8", disaggregated=False, verify=1,
                    router=router,
                )  # fmt: skip
            except ChipwiseError as exc:
                print(f"{model:14s} {chip:10s} {exc}")
                continue
            if not r["results"] or not r["verified"]:
                print(f"{model:14s} {chip:10s} no plan")
                continue
            est, sim = r["results"][0]["chips"], r["verified"][0]
            label = load.label().replace(" concurrent users", " users")
            print(
                f"{model:14s} {label:>10s} {inp:6d}/{out:4d} {chip:10s} {est:9.1f} {sim['chips']:10.1f} "
                f"{sim['chips'] / est:6.2f}  {sim['slo_met']}"
            )
    print(f"{time.perf_counter() - start:.1f} s")
    print()
    random_cases(catalog, router)


if __name__ == "__main__":
    main()
