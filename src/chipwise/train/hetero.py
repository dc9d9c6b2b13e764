"""Heterogeneous pipelines: the first stages on one chip type, the last on another, vectorised over plans.

A plan puts pp_a stages of tensor-parallel size tp_a on part A and pp_b stages of size tp_b on part B, dp
pipeline replicas, micro-batches of mb sequences. Layers are split in proportion to each part's speed,

    L_a* = (L tau_b / pp_b + h_b - h_a) / (tau_a / pp_a + tau_b / pp_b)

(tau = one layer's forward+backward time per micro-batch at that part's TP; h = what a stage of the part pays per
micro-batch past its layers: its chip type's fixed cost per micro-batch, the hand-offs between the part's own
stages where its pp > 1 (train.step.pipeline_hand_off, as plan train charges them), and on the last stage the LM
head), rounded to the better of floor and ceil and clipped so every stage holds a layer and fits in memory. With
stage times s_a = ceil(L_a/pp_a) tau_a + h_a and s_b = ceil(L_b/pp_b) tau_b + h_b, 1F1B runs at the slowest stage:

    step = (m + pp_a + pp_b - 1) max(s_a, s_b) + 2 m x hand-off(A->B) + exposed DP + optimizer + step overhead

(exposed DP and optimizer those of the part whose take longer; the step overhead the larger of the two chip types'
fixed per-step costs).

The hand-off of a micro-batch's activations (T x h, forward and its gradient backward) crosses the link joining
the parts: the hybrid scale-up fabric when one domain holds both types (NVLink Fusion), else the scale-out
network. Its boundary stages' chips each move their share over their own links, so it runs at
min(tp_a/c_a B_a, tp_b/c_b B_b) (c: cores per chip, B: a chip's achievable link rate). Each part reduces its own
gradients over its dp replicas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.perf.vector import divisors
from chipwise.train.data_parallel import dp_time
from chipwise.train.memory import act_bytes, layer_activation_elems, optimizer_bytes, working_weight_bytes
from chipwise.train.plans import PlanArrays
from chipwise.train.step import pipeline_hand_off, stage_costs
from chipwise.types import Array, IntArray
from chipwise.workload.model import ModelSpec
from chipwise.workload.training import TrainingJob


@dataclass(frozen=True)
class Part:
    """Chips of one type in a heterogeneous fleet."""

    system: System
    chips: int

    @property
    def dev(self) -> Device:
        return device_of(self.system)

    @property
    def topo(self) -> Topology:
        return topology_of(self.system)

    @property
    def ranks(self) -> int:
        return self.chips * self.system.chip.cores_per_chip


@dataclass(frozen=True)
class HeteroPlans:
    """Candidate heterogeneous plans, one element per plan."""

    tp_a: IntArray
    pp_a: IntArray
    tp_b: IntArray
    pp_b: IntArray
    dp: IntArray
    mb: IntArray
    recompute: IntArray

    def __len__(self) -> int:
        return int(self.dp.shape[0])

    def take(self, idx: IntArray) -> HeteroPlans:
        return HeteroPlans(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))

    def plan(self, i: int, layers_a: int, layers_b: int, names: tuple[str, str]) -> dict[str, object]:
        return {
            "stages": [
                {"hardware": names[0], "tp": int(self.tp_a[i]), "pp": int(self.pp_a[i]), "layers": layers_a},
                {"hardware": names[1], "tp": int(self.tp_b[i]), "pp": int(self.pp_b[i]), "layers": layers_b},
            ],
            "dp": int(self.dp[i]),
            "microbatch": int(self.mb[i]),
            "recompute": ("none", "selective", "full")[int(self.recompute[i])],
            "zero": 1,
        }


@dataclass(frozen=True)
class HeteroResult:
    plans: HeteroPlans
    layers_a: IntArray
    step_time: Array
    tokens_per_s: Array
    feasible: NDArray[np.bool_]
    stage_a: Array
    stage_b: Array
    hand_off: Array
    memory_a: Array
    memory_b: Array
    layer_a: Array  # one layer's forward + backward per micro-batch on each part
    layer_b: Array
    microbatches: Array  # m, per plan
    bubble: Array  # the step's (P - 1) slowest-stage slots idle in the 1F1B bubble (s)
    hand_offs: Array  # the step's m hand-offs between the parts (s)
    # the rest of the step, so that compute + bubble + hand_offs + dp_comm + optimizer + step_overhead = step_time:
    compute: Array  # the m micro-batches' slots at the slowest stage (s)
    dp_comm: Array  # exposed data-parallel gradient traffic of the part whose reduction and update take longer (s)
    optimizer: Array  # that part's optimizer update (s)
    step_overhead: Array  # the fixed per-step cost, the larger of the two chip types' (s)
    dp_on_a: NDArray[np.bool_]  # whether part A's reduction and update are the longer (dp_comm and optimizer its)


def enumerate_hetero(model: ModelSpec, job: TrainingJob, a: Part, b: Part) -> HeteroPlans:
    """Every plan with stages on both parts: TP within each part's scale-up domain, pp per part, shared dp."""
    att = model.attention
    layers = model.layers

    def tps(part: Part) -> list[int]:
        ok = [t for t in divisors(att.heads) if t <= part.topo.domain_ranks]
        return [t for t in ok if att.kind == "mla" or att.kv_heads % t == 0 or t % att.kv_heads == 0]

    pps = [p for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64) if p < layers]
    dps = [d for d in divisors(job.global_batch) if d <= max(a.ranks, b.ranks)]
    mbs = [m for m in (1, 2, 4, 8) if job.global_batch % m == 0]
    mesh = np.meshgrid(
        np.array(tps(a)), np.array(pps), np.array(tps(b)), np.array(pps), np.array(dps), np.array(mbs),
        np.array([0, 1, 2]), indexing="ij",
    )  # fmt: skip
    tp_a, pp_a, tp_b, pp_b, dp, mb, rec = (x.ravel().astype(np.int64) for x in mesh)
    ok = (dp * tp_a * pp_a <= a.ranks) & (dp * tp_b * pp_b <= b.ranks) & (pp_a + pp_b <= layers)
    ok &= job.global_batch % (dp * mb) == 0
    # keep plans that use most of the fleet; idling a part defeats the purpose of mixing
    ok &= (dp * tp_a * pp_a >= 0.5 * a.ranks) & (dp * tp_b * pp_b >= 0.5 * b.ranks)
    idx = np.flatnonzero(ok)
    return HeteroPlans(tp_a[idx], pp_a[idx], tp_b[idx], pp_b[idx], dp[idx], mb[idx], rec[idx])


