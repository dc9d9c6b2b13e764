"""One model replica as a process of the event kernel: a waiting queue, the requests in prefill, the requests
decoding, and its KV cache. Continuous batching at iteration level (Orca, Yu et al. 2022).

Events are iterations, and whole runs of identical decode iterations: while no request joins or leaves, a
decode step of n sequences over C cached tokens takes base(n) + a C and C grows by g n each step (g = 1 token
per sequence, or tau with speculative decoding), so k steps take
    k base(n) + a (k C + g n k (k - 1) / 2)
and the replica jumps to the next completion (or to when the KV cache fills) in one event. An arrival that can
be admitted cuts such a run short at the end of the iteration in progress. Each decoding request is kept in a
heap by the iteration at which it finishes; the batch's context is S + g n it, with `it` the count of decode
iterations and S the sum over decoding requests of (context at join - g it at join).

A decode replica of a split streams each request's first token, which its prefill replica sampled, when it takes
the request (its KV cache arrived and a batch slot is free), as the engines' split front ends return it: they
stream the decode side's answer (vLLM's disaggregation proxy, SGLang's and TensorRT-LLM's disaggregated servers),
and SGLang's decode side sends the prefill's token without a forward pass. TTFT counts the KV transfer and the
waits for a link, a slot and the scheduler; the remaining tokens take a decode step each, as before.

A scheduler that polls for new requests only every `recv_interval` decode iterations (SGLang's
--scheduler-recv-interval: a decode iteration adds 1 to a counter, an iteration with prompts fills it, and the
scheduler takes what arrived when the counter reaches the interval) keeps arrivals in an inbox until the next
poll; an idle scheduler polls at once.

Attention-DP context balancing (TensorRT-LLM's attention_dp_config.enable_balance, policy.adp_ranks > 1) places
each request on a rank as the scheduler fetches it: among the ranks below the expected count (the ceiling of the
requests over the ranks, or the most any rank holds) the one with the fewest prompt tokens, then requests. In a
saturated closed loop that is the rank whose request just finished. New prompts wait until every rank has one and
a free batch slot, or until some rank has nothing to generate; else a counter that counts every iteration releases
them when it reaches the timeout and starts again, whether or not prompts were waiting (pyexecutor
_balance_adp_requests), so a held prompt waits for the counter's next multiple of the timeout.

KV cache: a request holds its prompt's and its output's tokens, in whole blocks. Prompt tokens served from the
prefix cache that are a shared prefix (fewer than the whole prompt: `prefix_hit_rate`, a system prompt every request
starts with) are held once per replica (per attention-DP rank, each its own cache), as vLLM, SGLang and TensorRT-LLM
keep one reference-counted copy of shared prefix blocks: a request is charged its uncached tokens and its output,
and the replica the longest shared prefix of the requests it holds. A whole prompt served from the cache (a repeat
of a `prompt_pool` entry) is that prompt's own and is charged whole, as before. A split's decode replicas receive
each prompt's cache whole and hold it so; its prefill replicas hold a prompt's cache until it has been sent
(handed_over), which comes once a decode replica has admitted it and pulled its cache (on_admitted, received):
prompts queued for a busy decode pool, or behind a slow link, fill the prefill cache and hold its admission back,
and a decode replica holds a prompt's blocks, and a batch slot, from its admission on. A request that
can never fit the cache alone, its prompt and whole answer, is dropped before it runs (cache_fits, the rule of
setup_replica's check).

The KV tokens held are recorded at every event (`util_t`, `kv_used`) with what they grow by before the next event
(`kv_grow`): a decode run's cache grows by g n a step, so its record starts at the run's first step and ends at its
last; between two records the occupancy goes linearly from one to the other (`occupancy`).
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import deque
from collections.abc import Callable

import numpy as np

from chipwise.serve.sim.kernel import Kernel
from chipwise.serve.sim.policies import LoadBoard, SchedulerPolicy, blocks_tokens, bucket, bucket_context
from chipwise.serve.sim.requests import RequestTable
from chipwise.serve.sim.steps import StepModel
from chipwise.types import Array as FloatArray

PREFILL, DECODE = 1, 2
Callback = Callable[[float, int], None]


def cache_fits(tokens: int, kv_tokens: int, block: int) -> bool:
    """Whether one request holding `tokens` KV tokens at its largest fits a cache of `kv_tokens` tokens alone: its
    whole blocks within the cache's whole blocks. The rule setup_replica checks the longest request by and a replica
    drops a request that can never fit by, before it runs."""
    return blocks_tokens(tokens, block) <= kv_tokens // block * block


class Replica:
    """A replica of role 'both' (prefill and decode), 'prefill' (hands requests off after their first token)
    or 'decode' (takes requests whose prompt was prefilled elsewhere)."""

    def __init__(
        self,
        index: int,
        kernel: Kernel,
        steps: StepModel,
        policy: SchedulerPolicy,
        requests: RequestTable,
        kv_tokens: int,
        role: str,
        on_finish: Callback,
        on_handoff: Callback | None = None,
    ) -> None:
        """`on_handoff`: a prefill replica's call when it has encoded a prompt, a decode replica's when it admits a
        request whose cache it then pulls (it joins the batch when `received`)."""
        self.index = index
        self.kernel = kernel
        self.steps = steps
        self.pol = policy
        self.req = requests
        self.cap = kv_tokens
        self.role = role
        self.on_finish = on_finish
        self.on_prefilled = on_handoff if role == "prefill" else None
        self.on_admitted = on_handoff if role == "decode" else None
        self.waiting: deque[int] = deque()
        self.inbox: deque[int] = deque()  # arrived, not yet taken by the scheduler (recv_interval > 1)
        self.since_poll = 0  # decode iterations since the scheduler last polled for new requests
        self.pref: list[int] = []
        self.hold_since: int | None = None  # iteration at which batch waiting began holding prompts
        self.pneed: dict[int, int] = {}
        self.pdone: dict[int, int] = {}
        self.phold: dict[int, int] = {}
        # a prefill replica's encoded prompts whose cache is still being sent (handed_over): the tokens each holds,
        # counted in p_tokens until then
        self.sending: dict[int, int] = {}
        # a decode replica's admitted requests whose cache is coming over (the tokens each holds, counted in p_tokens
        # until it joins the batch), and those whose cache has come, to join at the next iteration
        self.receiving: dict[int, int] = {}
        self.arrived: list[int] = []
        self.p_tokens = 0
        self.dheap: list[tuple[int, int, int]] = []
        self.dtoken: dict[int, int] = {}
        self.jterm: dict[int, float] = {}
        self.jit: dict[int, int] = {}
        self.g0: dict[int, int] = {}
        self.state: dict[int, int] = {}
        self.res: dict[int, int] = {}
        self.order: list[int] = []
        self.n_dec = 0
        self.S = 0.0
        self.it = 0
        self.g = steps.tau  # tokens a decode iteration adds per sequence
        self.reserved = 0
        self.outstanding = 0
        self.board: LoadBoard | None = None  # the router's view of this replica's pool (run._build_pools; None: alone)
        self.slot = 0  # and its place there
        self.busy = False
        self.ver = 0
        self.seg: tuple[float, int, float, float, int] | None = None
        self.seg_a = 0.0
        self.busy_time = 0.0
        self.last_admit = -math.inf
        self.util_t: list[float] = []
        # KV tokens held at each util_t (used()), and what they have grown by at the next (a decode run's last step);
        # arrays of floats, a third of a list's memory
        self.kv_used = array("d")
        self.kv_grow = array("d")
        self.emitted = 0.0  # output tokens generated so far (decode iterations and first tokens)
        self.emit_v: list[float] = []  # `emitted` at each util_t
        # iterations that carried prompt chunks, the prompt tokens they ran (padded to a static engine's buckets),
        # and the decode-only iterations, completed so far; logged (time, the three) as each iteration or run ends,
        # flat in an array of floats (as a list of tuples they took 210 MiB more over serve_speed.py's 1M requests)
        self.prompt_iters = 0
        self.prompt_run = 0
        self.decode_iters = 0
        self.iter_log = array("d")
        self.preemptions = 0
        self._heap_seq = 0
        self.half_block = policy.block // 2
        self.whole = kv_tokens // policy.block * policy.block  # the cache's whole blocks, in tokens
        # attention-DP balancing: each request's rank, and per rank the requests placed, their prompt tokens, those
        # waiting for admission and those decoding; `clock`: the iteration after the balancing counter last restarted
        self.ranks = policy.adp_ranks if role == "both" else 1
        self.rank_of: dict[int, int] = {}
        self.rank_load = [0] * self.ranks
        self.rank_tokens = [0] * self.ranks
        self.rank_wait = [0] * self.ranks
        self.rank_dec = [0] * self.ranks
        self.rank_slots = -(-policy.max_batch // self.ranks)
        self.clock = 0
        # shared prefixes (prefix-cache hits short of the whole prompt), held once: each holding request's prefix
        # tokens, how many requests hold a prefix of each length, and the tokens the replica holds for them (the
        # longest, in whole blocks, once per attention-DP rank); `shared_net`: those tokens less the prefix tokens of
        # the decoding requests, which their context S counts (their attention reads them) but they do not hold
        self.shares = role != "decode"  # a decode replica receives each prompt's cache whole
        # a decode replica's preempted requests: it encodes their context again (vLLM's RECOMPUTE, as a replica of
        # both roles does), where it had taken them back as if their cache were still held (24 preemptions of 40
        # requests on one replica ran no prompt iteration)
        self.evicted: set[int] = set()
        self.share: dict[int, int] = {}
        self.share_count: dict[int, int] = {}
        self.prefix = 0
        self.shared_net = 0

    # ---- bookkeeping -------------------------------------------------------------------------------------
    def _count(self, delta: int) -> None:
        """A request arrives (+1) or leaves (-1): the replica's outstanding count, and its router's board."""
        self.outstanding += delta
        if self.board is not None:
            self.board.add(self.slot, delta)

    def _tokens(self) -> float:
        """KV tokens the requests hold now before their last blocks are rounded up (decoding contexts, prompts being
        prefilled, sent or received, a shared prefix once)."""
        return self.S + self.g * self.n_dec * self.it + self.p_tokens + self.shared_net

    def used(self) -> float:
        """KV tokens held now: _tokens and half a block of rounding a request, the average."""
        return (
            self._tokens() + (self.n_dec + len(self.pref) + len(self.sending) + len(self.receiving)) * self.half_block
        )

    def _room(self, count: int) -> float:
        """KV tokens free beside those held now once `count` requests hold the cache: what admission, preemption
        and a decode run's length are decided by. Several requests take half a block of rounding each (the
        average); a lone request its own blocks, exactly: it fits when its tokens fill no more than the cache's
        whole blocks, as setup_replica's check of the longest request (input + output <= kv_tokens) has it. With
        the average a request that fills the cache exactly (31,600 + 128 tokens in 1,983 blocks of 16) had passed
        the setup check and the drop check, then been refused room forever (an idle replica, the run stopped with
        it queued) or dropped as outgrowing the cache it fits. Prompts being sent or received hold the cache beside
        them."""
        count += len(self.sending) + len(self.receiving)
        if count > 1:
            return self.cap - self._tokens() - count * self.half_block
        return self.whole - self._tokens()

    def _record(self, t: float, growth: float = 0.0) -> None:
        """Note the KV tokens held at time t and what they grow by before the next record (`growth`: what a decode
        run, or an iteration that advances the decoding requests, adds), and the output tokens generated by then."""
        self.util_t.append(t)
        self.kv_used.append(self.used())
        self.kv_grow.append(growth)
        self.emit_v.append(self.emitted)

    def occupancy(self) -> tuple[FloatArray, FloatArray]:
        """The share of the KV cache held at each record and at the end of its growth (the half-block rounding is an
        average: a full cache reads full, not 100.8%)."""
        used = np.array(self.kv_used, dtype=np.float64)  # copies
        if self.cap <= 0:
            return np.zeros(used.size), np.zeros(used.size)
        grown = np.array(self.kv_grow, dtype=np.float64)
        grown += used
        for share in (used, grown):  # in place: a million requests' records are 20 MB an array
            np.divide(share, self.cap, out=share)
            np.minimum(share, 1.0, out=share)
        return used, grown

    def _prefix_growth(self, share: int) -> int:
        """KV tokens the replica's shared prefix grows by when a request with a `share`-token prefix joins."""
        return max(0, blocks_tokens(share, self.pol.block) * self.ranks - self.prefix)

    def _hold_prefix(self, rid: int, share: int) -> None:
        """A request admitted with a shared prefix of `share` tokens holds a reference to it."""
        self.share[rid] = share
        self.share_count[share] = self.share_count.get(share, 0) + 1
        held = blocks_tokens(share, self.pol.block) * self.ranks
        if held > self.prefix:
            self.shared_net += held - self.prefix
            self.prefix = held

    def _release_prefix(self, rid: int) -> None:
        """A request leaves the replica: the shared prefix is held while any request uses it, at the longest."""
        share = self.share.pop(rid, 0)
        if not share:
            return
        left = self.share_count[share] - 1
        if left:
            self.share_count[share] = left
            return
        del self.share_count[share]
        if blocks_tokens(share, self.pol.block) * self.ranks >= self.prefix:
            held = blocks_tokens(max(self.share_count, default=0), self.pol.block) * self.ranks
            self.shared_net += held - self.prefix
            self.prefix = held

    def _prompt(self, rid: int) -> int:
        """Tokens this admission must prefill and hold: the prompt plus any tokens generated before a preemption (a
        decode replica takes a request's prompt cache, its first token still to feed, unless it evicted it)."""
        received = self.role == "decode" and rid not in self.evicted
        return self.req.input[rid] + max(0, self.req.generated[rid] - (1 if received else 0))

    # ---- entry -------------------------------------------------------------------------------------------
    def submit(self, t: float, rid: int) -> None:
        """A request arrives (or, for a decode replica, its KV cache arrives)."""
        self._count(+1)
        self.req.replica[rid] = self.index
        if not self.busy:
            self._enqueue(rid)
            self._wake(t)
        elif self.pol.recv_interval > 1:
            self.inbox.append(rid)
            if self.seg is not None and len(self.inbox) == 1 and self._admissible(rid):
                self._interrupt(t)  # at the next poll
        else:
            self._enqueue(rid)
            if self.seg is None or not self._admissible(rid):
                return
            if self.ranks > 1:
                if self._balanced():
                    self._interrupt(t)
                elif len(self.waiting) == 1:
                    self._interrupt(t, periodic=True)  # at the balancing counter's next timeout
                return
            held = self.hold_since is not None and self.pol.batch_wait_iters > 0  # may now fill the batch
            if held or len(self.waiting) == 1:
                self._interrupt(t)

    def _enqueue(self, rid: int) -> None:
        """A request the scheduler has fetched joins the waiting queue (on a rank, with attention-DP balancing)."""
        self.waiting.append(rid)
        if self.ranks > 1:
            load, tokens = self.rank_load, self.rank_tokens
            below = max(-(-(sum(load) + 1) // self.ranks), *load)
            rank = min((r for r in range(self.ranks) if load[r] < below), key=lambda r: (tokens[r], load[r], r))
            self.rank_of[rid] = rank
            load[rank] += 1
            tokens[rank] += self.req.input[rid]
            self.rank_wait[rank] += 1

    def _unplace(self, rid: int) -> None:
        """A request leaves the replica: its rank no longer holds it."""
        if self.ranks > 1 and rid in self.rank_of:
            rank = self.rank_of.pop(rid)
            self.rank_load[rank] -= 1
            self.rank_tokens[rank] -= self.req.input[rid]

    def _balanced(self) -> bool:
        """Attention-DP balancing lets prompts in at once: some rank has nothing to generate, or every rank has a
        prompt waiting and a free batch slot."""
        dec = self.rank_dec
        return min(dec) == 0 or (min(self.rank_wait) > 0 and max(dec) < self.rank_slots)

    def _to_timeout(self, it: int) -> int:
        """Iterations from iteration `it` to the next at which the balancing counter reaches its timeout."""
        timeout = self.pol.hold_timeout
        return -(it - self.clock + 1) % timeout if timeout > 0 else 0

    def _admissible(self, rid: int) -> bool:
        if len(self.pref) + self.n_dec + len(self.receiving) >= self.pol.max_batch:
            return False
        _, _, need, grow, _ = self._wanted(rid)
        return self._fits(need, grow)

    def _wanted(self, rid: int) -> tuple[int, int, int, int, int]:
        """What admitting a request takes: (the tokens to prefill and hold, _prompt; its shared prefix's tokens, a
        prefix-cache hit short of the whole prompt on a replica that encodes prompts, else 0; the KV tokens it must
        find free, in whole blocks, of its prompt or, reserving, its prompt and answer; what the replica's shared
        prefix grows by when it joins; the tokens it holds at its largest, less the shared prefix: on a prefill
        replica what admission takes, elsewhere its prompt and whole answer). One call: admission runs once a
        request an iteration, and its nine calls a request had been a tenth of a validation's time."""
        r = self.req
        inp = r.input[rid]
        prompt = self._prompt(rid)
        cached = r.cached[rid]
        share = cached if cached and self.shares and cached < inp else 0
        total = inp + r.output[rid] - share
        need = blocks_tokens(total if self.pol.admission == "reserve" else prompt - share, self.pol.block)
        largest = need if self.role == "prefill" else max(need, total)
        return prompt, share, need, self._prefix_growth(share) if share else 0, largest

    def _fits(self, need: int, grow: int) -> bool:
        """Whether a request taking `need` KV tokens (its shared prefix growing by `grow`) is admitted now."""
        if self.pol.admission == "reserve":
            return self.reserved + self.prefix + need + grow <= self.cap
        # on demand, beside the running batch's next decode step (vLLM schedules its running requests first): a
        # prompt taken into the last free blocks would be preempted by that step and encoded again
        return need + grow + self.g * self.n_dec <= self._room(self.n_dec + len(self.pref) + 1)

    # ---- admission and preemption ------------------------------------------------------------------------
    def _holding(self) -> bool:
        """Whether new prompts are held back this iteration, while requests are generating:
        - attention-DP balancing (TensorRT-LLM attention_dp_config.enable_balance): until every rank has one
          (_balanced), or the balancing counter reaches its timeout (_to_timeout);
        - batch waiting (TensorRT-LLM batch_wait_timeout_iters / batch_wait_max_tokens_ratio, tensor parallelism
          only): until the iteration would carry batch_wait_tokens tokens, the prompt tokens the budget admits plus
          one per generating sequence;
        batch waiting for at most hold_timeout iterations."""
        pol = self.pol
        if self.ranks > 1:
            if self._balanced() or self._to_timeout(self.it) == 0:
                # the counter restarts at the next iteration: `it` counts iterations that advance the decodes, and
                # one of prompts alone does not (it had counted one iteration too many after a prompts-only one)
                self.clock = self.it + (self.n_dec > 0 and (pol.mixed_batching or pol.decode_first))
                return False
            return bool(self.waiting)
        if self.role == "decode" or not self.waiting:
            release = True
        elif pol.batch_wait_iters > 0:
            need = pol.batch_wait_tokens - self.n_dec
            prompts = 0
            for rid in self.waiting:
                prompts += self._prompt(rid)
                if prompts >= need:
                    break
            release = self.n_dec == 0 or min(prompts, pol.max_tokens - self.n_dec) >= need
        else:
            release = True
        if release:
            self.hold_since = None
            return False
        if self.hold_since is None:
            self.hold_since = self.it
        if self.it - self.hold_since >= pol.hold_timeout:
            self.hold_since = None
            return False
        return True

    def _admit(self, t: float) -> None:
        if self._holding():
            return
        r = self.req
        pol = self.pol
        reserve = pol.admission == "reserve"
        while self.waiting and len(self.pref) + self.n_dec + len(self.receiving) < pol.max_batch:
            rid = self.waiting[0]
            prompt, share, need, grow, largest = self._wanted(rid)  # a shared prefix's tokens are held once
            if not self._ever_fits(share, largest):
                self._dequeue()  # can never finish here: dropped before it runs, so it makes no tokens
                self._drop(t, rid)
                continue
            if not self._fits(need, grow):
                break
            if reserve:
                self.reserved += need
                self.res[rid] = need
            if share:
                self._hold_prefix(rid, share)
            self._dequeue()
            self.last_admit = t
            if self.role == "decode" and rid not in self.evicted:
                if self.on_admitted is not None:  # it pulls the cache, and the request joins once it has come
                    self._receive(t, rid, prompt)
                    continue
                self.order.append(rid)  # the cache was pushed and has come
                self._join(rid, prompt)
                continue
            self.order.append(rid)
            self.evicted.discard(rid)
            start = r.cached[rid] if r.generated[rid] == 0 else 0
            self.state[rid] = PREFILL
            self.pref.append(rid)
            self.pneed[rid] = prompt
            self.pdone[rid] = min(start, prompt - 1)
            hold = blocks_tokens(prompt - share, pol.block) if not reserve else prompt - share
            self.phold[rid] = hold
            self.p_tokens += hold

    def _ever_fits(self, share: int, largest: int) -> bool:
        """Whether a request fits the cache alone at its largest (_room(1) on an idle replica: the rule that admits a
        lone request): `largest` (_wanted: its prompt and its whole answer, less a shared prefix of `share` tokens;
        on a prefill replica what admission takes, as it hands the cache over with the first token) and that prefix's
        blocks. On demand, requests whose prompt fits but whose answer outgrows the cache (2,497 + 588 tokens in
        3,000) had been admitted and dropped at their last steps, and the 1,573 tokens three of them made counted as
        output."""
        shared = blocks_tokens(share, self.pol.block) * self.ranks if share else 0
        return cache_fits(largest, self.whole - shared, self.pol.block)

    def _dequeue(self) -> None:
        """The first waiting request leaves the queue (admitted, or dropped)."""
        rid = self.waiting.popleft()
        if self.ranks > 1:
            self.rank_wait[self.rank_of[rid]] -= 1

    def _join(self, rid: int, context: int) -> None:
        """Start decoding: `context` tokens in KV, the next token to feed is the one just sampled."""
        r = self.req
        remaining = r.output[rid] - r.generated[rid]
        term = context + 1 - self.g * self.it
        self.S += term
        self.jterm[rid] = term
        if self.share and rid in self.share:  # its context counts the shared prefix (attention reads it), which
            self.shared_net -= self.share[rid]  # the replica holds
        self.jit[rid] = self.it
        self.g0[rid] = r.generated[rid]
        self.n_dec += 1
        if self.ranks > 1:
            self.rank_dec[self.rank_of[rid]] += 1
        self.state[rid] = DECODE
        if r.first[rid] != r.first[rid]:  # NaN: a split's first token, streamed as the decode replica takes it
            r.first[rid] = self.kernel.now
        self._heap_seq += 1
        self.dtoken[rid] = self._heap_seq
        heapq.heappush(self.dheap, (self.it + math.ceil(remaining / self.g), self._heap_seq, rid))

    def _leave(self, rid: int, finished: bool = False) -> None:
        """A request leaves its batch: `finished` with all its output, or preempted with the whole tokens made."""
        st = self.state.pop(rid, 0)
        if st == DECODE:
            self.n_dec -= 1
            if self.ranks > 1:
                self.rank_dec[self.rank_of[rid]] -= 1
            self.S -= self.jterm.pop(rid)
            self.dtoken.pop(rid, None)
            r = self.req
            g0 = self.g0.pop(rid)
            made = self.g * (self.it - self.jit.pop(rid))  # what its steps counted in `emitted`
            kept = r.output[rid] if finished else min(g0 + int(made), r.output[rid] - 1)
            # a step adds tau tokens a sequence, but a request's last step emits only the tokens it still needs (and
            # a preempted one keeps whole tokens): `emitted` counts its output, not the steps' tau each. 64 answers
            # of 10 tokens under eagle:3@0.8 (4 steps of 2.95 for 9 tokens) had read 12.8 tokens each (+28% tok/s)
            self.emitted -= made - (kept - g0)
            r.generated[rid] = kept
        elif st == PREFILL:
            self.pref.remove(rid)
            self.p_tokens -= self.phold.pop(rid)
            self.pneed.pop(rid)
            self.pdone.pop(rid)
        self.reserved -= self.res.pop(rid, 0)
        if self.share and rid in self.share:
            if st == DECODE:
                self.shared_net += self.share[rid]
            self._release_prefix(rid)

    def handed_over(self, t: float, rid: int) -> None:
        """A prefill replica has sent a prompt's KV cache: it frees the cache's blocks only now, as vLLM's NIXL
        connector, SGLang's Mooncake backend and TensorRT-LLM free them once the decode side has them. While sends
        queue behind a slow link the held prompts fill the cache and admission waits; freed when encoded (until
        2026-12), 150 prompts queued on a 5 GB/s link had read 2.6% of a GB300's cache, not 65%."""
        self.p_tokens -= self.sending.pop(rid)
        self._release(rid)
        if self.busy:  # the iteration in flight admits at its end
            self._record(t)
        else:
            self._wake(t)  # admit what waited for the freed blocks

    def _receive(self, t: float, rid: int, prompt: int) -> None:
        """A decode replica admits a request prefilled elsewhere: it holds the prompt's blocks and a batch slot while
        the cache comes over (on_admitted books the pull; received when it has come)."""
        self.receiving[rid] = hold = (
            blocks_tokens(prompt, self.pol.block) if self.pol.admission != "reserve" else prompt
        )
        self.p_tokens += hold
        if self.on_admitted is not None:
            self.on_admitted(t, rid)

    def received(self, t: float, rid: int) -> None:
        """A decode replica has request `rid`'s cache: the request joins the batch at the end of the iteration in
        flight (at once when idle)."""
        self.arrived.append(rid)
        if not self.busy:
            self._wake(t)
        elif self.seg is not None:
            self._interrupt(t)

    def _take_arrived(self) -> None:
        """The requests whose cache has come join the batch; their first token streams now."""
        for rid in self.arrived:
            self.p_tokens -= self.receiving.pop(rid)
            self.order.append(rid)
            self._join(rid, self._prompt(rid))
        self.arrived.clear()

    def _wake(self, t: float) -> None:
        """An idle replica steps now."""
        self.busy = True
        self.ver += 1
        self.kernel.at(t, self._step, self.ver)

    def _release(self, rid: int) -> None:
        """A request done with this replica's cache gives back its reservation and its share of a shared prefix."""
        self.reserved -= self.res.pop(rid, 0)
        if self.share:
            self._release_prefix(rid)

    def _finish(self, t: float, rid: int) -> None:
        self._leave(rid, finished=True)
        self._unplace(rid)
        self.req.finish[rid] = t
        self._count(-1)
        self.on_finish(t, rid)

    def _drop(self, t: float, rid: int) -> None:
        self._unplace(rid)
        self.req.dropped[rid] = True
        self._count(-1)
        self.on_finish(t, rid)

    def _make_room(self, t: float) -> None:
        """on_demand: preempt the most recently admitted requests until the next decode step fits."""
        while self.n_dec + len(self.pref) > 0 and self.g * self.n_dec > self._room(self.n_dec + len(self.pref)):
            victim = -1
            while self.order:
                cand = self.order.pop()
                if cand in self.state:
                    victim = cand
                    break
            if victim < 0:
                return
            if self.n_dec + len(self.pref) + len(self.receiving) == 1:  # alone and too long: it can never finish here
                self._leave(victim)
                self._drop(t, victim)
                return
            self._leave(victim)
            if self.role == "decode":
                self.evicted.add(victim)
            self.req.preempted[victim] += 1
            self.preemptions += 1
            self.waiting.appendleft(victim)
            if self.ranks > 1:
                self.rank_wait[self.rank_of[victim]] += 1

    # ---- iterations ---------------------------------------------------------------------------------------
    def _step(self, t: float, ver: int) -> None:
        if ver != self.ver:
            return
        self.seg = None
        if self.arrived:
            self._take_arrived()
        if self.inbox and (self.since_poll == 0 or not (self.pref or self.n_dec)):
            for rid in self.inbox:  # the scheduler polls
                self._enqueue(rid)
            self.inbox.clear()
            self.since_poll = 0
        self._admit(t)
        if self.pol.preempts:
            self._make_room(t)
            self._admit(t)
        n = self.n_dec
        if not self.pref and n == 0:
            self._record(t)
            self.busy = False
            return
        context = self.S + self.g * n * self.it
        steps = self.steps
        if self.pref:
            mixed = self.pol.mixed_batching
            sequential = n > 0 and self.pol.decode_first
            advancing = n > 0 and (mixed or sequential)
            # the decoding sequences' tokens come out of the budget first: n (k + 1) with speculation, as vLLM's
            # max_num_batched_tokens and TensorRT-LLM's max_num_tokens count the drafted positions (one a sequence
            # had let 69 sequences under eagle:3 carry 2,255 tokens in a budget of 2,048)
            budget = self.pol.max_tokens - (steps.decode_tokens(n) if advancing else 0)
            pneed, pdone = self.pneed, self.pdone
            # a prompt's chunk runs in one budget (an attention-DP rank's, a pipeline micro-batch's) beside that
            # budget's share of the decodes
            held = self.pol.max_tokens // self.pol.rank_tokens if self.pol.rank_tokens else 1
            ranked = -(-steps.decode_tokens(n) // held) if advancing else 0
            cap = max(1, self.pol.rank_tokens - ranked) if self.pol.rank_tokens else 0
            chunks = self.pol.chunks((pneed[rid] - pdone[rid] for rid in self.pref), budget, cap)
            if chunks:
                static = self.pol.static_batch
                fused = advancing and not sequential
                tokens = steps.decode_tokens(n) if fused else 0
                pairs = 0.0
                completing = 0
                top, top_pairs = 0, 0.0  # the largest chunk
                ran = 0  # prompt tokens run (a static engine's buckets)
                # a compiled context graph of one sequence encodes each prompt in a pass of its own, in turn
                each = self.pol.context_batch == 1 and not fused
                passes = []  # with `each`: every chunk's (tokens run, prefill pairs, whether it samples)
                started = self.req.started
                for rid, chunk in zip(self.pref, chunks, strict=False):
                    if started[rid] != started[rid] and chunk > 0:  # NaN: its prompt's first iteration starts now
                        started[rid] = t
                    s = pdone[rid]
                    c = bucket(chunk, largest=self.pol.largest_bucket) if static else chunk
                    # a bucket that spans a cached prefix attends to no more of it (bucket_context); whether the
                    # prompt completes reads its own tokens (with the prefix's context a 10% hit on 2,048 tokens had
                    # not sampled its first token, its LM head unpriced: TTFT 0.2990 s under the miss's 0.3006)
                    attended = bucket_context(s, chunk, c) if static else s
                    tokens += c
                    ran += c
                    q = c * attended + c * (c + 1) * 0.5
                    pairs += q
                    top, top_pairs = max(top, c), max(top_pairs, q)
                    done = int(s + chunk >= pneed[rid])
                    completing += done
                    if each:
                        passes.append((c, q, done))
                if each:
                    lone = steps.ranks if steps.ranks > 1 else 0
                    dt = sum(steps.prompt_time(c, d, 0.0, q, lone * c, lone * q, c, q) for c, q, d in passes)
                    dt += len(passes) * steps.prefill_fixed
                else:
                    seqs = (steps.decode_tokens(n) if fused else 0) + completing
                    # fewer prompts than attention-DP ranks: the others wait for the rank with the largest
                    ranks = steps.ranks if len(chunks) < steps.ranks else 0
                    even = ranks * top + (steps.decode_tokens(n) if fused else 0)
                    dt = (
                        steps.prompt_time(
                            tokens, seqs, context if fused else 0.0, pairs, even, ranks * top_pairs, top, top_pairs
                        )
                        + steps.prefill_fixed
                    )
                dt += steps.draft_prefill(sum(chunks)) + (steps.draft_time(n, context) if fused else 0.0)
                if sequential:
                    # the token-generation graph runs first, then the context encoding (separate graphs)
                    base, a = self._decode_step(n, context, 1)
                    dt += base + a * context
                self._record(t, self.g * n if advancing else 0.0)  # the decoding requests' next tokens
                self.kernel.at(t + dt, self._end_iteration, (ver, chunks, advancing, dt, ran))
                return
        # a run of decode iterations until the next completion (or until the KV cache fills)
        heap = self.dheap
        while heap and self.dtoken.get(heap[0][2]) != heap[0][1]:
            heapq.heappop(heap)
        k = max(1, heap[0][0] - self.it) if heap else 1
        if self.pol.preempts:
            k = max(1, min(k, int(self._room(n + len(self.pref)) // (self.g * n))))
        if self.ranks > 1 and self.waiting:  # end the run when the balancing counter releases the held prompts
            k = max(1, min(k, self._to_timeout(self.it)))
        elif self.hold_since is not None:  # end the run when the held prompts time out
            k = max(1, min(k, self.hold_since + self.pol.hold_timeout - self.it))
        if self.inbox:  # end the run at the next poll
            k = min(k, self.pol.recv_interval - self.since_poll)
        base, a = self._decode_step(n, context, k)
        dt = k * base + a * (k * context + self.g * n * k * (k - 1) * 0.5)
        self.seg = (t, k, base, float(context), n)
        self.seg_a = a
        self._record(t, self.g * n * k)  # from its first step's occupancy to its last's
        self.kernel.at(t + dt, self._end_run, ver)

    def _decode_step(self, n: int, context: float, k: int) -> tuple[float, float]:
        """(time of one of k decode steps of n sequences over `context` cached tokens without its context term,
        context coefficient): k steps take k base + a (k C + g n k (k - 1) / 2)."""
        steps = self.steps
        if self.pol.static_batch:
            # a compiled token-generation graph runs every slot and attends over the bucket of the sequence
            # length (the power of two at or above the batch's context, taken mid-run), live or not; a host
            # sampler samples the live ones only
            slots = self.pol.max_batch
            padded = bucket(int(context / n + 0.5 * self.g * k) + 1, largest=self.pol.largest_bucket)
            idle = steps.host_sample * (slots - n)
            return steps.decode_base(slots) - idle + steps.a_decode(slots) * slots * padded, 0.0
        return max(steps.decode_base(n), steps.eager_decode_floor(n, context)), steps.a_decode(n)

    def _interrupt(self, t: float, periodic: bool = False) -> None:
        """Cut the decode run in flight at the end of the iteration running at time t (`periodic`: at the next
        iteration at which the attention-DP balancing counter reaches its timeout)."""
        assert self.seg is not None
        t0, k, base, context, n = self.seg
        a = self.seg_a
        tau = t - t0
        qa = 0.5 * a * n * self.g
        qb = base + a * context - qa
        # iterations completed by tau: the largest j with j base + a (j C + n j (j - 1) / 2) <= tau
        j = int((-qb + math.sqrt(qb * qb + 4.0 * qa * tau)) / (2.0 * qa)) if qa > 0 else int(tau / max(qb, 1e-30))
        new_k = max(1, j + 1)
        if periodic:
            new_k += self._to_timeout(self.it + new_k)
        if self.pol.recv_interval > 1:  # the scheduler sees the arrival at its next poll
            new_k += -(self.since_poll + new_k) % self.pol.recv_interval
        new_k = min(k, new_k)
        if new_k >= k:
            return
        self.kv_grow[-1] = self.g * n * new_k  # the run's record ends where the cut run does
        self.ver += 1
        self.seg = (t0, new_k, base, context, n)
        dt = new_k * base + a * (new_k * context + self.g * n * new_k * (new_k - 1) * 0.5)
        self.kernel.at(t0 + dt, self._end_run, self.ver)

    def _complete_decodes(self, t: float) -> None:
        heap = self.dheap
        it = self.it
        while heap and heap[0][0] <= it:
            _, token, rid = heapq.heappop(heap)
            if self.dtoken.get(rid) != token:
                continue
            self._finish(t, rid)

    def _end_run(self, t: float, ver: int) -> None:
        if ver != self.ver or self.seg is None:
            return
        t0, k, _, _, n = self.seg
        self.seg = None
        self.busy_time += t - t0
        self.it += k
        self.decode_iters += k
        self.iter_log.extend((t, self.prompt_iters, self.prompt_run, self.decode_iters))
        self.emitted += self.g * n * k
        self.since_poll = (self.since_poll + k) % self.pol.recv_interval
        self._complete_decodes(t)
        self._step(t, ver)

    def _end_iteration(self, t: float, payload: tuple[int, list[int], bool, float, int]) -> None:
        ver, chunks, advancing, dt, ran = payload
        if ver != self.ver:
            return
        self.busy_time += dt
        self.since_poll = 0  # an iteration with prompts is followed by a poll
        self.prompt_iters += 1
        self.prompt_run += ran
        self.iter_log.extend((t, self.prompt_iters, self.prompt_run, self.decode_iters))
        if advancing:
            self.it += 1
            self.emitted += self.g * self.n_dec
        r = self.req
        done: list[int] = []
        for rid, c in zip(list(self.pref), chunks, strict=False):
            self.pdone[rid] += c
            if self.pdone[rid] >= self.pneed[rid]:
                done.append(rid)
        if advancing:
            self._complete_decodes(t)
        if done:
            finished = set(done)
            self.pref = [rid for rid in self.pref if rid not in finished]
        for rid in done:
            prompt = self.pneed[rid]
            hold = self.phold.pop(rid)
            del self.pneed[rid], self.pdone[rid]
            self.state.pop(rid, None)
            if r.first[rid] != r.first[rid]:  # NaN: the first token of this request
                r.first[rid] = t
            r.generated[rid] += 1
            self.emitted += 1.0
            if self.role == "prefill" and self.on_prefilled is not None:
                self.sending[rid] = hold  # held, with its reservation and shared prefix, until handed_over
                self._count(-1)
                self.on_prefilled(t, rid)
                continue
            self.p_tokens -= hold
            if r.generated[rid] >= r.output[rid]:
                self._release(rid)
                self._unplace(rid)
                r.finish[rid] = t
                self._count(-1)
                self.on_finish(t, rid)
            else:
                self._join(rid, prompt)
        self._step(t, ver)
