"""Simulate a serving case as its row was measured (an open loop past its capacity at the edge of it, a closed loop
ramped, warmed up or measured in time windows) and compare each metric the row measured with its prediction."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chipwise.serve.sim.metrics import per_request, stats
from chipwise.serve.sim.metrics import summarise as summarise_run
from chipwise.serve.sim.run import simulate
from chipwise.serve.simulate import SATURATED, ServingSetup, cached_tokens, run_job, steady_window
from chipwise.validation.consistency import self_check
from chipwise.validation.harness import Harness
from chipwise.validation.report import RowResult
from chipwise.validation.serving_case import Case
from chipwise.validation.serving_case_load import requests_to_simulate
from chipwise.workload.serving_job import ServingJob

_STAT_KEY = {"p50": "p50", "p90": "p90", "p99": "p99", "mean": "mean", "value": "mean"}


#: A saturated open-loop run's latencies are taken at this share of the capacity it did deliver.
EDGE = 0.95


@dataclass(frozen=True)
class Simulated:
    """A case's simulation: the run's summary, the one its latencies are read from, and the notes on both."""

    summary: dict[str, Any]
    latencies: dict[str, Any]
    notes: tuple[str, ...]
    self_consistent: bool | None


def predict_case(case: Case, seed: int = 0) -> list[RowResult]:
    """Simulate a case and compare each measured metric with its prediction."""
    return compare(case, simulate_case(case, seed))


def simulate_case(case: Case, seed: int = 0) -> Simulated:
    """Simulate a case as its row was measured.

    A published open-loop run (MLPerf Server, a fixed request rate) was sustainable: the load generator's rate
    was at most the system's capacity. When the predicted capacity is below that rate, the simulated queue
    grows without bound and its latencies depend only on how long one simulates; the prediction then reports
    the capacity as throughput and the latencies at the edge of it (EDGE x capacity), and says so in the notes.
    """
    row = case.row
    summary = _run(case.job, case.setup, seed, case.basis, case.ramp_s, case.after_warmup, case.windows)
    latencies = summary
    notes = list(case.notes)
    load = case.job.load
    if case.latency_load is not None:
        lat_job = replace(
            case.job, load=case.latency_load, requests=requests_to_simulate(case.latency_load, 0, None, 0.0)[0]
        )
        latencies = _open_loop_phase(_run(lat_job, case.setup, seed, "steady", case.ramp_s))
    elif load.kind == "rate":
        offered = load.rate * case.job.mean_output
        delivered = float(summary["output_tokens_per_s"])
        if delivered < SATURATED * offered:
            edge = EDGE * delivered / case.job.mean_output
            latencies, _ = run_job(replace(case.job, load=replace(load, rate=edge)), case.setup, seed=seed)
            notes.append(
                f"predicted capacity {delivered / case.job.mean_output:.3g} req/s is below the measured "
                f"{load.rate:.3g} req/s: latencies at {edge:.3g} req/s"
            )
    if case.kv_holds:
        cap = case.setup.pools[-1].setup.plan.max_batch
        preempted = int(summary.get("requests", {}).get("preemptions", 0))
        notes.append(
            f"batch cap {cap} exceeds the {case.kv_holds} sequences the KV cache holds at full length; the engine "
            f"admits on demand and preempts ({preempted} preemptions simulated)"
        )
    # a closed loop that issues for a window and then drains keeps fewer than its users in flight for part of the
    # run, so its users do not bound its throughput by Little's law
    drains = load.kind == "closed" and case.job.duration_s is not None and case.windows is None
    check = None if drains else self_check(row, load)
    if check is not None and not check.consistent:
        notes.append(check.note())
    return Simulated(summary, latencies, tuple(notes), None if check is None else check.consistent)


def compare(case: Case, sim: Simulated) -> list[RowResult]:
    """Each metric the case's row measured, next to its prediction by the simulation."""
    row = case.row
    results: list[RowResult] = []
    chips = row.num_chips or case.setup.chips
    for m in row.measured:
        if m.metric == "output_tokens_per_s_per_chip":
            predicted = float(sim.summary["output_tokens_per_s"]) / float(chips)
        else:
            key = "ttft_s" if m.metric == "ttft_s" else "tpot_s"
            predicted = float(sim.latencies[key][_STAT_KEY.get(m.stat, "mean")])
        if not math.isfinite(predicted) or predicted <= 0:
            continue
        results.append(
            RowResult(
                id=row.id,
                chip=row.chip,
                metric=m.metric,
                measured=m.value,
                predicted=predicted,
                plan_source=case.plan_source,
                source_family=row.source_family,
                notes="; ".join((*sim.notes, row.notes)).strip("; "),
                self_consistent=sim.self_consistent,
                engine=case.group[0],
                stat=m.stat,
            )
        )
    return results


