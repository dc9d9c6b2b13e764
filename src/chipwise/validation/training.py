"""Predict published training runs: each ground-truth row becomes a model, a job, a system and a (partial) plan;
the search completes the plan and the predicted metric is compared with the measured one."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Efficiency, System, hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.planner.training import plan_source
from chipwise.train.plans import PlanArrays, check_partial_plan, enumerate_plans
from chipwise.train.step import train_step
from chipwise.validation.models import known_model
from chipwise.validation.rows import TrainingRow
from chipwise.validation.training_rows import source_head_dim, torchtitan_run
from chipwise.workload.hf_config import from_dims
from chipwise.workload.model import ModelSpec
from chipwise.workload.training import TrainingJob

PLAN_KNOBS: tuple[str, ...] = ("tp", "pp", "dp", "cp", "ep", "vpp", "zero", "recompute", "sp")


@dataclass(frozen=True)
class Prediction:
    """One training row predicted; validation.run makes it a report.RowResult, whose error_pct is the one the
    report reads (a second copy of the formula here had no reader)."""

    id: str
    chip: str
    metric: str
    measured: float
    predicted: float
    plan_source: str  # 'given' | 'partial' | 'searched', as predict says (planner.training.plan_source)
    plan: dict[str, Any]
    source_family: str
    notes: str
    stat: str  # the statistic of the measured figure (rows.Measured.stat)


def _model_for(catalog: Catalog, row: TrainingRow) -> tuple[ModelSpec, str]:
    dims = row.model
    known = known_model(catalog, dims.name)  # as serving reads the name, so a model has one shape and context
    if known is not None:
        spec, source = known
        agrees = (dims.layers in (None, spec.layers)) and (dims.hidden in (None, spec.hidden))
        if agrees or spec.is_moe:
            return spec, source
    if dims.layers and dims.hidden and dims.heads:
        if dims.arch == "moe" and not dims.experts:
            raise ChipwiseError(f"MoE model '{dims.name}' without a preset or expert counts")
        gated = (dims.ffn_hidden or 0) != 4 * dims.hidden
        spec = from_dims(
            dims.name,
            layers=dims.layers,
            hidden=dims.hidden,
            heads=dims.heads,
            ffn=dims.ffn_hidden,
            kv_heads=dims.kv_heads,
            vocab=dims.vocab or 32000,
            gated=gated,
            tied=not gated,
            experts=dims.experts or 0,
            top_k=dims.top_k or 0,
            causal="bert" not in dims.name.lower(),  # encoders attend both ways
            head_dim=source_head_dim(row.raw),
        )
        return spec, "row dimensions"
    raise ChipwiseError(f"model '{dims.name}' has no preset and the row gives no dimensions")


#: How far the model built may be from the parameter count the row states before the notes say so: the nominal
#: sizes rows give ('Llama 2 7B' is 6.74B) sit within it; MaxText's 16B built with 64-wide heads (13.7B) did not
PARAMS_TOLERANCE = 0.05


def params_note(model: ModelSpec, stated: float | None, model_source: str) -> str | None:
    """A note when the model built is off from the row's params_total_B by more than PARAMS_TOLERANCE."""
    if not stated:
        return None
    off = model.params_total / stated - 1
    if abs(off) <= PARAMS_TOLERANCE:
        return None
    return (
        f"model built ({model_source}) has {model.params_total / 1e9:.3g}B parameters, {off:+.0%} off the row's "
        f"params_total_B {stated / 1e9:g}; priced as built"
    )


#: torchtitan's pipeline micro-batch, in sequences: `pipeline_parallel_microbatch_size`, "default 1 ... the total
#: number of microbatches by dividing local_batch_size with" it (torchtitan's job config); `local_batch_size` is
#: what one data-parallel rank takes a step
TORCHTITAN_PP_MICROBATCH = 1


def default_seq_len(model: ModelSpec) -> int:
    """The sequence length assumed when a row does not state one: the model's context, capped at 8192."""
    return min(model.max_seq_len or 2048, 8192)


def context_note(model: ModelSpec, seq: int) -> str | None:
    """A note where a run's published sequence length passes the model's context, which predict refuses
    (planner.training's check): the run did train so (MLPerf's Llama 2 70B LoRA reference at 8,192 tokens on a
    4,096 context, MosaicML's ALiBi MPT-7B at up to 65,536 on 2,048), so it is priced as published. T353's 'read
    as' had said nothing of it (predict refuses the same scenario); it now says it, the prediction unmoved."""
    if not model.max_seq_len or seq <= model.max_seq_len:
        return None
    return (
        f"seq_len {seq:,} as published, past {model.name}'s context of {model.max_seq_len:,} tokens: priced as the "
        f"run trained (predict refuses it: give it a config.json with max_position_embeddings of at least {seq:,})"
    )


@dataclass(frozen=True)
class Case:
    """A ground-truth row turned into something chipwise can price: model, job, system, candidate plans."""

    row: TrainingRow
    model: ModelSpec
    job: TrainingJob
    system: System
    chips: int
    plans: PlanArrays
    fixed: dict[str, Any]
    notes: tuple[str, ...]

    @property
    def family(self) -> str:
        return self.system.chip.family


