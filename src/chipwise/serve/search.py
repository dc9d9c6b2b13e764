"""Serving plan search (filled in below): candidate replica shapes per system, priced in one vectorised pass."""

from __future__ import annotations

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import device_of, topology_of
from chipwise.serve.engine import engine_profile, serving_device
from chipwise.serve.iteration import Shapes
from chipwise.serve.kvcache import replica_memory
from chipwise.workload.model import ModelSpec


def powers_of_two(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


def smallest_fitting_tp(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    weight_precision: str,
    kv_precision: str,
    ranks: int,
    typical_prompt: float,
    typical_output: float,
) -> int:
    """The smallest power-of-two tensor parallelism whose replica holds the weights and a KV cache for at least
    a few requests (what throughput-oriented deployments pick: more replicas beat more TP)."""
    eng = engine_profile(catalog, engine, system.chip.family)
    dev = serving_device(device_of(system), eng)
    topo = topology_of(system)
    heads = model.attention.heads
    tps = [t for t in powers_of_two(min(ranks, topo.domain_ranks)) if heads % t == 0]
    if not tps:
        raise InfeasibleError(f"no tensor-parallel size divides {heads} heads within {ranks} ranks.")
    tp = np.asarray(tps)
    context = typical_prompt + typical_output
    mem = replica_memory(
        model, dev, eng, Shapes.of(tp), weight_precision, kv_precision, eng.max_tokens, eng.max_batch, context
    )
    ok = mem.kv_tokens >= 8 * context
    if not ok.any():
        ok = mem.kv_tokens >= context
    if not ok.any():
        raise InfeasibleError(
            f"{model.name} does not fit {ranks} ranks of {system.chip.id} with a usable KV cache. "
            "Fix: use more chips or a narrower precision."
        )
    return int(tp[int(np.argmax(ok))])
