"""Serving plan search: every candidate replica shape (TP, PP, EP, attention-DP, batch limit) of a system
(serve.candidates) priced in one vectorised pass with a steady-state estimate (serve.estimate) and run at a load
(serve.operating); here, the throughput-latency Pareto front of those estimates and the one-stage shape with the
most output tokens/s per chip. The planner finds the smallest fleet that meets a latency SLO from them
(planner.serving_choice). The estimates rank candidates; the simulator then measures the chosen ones
(scripts/estimator_vs_simulator.py compares them).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import topology_of
from chipwise.serve.candidates import enumerate_candidates
from chipwise.serve.engine import EngineProfile, token_budget
from chipwise.serve.estimate import estimate
from chipwise.types import Array
from chipwise.workload.model import ModelSpec


def pareto(throughput: Array, latency: Array) -> NDArray[np.int64]:
    """Indices of the points no other point beats in both higher throughput and lower latency (by latency). Points
    of infinite latency (do not fit) or no throughput are not on the front; of those that are, a point is on it
    when its throughput exceeds the best of every point of lower latency (the earlier, on a tie)."""
    tp = np.asarray(throughput, dtype=np.float64)
    order = np.argsort(latency, kind="stable")
    tp_o = tp[order]
    ok = np.isfinite(np.asarray(latency, dtype=np.float64)[order]) & (tp_o > 0.0)
    ahead = np.maximum.accumulate(np.concatenate(([-np.inf], np.where(ok, tp_o, -np.inf))))[:-1]
    return order[ok & (tp_o > ahead)].astype(np.int64)


def best_throughput_shape(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    ranks: int,
    typical_prompt: float,
    typical_output: float,
) -> tuple[int, int, bool]:
    """(tp, ep, attention DP) of the one-stage replica shape with the most output tokens/s per chip at
    saturation within `ranks` ranks (what a throughput benchmark's submitter picks when its plan is not stated),
    at the engine's batch limit and token budget."""
    topo = topology_of(system)
    limit = min(ranks, topo.domain_ranks)
    cand = enumerate_candidates(model, topo, limit, {"pp": 1, "max_batch": eng.max_batch})  # the engine's balancing
    budget = token_budget(eng, typical_prompt, memory_bytes=system.chip.hbm_capacity)
    est = estimate(model, system, eng, cand, weight_precision, kv_precision, typical_prompt, typical_output, budget)
    if not est.fits.any():
        raise InfeasibleError(
            f"{model.display} does not fit {ranks} ranks of {system.chip.id} with a usable KV cache. "
            "Fix: use more chips or a narrower precision."
        )
    i = int(np.argmax(np.where(est.fits, est.throughput / np.maximum(est.chips, 1e-12), -1.0)))
    return int(cand.tp[i]), int(cand.ep[i]), bool(cand.adp[i])