def _open_loop_phase(summary: dict[str, Any]) -> dict[str, Any]:
    """TTFT of an open loop from a closed loop at the same occupancy. A closed loop issues a request when another
    finishes, i.e. at an iteration boundary; an open-loop arrival lands at a random point of the iteration in
    flight and waits out the rest of it first: half an iteration on average, where a decoding request's
    iteration interval is its TPOT."""
    tpot = summary["tpot_s"]["mean"]
    if not math.isfinite(tpot):
        return summary
    ttft = {k: v + 0.5 * tpot for k, v in summary["ttft_s"].items()}
    return {**summary, "ttft_s": ttft}


def _run(
    job: ServingJob,
    setup: ServingSetup,
    seed: int,
    basis: str,
    ramp_s: float,
    after_warmup: bool = False,
    windows: Harness | None = None,
) -> dict[str, Any]:
    """Simulate a job. A closed loop with a ramp issues its users over `ramp_s` seconds and takes its latencies
    over the requests that arrive after the ramp and before the last `users` requests (which see the final drain);
    with `after_warmup` its users start together and the latencies are of requests that arrive after every user's
    first request finished, again before the last `users`; with `windows` (a time-window load generator) they
    are of the requests that end within its measurement."""
    if windows is not None and job.load.kind == "closed":
        return _windowed(job, setup, seed, windows)
    if job.load.kind != "closed" or (ramp_s <= 0.0 and not after_warmup):
        return run_job(job, setup, seed=seed, basis=basis)[0]
    rng = np.random.default_rng(seed)
    n = job.requests
    inputs, outputs = job.lengths(n, rng)
    cached = cached_tokens(job, setup, inputs, outputs, rng)
    users = job.load.concurrency
    out = simulate(setup.deployment(), inputs, outputs, cached, None, concurrency=users, ramp_s=ramp_s)
    window = steady_window(out, users, start=ramp_s, after_warmup=after_warmup)
    return summarise_run(out, chips=max(setup.chips, 1e-9), basis=basis, latency_window=window)


def _windowed(job: ServingJob, setup: ServingSetup, seed: int, gen: Harness) -> dict[str, Any]:
    """A closed loop measured in time windows: users start together and keep issuing until the measurement can
    end; latencies over the requests that ended within it, output throughput as their tokens over the span from
    the first request's start to the last one's end."""
    summary, out = run_job(job, setup, seed=seed, basis="run")
    req = out.requests
    finish = req["finish"]
    measured = np.isfinite(finish) & (finish <= gen.measurement_end(finish))
    if not measured.any():
        return summary
    lat = per_request(out)
    kept = {k: np.where(measured, v, np.nan) for k, v in lat.items() if k != "served"}
    span = float(finish[measured].max() - np.nanmin(req["arrival"]))
    tokens = float(req["output"][measured].sum())
    return {
        **summary,
        "ttft_s": stats(kept["ttft"]),
        "ttft_wait_s": stats(kept["wait"]),
        "tpot_s": stats(kept["tpot"]),
        "e2e_s": stats(kept["e2e"]),
        "output_tokens_per_s": tokens / span if span > 0 else summary["output_tokens_per_s"],
    }