def prepare(catalog: Catalog, row: TrainingRow) -> Case:
    """Turn a row into a Case; raise ChipwiseError with the reason when it cannot be predicted."""
    if row.measured is None or row.num_chips is None:
        raise ChipwiseError(row.skip_reason or "no measured metric")
    model, model_source = _model_for(catalog, row)
    notes = [model_source]
    if (off := params_note(model, row.model.params_total, model_source)) is not None:
        notes.append(off)
    system = hardware(catalog).system(row.chip)
    cores = system.chip.cores_per_chip
    seq = row.seq_len or default_seq_len(model)
    if not row.seq_len:
        notes.append(f"seq_len assumed {seq}")
    elif (past := context_note(model, seq)) is not None:
        notes.append(past)
    plan = {k: v for k, v in row.plan.items() if k in PLAN_KNOBS}
    local = 0  # a torchtitan pipeline's local batch: micro-batches of one sequence (below)
    if row.micro_batch and torchtitan_run(row.raw) and int(plan.get("pp", 1)) > 1:
        local = row.micro_batch
        plan["microbatch"] = TORCHTITAN_PP_MICROBATCH
        notes.append(
            f"torchtitan's batch {local} is a data-parallel rank's local batch, which its pipeline schedule splits "
            f"into micro-batches of {TORCHTITAN_PP_MICROBATCH} sequence (pipeline_parallel_microbatch_size)"
        )
    elif row.micro_batch:
        plan["microbatch"] = row.micro_batch
    ranks = row.num_chips * cores
    if not row.plan_counts_cores and cores > 1 and "dp" in plan:
        plan["dp"] = int(plan["dp"]) * cores  # a plan counted in chips: each chip holds `cores` ranks
    seqs = row.raw.get("global_batch_seqs", "").strip()
    if row.global_batch_tokens:
        gbs = max(1, round(row.global_batch_tokens / seq))
    elif seqs.replace(".", "", 1).isdigit():
        gbs = int(float(seqs))
    else:
        inner = int(plan.get("tp", 1)) * int(plan.get("pp", 1)) * int(plan.get("cp", 1))
        gbs = int(plan.get("dp", ranks // inner)) * (local or int(plan.get("microbatch", 1)))
        notes.append(
            f"global batch assumed {gbs} sequences ("
            + ("the local batch" if local else "one micro-batch")
            + " per data-parallel rank)"
        )
    precision = row.precision
    if precision == "fp32" and "matmult" in row.raw.get("precision", "").lower():
        precision = "tf32"  # fp32 training whose matmuls the compiler casts to a 16-bit rate (Neuron auto-cast)
        notes.append("fp32 with matmul auto-cast priced as tf32")
    job = TrainingJob(model=model, seq_len=seq, global_batch=gbs, precision=precision, lora=row.lora)
    # the check predict's search makes: a partial plan too (tp=7 over 64 heads had been priced on 896 of 1,024 chips)
    dev_ranks = device_of(system), topology_of(system)
    check_partial_plan(plan, model, job, ranks, dev_ranks[1].domain_ranks)
    plans = enumerate_plans(model, job, ranks, dev_ranks[1].domain_ranks, plan)
    if len(plans) == 0:
        raise ChipwiseError(f"no valid plan with the row's knobs {plan}")
    return Case(row, model, job, system, row.num_chips, plans, plan, tuple(notes))


def evaluate(case: Case, eff: Efficiency | None = None) -> tuple[float, int, bool]:
    """(predicted metric, index of the chosen plan, whether it fits) with optional replacement efficiencies.

    The chosen plan is the fastest that fits in memory; when none fits (the memory model is conservative for a
    configuration that demonstrably ran), the fastest overall is used and the row is flagged.
    """
    dev = device_of(case.system)
    if eff is not None:
        dev = replace(dev, eff=eff)
    topo = topology_of(case.system)
    res = train_step(case.model, case.job, dev, topo, case.plans, case.chips)
    fits = bool(res.feasible.any())
    times = np.where(res.feasible, res.step_time, np.inf) if fits else res.step_time
    best = int(np.argmin(times))
    assert case.row.measured is not None
    if case.row.measured.metric == "step_time_s":
        return float(res.step_time[best]), best, fits
    return float(res.tokens_per_s_per_chip[best]), best, fits


def predict_row(catalog: Catalog, row: TrainingRow) -> Prediction:
    """Predict one row's measured metric; raise ChipwiseError with the reason when it cannot be predicted."""
    case = prepare(catalog, row)
    predicted, best, fits = evaluate(case)
    notes = list(case.notes)
    if not fits:
        notes.append("memory model says the row's configuration does not fit; priced anyway since it ran")
    plan = case.fixed
    chosen = case.plans.plan(best)
    # the search fills what the row leaves blank with the fastest plan: say so where it is a choice the source made
    # (a 2021 Megatron run left blank had been priced without recompute at micro-batch 4)
    notes.extend(
        f"{label} not stated; searched: {chosen[key]}"
        for key, label in (("recompute", "recompute"), ("microbatch", "micro-batch"))
        if key not in plan
    )
    # and a pipeline or hybrid sharding the search brought in where the row names none: MaxText's "FSDP within
    # slice, DP across slices" rows had been explained as FSDP + PP plans with nothing saying the pipeline was the
    # search's (pp 1, vpp 1 and no hsdp, what a row that names none most likely ran, go unsaid)
    brought = (("pp", "pipeline stages"), ("vpp", "interleaving"), ("hsdp", "hybrid sharding"))
    notes.extend(
        f"{label} not stated; searched: {chosen[key]}"
        for key, label in brought
        if key not in plan and chosen[key] not in (1, False)
    )
    assert row.measured is not None
    return Prediction(
        id=row.id,
        chip=row.chip,
        metric=row.measured.metric,
        measured=row.measured.value,
        predicted=predicted,
        # predict's words: 'given' only where the row names every knob the search would choose; a row giving tp, pp
        # and dp alone had read 'given' here and 'partial' in predict for the same plan
        plan_source=plan_source(plan, case.model, topology_of(case.system).domain_ranks),
        plan=chosen,
        source_family=row.source_family,
        notes="; ".join((*notes, row.notes)).strip("; "),  # the row's own reading notes after the prediction's
        stat=row.measured.stat,
    )
