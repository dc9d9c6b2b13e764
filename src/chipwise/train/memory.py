"""Memory per rank of a training plan: weights, gradients, optimizer states, activations, logits, reserve.

Mixed-precision Adam keeps, per parameter, a bf16 weight (2 B), an fp32 gradient (4 B) and fp32 master weight,
momentum and variance (12 B) (Rajbhandari et al. 2020, ZeRO). ZeRO stage z shards, over the data-parallel group:
    z=0: nothing          -> 2 + 4 + 12
    z=1: optimizer        -> 2 + 4 + 12/s
    z=2: + gradients      -> 2 + (4 + 12)/s
    z=3 (FSDP): all, the fp32 master doubling as the weight -> (4 + 4 + 8)/s, plus two layers gathered (2 B, fp8 1,
         fp32 4);
         with pipelining (torchtitan's FSDP + PP, data_parallel.py) the stage's gathered weights and unsharded
         fp32 gradients stay for the whole step -> 2 + 4 + (4 + 4 + 8)/s
FP8 and FP4 training keep 1-byte working weights instead of 2 (fp8 parameter gather), the master in fp32.
FP32 (and TF32, which stores fp32) training keeps its working weights in fp32 and so needs no separate master copy:
Megatron's FP32Optimizer and plain torch.optim.AdamW (and FSDP) hold the fp32 parameter, its fp32 gradient and
Adam's two fp32 moments, 4 + 4 + 8 bytes (z=1: 4 + 4 + 8/s, z=2: 4 + 12/s, z=3: 16/s and its gathered layers at
4 B). DeepSpeed's ZeRO-1/2 would add a 4-byte fp32 partition of its own; the lean count is the one both Megatron
and PyTorch run. LoRA's frozen base is stored in the format the chip computes in (fp32 at 4 B; fp8 at 1 B on a chip
with fp8 units, bf16 on an A100), as the working weights are; its adapters (lora.py) train as above, at 2 + 4 + 12
bytes (fp32: 4 + 4 + 8) sharded by the plan's ZeRO stage.

Activations per layer and token follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", section 4) written for any attention and MLP shape and for flash attention (no s^2 term):
    attention block: norm input h, QKV input h, Q/K/V (q + 2 kv), attention output o   (x 2 bytes)
    MLP block:       norm input h, MLP input h, up/gate outputs (2 ffn gated, ffn plain), activation ffn
Tensor parallelism divides the projections' outputs by tp; sequence parallelism divides the h-sized ones too.
Selective recompute drops the norm outputs, the MLP activation and (MoE) the permuted token copies, all cheap to
recompute (step.py reruns exactly that element-wise work); full recompute keeps only each layer's input. While a
layer's backward runs, the rank also holds what recompute rebuilt for it: that layer's none - kept elements.
With 1F1B pipelining the first stage holds min(m, pp) micro-batches of its L/pp layers - L layers' worth, and
(1 + (pp-1)/(pp vpp)) times that with interleaving (Narayanan et al. 2021; Korthikanti et al. eq. 5), but never more
than the m micro-batches of the batch: with m < pp + (pp-1)/vpp Megatron's interleaved schedule runs all its forwards
first (its warm-up, capped at m vpp chunk micro-batches), so the stage holds m micro-batches of all its layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chipwise.hardware.objects import PRECISION_BYTES
from chipwise.perf.device import Device, Topology
from chipwise.train.data_parallel import FP32_PRECISIONS, adapter_weight_bytes, expert_tp, shards
from chipwise.train.lora import local_adapter_params
from chipwise.train.plans import PlanArrays, stage_group_layers, stage_layers
from chipwise.types import Array
from chipwise.workload.model import LayerGroup, ModelSpec
from chipwise.workload.training import TrainingJob

ACT_BYTES = 2.0


def act_bytes(precision: str) -> float:
    """Bytes per activation element: 16-bit activations in mixed precision, 32-bit in fp32/tf32 training."""
    return 4.0 if precision in FP32_PRECISIONS else ACT_BYTES


@dataclass(frozen=True)
class MemoryBreakdown:
    weights: Array
    gradients: Array
    optimizer: Array
    activations: Array
    logits: Array
    reserved: Array

    @property
    def total(self) -> Array:
        return np.asarray(
            self.weights + self.gradients + self.optimizer + self.activations + self.logits + self.reserved,
            dtype=np.float64,
        )


def local_params(model: ModelSpec, plans: PlanArrays) -> tuple[Array, Array]:
    """(dense, expert) parameters held by the most loaded rank, before any ZeRO sharding. Past kv_heads ranks the K
    and V projections are replicated, not split further (a rank holds one whole KV head, as layer_activation_elems
    and the step's QKV GEMM have it): Llama-3.1-70B at TP64 holds 1.249e9 parameters a rank, not 70.55e9 / 64."""
    pp = plans.pp.astype(np.float64)
    tp = plans.tp.astype(np.float64)
    on_stage = stage_layers(model.layers, plans.pp, plans.vpp)
    share = on_stage / model.layers
    ends = float(model.embedding_params + model.lm_head_params)
    h = model.hidden
    # each group's layers on the stage with their own weights: a dense layer of DeepSeek-V3 holds 583 M parameters
    # outside the routed experts, an MoE layer 233 M, and a PP16 stage 4 MoE layers, not 61ths of the whole
    in_layers = np.zeros(len(plans))
    expert_layers = np.zeros(len(plans))
    body = float(model.dense_params) - ends  # what no layer holds (a projection, the final norm) by the share
    for g, k in zip(model.groups, stage_group_layers(model, plans.pp, plans.vpp), strict=True):
        per_layer = model.attention.params(h) + model.norm_params_per_layer
        if g.mlp is not None:
            per_layer += g.mlp.params(h)
        if g.moe is not None:
            per_layer += g.moe.shared_params(h) + g.moe.router_params(h)
            expert_layers = expert_layers + k * g.moe.experts * g.moe.expert_params(h)
        in_layers = in_layers + k * per_layer
        body -= g.count * per_layer
    end_stage = np.where(pp > 1, float(max(model.embedding_params, model.lm_head_params)), ends)
    dense = (in_layers + body * share + end_stage) / tp
    att = model.attention  # the copies of the K and V projections a rank holds beyond 1/tp
    beyond = 1.0 / np.minimum(tp, att.kv_heads) - 1.0 / tp
    dense = dense + att.kv_projection_params(model.hidden) * beyond * on_stage
    expert = expert_layers / plans.ep / expert_tp(plans)
    return np.asarray(dense, dtype=np.float64), np.asarray(expert, dtype=np.float64)


def layer_activation_elems(model: ModelSpec, g: LayerGroup, plans: PlanArrays) -> tuple[Array, Array, Array]:
    """Per token of a micro-batch: elements stored by one layer with no / selective / full recompute."""
    att = model.attention
    h = float(model.hidden)
    tp = plans.tp.astype(np.float64)
    seq_shard = np.where(plans.sp > 0, tp, 1.0)
    q = att.heads * att.head_dim
    o = att.heads * att.v_head_dim
    if att.kind != "mla":  # a rank holds at least one KV head: past kv_heads ranks, heads are replicated
        kv = att.kv_heads / np.minimum(tp, att.kv_heads) * (att.head_dim + att.v_head_dim)
    else:
        kv = att.heads * (att.head_dim + att.v_head_dim) / tp
    hsized = 4.0 * h / seq_shard  # two norm inputs and two block inputs
    attn = (q + o) / tp + kv
    if g.moe is not None:
        moe = g.moe
        mult = 3.0 if moe.gated else 2.0
        mlp = (moe.top_k * (h + mult * moe.expert_ffn) + moe.shared * mult * moe.shared_ffn) / tp
        # the activation outputs and the permuted token copies are cheap to recompute (a gather)
        act = (moe.top_k * (moe.expert_ffn + h) + moe.shared * moe.shared_ffn) / tp
    else:
        assert g.mlp is not None
        mult = 3.0 if g.mlp.gated else 2.0
        mlp = mult * g.mlp.ffn / tp
        act = g.mlp.ffn / tp
    none = hsized + attn + mlp
    selective = none - act - 2.0 * h / seq_shard
    full = h / seq_shard
    return np.asarray(none), np.asarray(selective), np.asarray(full)


def working_weight_bytes(dev: Device, precision: str) -> float:
    """Bytes of a working weight: 8-bit (and 4-bit) training keeps them in fp8 and gathers them in fp8 (Megatron's
    fp8-param-gather, torchtitan's float8 all-gather); the fp32 master copy lives in the optimizer state. A chip
    without units for the format computes, and keeps its working weights, in a wider one (an A100: bf16). FP32 and
    TF32 training keep fp32 weights whatever the chip's matmul units (TF32 rounds only the GEMM inputs)."""
    if precision in FP32_PRECISIONS:
        return 4.0
    return 1.0 if dev.chip.native_precision(precision) in ("fp8", "int8", "fp4") else 2.0


def frozen_weight_bytes(dev: Device, precision: str) -> float:
    """Bytes of a LoRA run's frozen base weight: stored in the format the chip computes in (fp8 on an H100, bf16 on
    an A100 asked for fp8, as working_weight_bytes has it; 4-bit where the chip has fp4 units), fp32 in fp32/tf32."""
    if precision in FP32_PRECISIONS:
        return 4.0
    return PRECISION_BYTES.get(dev.chip.native_precision(precision), 2.0)


def optimizer_bytes(precision: str) -> float:
    """Optimizer state bytes per parameter: Adam's fp32 master copy and two moments (12) in mixed precision; the two
    moments only (8) in fp32/tf32 training, whose fp32 parameters are their own master (module docstring)."""
    return 8.0 if precision in FP32_PRECISIONS else 12.0


def memory_per_rank(
    model: ModelSpec,
    job: TrainingJob,
    dev: Device,
    topo: Topology,
    plans: PlanArrays,
    params: tuple[Array, Array] | None = None,
) -> MemoryBreakdown:
    """Bytes a rank holds at its peak, by kind; `params`, the plans' local_params where the caller has them."""
    dense, expert = local_params(model, plans) if params is None else params
    sh = shards(plans, topo)
    z = plans.zero
    shard_dense = np.where(z >= 1, sh.zero_dense, 1).astype(np.float64)
    shard_expert = np.where(z >= 1, sh.zero_expert, 1).astype(np.float64)
    # LoRA's frozen base is both what a rank keeps and what FSDP gathers
    weight_bytes = frozen_weight_bytes(dev, job.precision) if job.lora else working_weight_bytes(dev, job.precision)
    opt_bytes = optimizer_bytes(job.precision)

    def states(p: Array, s: Array, frozen: bool, weight_bytes: float) -> tuple[Array, Array, Array]:
        if frozen:  # a LoRA run's base weights: no gradients or optimizer state
            w = np.where(z >= 3, weight_bytes * p / s, weight_bytes * p)
            return w, np.zeros_like(w), np.zeros_like(w)
        # ZeRO-3 shards 4 + 4 + 8 bytes: the fp32 master (or fp32 weight) doubling as the working weight
        w = np.where(z >= 3, 4.0 * p / s, weight_bytes * p)
        g = np.where(z >= 2, 4.0 * p / s, 4.0 * p)
        o = np.where(z >= 3, 8.0 * p / s, np.where(z >= 1, opt_bytes * p / s, opt_bytes * p))
        return w, g, o

    wd, gd, od = states(dense, shard_dense, job.lora, weight_bytes)
    we, ge, oe = states(expert, shard_expert, job.lora, weight_bytes)
    weights, grads, opt = wd + we, gd + ge, od + oe
    if job.lora:  # the adapters train, with their gradients and Adam state: they had been left out (0.0 GiB)
        wa, ga, oa = states(local_adapter_params(model, plans), shard_dense, False, adapter_weight_bytes(job.precision))
        weights, grads, opt = weights + wa, grads + ga, opt + oa
    layers = float(model.layers)
    # FSDP holds the gathered working weights (fp8 in 8-bit training: they had been counted in bf16) of the running
    # and the prefetched layer; with pipelining it keeps the stage's gathered weights and accumulates its unsharded
    # gradients across the step's micro-batches (torchtitan does not reshard after forward under PP and reduces
    # gradients on the last micro-batch only)
    fsdp_pp = (z >= 3) & (plans.pp > 1)
    weights = weights + np.where(fsdp_pp, weight_bytes * (dense + expert), 0.0)
    weights = weights + np.where((z >= 3) & ~fsdp_pp, 2.0 * weight_bytes * (dense + expert) / layers, 0.0)
    grads = grads + np.where(fsdp_pp & (not job.lora), 4.0 * (dense + expert), 0.0)

    ab = act_bytes(job.precision)
    tokens = plans.mb.astype(np.float64) * job.seq_len / plans.cp
    rebuilt = np.zeros(len(plans))  # per token: the most a layer's recompute adds to what it keeps stored
    act_stage = np.zeros(len(plans))  # per token: what the stage's layers keep for one micro-batch
    for g, k in zip(model.groups, stage_group_layers(model, plans.pp, plans.vpp), strict=True):
        none, sel, full = layer_activation_elems(model, g, plans)
        kept = np.choose(plans.recompute, [none, sel, full])
        act_stage = act_stage + k * kept
        rebuilt = np.maximum(rebuilt, none - kept)
    pp = plans.pp.astype(np.float64)
    vpp = plans.vpp.astype(np.float64)
    m = job.global_batch / (plans.dp * plans.mb)
    interleave = np.where(vpp > 1, 1.0 + (pp - 1.0) / (pp * vpp), 1.0)
    # no more micro-batches in flight than the batch has (m = pp interleaved: all forwards, then all backwards)
    all_first = (vpp > 1) & (m <= pp)
    in_flight = np.where(pp > 1, np.minimum(m, pp * interleave), 1.0)
    stage_acts = act_stage * in_flight * tokens * ab
    # the last rank runs (vpp - 1) pp warm-up chunk forwards (Megatron's interleaved schedule) and keeps them with
    # the one in its 1F1B step: ((vpp - 1) pp + 1) / vpp micro-batches of its layers, nearly the first rank's count
    # (one at vpp 1), and m of them where all forwards run first; each finished forward also holds its loss's fp32
    # logits until its backward, one micro-batch's in 1F1B, m where all forwards run first. One micro-batch of its
    # layers had been counted at any vpp: Llama-3.1-70B TP4 PP2v40 DP2 CP4 at 128K on 64 H100 read 78.4 GiB, "fits",
    # where its last rank holds 83.3 GiB
    last_in_flight = np.where(all_first, m, np.minimum(m, ((vpp - 1.0) * pp + 1.0) / vpp))
    last_acts = act_stage * last_in_flight * tokens * ab
    # the layer being recomputed needs its full activations during its backward; what it kept is already in
    # stage_acts, so only the rebuilt part is extra (adding a whole layer had made selective recompute take more
    # memory than none: Llama-3.2-1B, 64 H100, TP1 PP8 DP8 mb2, 24.90 GiB against 24.50)
    transient = rebuilt * tokens * ab
    logits_elems = tokens * model.vocab / plans.tp
    logits = logits_elems * (4.0 + ab)  # the fp32 copy the loss keeps, and the 16-bit logits while it is made
    held_logits = np.where(all_first & (pp > 1), m - 1.0, 0.0) * logits_elems * 4.0
    last_stage = last_acts + logits + held_logits
    activations = np.where(pp > 1, np.maximum(stage_acts, last_acts), stage_acts) + transient
    logits_held = np.where(pp > 1, np.maximum(0.0, last_stage - np.maximum(stage_acts, last_acts)), logits)
    reserved = np.full(len(plans), dev.eff.reserved_memory_bytes / dev.cores_per_chip)
    return MemoryBreakdown(weights, grads, opt, activations, np.maximum(logits_held, 0.0), reserved)
