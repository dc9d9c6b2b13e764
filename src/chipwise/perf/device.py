"""The per-rank view of a system that the performance functions use.

A *rank* is what a framework addresses as one device: a GPU, a TPU chip, or one NeuronCore group on Trainium
(trn1 exposes 2 per chip, trn2 at LNC=2 exposes 4). Its compute, memory and link bandwidth are the chip's divided
by `cores_per_chip`. The topology says how many ranks share a scale-up domain and what each rank gets on the
scale-up fabric and on the scale-out network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from chipwise.hardware.objects import Chip, Efficiency, System


@dataclass(frozen=True)
class Device:
    """One rank: dense peak FLOP/s by precision, HBM capacity and bandwidth, the family's efficiency factors."""

    chip_id: str
    peak: dict[str, float]
    hbm_bandwidth: float
    hbm_capacity: float
    eff: Efficiency
    cores_per_chip: int
    chip: Chip
    compute_scale: float = 1.0

    def peak_flops(self, precision: str) -> float:
        """Dense peak of one rank, scaled down for a power-capped part."""
        return self.chip.peak_flops(precision) / self.cores_per_chip * self.compute_scale


@dataclass(frozen=True)
class Topology:
    """Scale-up domain and scale-out network as seen by one rank (bandwidths per rank, per direction).

    domain_ranks: ranks joined by the scale-up fabric (8 GPUs on HGX, 72 on NVL72, 64 or 144 Trainium chips
    times their cores). up_kind: 'switched' (full bandwidth between any pair), 'torus' (bandwidth split over
    the dimensions a group spans) or 'pcie'. out_tiers: (reach in ranks, oversubscription) of the scale-out
    Clos above the leaf; a group spanning more ranks than a tier's reach sees that tier's oversubscription.
    """

    domain_ranks: int
    up_kind: str
    up_dims: tuple[int, ...]
    up_bandwidth: float
    up_latency: float
    up_efficiency: float
    out_bandwidth: float
    out_latency: float
    out_efficiency: float
    out_tiers: tuple[tuple[int, float], ...] = ()
    #: torus: bandwidth along each of up_dims, summing to up_bandwidth (empty: an even split)
    up_dim_bandwidth: tuple[float, ...] = ()
    #: achievable bandwidth of one rank to the other cores of its own chip (0: one rank a chip); see topology_of
    on_chip_bandwidth: float = 0.0

    @property
    def cores(self) -> int:
        """Ranks a chip: the domain's ranks over its chips (up_dims multiply to its chips)."""
        return max(1, self.domain_ranks // math.prod(self.up_dims))


def device_of(system: System) -> Device:
    """One rank of `system`: the chip's dense peaks, HBM bandwidth and capacity each divided by its
    cores_per_chip, its rate scaled by power_scale(tdp, reference_tdp) for a power-capped part."""
    chip = system.chip
    cores = chip.cores_per_chip
    ref = chip.efficiency.reference_tdp_w
    return Device(
        chip_id=chip.id,
        peak={p: f / cores for p, f in chip.flops.items()},
        hbm_bandwidth=chip.hbm_bandwidth / cores,
        hbm_capacity=chip.hbm_capacity / cores,
        eff=chip.efficiency,
        cores_per_chip=cores,
        chip=chip,
        compute_scale=power_scale(chip.tdp, ref),
    )


#: Share of a board's power that does not scale with core clock (leakage, HBM, I/O, fans). An estimate, with no
#: measurement or publication behind the 0.25 itself: its floor is an idle H200's draw, 0.11 of its 700 W limit
#: (datacenter.yaml idle_power_fraction, CHIPWISE_CAL_H200), and the rest an allowance, rounded to a quarter, for
#: the HBM and I/O power that rises under load and that no device check has split out. It moves only power-capped
#: parts: the H100 96GB's 500 W against 700 W runs at 0.852 with 0.25, 0.879 with the idle 0.11, 0.894 with none.
STATIC_POWER_FRACTION = 0.25


def _crossing_thresholds(
    tiers: tuple[tuple[int, float], ...], system_chips: int, cores: int
) -> tuple[tuple[int, float], ...]:
    """(span in ranks beyond which traffic climbs into a tier, that tier's oversubscription), from the leaf up.

    Traffic leaving a system enters the leaf tier; traffic spanning more chips than tier k-1 reaches climbs
    into tier k and shares its (possibly oversubscribed) uplinks.
    """
    out: list[tuple[int, float]] = []
    below = system_chips
    for reach, over in tiers:
        out.append((below * cores, over))
        below = max(below, reach)
    return tuple(out)


def beyond_network_note(system: System, chips: int) -> str:
    """A job of `chips` chips whose groups span past the scale-out fabric's top documented tier: a note that the
    network beyond it is extrapolated ('' where the job fits). No tier is taken above the top one, so a group
    spanning further pays only the oversubscription of the tiers the catalog gives (efa-v2, documented to its
    20,000-GPU UltraCluster 2.0, is priced non-blocking at 1M chips, where efa-v4's sourced 1M-chip tier tapers
    2:1); no inter-cluster taper is published to charge it, so the result says so instead of inventing one."""
    fabric = system.scaleout_fabric
    reach = max((c for c, _ in fabric.tiers), default=0)
    if reach <= 0 or chips <= max(reach, system.chips):
        return ""
    over = fabric.oversubscription
    return (
        f"{fabric.id} is documented to {reach:,} chips (its top tier); this plan's {chips:,} chips span past it, and "
        f"the network beyond is priced as that tier ({'non-blocking' if over <= 1 else f'{over:g}:1'}) with no "
        "further taper: an extrapolation"
    )


def power_scale(tdp: float, reference_tdp: float) -> float:
    """Matrix-unit rate of a part capped at `tdp` relative to the family's reference board power.

    Dynamic power goes as f V^2 with V rising with f, so f ~ P_dynamic^(1/3); only the part of the board power
    above the static share scales:  ((tdp - s ref) / (ref - s ref))^(1/3) below the reference, 1 at or above it
    (s = STATIC_POWER_FRACTION, floored at 0.05 of the dynamic share). An estimate: the cube law is the usual CMOS
    dynamic-power approximation, and no capped part's measured clock or FLOP/s stands behind it.
    """
    if tdp <= 0 or reference_tdp <= 0 or tdp >= reference_tdp:
        return 1.0
    static = STATIC_POWER_FRACTION * reference_tdp
    return float(max((tdp - static) / (reference_tdp - static), 0.05) ** (1.0 / 3.0))


def topology_of(system: System) -> Topology:
    """The scale-up domain and scale-out network of `system` as one rank sees them: domain_ranks = domain size x
    cores_per_chip, each bandwidth the chip's divided by cores_per_chip, latencies and bus efficiencies the
    fabric's (catalog fabrics.yaml; docs/research/efficiency-evidence.md s.4, s.5)."""
    cores = system.chip.cores_per_chip
    up = system.scaleup
    out = system.scaleout_fabric
    # Bandwidth a rank can drive on each network; a chip's cores share its links.
    return Topology(
        domain_ranks=up.size * cores,
        up_kind=up.kind,
        up_dims=tuple(up.dims) if up.dims else (up.size,),
        up_bandwidth=up.bandwidth / cores,
        up_latency=up.fabric.latency_s,
        up_efficiency=up.fabric.bus_efficiency,
        out_bandwidth=system.scaleout_bandwidth_per_chip / cores,
        out_latency=out.latency_s,
        out_efficiency=out.bus_efficiency,
        out_tiers=_crossing_thresholds(out.tiers, system.chips, cores),
        up_dim_bandwidth=tuple(b / cores for b in up.dim_bandwidth),
        on_chip_bandwidth=on_chip_bandwidth(system),
    )


def on_chip_bandwidth(system: System) -> float:
    """Achievable bytes/s one rank sends to the other cores of its own chip (0 for a chip of one rank): the cores of
    a Trainium share its HBM, and their collectives are moved by its DMA engines ("128 DMA engines to move data
    within and across devices", Neuron's Trainium2 architecture guide), not over NeuronLink. Each byte moved is
    read from and written to that HBM once, so a rank drives HBM bandwidth x memory efficiency / (2 x cores). An
    estimate, with no published intra-chip collective bandwidth behind it. TP4 inside one Trainium2 had been priced
    at a quarter of one NeuronLink dimension, 51 GB/s a rank: 0.64 s of a 6.03 s Llama-3.1-70B step, where this
    gives 0.29 TB/s a rank."""
    chip = system.chip
    cores = chip.cores_per_chip
    if cores <= 1:
        return 0.0
    return chip.hbm_bandwidth * chip.efficiency.memory / (2.0 * cores)
