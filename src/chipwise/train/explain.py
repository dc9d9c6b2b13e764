"""Turn one priced plan into the result chipwise reports: figures in SI, the breakdown, what dominated, and which
catalog figures were used with their status."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from chipwise.hardware.objects import FigureRef, System
from chipwise.perf.device import beyond_network_note, device_of, topology_of
from chipwise.train.lora import LORA_RANK, lora_adapter_params
from chipwise.train.memory import memory_per_rank
from chipwise.train.search import PlanSearch
from chipwise.train.step import BREAKDOWN_KEYS, StepResult

BREAKDOWN_LABELS: dict[str, str] = {
    "compute": "matmul compute",
    "attention": "attention",
    "memory_bound": "memory-bound (norms, activations, loss)",
    "tp_comm": "exposed tensor-parallel communication",
    "cp_comm": "exposed context-parallel communication",
    "ep_comm": "exposed expert-parallel all-to-all",
    "pp_comm": "pipeline hand-offs",
    "bubble": "pipeline bubble",
    "dp_comm": "exposed data-parallel communication",
    "optimizer": "optimizer update",
    "overhead": "framework overhead",
}


#: the efficiency figures every step reads (the GEMM tiles and per-kernel time shape each operator; the overlaps,
#: overheads and reserved memory the step and its memory), and those only a model with experts reads
STEP_EFFICIENCY = (
    "compute_units",
    "tile_m",
    "tile_n",
    "kernel_overhead",
    "layer_overhead",
    "microbatch_overhead",
    "step_overhead",
    "tp_overlap",
    "dp_overlap",
    "reserved_memory",
    "reference_tdp",
)
EXPERT_EFFICIENCY = ("ep_overlap", "moe_gemm")


def scaleup_figure(system: System) -> tuple[str, FigureRef | None]:
    """The scale-up bandwidth a plan's collectives read: the system's where it gives one (a torus's total, Trn2's
    512 GB/s in trn2.48xlarge), named by the system, where `--set` and `catalog show` find it; else the chip's."""
    ref = system.provenance.get("scaleup.bandwidth")
    if ref is not None:
        return f"{system.id}.scaleup.bandwidth", ref
    return f"{system.chip.id}.scaleup_bandwidth", system.chip.provenance.get("scaleup_bandwidth")


def fabric_figures(system: System, network: bool = True) -> dict[str, FigureRef | None]:
    """The fabrics' figures a collective reads: each fabric's latency and bus efficiency, and (`network`) the
    scale-out fabric's bandwidth and its tiers' reach and oversubscription, named as `--set` takes them
    (efa-v3.tiers.0.chips)."""
    up, out = system.scaleup.fabric, system.scaleout_fabric
    wanted: dict[str, FigureRef | None] = dict([scaleup_figure(system)])
    wanted[f"{up.id}.bus_efficiency"] = up.provenance.get("bus_efficiency")
    wanted[f"{up.id}.latency"] = up.provenance.get("latency")
    if network:
        wanted[f"{system.id}.scaleout.bandwidth"] = system.provenance.get("scaleout.bandwidth")
        wanted[f"{out.id}.bus_efficiency"] = out.provenance.get("bus_efficiency")
        wanted[f"{out.id}.latency"] = out.provenance.get("latency")
        wanted.update({f"{out.id}.{k}": ref for k, ref in out.provenance.items() if k.startswith("tiers.")})
    return wanted


def efficiency_figures(system: System, names: Sequence[str]) -> dict[str, FigureRef | None]:
    """The chip family's efficiency figures `names`, named as `--set` takes them (efficiency.FAMILY.FIELD)."""
    chip = system.chip
    return {f"efficiency.{chip.family}.{n}": chip.efficiency.provenance.get(n) for n in names}


