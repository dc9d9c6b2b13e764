"""Scheduling policies beside the event kernel: how a replica admits requests into its KV cache, how it fills an
iteration's token budget with prefill chunks, which request it preempts, and how a router picks a replica.

Admission (KV cache of `capacity` tokens in blocks of `block` tokens):
- reserve  (TensorRT-LLM GUARANTEED_NO_EVICT; Neuron's fixed slots): admit when ceil((in + out) / block) blocks
  are free on top of what running requests reserved; a started request is never evicted.
- on_demand (vLLM, SGLang): admit when the prompt's blocks are free; sequences grow block by block and, when
  the cache is full, the most recently admitted request is preempted and later recomputed (vLLM's RECOMPUTE).
Static shapes (Neuron): a decode step runs all max_batch slots whatever the occupancy (reading each slot's KV),
and a prompt runs padded to its power-of-two bucket.
Chunked prefill (Sarathi-Serve, Agrawal et al. 2024): decoding sequences take one token each, the rest of the
`max_tokens` budget goes to waiting prompts in arrival order, the last one possibly split. Without chunking a
prompt runs whole, alone if it exceeds the budget.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chipwise.errors import UnknownNameError


def bucket(tokens: int, smallest: int = 128, largest: int = 0) -> int:
    """The bucket a static-shape engine pads `tokens` tokens to: the power of two at or above them (at least
    `smallest`); with a compiled sequence length `largest`, NxD Inference's ladder (autobucketing.generate_buckets:
    the powers of two below 2^round(log2 largest), then `largest` itself), never below `tokens`."""
    b = smallest
    while b < tokens:
        b *= 2
    if largest <= 0:
        return b
    top = 2 ** round(math.log2(largest))
    return b if b < top and b < largest else max(tokens, largest)


def bucket_context(done: int, chunk: int, run: int) -> int:
    """Cached tokens a static-shape engine's chunk of `chunk` prompt tokens after `done` of them, padded to a bucket
    of `run`, attends to beyond itself: none where the bucket spans the prefix as well, whose positions it then runs
    as a miss's graph does. Priced over the prefix and the padded bucket both, a small prefix-cache hit had cost more
    than a miss (Llama 3.1 8B on a Trainium2, 2,048-token prompts: a 10% hit's 1,843 tokens pad to the miss's
    2,304-token bucket, and its prompt read 0.304 s against the miss's 0.301 s; it now reads the miss's 0.301 s)."""
    return 0 if run >= done + chunk else done


def blocks_tokens(tokens: int, block: int) -> int:
    """Tokens held by `tokens` tokens of KV in whole blocks: ceil(tokens / block) x block."""
    return -(-tokens // block) * block


@dataclass(frozen=True)
class SchedulerPolicy:
    """The knobs of a replica's iteration-level scheduler."""

    admission: str  # 'reserve' | 'on_demand'
    block: int
    max_batch: int
    max_tokens: int
    chunked_prefill: bool
    mixed_batching: bool
    prefill_batch: int  # 0 = no limit
    static_batch: bool = False  # iterations padded to max_batch slots and power-of-two prompt buckets
    largest_bucket: int = 0  # a static engine's compiled sequence length, its last bucket (0: no cap)
    decode_first: bool = False  # an iteration with prompts runs the decode step first, then the prompts (two graphs)
    context_batch: int = 0  # prompts one context-encoding pass takes (1: one pass per prompt, in turn; 0: any)
    adp_ranks: int = 1  # attention-DP ranks whose prompts are balanced (1 = no balancing)
    adp_timeout_iters: int = 0  # balancing releases held prompts every this many iterations at the latest
    recv_interval: int = 1  # decode iterations between the scheduler's polls for new requests (1 = every one)
    batch_wait_iters: int = 0  # how long batch waiting may hold prompts back, in iterations (0 = off)
    batch_wait_tokens: int = 0  # batch waiting releases prompts once an iteration would carry this many tokens
    rank_tokens: int = 0  # one budget of several (an attention-DP rank's, a pipeline micro-batch's; 0: the replica's)

    @property
    def hold_timeout(self) -> int:
        """Batch waiting: iterations a held prompt waits at most; attention-DP balancing: the period of the counter
        that releases held prompts."""
        return self.adp_timeout_iters if self.adp_ranks > 1 else self.batch_wait_iters

    @property
    def preempts(self) -> bool:
        return self.admission == "on_demand"

    def chunks(self, remaining: Iterable[int], budget: int, cap: int = 0) -> list[int]:
        """Prefill tokens to schedule for each waiting prompt (in order) within `budget` tokens, at most `cap` of
        each (0: no cap)."""
        out: list[int] = []
        left = budget
        limit = self.prefill_batch or budget + 1
        for need in remaining:
            if len(out) >= limit or left <= 0:
                break
            if self.chunked_prefill:
                take = min(need, left, cap or left)
            elif need <= left or not out:
                take = need  # a prompt longer than the budget runs whole, alone
            else:
                break
            out.append(take)
            left -= take
        return out


