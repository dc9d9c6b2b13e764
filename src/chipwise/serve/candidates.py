"""Candidate replica shapes of a system for the serving search: TP up to the scale-up domain (and over two and four
node-sized domains for MoE models), PP beyond it, EP and attention DP for MoE models, each with every batch limit,
as parallel arrays that the steady-state estimate prices in one vectorised pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chipwise.errors import InfeasibleError
from chipwise.perf.device import Topology
from chipwise.serve.iteration import Shapes
from chipwise.types import IntArray
from chipwise.workload.model import ModelSpec

BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


#: Largest scale-up domain (ranks) that is one server, across which tensor and expert parallelism may be spread
#: over the network (an HGX or MI300X node of 8 GPUs; not a 72-GPU NVLink rack or a Trainium UltraServer).
MULTI_NODE_DOMAIN = 16


def powers_of_two(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


@dataclass(frozen=True)
class Candidates:
    """Replica shapes of one system, as parallel arrays."""

    tp: IntArray
    pp: IntArray
    ep: IntArray
    adp: IntArray
    max_batch: IntArray
    balance: IntArray  # 0: attention DP with the engine's context balancing off (else 1, the engine's own)

    def __len__(self) -> int:
        return int(self.tp.size)

    def shapes(self) -> Shapes:
        return Shapes(self.tp, self.pp, self.ep, self.adp)

    def take(self, idx: IntArray) -> Candidates:
        return Candidates(
            self.tp[idx], self.pp[idx], self.ep[idx], self.adp[idx], self.max_batch[idx], self.balance[idx]
        )


#: sequences a rank of an attention-DP replica holds at most in the search: TensorRT-LLM and SGLang set batch limits
#: per rank, and InferenceX's one-replica DEP32 decode runs 8,192 users (256 a rank)
ADP_RANK_BATCH = 256


def _wide(batches: tuple[int, ...], tp: int, adp: int) -> list[int]:
    """Batch limits past the largest of `batches` an attention-DP replica of `tp` ranks may hold (powers of two up to
    ADP_RANK_BATCH a rank): DEP72 on a GB200 NVL72 had been searched up to 2,048 sequences, 28 a rank, and queued
    4,608 users (TTFT p50 61 s) where 4,608 as its limit reads 320 ms."""
    if not adp or not batches or max(batches) < max(BATCHES):  # a ladder of the caller's own is searched as given
        return []
    top = max(batches)
    return [top * 2**k for k in range(1, 16) if top * 2**k <= ADP_RANK_BATCH * tp]


def enumerate_candidates(
    model: ModelSpec,
    topo: Topology,
    ranks_limit: int | None = None,
    fixed: dict[str, int] | None = None,
    batches: tuple[int, ...] = BATCHES,
    balancing: bool = False,
) -> Candidates:
    """TP up to the scale-up domain (powers of two) where it splits the attention heads, PP in {1, 2, 4} beyond it
    (from the largest power of two the domain holds: an inf2.48xlarge's 24 ranks take TP16, an NVL72's 72 TP64; PP
    had waited for a TP of the whole domain, which no power of two reaches there, so Llama 3.1 405B fp8 on inf2 had
    read "fits no replica shape" where TP16 x PP2 holds 12.06 GiB of weights a rank),
    EP in {1, TP} and attention-DP for MoE models (with the engine's context balancing on and off, where it has it:
    `balancing`), each with every batch limit; knobs in `fixed` are held. MoE models on node-sized domains (at most
    MULTI_NODE_DOMAIN ranks) also try TP and EP over two and four domains (wide expert parallelism across nodes,
    as SGLang and DeepEP deploy DeepSeek on H100/H200 nodes)."""
    fixed = fixed or {}
    limit = ranks_limit or topo.domain_ranks * 4
    rows: list[tuple[int, int, int, int, int, int]] = []
    moe = model.moe
    tps = powers_of_two(min(topo.domain_ranks, limit))
    full = tps[-1]  # the widest TP the domain holds (a power of two): pipeline stages start there
    if moe is not None and topo.domain_ranks <= MULTI_NODE_DOMAIN:
        tps += [topo.domain_ranks * n for n in (2, 4) if topo.domain_ranks * n <= limit]
    tps = [fixed["tp"]] if "tp" in fixed else tps
    pps = [fixed["pp"]] if "pp" in fixed else [1, 2, 4]
    for tp in tps:
        for pp in pps:
            if tp * pp > limit or pp > model.layers:
                continue
            if pp > 1 and "pp" not in fixed and tp < full:
                continue  # pipeline stages only once tensor parallelism fills the domain
            eps = [1]
            if moe is not None and tp > 1 and moe.experts % tp == 0:
                eps = [1, tp]
            if "ep" in fixed:
                eps = [fixed["ep"]]
            # a searched tp splits the attention heads as a stated plan must (ModelSpec tp_problem), unless
            # attention DP keeps the attention whole on every rank
            splits_heads = "tp" in fixed or not model.attention.tp_problem(tp)
            for ep in eps:
                adps = [0, 1] if (moe is not None and ep == tp and tp > 1) else [0]
                if "attention_dp" in fixed:
                    adps = [int(fixed["attention_dp"])]
                for adp in adps:
                    if not (adp or splits_heads):
                        continue
                    bals = [1, 0] if adp and balancing else [1]
                    if adp and "adp_balance" in fixed:
                        bals = [int(fixed["adp_balance"])]
                    mbs = [fixed["max_batch"]] if "max_batch" in fixed else list(batches) + _wide(batches, tp, adp)
                    for bal in bals:
                        for mb in mbs:
                            rows.append((tp, pp, ep, adp, mb, bal))
    if not rows:
        raise InfeasibleError("no replica shape fits the plan's fixed knobs. Fix: relax tp/pp/ep.")
    a = np.asarray(rows, dtype=np.int64)
    return Candidates(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5])