def figures_used(system: System, precision: str, experts: bool = False) -> dict[str, dict[str, Any]]:
    """The catalog figures the prediction rests on, with status and sources: every figure a step reads (a
    `chipwise sensitivity` moves each of them; a figure it leaves out moves no step)."""
    chip = system.chip
    native = chip.native_precision(precision)
    wanted: dict[str, FigureRef | None] = {
        f"{chip.id}.flops.{native}": chip.provenance.get(f"flops.{native}"),
        # the LM head and loss run in bf16 whatever the precision of the layers
        f"{chip.id}.flops.bf16": chip.provenance.get("flops.bf16"),
        f"{chip.id}.hbm_bandwidth": chip.provenance.get("hbm_bandwidth"),
        f"{chip.id}.hbm_capacity": chip.provenance.get("hbm_capacity"),
        **fabric_figures(system),
        **efficiency_figures(system, (f"matmul.{native}", "matmul.bf16", "attention", "memory", *STEP_EFFICIENCY)),
        **(efficiency_figures(system, EXPERT_EFFICIENCY) if experts else {}),
    }
    return {name: ref.record() for name, ref in wanted.items() if ref is not None}


def dominant(breakdown: dict[str, float]) -> str:
    key = max(breakdown, key=lambda k: breakdown[k])
    return key


