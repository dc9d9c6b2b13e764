"""Simulate a serving job on a deployment: draw the requests (lengths, prefix-cache hits, arrivals), run the
event simulation, and summarise it (serve.sim.metrics)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.disaggregated import KVTransfer
from chipwise.serve.sim.arrivals import arrival_times, offered_request_rate
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.sim.run import Deployment, SimOutput, simulate
from chipwise.types import IntArray
from chipwise.workload.load import Load
from chipwise.workload.serve_scenario import DEFAULT_ROUTER
from chipwise.workload.serving_job import ServingJob

#: Requests of each run that measures a deployment's capacity (at least this many, and at least four batches'
#: worth, so the batch refills several times inside the steady window).
CAPACITY_REQUESTS = 2000
#: Replicas of one pool a capacity measurement simulates; a larger pool is that many, scaled.
CAPACITY_REPLICAS = 8
#: An open-loop run is saturated when it delivers less than this share of the output tokens/s it is offered.
SATURATED = 0.95
#: An open-loop load at or above this share of the capacity is reported as near capacity: queueing then
#: dominates TTFT, and past 1 the queue (and TTFT) grows for as long as the run lasts.
NEAR_CAPACITY = 0.9


@dataclass(frozen=True)
class Pool:
    """`replicas` identical replicas of `setup` in one role ('both', 'prefill' or 'decode')."""

    setup: ReplicaSetup
    replicas: int
    role: str = "both"

    @property
    def chips(self) -> float:
        """Chips the pool occupies: replicas smaller than a chip (one or two Trainium cores) still take whole
        chips, the cores they leave idle (a quarter of a Trn2 is not rented, nor powered, on its own)."""
        chips = self.setup.chips * self.replicas
        return float(math.ceil(chips - 1e-9)) if self.setup.chips < 1.0 else chips


@dataclass(frozen=True)
class ServingSetup:
    """A deployment: one pool, or a prefill pool and a decode pool joined by a KV transfer."""

    pools: tuple[Pool, ...]
    router: str = DEFAULT_ROUTER
    transfer: KVTransfer | None = None

    @property
    def chips(self) -> float:
        return sum(p.chips for p in self.pools)

    @property
    def disaggregated(self) -> bool:
        return len(self.pools) == 2

    def scaled(self, share: float) -> ServingSetup:
        """This deployment with each pool's replicas times `share`, rounded (at least one each): a slice of a fleet
        too large to simulate whole, its pools in proportion."""
        return replace(self, pools=tuple(Pool(p.setup, max(1, round(p.replicas * share)), p.role) for p in self.pools))

    def deployment(self, seed: int = 0) -> Deployment:
        t = self.transfer
        return Deployment(
            pools=tuple(p.setup.pool(p.replicas, p.role) for p in self.pools),
            router=self.router,
            transfer_latency_s=t.latency_s if t else 0.0,
            transfer_s_per_token=t.s_per_token if t else 0.0,
            transfer_windows=t.windows if t else (),
            front_latency_s=self.pools[0].setup.engine.host_request_s,
            seed=seed,
            kv_pull=self.disaggregated and self.pools[-1].setup.engine.kv_pull,
        )


def steady_window(out: SimOutput, users: int, start: float = 0.0, after_warmup: bool = True) -> tuple[float, float]:
    """The arrival times a closed loop's latencies are taken over in its steady state: from `start` (a ramp's end)
    or, `after_warmup`, from the moment every user's first request has finished (the users start together, so
    their first prompts arrive as one burst), to the arrival of the last `users` requests, which see the final
    drain."""
    req = out.requests
    issued = np.flatnonzero(np.isfinite(req["arrival"]))
    order = issued[np.argsort(req["arrival"][issued], kind="stable")]
    arrival = req["arrival"][order]
    hi = float(arrival[max(0, arrival.size - 1 - users)]) if arrival.size else math.inf
    lo = float(np.nanmax(req["finish"][order[:users]])) if after_warmup and arrival.size > users else start
    return lo, hi


def run_job(
    job: ServingJob,
    setup: ServingSetup,
    seed: int = 0,
    targets: dict[str, float] | None = None,
    requests: int | None = None,
    basis: str = "steady",
    steady_latencies: bool = False,
    bounds: bool = False,
) -> tuple[dict[str, Any], SimOutput]:
    """Simulate the job (or its first `requests` requests) and return the summary and the raw output. With
    `steady_latencies` a closed loop of more than two waves runs as a deployment's steady users: they start one
    after another over about one request's latency (phase_ramp), and its latencies and throughput are taken after
    that ramp and before the last `users` requests (steady_window). `bounds`: the summary gives its percentiles'
    upper confidence bounds (metrics.summarise)."""
    rng = np.random.default_rng(seed)
    n = int(requests or job.requests)
    inputs, outputs = job.lengths(n, rng)
    # arrivals before the prefix-cache draw, which a prompt pool alone makes: drawn after it, 2,000 requests with
    # prompt_pool: 1999 (one repeat at most) arrived otherwise than without it, and e2e's mean read 1.5219 s where
    # it reads 1.5315; a seed now gives the same lengths and arrivals whatever the pool (a closed loop draws none)
    arrivals = arrival_times(job, n, rng)
    cached = cached_tokens(job, setup, inputs, outputs, rng)
    stop = job.duration_s if job.duration_s is not None and job.load.kind == "closed" else math.inf
    users = job.load.concurrency
    # a steady state needs at least two waves of requests after the users' first
    steady = steady_latencies and job.load.kind == "closed" and not math.isfinite(stop) and n > 2 * users
    ramp = phase_ramp(setup, job) if steady else 0.0
    out = simulate(
        setup.deployment(seed),
        inputs,
        outputs,
        cached,
        arrivals,
        concurrency=users,
        stop_issuing_at=stop,
        ramp_s=ramp,
    )
    chips = max(setup.chips, 1e-9)
    window = steady_window(out, users, start=ramp, after_warmup=False) if steady else None
    trace = job.load.kind == "trace"  # its arrivals are the load: its goodput and throughput count every request
    return summarise(
        out, chips=chips, targets=targets, basis=basis, latency_window=window, ramp_s=ramp, trace=trace, bounds=bounds
    ), out


def cached_tokens(
    job: ServingJob, setup: ServingSetup, inputs: IntArray, outputs: IntArray, rng: np.random.Generator
) -> IntArray:
    """Prompt tokens of each request served from the prefix cache: the job's shared-prefix share of every prompt
    and, where the load cycles through `job.prompt_pool` distinct prompts, the whole of a repeated one.

    A pool of N prompts is drawn a cycle at a time (each once per cycle, in any order), so the first N requests
    are new and every later one repeats a prompt. A repeat hits when the replica it lands on still caches that
    prompt: it went there before (with R replicas each earlier use did with probability 1/R), and the prompt's
    blocks are still there. They are while its last use is in flight (a pool no larger than the requests in
    flight, a closed loop's users, an open loop's rate times a request's latency, an offline run's full batch, is
    held by them); past that, the replica's free KV blocks must hold what the finished requests since left (a cache
    evicts least recently used blocks, and each of the N - in flight requests finished since its last use left in +
    out tokens; where the KV cache left over by the requests in flight holds fewer, that share of the repeats hits).
    Until 2026-12 the pool was set against the free blocks alone: 10 prompts cycled on one H100 whose batch fills
    its cache hit never offline or at capacity, so an offline run read 669 output tok/s where 24 req/s of the same
    prompts ran at 2,383, and the capacity a run is set against read 5 req/s beside a run keeping up with 24."""
    cached: IntArray = np.floor(inputs * job.prefix_hit_rate).astype(np.int64)
    pool = job.prompt_pool
    if pool <= 0 or inputs.size <= pool:
        return cached
    front = setup.pools[0]
    replicas = max(1, front.replicas)
    rep = front.setup
    in_flight = rep.plan.max_batch
    rate = offered_request_rate(job)
    if job.load.kind == "closed":
        in_flight = min(in_flight, math.ceil(job.load.concurrency / replicas))
    elif rate is not None and job.load.kind != "offline":
        # an open loop holds its replica's share of the rate for a request's latency (Little's law), at most the
        # batch cap: priced at a full batch's step, an upper bound (5 req/s of 4,096-token prompts on two H100s hold
        # 4 each, where the cap of 102 had left the pool a fifth of what it fits)
        b = rep.plan.max_batch
        step = rep.steps.decode_base(b) + rep.steps.a_decode(b) * b * (job.mean_input + job.mean_output / 2.0)
        latency = mean_prompt_s(rep, job) + job.mean_output / rep.steps.tau * step
        in_flight = min(in_flight, math.ceil(rate / replicas * latency))
    per_request = float(np.mean(inputs) + np.mean(outputs))
    spare = max(0.0, rep.kv_tokens - in_flight * per_request)
    # the requests a replica finished between two uses of a prompt there: its share of the pool, less those in flight
    finished = pool / replicas - in_flight
    held = 1.0 if finished <= 0 else min(1.0, spare / (finished * per_request))
    index = np.arange(inputs.size)
    went_there = 1.0 - (1.0 - 1.0 / replicas) ** (index // pool)
    # an offline run's first batch is admitted at once: its repeats are encoded beside their originals, before any
    # is cached (an engine shares only blocks already computed)
    first_wave = in_flight * replicas if job.load.kind == "offline" else 0
    hit = (rng.random(inputs.size) < held * went_there) & (index >= first_wave)
    return np.asarray(np.where(hit, inputs, cached), dtype=np.int64)


def phase_ramp(setup: ServingSetup, job: ServingJob) -> float:
    """Seconds over which a steady closed loop's users start: about one request's end-to-end latency (its prompt
    alone, then its output's steps at the users per replica, each carrying its share of the prompts of the
    requests that start), so that they run out of step as a deployment's users do. Started together, users of
    requests of one length stay in step: every wave's prompts arrive at once and wait for one another."""
    pool = setup.pools[-1]
    steps = pool.setup.steps
    prompt = mean_prompt_s(pool.setup, job)
    n = max(1, min(pool.setup.plan.max_batch, round(job.load.concurrency / max(1, pool.replicas))))
    inp, out = job.mean_input, job.mean_output
    started = n * inp / out  # prompt tokens per step
    step = steps.time(round(steps.decode_tokens(n) + started), n, n * (inp + out / 2.0), started * inp / 2.0)
    return float(prompt + out * step)


