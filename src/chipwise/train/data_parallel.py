"""Data parallelism: who shards what (ZeRO / FSDP / hybrid FSDP), the gradient and parameter collectives it
costs per step, how much of them compute hides, and the optimizer update.

ZeRO-0 all-reduces the gradients once per step; ZeRO-1/2 (Megatron's distributed optimizer) reduce-scatter them
and all-gather the updated parameters; both overlap with the backward of the last micro-batch and the forward
of the first one (Rajbhandari et al. 2020). FSDP (ZeRO-3) all-gathers every layer's weights for the forward
and again for the backward, and reduce-scatters its gradients, for every micro-batch, overlapped with all
compute (Zhao et al. 2023). Hybrid FSDP shards within the scale-up domain and all-reduces the sharded gradients
across the replicas once per step.

Every FSDP unit (a layer) is a collective of its own, and each pays its latency: Llama 3.1 405B's 126 layers are
378 all-gathers and reduce-scatters a micro-batch, not 3.

FSDP with pipeline parallelism follows torchtitan's default (reshard_after_forward off when pp > 1, and the
pipeline schedule syncing gradients on the last micro-batch's backward only): each stage gathers its weights
once per step, behind the first micro-batch's forward, keeps them and accumulates unsharded gradients across
the micro-batches, and reduce-scatters them once, behind the last backward. Re-gathering every micro-batch
(reshard_after_forward on) would cost m times the traffic for less memory; it is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from chipwise.perf import collectives as coll
from chipwise.perf.compute import memory_time
from chipwise.perf.device import Device, Topology
from chipwise.train.plans import PlanArrays, stage_layers
from chipwise.types import Array, IntArray

Collective = Callable[[Array, coll.Group], Array]
#: training precisions that store fp32: their weights, gradients and optimizer state are all fp32 (memory.py)
FP32_PRECISIONS = ("fp32", "tf32")
#: Bytes a mixed-precision gradient is reduced in: bf16. Frameworks differ (Megatron-LM reduces in fp32 unless
#: --grad-reduce-in-bf16, torchtitan's FSDP2 in fp32 by default, llm-foundry's PURE mixed precision in bf16, MLPerf
#: configurations set it per run), and the training table reads better at 2 bytes: at 4, 9.90% -> 10.06% (torchtitan's
#: Llama 2 70B on 64 A100s -0.5% -> -39%), measured 2026-12-06; the efficiencies were fitted with 2.
GRAD_BYTES = 2.0
#: Adam's step on one parameter's fp32 state: read the fp32 gradient (4), read and write the fp32 master, m and v (24)
ADAM_STATE_TRAFFIC = 28.0


def grad_bytes(precision: str) -> float:
    """Bytes a gradient is reduced in: bf16 in mixed precision, fp32 in fp32/tf32 training, whose gradients are
    fp32 (memory.py holds them at 4 B; they had been reduced at 2, half their traffic)."""
    return 4.0 if precision in FP32_PRECISIONS else GRAD_BYTES


def adapter_weight_bytes(precision: str) -> float:
    """Bytes of a LoRA adapter's working weight: trained in mixed precision, bf16 (2) beside its fp32 gradient and
    Adam state, whatever format the frozen base is stored in; fp32 (4) in fp32/tf32 training."""
    return 4.0 if precision in FP32_PRECISIONS else 2.0


def optimizer_traffic(precision: str, weight_bytes: float) -> float:
    """HBM bytes per parameter of the Adam step: the fp32 state's 28, plus writing the working weight it feeds (bf16
    2, fp8 1 with fp8 parameter gather: 30 and 29) in mixed precision; fp32/tf32 parameters are their own master,
    with no copy to write (28). It had been 30 at every precision."""
    return ADAM_STATE_TRAFFIC + (0.0 if precision in FP32_PRECISIONS else weight_bytes)


@dataclass(frozen=True)
class Shards:
    """Group sizes of the data-parallel collectives for each plan."""

    dense: NDArray[np.int64]  # ranks sharing (and sharding) the dense parameters: dp x cp
    expert: NDArray[np.int64]  # ranks sharing the routed-expert parameters: tp x dp x cp / (ep x expert tp)
    expert_stride: NDArray[np.int64]  # ranks between two of them: ep x expert tp
    zero_dense: NDArray[np.int64]  # ranks the ZeRO state of dense parameters is split over
    zero_expert: NDArray[np.int64]


def expert_tp(plans: PlanArrays) -> NDArray[np.int64]:
    """Expert tensor parallelism: experts are tensor-split like the dense MLP unless expert parallelism is on."""
    return np.where(plans.ep > 1, 1, plans.tp)


def shards(plans: PlanArrays, topo: Topology) -> Shards:
    dense = plans.dp * plans.cp
    # Megatron's expert data parallelism, world / (pp x ep x etp): an expert shard is replicated over the ranks of a
    # stage that hold neither another expert (ep) nor another slice of it (etp); those ranks sit ep x etp apart
    expert_stride = plans.ep * expert_tp(plans)
    expert = np.maximum(plans.tp * dense // expert_stride, 1)
    in_domain, _ = coll.split_group(dense, plans.tp, topo)
    zero_dense = np.where(plans.hsdp > 0, in_domain, dense)
    zero_expert = np.maximum(np.where(plans.hsdp > 0, np.minimum(expert, in_domain), expert), 1)
    return Shards(dense, expert, expert_stride, zero_dense, zero_expert)


@dataclass(frozen=True)
class _DpGroups:
    """The groups a step's data-parallel collectives run over (None where no plan has them) and their sizes."""

    shards: Shards
    dense: coll.Group
    expert: coll.Group | None
    zero: coll.Group  # the ZeRO state's shard groups: the dense group's unless hybrid FSDP
    zero_expert: coll.Group | None
    across: coll.Group | None  # hybrid FSDP's replicas, across the shard groups
    expert_across: coll.Group | None


