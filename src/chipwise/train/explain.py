"""Turn one priced plan into the result chipwise reports: figures in SI, the breakdown, what dominated, and which
catalog figures were used with their status."""

from __future__ import annotations

from typing import Any

from chipwise.hardware.objects import FigureRef, System
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


def figures_used(system: System, precision: str) -> dict[str, dict[str, Any]]:
    """The catalog figures the prediction rests on, with status and sources."""
    chip = system.chip
    native = chip.native_precision(precision)
    wanted: dict[str, FigureRef | None] = {
        f"{chip.id}.flops.{native}": chip.provenance.get(f"flops.{native}"),
        f"{chip.id}.hbm_bandwidth": chip.provenance.get("hbm_bandwidth"),
        f"{chip.id}.hbm_capacity": chip.provenance.get("hbm_capacity"),
        f"{chip.id}.scaleup_bandwidth": system.provenance.get("scaleup.bandwidth")
        or chip.provenance.get("scaleup_bandwidth"),
        f"{system.id}.scaleout.bandwidth": system.provenance.get("scaleout.bandwidth"),
        f"{system.scaleout_fabric.id}.bus_efficiency": system.scaleout_fabric.provenance.get("bus_efficiency"),
        f"{system.scaleup.fabric.id}.bus_efficiency": system.scaleup.fabric.provenance.get("bus_efficiency"),
        f"efficiency.{chip.family}.matmul.{native}": chip.efficiency.provenance.get(f"matmul.{native}"),
        f"efficiency.{chip.family}.attention": chip.efficiency.provenance.get("attention"),
        f"efficiency.{chip.family}.memory": chip.efficiency.provenance.get("memory"),
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
    projected = system.projected
    out: dict[str, Any] = {
        "kind": "train",
        "model": job.model.name,
        "hardware": system.chip.id,
        "system": system.id,
        "chips": chips,
        "chips_used": int(res.plans.tp[i] * res.plans.pp[i] * res.plans.dp[i] * res.plans.cp[i]) // cores,
        "precision": job.precision,
        "compute_precision": system.chip.native_precision(job.precision),
        "seq_len": job.seq_len,
        "global_batch": job.global_batch,
        "global_batch_tokens": job.global_batch_tokens,
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
        "figures": figures_used(system, job.precision),
    }
    if (steps := job.steps) is not None:
        out["tokens"] = job.tokens
        out["steps"] = steps
        out["time_to_train_s"] = steps * step
    if projected:
        out["projection_note"] = (
            f"{system.chip.id} / {system.id} is announced, not shipping: its figures are projected from announced "
            "ratios or estimated"
        )
    return out


def search_summary(search: PlanSearch) -> dict[str, Any]:
    return {"evaluated": search.evaluated, "feasible": search.feasible, "seconds": search.seconds}