def _plans_for(hp: HeteroPlans, tp: IntArray, pp: IntArray) -> PlanArrays:
    one = np.ones_like(hp.dp)
    return PlanArrays(
        tp=tp, pp=pp, dp=hp.dp, cp=one, ep=one, vpp=one, mb=hp.mb, zero=one, recompute=hp.recompute,
        sp=(tp > 1).astype(np.int64), hsdp=np.zeros_like(one),
    )  # fmt: skip


def _static_bytes(params: Any, job: TrainingJob, plans: PlanArrays, dev: Device) -> Array:
    """Bytes a rank holds for `params` split over its tp ranks, with ZeRO-1 over dp: weights at the precision the
    chip computes in (an A100 asked for fp8 keeps bf16 weights, as plan train's memory has it), fp32 gradients, and
    Adam's states sharded over dp (its fp32 master copy and two moments; the moments only in fp32 training)."""
    weight = working_weight_bytes(dev, job.precision)
    states = optimizer_bytes(job.precision) / plans.dp
    return np.asarray(params / plans.tp.astype(np.float64) * (weight + 4.0 + states), dtype=np.float64)


def _per_layer_memory(model: ModelSpec, job: TrainingJob, plans: PlanArrays, dev: Device) -> tuple[Array, Array]:
    """(static bytes per layer per rank with ZeRO-1 over dp, activation bytes per layer per micro-batch)."""
    per_layer_params = (model.params_total - model.embedding_params - model.lm_head_params) / model.layers
    static = _static_bytes(per_layer_params, job, plans, dev)
    tokens = plans.mb.astype(np.float64) * job.seq_len
    acts = np.zeros(len(plans))
    for g in model.groups:
        none, sel, full = layer_activation_elems(model, g, plans)
        acts += g.count / model.layers * np.choose(plans.recompute, [none, sel, full])
    return static, acts * tokens * act_bytes(job.precision)


def _internal_hand_offs(model: ModelSpec, job: TrainingJob, plans: PlanArrays, topo: Topology) -> Array:
    """A stage's hand-offs per micro-batch to its neighbour stage within one part (its activation forward, its
    gradient back; train.step.pipeline_hand_off, as plan train charges them): none where the part has one stage."""
    activation = plans.mb.astype(np.float64) * job.seq_len * model.hidden * act_bytes(job.precision)
    return np.where(plans.pp > 1, 2.0 * pipeline_hand_off(activation, plans, topo, plans.ranks), 0.0)