def plan_result(search: PlanSearch, index: int) -> dict[str, Any]:
    """Everything chipwise reports about one plan of a search (SI units)."""
    res: StepResult = search.result
    system = search.system
    job = search.job
    chips = search.chips
    i = index
    breakdown = {k: float(res.breakdown[k][i]) for k in BREAKDOWN_KEYS}
    step = float(res.step_time[i])
    mem = res.memory
    cores = system.chip.cores_per_chip
    ranks_used = int(res.plans.tp[i] * res.plans.pp[i] * res.plans.dp[i] * res.plans.cp[i])
    projected = system.projected
    out: dict[str, Any] = {
        "kind": "train",
        "model": job.model.name,
        "model_alias": job.model.alias or None,
        "hardware": system.chip.id,
        "system": system.id,
        "chips": chips,
        # a chip any of whose cores hold a rank is busy (it draws power and can fail): 49 ranks on 4-core Trn2 use 13
        # chips, not the 12 rounding down had counted
        "chips_used": -(-ranks_used // cores),
        "cores_per_chip": cores,  # a rank is a core: tp x pp x dp x cp ranks on chips_used chips
        "precision": job.precision,
        "compute_precision": system.chip.native_precision(job.precision),
        # a precision the chip lists runs on its own units at no more than the wider one's rate (Gaudi 3's FP8 at its
        # BF16 rate), one it does not list has none (an A100's FP8): the views say which
        "precision_listed": job.precision in system.chip.flops,
        "seq_len": job.seq_len,
        "global_batch": job.global_batch,
        "global_batch_tokens": job.global_batch_tokens,
        # a LoRA fine-tune's step and checkpoint are not full training's: a saved result had read as one
        "lora": job.lora,
        "plan": res.plans.plan(i),
        "step_time_s": step,
        "tokens_per_s": float(res.tokens_per_s[i]),
        "tokens_per_s_per_chip": float(res.tokens_per_s_per_chip[i]),
        "tflops_per_chip": float(res.tokens_per_s_per_chip[i] * res.model_flops_per_token / 1e12),
        "mfu": float(res.mfu[i]),
        "hfu": float(res.hfu[i]),
        "model_flops_per_token": res.model_flops_per_token,
        "memory_per_chip_gib": float(mem.total[i]) * cores / 2**30,
        "memory_capacity_gib": system.chip.hbm_capacity / 2**30,
        "memory_breakdown_gib": {
            k: float(getattr(mem, k)[i]) * cores / 2**30
            for k in ("weights", "gradients", "optimizer", "activations", "logits", "reserved")
        },
        "breakdown": breakdown,
        "breakdown_fraction": {k: v / step for k, v in breakdown.items()},
        "dominated_by": dominant(breakdown),
        "projected": projected,
        "figures": figures_used(system, job.precision, job.model.is_moe),
    }
    if job.lora:  # its adapters (train.lora), what its checkpoints hold
        out["lora_rank"] = LORA_RANK
        out["lora_adapter_params"] = lora_adapter_params(job.model)
    if (steps := job.steps) is not None:
        out["tokens"] = job.tokens
        out["steps"] = steps
        out["time_to_train_s"] = steps * step
    if note := fsdp_pipeline_note(search, i):
        out["memory_note"] = note
    if note := beyond_network_note(system, out["chips_used"]):
        out["network_note"] = note
    if carried := system.chip.efficiency.carried_from:  # no run of the chip's family is in the training fit
        out["efficiency_carried_from"] = carried
    if system.chip.efficiency.unfitted:  # ... nor of one its figures are carried from: priors, marked as such
        out["efficiency_unfitted"] = True
        out["efficiency_unfitted_reason"] = unfitted_reason(system, job.precision)
    if projected:
        out["projection_note"] = (
            f"{system.chip.id} / {system.id} is announced, not shipping: its figures are projected from announced "
            "ratios or estimated"
        )
    return out


def unfitted_reason(system: System, precision: str) -> str:
    """Why a chip's training efficiencies are unmarked guesses (Efficiency.unfitted): no published run of its family
    is in the fit, and, where its prior charges no framework time (Efficiency.overhead_free), its step leans fast.
    Gaudi 2's, Gaudi 3's and TPU7x's had stood unmarked beside fitted families' (MLPerf v4.0's GPT-3 175B on 1,024
    Gaudi 2 took 66.24 min, where chipwise prices 46.3)."""
    eff = system.chip.efficiency
    native = system.chip.native_precision(precision)
    reason = (
        f"no published training run of the {eff.family} family (nor of a family it takes figures from) is in the "
        f"fit: its efficiencies are the catalog's priors (a large GEMM at {eff.matmul_fraction(native):.2f} of "
        f"{native} peak)"
    )
    if eff.overhead_free:
        reason += ", with no framework time per layer, micro-batch or step, so its time leans optimistic"
    return reason


def fsdp_pipeline_note(search: PlanSearch, i: int) -> str:
    """Where plan i runs ZeRO-3 with a pipeline and ZeRO-1 would hold less, the figures ('' otherwise).

    FSDP under pipelining is priced as torchtitan runs it (memory.py): each stage keeps its gathered weights and
    unsharded gradients through the step, more than ZeRO-1 holds at the same traffic. A user who asked for zero 3
    to save memory is told what ZeRO-1 would hold. ZeRO-2, which no framework runs with a pipeline
    (plans._zero_pipeline_problem), is not offered: the note had read "more than zero 1 (19.0) or zero 2 (10.8)"
    for Llama-3.1-70B TP8 PP4 DP32 on 1,024 H100; it now reads "more than zero 1 (19.0)"."""
    plans = search.result.plans.take(np.array([i]))
    if int(plans.zero[0]) < 3 or int(plans.pp[0]) == 1:
        return ""
    system, job = search.system, search.job
    dev, topo = device_of(system), topology_of(system)
    per_chip = system.chip.cores_per_chip / 2**30
    own = float(search.result.memory.total[i]) * per_chip
    # the same plan at ZeRO-1 (sharding over the whole data-parallel group: hsdp applies to ZeRO-3 only)
    stages = np.array([1], dtype=np.int64)
    zero1 = replace(plans, zero=stages, hsdp=np.zeros(1, dtype=np.int64))
    other = memory_per_rank(job.model, job, dev, topo, zero1).total * per_chip
    leaner = [f"zero {z} ({gib:.1f})" for z, gib in zip(stages, other, strict=True) if gib < own]
    if not leaner:
        return ""
    return (
        f"zero 3 with pp > 1 holds {own:.1f} GiB per chip, more than {' or '.join(leaner)} would: with a pipeline, "
        "FSDP keeps each stage's gathered weights and unsharded gradients through the step (torchtitan's FSDP + PP; "
        "resharding after forward is not modelled)"
    )


def search_summary(search: PlanSearch) -> dict[str, Any]:
    return {"evaluated": search.evaluated, "feasible": search.feasible, "seconds": search.seconds}
