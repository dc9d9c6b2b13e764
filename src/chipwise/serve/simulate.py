"""Simulate a serving job on a deployment: draw the requests (lengths, prefix-cache hits, arrivals), run the
event simulation, and summarise it (serve.sim.metrics)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.disaggregated import KVTransfer
from chipwise.serve.sim.arrivals import arrival_times
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.sim.run import Deployment, SimOutput, simulate
from chipwise.workload.serving import ServingJob


@dataclass(frozen=True)
class Pool:
    """`replicas` identical replicas of `setup` in one role ('both', 'prefill' or 'decode')."""

    setup: ReplicaSetup
    replicas: int
    role: str = "both"

    @property
    def chips(self) -> float:
        return self.setup.chips * self.replicas


@dataclass(frozen=True)
class ServingSetup:
    """A deployment: one pool, or a prefill pool and a decode pool joined by a KV transfer."""

    pools: tuple[Pool, ...]
    router: str = "least_loaded"
    transfer: KVTransfer | None = None

    @property
    def chips(self) -> float:
        return sum(p.chips for p in self.pools)

    @property
    def disaggregated(self) -> bool:
        return len(self.pools) == 2

    def deployment(self) -> Deployment:
        t = self.transfer
        return Deployment(
            pools=tuple(p.setup.pool(p.replicas, p.role) for p in self.pools),
            router=self.router,
            transfer_latency_s=t.latency_s if t else 0.0,
            transfer_s_per_token=t.s_per_token if t else 0.0,
        )


def run_job(
    job: ServingJob,
    setup: ServingSetup,
    seed: int = 0,
    targets: dict[str, float] | None = None,
    requests: int | None = None,
    basis: str = "steady",
) -> tuple[dict[str, Any], SimOutput]:
    """Simulate the job (or its first `requests` requests) and return the summary and the raw output."""
    rng = np.random.default_rng(seed)
    n = int(requests or job.requests)
    inputs, outputs = job.lengths(n, rng)
    cached = np.floor(inputs * job.prefix_hit_rate).astype(np.int64)
    arrivals = arrival_times(job, n, rng)
    stop = job.duration_s if job.duration_s is not None and job.load.kind == "closed" else math.inf
    out = simulate(
        setup.deployment(),
        inputs,
        outputs,
        cached,
        arrivals,
        concurrency=job.load.concurrency,
        stop_issuing_at=stop,
    )
    chips = max(setup.chips, 1e-9)
    return summarise(out, chips=chips, targets=targets, basis=basis), out