def mean_prompt_s(setup: ReplicaSetup, job: ServingJob) -> float:
    """Seconds a replica takes to encode one prompt of the job's mean length alone (its chunks, buckets and fixed
    costs as the simulator runs them)."""
    tokens = max(1, round(job.mean_input))
    chunk = setup.prompt_chunk if setup.plan.chunked_prefill else tokens
    return float(setup.steps.prompt_alone(tokens, chunk, setup.engine.static_batch, setup.policy().largest_bucket))


def capacity(job: ServingJob, setup: ServingSetup, seed: int = 0) -> float:
    """Output tokens/s the deployment sustains: what it delivers under an open-loop (Poisson) load it cannot keep
    up with (arrivals staggered as in service, the batch always full). The first guess is an offline run, whose
    requests all start together; the load is then set 25% above it, and doubled until the run saturates. Saturated
    replicas of one pool each deliver alike: where every pool has more than CAPACITY_REPLICAS, the smallest is
    measured on that many and the others in proportion, and what they deliver is scaled by the least of the pools'
    ratios (600 chips at 3,200 req/s spent 47 s measuring the whole fleet, against 3 s for the run itself; a split of
    508,340 prefill and 239,614 decode B200s, checked on a slice of 66 and 31, measured 130,000 requests a run). A
    split delivers what its slower pool does, each pool in proportion to its replicas, so the least ratio never
    reads more than the whole: a rounded pool can only make it read less."""
    smallest = min(p.replicas for p in setup.pools)
    if smallest > CAPACITY_REPLICAS:
        part = setup.scaled(CAPACITY_REPLICAS / smallest)
        scale = min(p.replicas / q.replicas for p, q in zip(setup.pools, part.pools, strict=True))
        return capacity(job, part, seed) * scale
    slots = sum(p.setup.plan.max_batch * p.replicas for p in setup.pools)
    n = max(CAPACITY_REQUESTS, 4 * slots)  # a trace's first n requests (its lengths cycle)
    offline, _ = run_job(replace(job, load=Load("offline"), requests=n, duration_s=None), setup, seed=seed)
    delivered = float(offline["output_tokens_per_s"])
    rate = 1.25 * delivered / job.mean_output
    for _ in range(4):
        # what a deployment sustains is its service rate, whatever the gaps between arrivals: Poisson arrivals
        # (a burstiness of 100 read a capacity a quarter of the tokens/s the same run delivered)
        over = replace(job, load=Load("rate", rate=rate), requests=n, duration_s=None)
        summary, _ = run_job(over, setup, seed=seed)
        delivered = float(summary["output_tokens_per_s"])
        if delivered < SATURATED * rate * job.mean_output:
            break
        rate *= 2.0
    return delivered


def load_against_capacity(job: ServingJob, setup: ServingSetup, seed: int = 0) -> dict[str, float] | None:
    """For an open-loop load: the requests/s the deployment sustains and the share of it the load offers
    (utilisation); None for closed loops and offline runs, which cannot overload a deployment."""
    offered = offered_request_rate(job)
    if offered is None:
        return None
    sustained = capacity(job, setup, seed) / job.mean_output
    return {"capacity_requests_per_s": sustained, "utilisation": offered / sustained}
