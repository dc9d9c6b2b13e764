"""Where a serving deployment's figures come from: every catalog figure its replicas read (figures_used, merged over
its pools), whether each engine's serving figures were fitted on the chip's family or carried from another, and
how far the model has been from published runs like it (its track record)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.track_record import track_record
from chipwise.hardware.objects import FigureRef, System
from chipwise.perf.serving import SERVING_ATTENTION_FLOOR
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.disaggregated import KVTransfer
from chipwise.serve.engine import engine_carried_from, engine_fitted
from chipwise.serve.quant import matmul_precision
from chipwise.serve.simulate import Pool
from chipwise.train.explain import efficiency_figures, fabric_figures
from chipwise.workload.model import ModelSpec


def figures_used(setup: ReplicaSetup, experts: bool = False) -> dict[str, dict[str, Any]]:
    """Every catalog figure a replica's iterations read (`chipwise sensitivity` moves each of them): the chip's
    peaks (the LM head and attention in bf16 beside the weights' precision), its memory, the fabrics a replica of
    more than one chip talks over, the chip family's efficiency figures, and the engine's."""
    system = setup.system
    chip = system.chip
    prec = matmul_precision(setup.plan.weight_precision, chip)
    # the GEMMs at the weights' precision and in bf16, their waves and tiles, attention, memory, launches and
    # reserved memory (attention had been left out: Blackwell Ultra's 0.65 moved a prompt's TTFT unlisted)
    efficiency: tuple[str, ...] = (f"matmul.{prec}", "matmul.bf16", "compute_units", "tile_m", "tile_n")
    efficiency += ("attention", "memory", "kernel_overhead", "reserved_memory")
    wanted: dict[str, FigureRef | None] = {
        f"{chip.id}.flops.{prec}": chip.provenance.get(f"flops.{prec}"),
        f"{chip.id}.flops.bf16": chip.provenance.get("flops.bf16"),
        f"{chip.id}.hbm_bandwidth": chip.provenance.get("hbm_bandwidth"),
        f"{chip.id}.hbm_capacity": chip.provenance.get("hbm_capacity"),
        **efficiency_figures(system, (*efficiency, "reference_tdp")),
        **(efficiency_figures(system, ("moe_gemm",)) if experts else {}),
    }
    if setup.plan.ranks > setup.dev.cores_per_chip:  # a replica of several chips talks over the fabric
        wanted.update(fabric_figures(system, network=setup.plan.ranks > setup.topo.domain_ranks))
    keys = [
        "step_overhead",
        "sequence_overhead",
        "layer_overhead",
        "kernel_overhead",
        "prefill_overhead",
        "request_overhead",
        "host_logits_per_logit",
        "host_sampling_per_logit",
        "compute_scale",
        "memory_scale",
        "memory_fraction",
        "admission",
    ]
    if experts:
        keys.append("moe_scale")
    if max(setup.plan.tp, setup.plan.ep) > 1:
        keys.append("collective_latency")
    if setup.engine.eager_launch_s > 0:
        keys.append(setup.engine.launch_figure)
        if setup.engine.host_factor != 1.0:
            keys.append("eager_host_share")
    if max(setup.plan.tp, setup.plan.ep) > setup.topo.domain_ranks:
        keys.append("network_collective_latency")
    for key in keys:
        wanted[f"engines.{setup.engine.engine}.{key}"] = setup.engine.provenance.get(key)
    out = {name: ref.record() for name, ref in wanted.items() if ref is not None}
    attention = out.get(f"efficiency.{chip.family}.attention")
    if attention is not None and setup.dev.eff.attention < SERVING_ATTENTION_FLOOR:
        attention["read_as"] = _FLOOR_NOTE
    return out


#: What a family's attention figure below the serving floor reads as: Hopper's fitted 0.30 had been used as 0.6
#: with nothing saying so, and `--set efficiency.hopper.attention=0.1` moved nothing.
_FLOOR_NOTE = (
    f"serving reads {SERVING_ATTENTION_FLOOR:g}: this fit prices training's forward and backward passes, and a "
    "serving engine's forward-only kernels run at no less (perf.serving.SERVING_ATTENTION_FLOOR)"
)


def pool_figures(
    pools: Sequence[Pool], model: ModelSpec, transfer: KVTransfer | None = None
) -> dict[str, dict[str, Any]]:
    """The figures every pool of a deployment used (figures_used), merged: a chip's and a chip family's figures are
    named by them already; an engine figure that differs between the pools (an engine fitted per chip family) is
    named with the family of each ('engines.trtllm.step_overhead (hopper)'). A split's KV hand-over reads its ends'
    fabrics too (the scale-out network's bandwidth, efficiency and latency where it crosses it, else the scale-up
    fabric's): a hand-over of 30% of a TTFT had named none of them, and `sensitivity --figures scaleout` found
    nothing to move."""
    found = [(p.setup.system.chip.family, figures_used(p.setup, model.is_moe)) for p in pools]
    if transfer is not None:
        ends = {p.setup.system.id: p.setup.system for p in pools}.values()
        crossed = {
            k: ref.record()
            for s in ends
            for k, ref in fabric_figures(s, transfer.network).items()
            if ref and ".tiers." not in k  # a hand-over is one flow between two ends: no tier's reach sets it
        }
        found.append(("", crossed))
    out: dict[str, dict[str, Any]] = {}
    for family, figures in found:
        for name, figure in figures.items():
            differs = any(name in other and other[name] != figure for _, other in found)
            out[f"{name} ({family})" if differs else name] = figure
    return out


def engine_fitted_on(catalog: Catalog, engine: str, system: System) -> bool:
    """Whether the engine has serving figures of the chip's family (fitted or carried), not its defaults alone."""
    return engine_fitted(catalog, engine, system.chip.family)


def engine_carried(catalog: Catalog, pools: Sequence[tuple[str, System]]) -> dict[str, str]:
    """{chip: 'ENGINE on FAMILY'} for the pools whose engine figures are carried from another fit (no serving run
    of that engine on the chip's family was fitted: engine_carried_from)."""
    out = {}
    for engine, system in pools:
        if (source := engine_carried_from(catalog, engine, system.chip.family)) is not None:
            out[system.chip.id] = source
    return out


def serving_track_record(pools: Sequence[Pool]) -> dict[str, Any]:
    """How far the model has been from published runs like this deployment (catalog.track_record), per metric:
    TTFT by the engine and chip family of the pool that encodes the prompts, TPOT and throughput by the decoding
    pool's."""
    roles = {p.role: p.setup for p in pools}
    prefill, decode = roles.get("prefill", pools[0].setup), roles.get("decode", pools[0].setup)
    return track_record(
        "serve",
        (decode.system.chip.family, decode.system.chip.vendor),
        decode.engine.engine,
        metrics={"ttft_s": ((prefill.system.chip.family, prefill.system.chip.vendor), prefill.engine.engine)},
    )