class LoadBoard:
    """What a router sees of its pool: each replica's outstanding requests (the simulator adds the KV transfers a
    replica still has to send or receive), also kept grouped by load, so that a least-loaded pick is a lookup
    rather than a scan of every replica (a scan per request took most of a `plan serve` at 10,000 req/s, whose
    checks route requests through slices of tens to hundreds of replicas)."""

    def __init__(self, loads: Sequence[int]) -> None:
        self.load = list(loads)
        self._by_load: dict[int, list[int]] = {}
        for i, v in enumerate(self.load):
            self._by_load.setdefault(v, []).append(i)
        self.least = min(self._by_load) if self._by_load else 0

    def add(self, i: int, delta: int) -> None:
        """Replica i's load changes by `delta`."""
        old = self.load[i]
        new = self.load[i] = old + delta
        group = self._by_load[old]
        del group[bisect.bisect_left(group, i)]
        if not group:
            del self._by_load[old]
        bisect.insort(self._by_load.setdefault(new, []), i)
        if old != self.least or old in self._by_load:
            self.least = min(self.least, new)
        else:  # the least loaded group emptied: every load left is above it, and one more is the next if held
            self.least = new if new <= old + 1 else min(self._by_load)

    def first_least_from(self, start: int) -> int:
        """The first replica, in turn from `start` (wrapping round), among those with the fewest outstanding."""
        group = self._by_load[self.least]
        j = bisect.bisect_left(group, start)
        return group[j] if j < len(group) else group[0]


class RoundRobin:
    """Send request i to replica i mod R (NGINX's default)."""

    def __init__(self, replicas: int) -> None:
        self.replicas = replicas
        self._next = 0

    def pick(self, board: LoadBoard) -> int:
        r = self._next
        self._next = (r + 1) % self.replicas
        return r


class LeastLoaded:
    """Send a request to the replica with the fewest outstanding requests, taking those tied in turn (HAProxy's
    `balance leastconn`: "round-robin is performed within groups of servers of the same load"; NGINX's
    `least_conn` likewise). Ties broken to the lowest index instead piled the next prompt onto the replica still
    encoding the last one: 200 replicas met a TTFT target that 300 missed (Llama 3.1 70B on trn2, 4,000-token
    prompts; docs/serving.md section 5, stop 32)."""

    def __init__(self, replicas: int) -> None:
        self.replicas = replicas
        self._next = 0

    def pick(self, board: LoadBoard) -> int:
        best = board.first_least_from(self._next)
        self._next = (best + 1) % self.replicas
        return best


class PowerOfTwo:
    """Draw two replicas at random and send the request to the one with fewer outstanding requests (Envoy's
    LEAST_REQUEST and gRPC's least_request, whose choice_count defaults to 2); a seeded stream, so a run repeats."""

    def __init__(self, replicas: int, seed: int = 0) -> None:
        self.replicas = replicas
        self._rng = random.Random(seed)

    def pick(self, board: LoadBoard) -> int:
        a, b = self._rng.randrange(self.replicas), self._rng.randrange(self.replicas)
        return a if board.load[a] <= board.load[b] else b


Router = RoundRobin | LeastLoaded | PowerOfTwo
#: the routers a deployment can name (workload.serve_scenario.ServePlan.router)
ROUTERS: dict[str, type[Router]] = {"round_robin": RoundRobin, "least_loaded": LeastLoaded, "power_of_two": PowerOfTwo}


def make_router(kind: str, replicas: int, seed: int = 0) -> Router:
    """The router `kind` over `replicas`; one that draws at random draws from the run's `seed` (it had drawn the
    same pairs whatever the seed)."""
    return PowerOfTwo(replicas, seed) if kind == "power_of_two" else ROUTERS[kind](replicas)


def check_router(kind: str) -> None:
    """One line naming the routers (and the near match: 'round-robin' is round_robin) when `kind` is not one."""
    if kind not in ROUTERS:
        raise UnknownNameError("router", kind, ROUTERS, hint=f"use one of {', '.join(ROUTERS)}")
