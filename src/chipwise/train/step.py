"""Training step time of parallel plans, vectorised: one call prices an array of plans.

For one micro-batch on one pipeline stage (the critical stage, which also runs the LM head when pp > 1):

    t_mb = sum over its layers of [ forward + backward + recompute compute
                                    + exposed TP, CP and EP communication ] + LM head + pipeline hand-offs
           + layer_overhead x layers                       (framework time per layer, per micro-batch)

    step = m t_mb + (pp - 1)/vpp t_mb + exposed DP communication + optimizer update

with m = global_batch / (dp micro_batch) micro-batches (Narayanan et al. 2021: 1F1B bubble (pp-1)/(vpp m) of
the ideal time). Backward GEMMs cost twice the forward (data and weight gradients); flash-attention backward
2.5 times its forward (FlashAttention-2, Dao 2023: 5 matmuls against 2). Selective recompute reruns the
element-wise work (the norms, the MLP activation, MoE token permutation), which is what it drops from memory
(memory.py); flash attention keeps no s^2 tensor to drop and its backward already rebuilds the scores, so the
attention core is not rerun. Full recompute reruns the whole forward.

Communication per layer and micro-batch (bf16 activations of T tokens x h):
- TP: two all-reduces forward and two backward (or the equal-volume all-gather/reduce-scatter pairs of sequence
  parallelism), exposed except for the family's `tp_overlap` fraction;
- CP (ring attention): cp - 1 exchanges of the local K and V, hidden behind attention compute when it is longer;
- EP: all-to-all dispatch and combine, forward and backward, of T x top_k token copies, exposed;
- PP: a send of the stage's output forward and of its gradient backward, per micro-batch and virtual stage,
  exposed; an interleaved schedule (vpp > 1) overlaps them with the 1F1B phase's independent compute and exposes
  them only in the fill and flush (the bubble), as Megatron-Core's overlap_p2p_comm does (NeMo's communication
  overlap guide: "supports PP communication overlap only with virtual pipelining");
- DP: gradient reduce-scatter (all-reduce for ZeRO-0) and parameter all-gather once per step, overlapped with
  the last micro-batch's backward and the first one's forward up to `dp_overlap`; FSDP (ZeRO-3) gathers and
  scatters every layer for every micro-batch, overlapped with all compute up to `dp_overlap`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chipwise.perf import collectives as coll
from chipwise.perf.compute import attention_time, gemm_time, memory_time
from chipwise.perf.device import Device, Topology
from chipwise.perf.serving import streamed_gemm_time
from chipwise.perf.vector import per_value
from chipwise.train.data_parallel import FP32_PRECISIONS, dp_time, expert_tp
from chipwise.train.lora import local_adapter_params
from chipwise.train.memory import (
    MemoryBreakdown,
    act_bytes,
    frozen_weight_bytes,
    local_params,
    memory_per_rank,
    working_weight_bytes,
)
from chipwise.train.plans import PlanArrays, stage_group_layers, stage_layers
from chipwise.types import Array, IntArray
from chipwise.workload.model import LayerGroup, ModelSpec
from chipwise.workload.training import TrainingJob

BREAKDOWN_KEYS: tuple[str, ...] = (
    "compute",
    "attention",
    "memory_bound",
    "tp_comm",
    "cp_comm",
    "ep_comm",
    "pp_comm",
    "bubble",
    "dp_comm",
    "optimizer",
    "overhead",
)


def head_precision(precision: str) -> str:
    """The precision the LM head and the MoE router multiply in: bf16 in a bf16, fp16, fp8 or fp4 run (Transformer
    Engine keeps them out of the narrow formats, in the run's 16-bit one), the run's own in fp32 and tf32, whose every
    GEMM is 32-bit. bf16 had priced them in fp32 runs too: Llama-3.2-1B on 8 A100-80GB (seq 4,096, DP8) had read a
    head of 0.48 s a step in fp32, tf32 and bf16 alike; it now reads 6.46 s in fp32 and 0.96 s in tf32."""
    return precision if precision in FP32_PRECISIONS else "bf16"


@dataclass(frozen=True)
class StepResult:
    """Arrays over the plans: times in seconds, memory in bytes per rank."""

    plans: PlanArrays
    step_time: Array
    tokens_per_s: Array
    mfu: Array
    hfu: Array
    memory: MemoryBreakdown
    feasible: NDArray[np.bool_]
    breakdown: dict[str, Array]
    chips: int
    ranks: int
    model_flops_per_token: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_per_s_per_chip(self) -> Array:
        return np.asarray(self.tokens_per_s / self.chips, dtype=np.float64)

    @property
    def memory_per_rank(self) -> Array:
        return self.memory.total


@dataclass(frozen=True)
class _Groups:
    """The model-parallel communication groups of every plan, placed on the topology once."""

    tp: coll.Group
    ep: coll.Group
    #: each plan's own ranks (tp x pp x dp x cp), which place its groups (perf.collectives.place_group); None: every
    #: offset a block can take
    ranks: IntArray | None = None


class _Layer:
    """Per-layer forward costs of one layer group for all plans (seconds per micro-batch)."""

    def __init__(
        self,
        model: ModelSpec,
        g: LayerGroup,
        job: TrainingJob,
        dev: Device,
        topo: Topology,
        plans: PlanArrays,
        groups: _Groups,
    ) -> None:
        att = model.attention
        prec = job.precision
        ab = act_bytes(prec)
        h = float(model.hidden)
        tp = plans.tp.astype(np.float64)
        seq_shard = np.where(plans.sp > 0, tp, 1.0)
        tokens = plans.mb.astype(np.float64) * job.seq_len / plans.cp  # T: tokens of a micro-batch on a rank
        self.tokens = tokens
        kv_rank = att.kv_heads / np.minimum(tp, att.kv_heads)  # KV heads on a rank: past kv_heads ranks, replicated
        # --- attention projections
        if att.kind == "mla":
            nope = att.head_dim - att.rope_dim
            q_path = (
                gemm_time(tokens, att.q_lora_rank, h, dev, prec)
                + gemm_time(tokens, att.heads * att.head_dim / tp, att.q_lora_rank, dev, prec)
                if att.q_lora_rank
                else gemm_time(tokens, att.heads * att.head_dim / tp, h, dev, prec)
            )
            kv_path = gemm_time(tokens, att.kv_lora_rank + att.rope_dim, h, dev, prec) + gemm_time(
                tokens, att.heads * (nope + att.v_head_dim) / tp, att.kv_lora_rank, dev, prec
            )
            proj = q_path + kv_path
            kv_bytes_tok = att.heads * (att.head_dim + att.v_head_dim) * ab / tp
        else:
            qkv_n = att.heads * att.head_dim / tp + 2 * kv_rank * att.head_dim
            proj = gemm_time(tokens, qkv_n, h, dev, prec)
            kv_bytes_tok = kv_rank * (att.head_dim + att.v_head_dim) * ab
        proj = proj + gemm_time(tokens, h, att.heads * att.v_head_dim / tp, dev, prec)
        # --- attention core (flash)
        ctx = model.mean_context(job.seq_len, g.window, g.chunked)
        attn_flops = tokens * att.score_flops_per_position * ctx / tp
        attn_io = tokens * (2 * att.heads * att.head_dim / tp + 2 * kv_rank * att.head_dim) * ab
        self.attn_fwd = attention_time(attn_flops, attn_io, dev, prec)
        # --- MLP or MoE
        elem = 10.0 * h / seq_shard + 2.0 * (att.heads / tp + kv_rank) * att.head_dim  # norms, residuals, RoPE
        self.ep_tokens = np.zeros(len(plans))
        self.top_k = 1
        if g.moe is not None:
            moe = g.moe
            mult = 2.0 if moe.gated else 1.0
            etp = expert_tp(plans).astype(np.float64)
            per_expert = tokens * moe.top_k * plans.ep / moe.experts / np.where(etp > 1, 1.0, tp)
            local_experts = moe.experts / plans.ep
            # the router, experts x h, on the tokens the rank routes (sequence parallelism shards them over tp, as
            # Megatron routes them), priced as serving prices it (perf.serving.streamed_gemm_time): an output of a few
            # columns is bound by reading the tokens, not by a training GEMM's 256-wide tiles, last wave and ramp
            # (Mixtral 8x22B's 4,096 tokens on an MI300X had read 5,782 us a router forward, padding x32, wave x19,
            # ramp x17; they now read 19.1 us, and the 512 a TP8 rank routes 5.9 us); at bf16 but in fp32 and tf32 runs,
            # which multiply it at their own precision on 4-byte elements (head_precision)
            wide = head_precision(prec)
            mlp = streamed_gemm_time(tokens / seq_shard, moe.experts, h, dev, wide, act_bytes(wide))
            # the local experts priced GEMM by GEMM, each with its own last wave and launch, as the catalog's
            # moe_gemm fractions were fitted (scripts/calibrate.py): frameworks run them as one grouped GEMM
            # (Megatron's GroupedGEMM, MaxText's megablox), but pricing them so without a refit raised the training
            # table's error from 9.83% to 10.63% (B200 17.4% to 32.3%, Qwen3-30B-A3B's rows 19% to 42% fast): the
            # per-GEMM waves stand in for what the fit saw, the experts' uneven token counts among it
            experts = gemm_time(per_expert, mult * moe.expert_ffn / etp, h, dev, prec, count=local_experts)
            experts = experts + gemm_time(per_expert, h, moe.expert_ffn / etp, dev, prec, count=local_experts)
            mlp = mlp + experts / dev.eff.moe_gemm
            if moe.shared:
                ffn_s = moe.shared * moe.shared_ffn
                mlp = (
                    mlp
                    + gemm_time(tokens, mult * ffn_s / tp, h, dev, prec)
                    + gemm_time(tokens, h, ffn_s / tp, dev, prec)
                )
            act_w = (moe.top_k * moe.expert_ffn + moe.shared * moe.shared_ffn) / tp
            ffn_in = act_w
            # permute + unpermute copies of the routed tokens
            elem = elem + (mult + 1.0) * act_w + 4.0 * moe.top_k * h / tp
            self.ep_tokens = np.where(plans.ep > 1, tokens / tp, 0.0)
            self.top_k = moe.top_k
            self.mlp_tp_collectives = np.where(plans.ep > 1, 0.0, 2.0)
        else:
            assert g.mlp is not None
            mult = 2.0 if g.mlp.gated else 1.0
            ffn = float(g.mlp.ffn)
            mlp = gemm_time(tokens, mult * ffn / tp, h, dev, prec) + gemm_time(tokens, h, ffn / tp, dev, prec)
            elem = elem + (mult + 1.0) * ffn / tp
            ffn_in = ffn / tp
            self.mlp_tp_collectives = np.full(len(plans), 2.0)
        self.matmul_fwd = proj + mlp
        # a chip without units for the format computes in a wider one (an A100's fp8 run is bf16): nothing to quantise
        narrow = dev.chip.native_precision(prec) in ("fp8", "fp4", "int8")
        if narrow:
            # quantising each GEMM input (read bf16, write 8-bit: 1.5 element-equivalents) and the amax pass
            gemm_inputs = 2.0 * h + att.heads * att.v_head_dim / tp + ffn_in
            elem = elem + 1.5 * gemm_inputs
        self.elem_fwd = memory_time(tokens * elem * ab, dev, kernels=8.0)
        # --- communication per micro-batch (forward)
        act = tokens * h * ab
        ar = coll.all_reduce(act, groups.tp)
        self.tp_fwd = (2.0 + self.mlp_tp_collectives) / 2.0 * ar  # attention (1) + MLP (1) all-reduce equivalents
        # with expert tensor parallelism 1 the EP group is ep consecutive ranks (Megatron's expert layout);
        # tokens are dispatched in the GEMM precision (fp8 in fp8 training) and combined back in bf16
        dispatch_bytes = 1.0 if narrow else ab
        self.ep_fwd = coll.moe_dispatch(self.ep_tokens * h * (dispatch_bytes + ab), self.top_k, groups.ep, topo)
        kv_chunk = tokens * kv_bytes_tok
        # the ring's members sit tp ranks apart; one that spans past the scale-up domain (TP4 x CP8 on 8-GPU nodes)
        # waits at each step for its hops over the network, not the fabric's
        ring = coll.p2p(kv_chunk, plans.tp, topo, plans.cp, groups.ranks)
        self.cp_fwd = np.where(plans.cp > 1, (plans.cp - 1) * ring, 0.0)

    def expand(self, inverse: NDArray[np.int64]) -> None:
        """Broadcast costs priced per distinct (tp, cp, mb, ep, sp) back to every plan."""
        for name in ("matmul_fwd", "attn_fwd", "elem_fwd", "tp_fwd", "ep_fwd", "cp_fwd"):
            setattr(self, name, np.asarray(getattr(self, name))[inverse])


@dataclass(frozen=True)
class StageCosts:
    """One micro-batch on one pipeline stage: time per component (forward + backward + recompute, exposed
    communication), the forward and backward compute alone (what can hide data-parallel traffic), and the expert
    all-to-all each hides already (`ep_hidden_fwd`, `ep_hidden_bwd`; zero without experts)."""

    per_mb: dict[str, Array]
    fwd: Array
    bwd: Array
    ep_hidden_fwd: Array | float = 0.0
    ep_hidden_bwd: Array | float = 0.0


def _reach(plans: PlanArrays, topo: Topology, ranks: IntArray) -> IntArray:
    """`ranks` capped where more would place a layer's groups no differently: a job of lcm(B, D) ranks or more
    reaches every offset a block of B ranks takes in a domain of D (the TP group's, the context-parallel ring's, the
    expert group's), so plans past it price alike and are priced once (per-plan counts had slowed the search a
    third)."""
    d = topo.domain_ranks
    blocks = (plans.tp, plans.tp * plans.cp, plans.ep)
    reach = functools.reduce(np.maximum, [per_value(lambda v: np.lcm(v, d), b) for b in blocks])
    return np.asarray(np.minimum(ranks, reach), dtype=np.int64)


def stage_costs(
    model: ModelSpec,
    job: TrainingJob,
    dev: Device,
    topo: Topology,
    plans: PlanArrays,
    layers_on_stage: Array,
    head: Array | float = 1.0,
    group_layers: Sequence[Array] | None = None,
    ranks: IntArray | None = None,
) -> StageCosts:
    """Cost of one micro-batch on a stage holding `layers_on_stage` layers (in the model's layer mix, or
    `group_layers` of each of model.groups where given), plus the LM head and loss when `head` is 1. Vectorised over
    plans. `ranks`, each plan's own ranks (tp x pp x dp x cp, not the fleet's: chips a plan leaves idle hold no
    rank), places its groups as they are packed (perf.collectives.place_group: only the offsets its blocks reach)."""
    n = len(plans)
    eff = dev.eff
    bwd_gemm = 1.0 if job.lora else 2.0
    re_matmul = np.where(plans.recompute == 2, 1.0, 0.0)
    # selective recompute keeps Q, K, V and the attention output (memory.py), so it reruns no attention: charging
    # a second attention forward had priced Meta's 405B 128K plan 13.49 s of attention against 10.49 s without
    # recompute, for no memory saved
    re_attn = re_matmul
    re_elem = np.where(plans.recompute >= 1, 1.0, 0.0)
    per_mb = {k: np.zeros(n) for k in ("compute", "attention", "memory_bound", "tp_comm", "cp_comm", "ep_comm")}
    fwd_mb = np.zeros(n)
    bwd_mb = np.zeros(n)
    ep_hidden_fwd = np.zeros(n)
    ep_hidden_bwd = np.zeros(n)
    # a layer's costs depend on (tp, cp, mb, ep, sp) only: price each distinct combination once
    reach = None if ranks is None else _reach(plans, topo, np.broadcast_to(np.asarray(ranks, dtype=np.int64), (n,)))
    sub, sub_ranks, inverse = plans.distinct("tp", "cp", "mb", "ep", "sp", ranks=reach)
    groups = _Groups(
        tp=coll.group(sub.tp, 1, topo, sub_ranks), ep=coll.group(sub.ep, 1, topo, sub_ranks), ranks=sub_ranks
    )
    if group_layers is None:
        group_layers = [g.count / model.layers * layers_on_stage for g in model.groups]
    for g, k in zip(model.groups, group_layers, strict=True):  # k: layers of this group on the stage
        lay = _Layer(model, g, job, dev, topo, sub, groups)
        if inverse is not None:
            lay.expand(inverse)
        compute = lay.matmul_fwd * (1.0 + bwd_gemm + re_matmul)
        attention = lay.attn_fwd * (1.0 + 2.5 + re_attn)
        elementwise = lay.elem_fwd * (1.0 + 2.0 + re_elem)
        fwd = lay.matmul_fwd + lay.attn_fwd + lay.elem_fwd
        per_mb["compute"] += k * compute
        per_mb["attention"] += k * attention
        per_mb["memory_bound"] += k * elementwise
        per_mb["tp_comm"] += k * lay.tp_fwd * (2.0 + re_matmul) * (1.0 - eff.tp_overlap)
        if np.any(lay.ep_fwd):  # an expert all-to-all: none in a dense layer, nor at EP1
            busy = compute + attention + elementwise
            ep_traffic = lay.ep_fwd * (2.0 + re_matmul)
            ep_hidden = np.minimum(ep_traffic, eff.ep_overlap * busy)
            per_mb["ep_comm"] += k * (ep_traffic - ep_hidden)
            # the compute that hides the all-to-all hides it in the forward and the backward by their shares of it
            fwd_share = np.divide(fwd, busy, out=np.zeros(n), where=busy > 0)
            ep_hidden_fwd += k * ep_hidden * fwd_share
            ep_hidden_bwd += k * ep_hidden * (1.0 - fwd_share)
        if np.any(lay.cp_fwd):  # a context-parallel ring
            # full recompute reruns the ring attention too (Megatron checkpoints the whole layer): cp - 1 more K/V
            # exchanges, behind one more attention forward
            cp_traffic = lay.cp_fwd * (3.0 + re_matmul)
            per_mb["cp_comm"] += k * np.maximum(0.0, cp_traffic - lay.attn_fwd * (3.5 + re_attn))
        fwd_mb += k * fwd
        bwd_mb += k * (lay.matmul_fwd * bwd_gemm + lay.attn_fwd * 2.5 + lay.elem_fwd * 2.0)
    # LM head and loss on the last stage (the embedding lookup on the first stage costs nothing comparable), priced
    # per distinct (tp, cp, mb) as the layers are
    tokens = sub.mb.astype(np.float64) * job.seq_len / sub.cp
    tp = sub.tp.astype(np.float64)
    head_gemm = gemm_time(tokens, model.vocab / tp, model.embed_width, dev, head_precision(job.precision))
    head_memory = memory_time(tokens * model.vocab / tp * 4.0 * 3.0, dev, kernels=4.0)
    if inverse is not None:
        head_gemm, head_memory = head_gemm[inverse], head_memory[inverse]
    per_mb["compute"] += head * head_gemm * (1.0 + bwd_gemm)
    per_mb["memory_bound"] += head * head_memory
    return StageCosts(per_mb, fwd_mb, bwd_mb, ep_hidden_fwd, ep_hidden_bwd)


def dp_windows(stage: StageCosts, t_mb: Array, overlap: float) -> tuple[Array, Array, Array]:
    """The forward, backward and whole micro-batch time left to hide data-parallel traffic (at `overlap`, the share
    of a window that hides it) once the expert all-to-all has hidden itself behind the same compute: one budget for
    both, overlap x window, where each had taken all of it (a faster chip, or fp4 over fp8, then exposed more
    traffic than it saved compute: DeepSeek-V3 on 1,024 B300 at TP2 DP512 EP32, 1.04 s a step at fp8 and 1.14 s at
    fp4; with one budget 1.48 s and 1.45 s, the data-parallel reduce-scatter now exposed where the all-to-all took the
    backward's overlap)."""
    if overlap <= 0.0:
        return stage.fwd, stage.bwd, t_mb
    fwd = np.maximum(0.0, stage.fwd - stage.ep_hidden_fwd / overlap)
    bwd = np.maximum(0.0, stage.bwd - stage.ep_hidden_bwd / overlap)
    return fwd, bwd, t_mb - (stage.fwd - fwd) - (stage.bwd - bwd)


def pipeline_hand_off(activation: Array, plans: PlanArrays, topo: Topology, ranks: IntArray) -> Array:
    """One pipeline hand-off of a micro-batch's `activation` bytes (a stage's output forward or its gradient back),
    seconds: each of the tp ranks sends 1/tp of it to its peer in the next stage, tp x cp x dp ranks on, where the
    stage at a domain's edge paces them (perf.collectives.pipeline_send). With sequence parallelism a rank holds that
    1/tp already. Without it every rank holds the whole tensor: the sender scatters it and the receiver all-gathers it
    over the TP group on the scale-up fabric, as Megatron-LM does by default (`--no-scatter-gather-tensors-in-pipeline`:
    "If not set, use scatter/gather to optimize communication of tensors in pipeline"; Narayanan et al. 2021 s.4.1)
    and so does DeepSpeed's pipeline engine (deepspeed/runtime/pipe/engine.py: pipeline.pipe_partitioned and
    grad_partitioned, default true, send a PartitionedTensor over the model-parallel group, rebuilt with .full() at
    the receiver). Megatron-Core's
    p2p_communication (2023 on) sends the whole tensor; a plan with sp off is priced as the two above: an estimate
    there. Every TP rank had sent the whole tensor: GPT-3 175B at TP8 PP16 DP8 on 1,024 A100-80GB (Megatron-LM's
    README run, about 32 s measured) had read 13.66 ms a send of 50.3 MB, pp_comm 5.246 s and a 37.57 s step; it now
    reads 1.718 ms a send of 6.29 MB and 0.198 ms to all-gather it over NVLink, pp_comm 0.736 s and a 32.70 s step."""
    tp = plans.tp.astype(np.float64)
    stride_pp = plans.tp * plans.cp * plans.dp  # stages sit tp x cp x dp ranks apart
    send = coll.pipeline_send(activation / tp, stride_pp, topo, plans.pp)
    gather = coll.all_gather(activation, coll.group(plans.tp, 1, topo, ranks))  # zero for TP1
    return np.asarray(send + np.where(plans.sp > 0, 0.0, gather), dtype=np.float64)


def _hand_offs(model: ModelSpec, job: TrainingJob, plans: PlanArrays, topo: Topology, ranks: IntArray) -> Array:
    """pipeline_hand_off of each plan's micro-batch activation, priced once per distinct (tp, cp, dp, pp, mb, sp,
    ranks), all it depends on (the ZeRO stage, recompute, interleaving and sharding repeat it)."""
    plans, ranks, inverse = plans.distinct("tp", "cp", "dp", "pp", "mb", "sp", ranks=ranks)
    tokens = plans.mb.astype(np.float64) * job.seq_len / plans.cp
    hand_off = pipeline_hand_off(tokens * model.hidden * act_bytes(job.precision), plans, topo, ranks)
    return hand_off if inverse is None else hand_off[inverse]


def train_step(
    model: ModelSpec, job: TrainingJob, dev: Device, topo: Topology, plans: PlanArrays, chips: int
) -> StepResult:
    """Price every plan: step time, throughput, MFU, memory per rank, feasibility and the time breakdown."""
    # the plan's own ranks place its groups: a plan that leaves chips idle holds no rank on them (the fleet's count
    # had put a fifth TP16 block at ranks 64-79 of a 64-rank plan on 80 GB200s, across two racks: 30% slower)
    plan_ranks = plans.ranks
    eff = dev.eff
    prec = job.precision
    pp = plans.pp.astype(np.float64)
    vpp = plans.vpp.astype(np.float64)
    m = job.global_batch / (plans.dp * plans.mb).astype(np.float64)
    re_matmul = np.where(plans.recompute == 2, 1.0, 0.0)
    on_stage = stage_layers(model.layers, plans.pp, plans.vpp)
    stage = stage_costs(
        model,
        job,
        dev,
        topo,
        plans,
        on_stage,
        group_layers=stage_group_layers(model, plans.pp, plans.vpp),
        ranks=plan_ranks,
    )
    per_mb, fwd_mb, bwd_mb = stage.per_mb, stage.fwd, stage.bwd
    # pipeline hand-offs: forward activation and backward gradient, per virtual stage
    hand_off = _hand_offs(model, job, plans, topo, _reach(plans, topo, plan_ranks))
    pp_comm = np.where(plans.pp > 1, 2.0 * vpp * hand_off, 0.0)
    overhead_mb = eff.layer_overhead_s * on_stage + eff.microbatch_overhead_s

    t_mb = sum(per_mb.values()) + pp_comm + overhead_mb
    bubble = (pp - 1.0) / vpp * t_mb
    # the interleaved schedule hides its hand-offs behind the 1F1B phase's independent compute (Megatron-Core's
    # overlap_p2p_comm, which NeMo and Megatron-Bridge set with virtual pipelining); fill and flush expose them
    pp_hidden = np.where(vpp > 1.0, np.minimum(pp_comm, fwd_mb + bwd_mb), 0.0)
    dense, expert = local_params(model, plans)
    dp_comm, optimizer = dp_time(
        dense,
        expert,
        plans,
        topo,
        dev,
        m,
        *dp_windows(stage, t_mb, eff.dp_overlap),
        model.layers,
        trainable=not job.lora,
        weight_bytes=(frozen_weight_bytes if job.lora else working_weight_bytes)(dev, prec),  # as memory holds them
        precision=prec,
        adapters=local_adapter_params(model, plans) if job.lora else None,
        ranks=plan_ranks,
    )
    step = m * (t_mb - pp_hidden) + bubble + dp_comm + optimizer + eff.step_overhead_s
    mem = memory_per_rank(model, job, dev, topo, plans, (dense, expert))
    feasible = mem.total <= dev.hbm_capacity

    tps = float(job.global_batch * job.seq_len) / step
    mflops = model.training_flops_per_token(job.seq_len, job.lora)
    peak = dev.chip.peak_flops(prec)
    mfu = tps * mflops / (chips * peak)
    hw_flops = mflops + re_matmul * model.flops_per_token_fwd(job.seq_len)
    hfu = tps * hw_flops / (chips * peak)

    breakdown = {key: m * v for key, v in per_mb.items()}
    breakdown["pp_comm"] = m * (pp_comm - pp_hidden)
    breakdown["overhead"] = m * overhead_mb + eff.step_overhead_s
    breakdown["bubble"] = bubble
    breakdown["dp_comm"] = dp_comm
    breakdown["optimizer"] = optimizer
    return StepResult(
        plans=plans,
        step_time=np.asarray(step, dtype=np.float64),
        tokens_per_s=np.asarray(tps, dtype=np.float64),
        mfu=np.asarray(mfu, dtype=np.float64),
        hfu=np.asarray(hfu, dtype=np.float64),
        memory=mem,
        feasible=np.asarray(feasible),
        breakdown={k: np.asarray(breakdown[k], dtype=np.float64) for k in BREAKDOWN_KEYS},
        chips=chips,
        ranks=chips * dev.cores_per_chip,
        model_flops_per_token=mflops,
    )