def _dp_groups(plans: PlanArrays, topo: Topology, ranks: IntArray | None, experts: bool, hybrid: bool) -> _DpGroups:
    """Every group dp_time prices, placed once per distinct (tp, cp, dp, ep, hsdp, ranks), on which they depend
    alone, and read back for every plan (one pass over a million plans where each group's had been one of its own)."""
    plans, ranks, inverse = plans.distinct("tp", "cp", "dp", "ep", "hsdp", ranks=ranks)
    sh = shards(plans, topo)
    dense = coll.group(sh.dense, plans.tp, topo, ranks)
    expert = coll.group(sh.expert, sh.expert_stride, topo, ranks) if experts else None
    zero, zero_expert, across, expert_across = dense, expert, None, None
    if hybrid:
        zero = coll.group(sh.zero_dense, plans.tp, topo, ranks)
        across = coll.group(np.maximum(sh.dense // sh.zero_dense, 1), plans.tp * sh.zero_dense, topo, ranks)
    if hybrid and experts:
        zero_expert = coll.group(sh.zero_expert, sh.expert_stride, topo, ranks)
        replicas = np.maximum(sh.expert // sh.zero_expert, 1)
        expert_across = coll.group(replicas, sh.expert_stride * sh.zero_expert, topo, ranks)
    if inverse is None:
        return _DpGroups(sh, dense, expert, zero, zero_expert, across, expert_across)

    def read(g: coll.Group | None) -> coll.Group | None:
        return None if g is None else coll.PerRow(g, inverse)

    whole = Shards(*(getattr(sh, f.name)[inverse] for f in fields(Shards)))
    return _DpGroups(
        whole,
        coll.PerRow(dense, inverse),
        read(expert),
        coll.PerRow(zero, inverse),
        read(zero_expert),
        read(across),
        read(expert_across),
    )


def dp_time(
    dense: Array,
    expert: Array,
    plans: PlanArrays,
    topo: Topology,
    dev: Device,
    m: Array,
    fwd_mb: Array,
    bwd_mb: Array,
    t_mb: Array,
    layers: int,
    trainable: bool,
    weight_bytes: float,
    precision: str,
    adapters: Array | None = None,
    ranks: IntArray | None = None,
) -> tuple[Array, Array]:
    """(exposed data-parallel communication, optimizer update time) per step, in seconds. weight_bytes is a working
    weight's size (memory.working_weight_bytes): ZeRO-1/2's and FSDP's parameter all-gathers move the working
    weights, in fp8 for 8-bit training (Megatron's fp8-param-gather, torchtitan's float8 all-gather), as memory.py
    holds them; they had moved two bytes a weight. Both at one size keeps FSDP with pipelining at ZeRO-1's traffic.
    The training precision sets the gradients' bytes and the optimizer step's traffic (grad_bytes,
    optimizer_traffic). `adapters`, a LoRA run's trained parameters per rank (lora.local_adapter_params), are reduced
    and updated beside the dense ones (at adapter_weight_bytes), on the dense parameters' group; a LoRA step had
    reduced no gradient at all. `ranks`, each plan's own ranks, places its groups as they are packed
    (perf.collectives.place_group)."""
    ov = dev.eff.dp_overlap
    t = 1.0 if trainable else 0.0
    gb = grad_bytes(precision)
    # a dense model launches no expert collective (an empty one would cost its latency), nor are its groups placed
    has_experts = expert > 0
    any_experts = bool(has_experts.any())
    hybrid = bool(np.any(plans.hsdp))
    groups = _dp_groups(plans, topo, ranks, any_experts, hybrid)
    sh, dense_group, expert_group = groups.shards, groups.dense, groups.expert

    lora = np.zeros_like(dense) if adapters is None else np.asarray(adapters, dtype=np.float64)
    ab = adapter_weight_bytes(precision)

    def both(
        op: Collective, per_param: float, on_dense: coll.Group, on_experts: coll.Group | None, extra: Array
    ) -> Array:
        """`op` on the dense parameters' bytes (and `extra`, the adapters') over `on_dense` and on the routed
        experts' over `on_experts`."""
        out = np.asarray(op(dense * per_param + extra, on_dense), dtype=np.float64)
        return out if on_experts is None else out + np.where(has_experts, op(expert * per_param, on_experts), 0.0)

    rs = both(coll.reduce_scatter, t * gb, dense_group, expert_group, lora * gb)
    ag = both(coll.all_gather, t * weight_bytes, dense_group, expert_group, lora * ab)
    # an all-reduce is a reduce-scatter and an all-gather of the same buffer, at a tree's latency (perf.collectives)
    ar = both(coll.all_reduce, t * gb, dense_group, expert_group, lora * gb)
    # ZeRO-0 all-reduces and ZeRO-1 (Megatron's distributed optimizer) reduce-scatters the accumulated gradients once
    # a step, behind the last micro-batch's backward; ZeRO-2 keeps only its shard of the gradients, so it reduces
    # them every micro-batch (DeepSpeed's stage 2), each behind that micro-batch's backward
    z2_rs = m * np.maximum(0.0, rs - ov * bwd_mb)
    z012 = np.where(
        plans.zero == 0,
        np.maximum(0.0, ar - ov * bwd_mb),
        np.where(plans.zero == 2, z2_rs, np.maximum(0.0, rs - ov * bwd_mb)) + np.maximum(0.0, ag - ov * fwd_mb),
    )
    # FSDP within the sharding groups, every micro-batch; hybrid FSDP adds a per-step all-reduce across replicas.
    # The routed experts are sharded over their own group, as memory.py holds them and ZeRO-1/2 reduce them: with
    # EP8 on 8-GPU nodes it is one rank a node, so their gathers cross the network (on the dense group, 8 of a
    # node, they had priced ZeRO-3 below ZeRO-1)
    zero_group, zero_expert_group = groups.zero, groups.zero_expert
    fsdp_ag = both(coll.all_gather, weight_bytes, zero_group, zero_expert_group, lora * ab)
    fsdp_rs = both(coll.reduce_scatter, t * gb, zero_group, zero_expert_group, lora * gb)
    cross = np.zeros_like(fsdp_ag)
    if groups.across is not None:
        cross = coll.all_reduce((t * dense + lora) * gb / sh.zero_dense, groups.across)
    if groups.expert_across is not None:
        on_experts = coll.all_reduce(t * expert * gb / sh.zero_expert, groups.expert_across)
        cross = cross + np.where(has_experts, on_experts, 0.0)
    # one all-gather or reduce-scatter per FSDP unit, a layer of the stage, each paying the group's latency, where one
    # latency had stood for all of a rank's weights: Llama 3.1 405B at TP4 DP131072 on GB200 had exposed 0.0047 s a
    # step; its 3 x 126 ring all-gathers and reduce-scatters over 7,282 racks take 13.8 s of latency, and it now
    # exposes 12.9 s
    units = stage_layers(layers, plans.pp, plans.vpp)
    latency = both(coll.all_gather, 0.0, zero_group, zero_expert_group, np.zeros_like(dense))
    more = (units - 1.0) * latency  # the latencies past the one each of fsdp_ag and fsdp_rs holds
    fsdp_total = m * (2.0 * fsdp_ag + fsdp_rs + 3.0 * more)
    first = (fsdp_ag - latency) / units + latency  # the first unit's gather, before any compute to hide it
    per_mb = np.maximum(0.0, fsdp_total - ov * m * t_mb) + first
    # with pipelining: one gather and one reduce-scatter of each unit a step, as ZeRO-1 (torchtitan's FSDP + PP, above)
    per_step = np.maximum(0.0, fsdp_rs + more - ov * bwd_mb) + np.maximum(0.0, fsdp_ag + more - ov * fwd_mb)
    z3 = np.where(plans.pp > 1, per_step, per_mb) + np.maximum(0.0, cross - ov * bwd_mb)
    exposed = np.where(plans.zero >= 3, z3, z012)
    opt_dense = np.where(plans.zero >= 1, sh.zero_dense, 1)
    opt_expert = np.where(plans.zero >= 1, sh.zero_expert, 1)
    opt_bytes = t * optimizer_traffic(precision, weight_bytes) * (dense / opt_dense + expert / opt_expert)
    opt_bytes = opt_bytes + optimizer_traffic(precision, ab) * lora / opt_dense
    return np.asarray(exposed, dtype=np.float64), memory_time(opt_bytes, dev, kernels=4.0)
