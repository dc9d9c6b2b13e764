"""Run a request-level simulation of a deployment: one pool of replicas behind a router, or a prefill pool and a
decode pool with the KV cache sent between them (DistServe, Zhong et al. 2024; Splitwise, Patel et al. 2024).

Open-loop arrivals are fed one event at a time; a closed loop issues a user's next request when the previous
one finishes. The run ends when every request has finished or been dropped.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chipwise.errors import ChipwiseError
from chipwise.serve.sim.kernel import Kernel
from chipwise.serve.sim.policies import LoadBoard, SchedulerPolicy, make_router
from chipwise.serve.sim.replica import Callback, Replica
from chipwise.serve.sim.requests import RequestTable
from chipwise.serve.sim.steps import StepModel
from chipwise.types import Array as FloatArray
from chipwise.types import IntArray
from chipwise.workload.serve_scenario import DEFAULT_ROUTER


@dataclass(frozen=True)
class PoolSim:
    """Identical replicas of one role ('both', 'prefill' or 'decode')."""

    steps: StepModel
    policy: SchedulerPolicy
    kv_tokens: int
    replicas: int
    role: str = "both"


@dataclass(frozen=True)
class Deployment:
    """What is simulated: pools, the router, and for disaggregation the KV transfer between pools
    (t = latency + transfer_seconds(prompt tokens), each replica's transfers in turn on its links)."""

    pools: tuple[PoolSim, ...]
    router: str = DEFAULT_ROUTER
    transfer_latency_s: float = 0.0
    transfer_s_per_token: float = 0.0
    #: windowed layer groups' (share of a token's transfer, window in tokens): they send their last window only
    transfer_windows: tuple[tuple[float, float], ...] = ()
    #: a request reaches the first pool's scheduler this long after it is sent (the serving front end)
    front_latency_s: float = 0.0
    #: the run's seed, which a router drawing at random (power_of_two) draws from
    seed: int = 0
    #: a decode replica pulls a prompt's cache when it admits the request (vLLM's NIXL connector); otherwise the
    #: prefill replica pushes it as soon as the prompt is encoded (SGLang's decode workers allocate the cache
    #: before the prompt is run, TensorRT-LLM's receive it as sent), and the decode replica takes it on arrival
    kv_pull: bool = False

    @property
    def disaggregated(self) -> bool:
        return len(self.pools) == 2


def transfer_seconds(s_per_token: float, windows: tuple[tuple[float, float], ...], tokens: Any) -> Any:
    """Seconds a prompt of `tokens` tokens' KV cache takes on the links (broadcasts): every token's at
    `s_per_token`, less what windowed layer groups (`windows`: share of a token's bytes, window) do not keep."""
    t = np.asarray(tokens, dtype=np.float64)
    kept = t - sum(share * np.maximum(t - window, 0.0) for share, window in windows)
    return s_per_token * kept


@dataclass
class SimOutput:
    """Per-request timestamps (arrays), per-replica statistics and run-level times."""

    requests: dict[str, FloatArray]
    replicas: list[dict[str, Any]]
    last_admit: float
    end: float
    wall_s: float
    closed_loop: bool
    roles: list[str] = field(default_factory=list)
    #: seconds each request spent in the serving front end before the first pool's scheduler saw it
    #: (Deployment.front_latency_s): part of its TTFT before its wait to start (metrics.per_request)
    front_latency_s: float = 0.0


#: a link's booked transfers, (start, end) in time order (they do not overlap)
Windows = list[tuple[float, float]]


def book_transfer(sender: Windows, receiver: Windows, t: float, busy: float) -> float:
    """The start of a KV transfer of `busy` seconds booked at `t` on a sender's and a receiver's links (each a sorted
    list of its booked (start, end) windows, pruned here of those over by `t`): the first window from `t` on that both
    are free, booked on both. A link free until a later booking carries a transfer that fits before it: a transfer
    had started only once both links were past every booking of either, so one booked behind a busy receiver held
    its sender idle for every other receiver (16 TPU v6e prefill replicas feeding 11 v5p decode ones delivered
    25,422 output tok/s offline, their decode caches 38% full; 32,516 and 77% so)."""
    for links in (sender, receiver):
        done = 0
        while done < len(links) and links[done][1] <= t:
            done += 1
        del links[:done]
    start = t
    for lo, hi in sorted(sender + receiver):  # both links' windows in time order (sorted merges two runs in C)
        if lo >= start + busy:
            break
        start = max(start, hi)
    for links in (sender, receiver):
        bisect.insort(links, (start, start + busy))
    return start


def simulate(
    deployment: Deployment,
    inputs: IntArray,
    outputs: IntArray,
    cached: IntArray,
    arrivals: FloatArray | None,
    concurrency: int = 0,
    stop_issuing_at: float = math.inf,
    ramp_s: float = 0.0,
) -> SimOutput:
    """Simulate len(inputs) requests. `arrivals` gives open-loop arrival times; None means a closed loop of
    `concurrency` users, who start together or, with `ramp_s`, one after another evenly over `ramp_s` seconds
    (a load generator that ramps up; the users then stay out of step, as in a steady run)."""
    start = time.perf_counter()
    n = int(inputs.size)
    if n == 0:
        raise ChipwiseError("no requests to simulate. Fix: give requests >= 1.")
    kernel = Kernel()
    req = RequestTable(inputs, outputs, cached)
    closed = arrivals is None
    flow = _RequestFlow(deployment, kernel, req, n, closed, stop_issuing_at)
    _start_load(kernel, flow.issue, arrivals, n, concurrency, ramp_s)
    kernel.run()
    pools = flow.pools
    stuck = [rep.index for pool in pools for rep in pool if rep.outstanding > 0]
    if stuck:
        raise ChipwiseError(
            f"the simulation stopped with requests still queued on replica {stuck[0]}. "
            "Fix: report this scenario (it should not happen)."
        )
    replicas = [_replica_output(rep) for pool in pools for rep in pool]
    last_admit = max((rep.last_admit for pool in pools for rep in pool), default=0.0)
    return SimOutput(
        requests=req.arrays(),
        replicas=replicas,
        last_admit=float(last_admit),
        end=kernel.now,
        wall_s=time.perf_counter() - start,
        closed_loop=closed,
        roles=[p.role for p in deployment.pools],
        front_latency_s=deployment.front_latency_s,
    )


def _start_load(
    kernel: Kernel, issue: Callable[..., None], arrivals: FloatArray | None, n: int, concurrency: int, ramp_s: float
) -> None:
    """Schedule the load: a closed loop's `concurrency` users' first requests (at once, or evenly over `ramp_s`),
    each user's next one issued when its last one finishes; or the open-loop `arrivals`, fed one event per arrival
    time (each schedules the next): the requests of one instant are all issued before a replica they wake steps,
    so an offline run's or a trace's simultaneous prompts start in one iteration, as a closed loop's users do."""
    if arrivals is None:
        users = min(max(1, concurrency), n)
        for u in range(users):
            kernel.at(ramp_s * u / users, issue)
        return
    times = arrivals.tolist()

    def arrive(t: float, i: int) -> None:
        issue(t)
        i += 1
        while i < n and times[i] == times[i - 1]:  # the rest of this instant's requests
            issue(t)
            i += 1
        if i < n:
            kernel.at(times[i], arrive, i)

    kernel.at(times[0], arrive, 0)


def _build_pools(
    deployment: Deployment,
    kernel: Kernel,
    req: RequestTable,
    on_finish: Callback,
    on_prefilled: Callback,
    on_admitted: Callback,
) -> list[list[Replica]]:
    """The replicas of each of the deployment's pools, numbered across the pools; the replicas of a pool of several
    share the load board its router reads; a prefill pool's hand each encoded prompt on (`on_prefilled`), and a
    decode pool's pull its KV cache when they admit it (`on_admitted`) where the deployment pulls (kv_pull)."""
    pull = deployment.kv_pull
    pools: list[list[Replica]] = []
    for p in deployment.pools:
        reps = [
            Replica(
                len([r for q in pools for r in q]) + i,
                kernel,
                p.steps,
                p.policy,
                req,
                p.kv_tokens,
                p.role,
                on_finish,
                on_prefilled if p.role == "prefill" else on_admitted if p.role == "decode" and pull else None,
            )
            for i in range(p.replicas)
        ]
        if len(reps) > 1:
            board = LoadBoard([0] * len(reps))
            for slot, rep in enumerate(reps):
                rep.board, rep.slot = board, slot
        pools.append(reps)
    return pools


class _RequestFlow:
    """How requests move through a deployment's replicas: issued (at their arrivals, or in a closed loop when a
    user's last request finishes), sent by the first pool's router to one of its replicas, and in a split handed on
    from the prefill replica that encoded the prompt to a decode replica, which pulls its KV cache over both
    replicas' links when it admits it (vLLM's NIXL connector: the prefill instance holds the blocks until the decode
    instance, scheduling the request, reads them). Pushed as soon as a prompt was encoded (until 2026-12), a prompt
    queued for the decode pool was held by neither: 34 prompts, 65% of an H100 prefill replica's cache, waited for
    a decode slot while its cache read 0.0%, and at 6 req/s 358, seven of its caches, were held nowhere."""

    def __init__(
        self,
        deployment: Deployment,
        kernel: Kernel,
        req: RequestTable,
        n: int,
        closed: bool,
        stop_issuing_at: float,
    ) -> None:
        self.deployment = deployment
        self.kernel = kernel
        self.req = req
        self.n = n
        self.closed = closed
        self.stop_issuing_at = stop_issuing_at
        self.issued = 0
        self.pools = _build_pools(deployment, kernel, req, self.finished, self.prefilled, self.admitted)
        self.routers = {id(p): make_router(deployment.router, len(p), deployment.seed) for p in self.pools}
        self.by_index = {rep.index: rep for pool in self.pools for rep in pool}
        # KV transfers: each prefill replica sends over its own links and each decode replica receives over its own,
        # one prompt's cache at a time on each (book_transfer: the first window both are free), booked when the
        # decode replica admits the request; the decode replica is picked when its prompt is encoded. The routers
        # count the caches each prefill replica holds still to send (`moving`), and a decode replica the requests
        # queued for it: a fixed delay per transfer let seven prefill replicas send 140% of what their links carry
        # unseen, and a router blind to the sends queued at a prefill replica gave the first of 15 a seventh of the
        # prompts
        self.sending: dict[int, Windows] = {}
        self.receiving: dict[int, Windows] = {}
        self.sender_of: dict[int, int] = {}

    def issue(self, t: float, _: Any = None) -> None:
        """Issue the next request at `t`, to the front end or straight to the first pool (none once all are issued
        or past the time issuing stops)."""
        i = self.issued
        if i >= self.n or t > self.stop_issuing_at:
            return
        self.issued = i + 1
        self.req.arrival[i] = t
        if self.deployment.front_latency_s > 0:
            self.kernel.at(t + self.deployment.front_latency_s, self.enter, i)
        else:
            self.route(self.pools[0], t, i)

    def enter(self, t: float, rid: int) -> None:
        """Request `rid` reaches the first pool past the front end."""
        self.route(self.pools[0], t, rid)

    def route(self, pool: list[Replica], t: float, rid: int) -> None:
        """Submit request `rid` to the replica of `pool` its router picks."""
        pool[self.pick(pool)].submit(t, rid)

    def pick(self, pool: list[Replica]) -> int:
        """The replica a request goes to (its board counts each replica's KV transfers still to send or receive)."""
        if len(pool) == 1:
            return 0
        board = pool[0].board
        assert board is not None  # a pool of several replicas has one
        return self.routers[id(pool)].pick(board)

    def finished(self, t: float, rid: int) -> None:
        """Request `rid` has finished (or was dropped): a prefill replica still holding its cache (a decode replica
        dropped it before admitting it) frees it, and in a closed loop its user issues the next one."""
        if rid in self.sender_of:
            self.handed_over(t, rid)
        if self.closed:
            self.issue(t)

    def moving(self, index: int, delta: int) -> None:
        """A KV transfer to or from replica `index` is queued (+1) or done (-1): its router counts it as load."""
        rep = self.by_index[index]
        if rep.board is not None:
            rep.board.add(rep.slot, delta)

    def prefilled(self, t: float, rid: int) -> None:
        """A prefill replica has encoded request `rid`'s prompt: it holds the prompt's cache, and the decode replica
        its router picks queues the request until it admits it and pulls the cache (admitted), or, where the engine
        pushes it (Deployment.kv_pull false), is sent it now and takes the request on its arrival."""
        back_pool = self.pools[-1]
        sender = int(self.req.replica[rid])
        self.moving(sender, +1)
        self.sender_of[rid] = sender
        self.req.prefilled[rid] = t
        self.req.first[rid] = math.nan  # the client's first token comes from the decode replica, once it takes it
        decode = back_pool[self.pick(back_pool)]
        if self.deployment.kv_pull:
            decode.submit(t, rid)
            return
        self.req.replica[rid] = decode.index
        self.moving(decode.index, +1)
        self._send(t, rid, self.pushed)

    def pushed(self, t: float, rid: int) -> None:
        """Request `rid`'s pushed KV cache has arrived: the prefill replica frees it, and the decode replica queues
        the request as any other (it joins its batch when admitted)."""
        d = int(self.req.replica[rid])
        self.moving(d, -1)
        self.handed_over(t, rid)
        self.by_index[d].submit(t, rid)

    def admitted(self, t: float, rid: int) -> None:
        """A decode replica has admitted request `rid` (a batch slot and the blocks for its cache): it pulls the
        cache from the prefill replica."""
        self._send(t, rid, self.to_decode)

    def _send(self, t: float, rid: int, arrived: Callback) -> None:
        """Book request `rid`'s KV transfer from its prefill replica to its decode replica on both replicas' links;
        `arrived` is called when it has come."""
        d = int(self.req.replica[rid])
        sender = self.sender_of[rid]
        deployment = self.deployment
        busy = float(
            transfer_seconds(deployment.transfer_s_per_token, deployment.transfer_windows, self.req.input[rid])
        )
        start = book_transfer(self.sending.setdefault(sender, []), self.receiving.setdefault(d, []), t, busy)
        self.req.transfer[rid] = busy + deployment.transfer_latency_s
        self.kernel.at(start + busy + deployment.transfer_latency_s, arrived, rid)

    def to_decode(self, t: float, rid: int) -> None:
        """Request `rid`'s KV cache has arrived: the prefill replica frees it, and the decode replica takes the
        request into its batch."""
        self.handed_over(t, rid)
        self.by_index[int(self.req.replica[rid])].received(t, rid)

    def handed_over(self, t: float, rid: int) -> None:
        """The prefill replica that encoded request `rid` frees its cache."""
        sender = self.sender_of.pop(rid)
        self.moving(sender, -1)
        self.by_index[sender].handed_over(t, rid)


def _replica_output(rep: Replica) -> dict[str, Any]:
    """What a replica measured: its KV occupancy over time (the share of the cache held at each record, `util_v`,
    and at the end of its growth, `util_e`: a decode run's last step), its output tokens and iterations."""
    util_v, util_e = rep.occupancy()
    return {
        "index": rep.index,
        "role": rep.role,
        "busy_s": rep.busy_time,
        "kv_tokens": rep.cap,
        "preemptions": rep.preemptions,
        "util_t": np.asarray(rep.util_t),
        "util_v": util_v,
        "util_e": util_e,
        "emit_v": np.asarray(rep.emit_v),
        "iterations": np.frombuffer(rep.iter_log, dtype=np.float64).reshape(-1, 4),
    }
