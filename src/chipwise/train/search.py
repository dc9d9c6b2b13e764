"""Plan search: enumerate every valid plan, price them all in one vectorised pass, keep the feasible, rank."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.train.plans import PlanArrays, check_partial_plan, enumerate_plans
from chipwise.train.step import StepResult, train_step
from chipwise.workload.model import ModelSpec
from chipwise.workload.training import TrainingJob


@dataclass(frozen=True)
class PlanSearch:
    """The priced plan space for one system and chip count, ranked by throughput."""

    system: System
    chips: int
    job: TrainingJob
    result: StepResult
    order: NDArray[np.int64]  # feasible plans, fastest first
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
    check_partial_plan(fixed, model, job, ranks)
    plans = enumerate_plans(model, job, ranks, topo.domain_ranks, fixed)
    if len(plans) == 0:
        raise InfeasibleError(
            f"no valid parallel plan for {model.name} on {chips} x {system.chip.id} with "
            f"{fixed or 'no fixed knobs'} (global batch {job.global_batch} sequences). "
            "Fix: change the chip count, the batch or the fixed plan knobs."
        )
    result = train_step(model, job, dev, topo, plans, chips)
    feasible = np.flatnonzero(result.feasible)
    if feasible.size == 0:
        need = float(result.memory.total.min())
        exc = InfeasibleError(
            f"{model.name} does not fit on {chips} x {system.chip.id}: the leanest of {len(plans)} plans needs "
            f"{need / 2**30:.1f} GiB per device, the device has {dev.hbm_capacity / 2**30:.1f} GiB. "
            "Fix: use more chips, a chip with more memory, or a smaller batch or sequence."
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


def plan_of(search: PlanSearch, i: int) -> PlanArrays:
    return search.result.plans.take(np.array([i]))
