"""Plan search: enumerate every valid plan, price them all in one vectorised pass, keep the feasible, rank."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.train.memory import frozen_weight_bytes, local_params, memory_per_rank
from chipwise.train.plans import (
    check_partial_plan,
    cp_split_fix,
    cp_split_reason,
    enumerate_plans,
    from_dicts,
    left_to_search,
)
from chipwise.train.step import StepResult, train_step
from chipwise.workload.model import ModelSpec
from chipwise.workload.plan_knobs import given_knobs
from chipwise.workload.training import TrainingJob


@dataclass(frozen=True)
class PlanSearch:
    """The priced plan space for one system and chip count, ranked by throughput (or by `ranked_by`'s figure)."""

    system: System
    chips: int
    job: TrainingJob
    result: StepResult
    order: NDArray[np.int64]  # feasible plans, fastest first (ranked_by: least of its figure first)
    evaluated: int
    seconds: float

    @property
    def feasible(self) -> int:
        return int(self.order.size)

    @property
    def best(self) -> int:
        return int(self.order[0])

    def top(self, k: int) -> list[int]:
        return [int(i) for i in self.order[:k]]

    @property
    def chips_used(self) -> NDArray[np.int64]:
        """The chips each plan keeps busy: a chip any of whose cores holds a rank (as explain.plan_result counts)."""
        return np.asarray(-(-self.result.plans.ranks // self.system.chip.cores_per_chip), dtype=np.int64)

    def ranked_by(self, figure: NDArray[np.float64]) -> PlanSearch:
        """The search with its feasible plans ordered by `figure` (a value a plan, the least first; of equal ones the
        faster first): an objective other than time picks each fleet's plan by its own figure, not its step time."""
        f = self.order  # fastest first: a stable sort keeps the faster of equal figures first
        return replace(self, order=f[np.argsort(figure[f], kind="stable")])


def search_plans(
    model: ModelSpec,
    job: TrainingJob,
    system: System,
    chips: int,
    fixed: Mapping[str, Any] | None = None,
) -> PlanSearch:
    """Search the plan space (knobs in `fixed` held); raise InfeasibleError naming the binding limit."""
    start = time.perf_counter()
    dev: Device = device_of(system)
    topo: Topology = topology_of(system)
    ranks = chips * dev.cores_per_chip
    fixed = {k: v for k, v in (fixed or {}).items() if v is not None}
    check_partial_plan(fixed, model, job, ranks, topo.domain_ranks)
    plans = enumerate_plans(model, job, ranks, topo.domain_ranks, fixed)
    if len(plans) == 0:
        raise InfeasibleError(
            f"no valid parallel plan for {model.display} on {chips} x {system.chip.id} with "
            f"{as_written(fixed) or 'no fixed knobs'} (global batch {job.global_batch} sequences). "
            "Fix: change the chip count, the batch or the fixed plan knobs."
        )
    result = train_step(model, job, dev, topo, plans, chips)
    feasible = np.flatnonzero(result.feasible)
    if feasible.size == 0:
        need = float(result.memory.total.min())
        leanest = "the plan needs" if len(plans) == 1 else f"the leanest of the {len(plans):,} plans priced needs"
        fix = fleet_fix(model, job, dev, topo, chips, fixed)
        if fix is None:  # a chip count that fits is worth naming only where the plan fixes nothing
            fits = None if given_knobs(fixed) else chips_that_fit(model, job, dev, topo, chips, chips + 1)
            fix = cp_fix(fixed, model, job, ranks) + memory_fix(fixed, model, ranks, fits)
        exc = InfeasibleError(
            f"{model.display} does not fit on {chips} x {system.chip.id}: {leanest} {per_chip(need, dev)}, the chip "
            f"has {system.chip.hbm_capacity / 2**30:.1f} GiB. Fix: {fix}."
        )
        exc.searched = len(plans)  # priced, none fitting: the search's footer counts them
        raise exc
    order = feasible[np.argsort(result.step_time[feasible], kind="stable")]
    return PlanSearch(
        system=system,
        chips=chips,
        job=job,
        result=result,
        order=order.astype(np.int64),
        evaluated=len(plans),
        seconds=time.perf_counter() - start,
    )


def as_written(fixed: Mapping[str, Any]) -> str:
    """A plan's knobs as a scenario gives them ('dp 8, microbatch 1'), not as a Python dict ("{'dp': 8}")."""
    return ", ".join(f"{k} {str(v).lower() if isinstance(v, bool) else v}" for k, v in fixed.items())


def per_chip(need: float, dev: Device) -> str:
    """Bytes a rank needs, said per chip as predictions quote memory, with the per-core figure on a chip of several
    cores: Trainium's had read per NeuronCore ('25.2 GiB per device, the device has 24.0 GiB') beside predictions'
    'memory per chip 48.6 of 96 GiB'; it now reads '100.8 GiB per chip (25.2 on each of its 4 NeuronCores)'."""
    cores = dev.cores_per_chip
    whole = f"{need * cores / 2**30:.1f} GiB per chip"
    return whole if cores == 1 else f"{whole} ({need / 2**30:.1f} on each of its {cores} NeuronCores)"


#: how far past the fleet chips_that_fit looks for a chip count that fits a plan: up to 2^10 times the chips
FIT_DOUBLINGS = 10


def chips_that_fit(
    model: ModelSpec,
    job: TrainingJob,
    dev: Device,
    topo: Topology,
    chips: int,
    start: int,
    fixed: Mapping[str, Any] | None = None,
) -> int | None:
    """The fewest chips from `start` on (more than `chips`, which fit no plan) at which some plan of the search's,
    with the knobs `fixed` holds but dp, fits in memory: doubling until one does, then halving the gap (about 2 log2
    of the count of probes, each the plans' memory alone, at full recompute and one-sequence micro-batches, the
    leanest activations, unless the plan fixes them). None when none does within FIT_DOUBLINGS doublings.

    The 'use more chips' hint had named a floor from the states alone that still did not fit, and then no count:
    405B on 64 H100 read 'at least 80, before activations', and 80 and 96 fit no plan (112 do)."""
    knobs = {"recompute": "full", "microbatch": 1, **{k: v for k, v in given_knobs(fixed or {}).items() if k != "dp"}}

    def fits(n: int) -> bool:
        plans = enumerate_plans(model, job, n * dev.cores_per_chip, topo.domain_ranks, knobs)
        return len(plans) > 0 and bool((memory_per_rank(model, job, dev, topo, plans).total <= dev.hbm_capacity).any())

    low, high = max(chips, start - 1), max(start, chips + 1)  # low fits no plan (below start none can)
    for _ in range(FIT_DOUBLINGS):
        if fits(high):
            break
        low, high = high, 2 * high
    else:
        return None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid, high)
    return high


def fleet_fix(
    model: ModelSpec,
    job: TrainingJob,
    dev: Device,
    topo: Topology,
    chips: int,
    fixed: Mapping[str, Any] | None = None,
) -> str | None:
    """More chips, when the fleet cannot hold the model at all: its weights, gradients and optimizer state spread
    evenly over every rank (ZeRO-3 over all of them, the leanest split there is), with the runtime's reserve, still
    exceed a device, so no plan, batch or sequence fits; None when they do not. The chip count that floor gives comes
    with the fewest that fit a plan with its activations (chips_that_fit, with the plan's fixed knobs but dp)."""
    ranks = chips * dev.cores_per_chip
    # every parameter once (tp 1: no K/V projection copied) at the fewest bytes any ZeRO stage keeps it in, ZeRO-3's
    # 4 + 4 + 8 (a LoRA run's frozen base weight alone; memory.py), split over every rank: no plan holds less on its
    # busiest rank. The leanest plan had been tp over every rank, which past the KV heads copies the K and V
    # projections: a floor that grew with the fleet (405B on 80 Trn2 asked for at least 91 chips, where 88 fit)
    whole = from_dicts([{"tp": 1, "pp": 1, "dp": 1, "zero": 3, "recompute": "full"}])
    dense, expert = local_params(model, whole)
    per_param = frozen_weight_bytes(dev, job.precision) if job.lora else 16.0
    states = float((dense + expert)[0]) * per_param / ranks
    reserve = float(memory_per_rank(model, job, dev, topo, whole).reserved[0])
    room = dev.hbm_capacity - reserve
    if states <= room:
        return None
    cores = dev.cores_per_chip
    if room <= 0.0:
        # more chips shrink the states, never the reserve: dividing by no room had asked for 1.6 trillion Trn3
        return (
            f"use a chip with more memory: the runtime's reserve alone takes {reserve * cores / 2**30:.2f} GiB of the "
            f"chip's {dev.hbm_capacity * cores / 2**30:.2f} GiB, so no chip count fits"
        )
    least = math.ceil(ranks * states / room / cores)
    fits = chips_that_fit(model, job, dev, topo, chips, least, fixed)
    count = f"at least {least:,}, before activations" + (f"; {fits:,} fit a plan" if fits is not None else "")
    spread = f" spread evenly over all {chips:,} chips" if chips > 1 else ""
    # a LoRA run keeps only its frozen base (its adapters' gradients and optimizer state are megabytes): 405B LoRA on
    # 8 H100 had blamed 'the weights, gradients and optimizer state' for its 94.5 GiB, 405.85e9 x 2 B / 8 of base
    held = "the frozen base weights" if job.lora else "the weights, gradients and optimizer state"
    return (
        f"use more chips ({count}) or a chip with more memory: {held} alone need {states * cores / 2**30:.1f} GiB per "
        f"chip{spread}"
    )


def memory_fix(fixed: Mapping[str, Any], model: ModelSpec, ranks: int, fits: int | None = None) -> str:
    """What frees memory when no plan fits: the search already tried every value of the knobs left to it, so the
    levers are the knobs the plan fixes, or more chips (a plan that fixes tp, pp and dp then needs a larger dp: their
    product may not exceed the ranks; a smaller batch cannot help it, at pp 1 a rank's activations do not depend on
    it). ZeRO shards over dp x cp, and a smaller dp needs one above 1: at dp 1 neither is a lever. `fits`, a chip
    count that fits a plan (chips_that_fit), is named beside more chips where the plan fixes nothing."""
    g = given_knobs(fixed)
    if not g:
        more = f"more chips ({fits:,} fit a plan)" if fits is not None else "more chips"
        return f"use {more}, a chip with more memory, or a smaller batch or sequence"
    pipelined = g.get("pp", 1) > 1
    sharded = "dp" not in g or g["dp"] * g.get("cp", 1) > 1
    # ZeRO-3 shards the most at pp 1; with a pipeline it keeps the stage's weights and gradients whole (memory.py),
    # and ZeRO-1 is the leanest a framework runs there (plans._zero_pipeline_problem: it had named zero 2, which a
    # pipeline refuses)
    leanest_zero = 1 if pipelined else 3
    levers = [f"zero {leanest_zero}"] if "zero" in g and g["zero"] != leanest_zero and sharded else []
    if g.get("recompute") in ("none", "selective"):
        levers.append("recompute full")
    if g.get("sp") is False and g.get("tp") != 1:
        levers.append("sp true")
    if g.get("hsdp"):
        levers.append("hsdp false")
    if g.get("microbatch", 1) > 1:
        levers.append("microbatch 1")
    degrees = [k for k in ("tp", "pp", "cp") if k in g]
    complete = {"tp", "pp", "dp"} <= set(g)
    if degrees and g.get("dp") != 1:
        levers.append(
            f"a larger {', '.join(degrees[:-1])}{' or ' if len(degrees) > 1 else ''}{degrees[-1]}"
            + (f" with a smaller dp (tp x pp x dp x cp may not exceed the {ranks:,} ranks)" if "dp" in g else "")
        )
    if "ep" in g and model.moe is not None and (ep_lever := _larger_ep(g, model.moe.experts)):
        levers.append(ep_lever)  # ep splits the experts over ranks the other degrees lay out already
    others = (
        "more chips (with a larger dp), " if complete else "more chips, "
    ) + "a chip with more memory or a shorter sequence"
    if not levers:
        return f"use {others}"
    return f"free memory with the knobs the plan fixes: {', '.join(levers)}; or use {others}"


def cp_fix(fixed: Mapping[str, Any], model: ModelSpec, job: TrainingJob, ranks: int) -> str:
    """The seq_len that splits sequences over context parallelism, where the search chose cp and the sequence allowed
    it less than its length and the ranks would (plans.cp_split_reason), then '; or ': '' where not. Llama-3.1-405B at
    seq_len 131,071 had been told to use more chips, where it needs 191.5 GiB a chip from 1,024 chips to 16,384 (no
    cp above 1 splits its activations); it is told to give a seq_len that is a multiple of 256 first."""
    if "cp" not in left_to_search(fixed, model) or not (reason := cp_split_reason(job.seq_len, ranks)):
        return ""
    return f"{cp_split_fix(job.seq_len, ranks)} ({reason}); or "


def _larger_ep(g: Mapping[str, Any], experts: int) -> str:
    """The expert-parallel lever: an ep is no rank of its own (it splits the experts over the tp x dp x cp ranks of
    a stage), so it needs no smaller dp; it must divide the experts, and that product where the plan fixes it. ''
    when no larger ep does."""
    span = g["tp"] * g["dp"] * g.get("cp", 1) if {"tp", "dp"} <= set(g) else None
    if not any(experts % e == 0 and (span is None or span % e == 0) for e in range(g["ep"] + 1, experts + 1)):
        return ""
    bound = f"up to tp x dp x cp = {span:,} and " if span is not None else ""
    return f"a larger ep ({bound}dividing the {experts:,} experts)"