def hetero_step(
    model: ModelSpec,
    job: TrainingJob,
    a: Part,
    b: Part,
    hp: HeteroPlans,
    link_bandwidth: tuple[float, float],
    link_latency: float,
    path_bandwidth: float = np.inf,
) -> HeteroResult:
    """Price heterogeneous plans (part A holds the first stages, part B the last ones and the LM head);
    `link_bandwidth` is each part's achievable bytes/s per chip per direction towards the other, `path_bandwidth`
    that of one chip-to-chip path between them where a hybrid fabric's pair link caps it (System.cross_bandwidth)."""
    pa, pb = _plans_for(hp, hp.tp_a, hp.pp_a), _plans_for(hp, hp.tp_b, hp.pp_b)
    dev_a, dev_b = a.dev, b.dev
    one = np.ones(len(hp))
    cost_a = stage_costs(model, job, dev_a, a.topo, pa, one, head=0.0, ranks=pa.ranks)
    cost_b = stage_costs(model, job, dev_b, b.topo, pb, one, head=0.0, ranks=pb.ranks)
    head_b = stage_costs(model, job, dev_b, b.topo, pb, np.zeros(len(hp)), head=1.0, ranks=pb.ranks)
    tau_a = sum(cost_a.per_mb.values()) + dev_a.eff.layer_overhead_s
    tau_b = sum(cost_b.per_mb.values()) + dev_b.eff.layer_overhead_s
    # each stage pays its chip type's fixed cost per micro-batch and, inside a part of pp > 1, the hand-offs to its
    # neighbour stage, as plan train's stages do: part A's had been left out, so 256 GB200 beside 512 trn1 (70B) read
    # a trn1 stage of 8 x 65.49 ms with none of trn1's 52.8 ms a micro-batch, and that order won by skipping it
    h_a = dev_a.eff.microbatch_overhead_s + _internal_hand_offs(model, job, pa, a.topo)
    h_b = sum(head_b.per_mb.values()) + dev_b.eff.microbatch_overhead_s + _internal_hand_offs(model, job, pb, b.topo)
    L = model.layers
    ppa, ppb = hp.pp_a.astype(np.float64), hp.pp_b.astype(np.float64)
    m = job.global_batch / (hp.dp * hp.mb).astype(np.float64)
    stages = ppa + ppb
    # memory: the first part holds min(m, P) micro-batches in flight, the last part min(m, pp_b)
    static_a, act_a = _per_layer_memory(model, job, pa, dev_a)
    static_b, act_b = _per_layer_memory(model, job, pb, dev_b)
    per_layer_a = static_a + act_a * np.minimum(m, stages)
    per_layer_b = static_b + act_b * np.minimum(m, ppb)
    # the first part holds the input embedding, the last the LM head and the logits, each vocab-parallel over tp
    embedding = _static_bytes(model.embedding_params, job, pa, dev_a)
    reserve_a = dev_a.eff.reserved_memory_bytes / dev_a.cores_per_chip + embedding
    reserve_b = dev_b.eff.reserved_memory_bytes / dev_b.cores_per_chip
    logits = hp.mb * job.seq_len * model.vocab / hp.tp_b * 6.0 + _static_bytes(model.lm_head_params, job, pb, dev_b)
    cap_a = np.floor((dev_a.hbm_capacity - reserve_a) / per_layer_a) * ppa
    cap_b = np.floor((dev_b.hbm_capacity - reserve_b - logits) / per_layer_b) * ppb
    # balance the layers between the parts, then clip to the memory and one-layer-per-stage bounds
    ideal = (L * tau_b / ppb + h_b - h_a) / (tau_a / ppa + tau_b / ppb)
    lo = np.maximum(ppa, L - cap_b)
    hi = np.minimum(L - ppb, cap_a)
    best_la = np.zeros(len(hp))
    best_stage = np.full(len(hp), np.inf)
    for cand in (np.floor(ideal), np.ceil(ideal), lo, hi):
        la = np.clip(cand, lo, hi)
        s = np.maximum(np.ceil(la / ppa) * tau_a + h_a, np.ceil((L - la) / ppb) * tau_b + h_b)
        better = s < best_stage
        best_la = np.where(better, la, best_la)
        best_stage = np.where(better, s, best_stage)
    feasible = (lo <= hi) & np.isfinite(best_stage)
    la = np.where(feasible, best_la, ppa)
    s_a = np.ceil(la / ppa) * tau_a + h_a
    s_b = np.ceil((L - la) / ppb) * tau_b + h_b
    tokens = hp.mb * job.seq_len
    # each tensor-parallel rank at the boundary sends or receives its share of the micro-batch's activation over its
    # own chip's links (Megatron's scatter-gather hand-off; a rank on one of a Trainium chip's cores over that share),
    # so the end whose chips together carry less sets the rate: 8 trn1 chips at 5 GB/s (40 GB/s) handing to 4 GB200s
    # at 47 GB/s (188 GB/s) run at 40 GB/s (the narrower end's chip count at the slower chip's rate had given 20)
    chips_a, chips_b = hp.tp_a / dev_a.cores_per_chip, hp.tp_b / dev_b.cores_per_chip
    bandwidth = np.minimum(chips_a * link_bandwidth[0], chips_b * link_bandwidth[1])
    # ... and each chip of the larger end exchanges with one of the other over a path of the pair link's rate at
    # most (a narrower NVLink Fusion bridge; the catalog's trn4-gb300 link had been read for its latency only)
    bandwidth = np.minimum(bandwidth, np.maximum(chips_a, chips_b) * path_bandwidth)
    hand_off = 2.0 * (tokens * model.hidden * act_bytes(job.precision) / bandwidth + link_latency)
    t_mb = np.maximum(s_a, s_b)
    # data parallelism within each part, on its own stage parameters: all of them, routed experts too, for a mixed
    # pipeline has no expert parallelism, so each expert is replicated over dp and reduced and updated as a dense
    # weight is (as the memory above holds them). The experts had been left out: Mixtral 8x7B on 64 H100 beside 64
    # MI300X had read an optimizer update of 0.2 ms, over its 1.6B dense parameters of 46.7B; it now reads 3.3 ms
    per_layer = (model.params_total - model.embedding_params - model.lm_head_params) / L
    layers_a = np.maximum(np.ceil(la / ppa), 1.0)
    layers_b = np.maximum(np.ceil((L - la) / ppb), 1.0)
    dense_a = (per_layer * layers_a + model.embedding_params) / hp.tp_a
    dense_b = (per_layer * layers_b + model.lm_head_params) / hp.tp_b
    zeros = np.zeros(len(hp))
    # each part's gradient traffic hides behind its own stage's compute, all of its layers (part B's had one layer's)
    wb_a, wb_b = working_weight_bytes(dev_a, job.precision), working_weight_bytes(dev_b, job.precision)
    dp_a, opt_a = dp_time(dense_a, zeros, pa, a.topo, dev_a, m, cost_a.fwd * layers_a, cost_a.bwd * layers_a, t_mb,
                          int(L), trainable=not job.lora, weight_bytes=wb_a, precision=job.precision,
                          ranks=pa.ranks)  # fmt: skip
    dp_b, opt_b = dp_time(dense_b, zeros, pb, b.topo, dev_b, m, cost_b.fwd * layers_b, cost_b.bwd * layers_b, t_mb,
                          int(L), trainable=not job.lora, weight_bytes=wb_b, precision=job.precision,
                          ranks=pb.ranks)  # fmt: skip
    bubble, hand_offs = (stages - 1.0) * t_mb, m * hand_off
    overhead = max(dev_a.eff.step_overhead_s, dev_b.eff.step_overhead_s)
    step = (m + stages - 1.0) * t_mb + hand_offs + np.maximum(dp_a + opt_a, dp_b + opt_b) + overhead
    # the step's terms, for the report to say what it is made of: it had given the bubble and hand-offs alone, and
    # 256 GB200 beside 512 trn1 (70B) had left 1.69 s of a 6.57 s step unsaid, 1.60 s of it trn1's step overhead
    dp_on_a = dp_a + opt_a >= dp_b + opt_b
    tps = job.global_batch * job.seq_len / step
    mem_a = static_a * np.ceil(la / ppa) + act_a * np.ceil(la / ppa) * np.minimum(m, stages) + reserve_a
    mem_b = (
        static_b * np.ceil((L - la) / ppb) + act_b * np.ceil((L - la) / ppb) * np.minimum(m, ppb) + reserve_b + logits
    )
    return HeteroResult(
        plans=hp,
        layers_a=la.astype(np.int64),
        step_time=np.where(feasible, step, np.inf),
        tokens_per_s=np.where(feasible, tps, 0.0),
        feasible=feasible,
        stage_a=s_a,
        stage_b=s_b,
        hand_off=np.asarray(hand_off, dtype=np.float64),
        memory_a=mem_a,
        memory_b=mem_b,
        layer_a=np.asarray(tau_a, dtype=np.float64),
        layer_b=np.asarray(tau_b, dtype=np.float64),
        microbatches=m,
        bubble=bubble,
        hand_offs=np.asarray(hand_offs, dtype=np.float64),
        compute=m * t_mb,
        dp_comm=np.where(dp_on_a, dp_a, dp_b),
        optimizer=np.where(dp_on_a, opt_a, opt_b),
        step_overhead=np.full(len(hp), overhead),
        dp_on_a=np.asarray(dp_on_a),
    )
