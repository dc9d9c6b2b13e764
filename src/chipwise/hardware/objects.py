"""Typed hardware objects in SI units, each figure keeping its provenance (status and source) for explanations."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from chipwise.catalog.units import UNITS, to_si
from chipwise.errors import ChipwiseError

#: The order in which a precision falls back when a chip lacks it natively (fp4 runs as fp8, fp8 as bf16, ...).
PRECISION_FALLBACK: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "fp4": ("fp4", "fp6", "fp8", "bf16", "fp16"),
        "int4": ("int4", "int8", "fp8", "bf16", "fp16"),
        "fp6": ("fp6", "fp8", "bf16", "fp16"),
        "fp8": ("fp8", "bf16", "fp16"),  # not int8: FP8 checkpoints run weight-only (bf16 math) without FP8 units
        "int8": ("int8", "fp8", "bf16", "fp16"),
        "bf16": ("bf16", "fp16"),
        "fp16": ("fp16", "bf16"),
        "tf32": ("tf32", "fp32"),
        "fp32": ("fp32", "tf32"),
    }
)
PRECISION_BYTES: Mapping[str, float] = MappingProxyType(
    {
        "fp4": 0.5,
        "int4": 0.5,
        "fp6": 0.75,
        "fp8": 1.0,
        "int8": 1.0,
        "bf16": 2.0,
        "fp16": 2.0,
        "tf32": 4.0,
        "fp32": 4.0,
    }
)


#: a carried efficiency family's derivation, as efficiency.yaml words it
_CARRIED_FAMILY = re.compile(r"taken from ([\w-]+) \(efficiency\.\1: ")


def carried_family(derivation: str) -> str | None:
    """The fitted family an efficiency figure is taken from, where its derivation opens 'taken from FAMILY
    (efficiency.FAMILY: ' (efficiency.yaml's words for a family no run of which is in any fit); else None."""
    found = _CARRIED_FAMILY.match(derivation)
    return found.group(1) if found else None


#: a fitted efficiency figure's derivation, as scripts/calibrate.py writes it, or a carried one's, which quotes the
#: fitted family's ('taken from blackwell-ultra (efficiency.blackwell-ultra: fitted by scripts/calibrate.py ...')
_FITTED = re.compile(r"(taken from ([\w-]+) \(efficiency\.\2: )?fitted by scripts/calibrate\.py")


def fitted_figure(derivation: str) -> bool:
    """Whether an efficiency figure was fitted to published training runs (scripts/calibrate.py), its own family's
    or carried from the fitted family its derivation quotes."""
    return _FITTED.match(derivation) is not None


@dataclass(frozen=True)
class FigureRef:
    """Where a number came from: its status, sources and note, for `--sources` and explanations."""

    value: float | str
    unit: str
    status: str
    sources: tuple[str, ...]
    note: str = ""
    derivation: str = ""

    def record(self) -> dict[str, Any]:
        """The JSON form results carry: value, unit, status, sources, the value in SI units (`si`: 667 TFLOP/s ->
        6.67e14, as the economics figures and `catalog show` give it; predict's figures had carried their display
        units alone) and (for estimates) the derivation."""
        out: dict[str, Any] = {
            "value": self.value,
            "unit": self.unit,
            "status": self.status,
            "source": list(self.sources),
        }
        if isinstance(self.value, int | float) and self.unit in UNITS:
            out["si"] = to_si(self.value, self.unit)
        if self.derivation:
            out["derivation"] = self.derivation
        return out


@dataclass(frozen=True)
class Efficiency:
    """Achievable fractions of peak for one chip family (from the catalog's efficiency section).

    matmul: fraction of dense peak a large GEMM reaches, per precision.
    memory: fraction of HBM bandwidth a streaming kernel reaches.
    attention: fraction of the matmul rate a fused (flash) attention kernel reaches.
    kernel_overhead_s: fixed time per kernel (launch and tail), charged per operator.
    layer_overhead_s: fixed framework time per transformer layer per micro-batch (forward + backward).
    compute_units, tile_m, tile_n: for tile and wave quantisation of GEMMs.
    reserved_memory_bytes: memory the runtime, communication buffers and fragmentation hold back.
    tp_overlap, dp_overlap: fractions of tensor- and data-parallel communication the software hides.
    step_overhead_s: fixed time per optimizer step (launch of the update, gradient clipping, logging).
    microbatch_overhead_s: fixed time per micro-batch and pipeline stage (graph launch, loss, synchronisation).
    ep_overlap: share of a MoE layer's compute that hides its expert all-to-all (DualPipe-style overlap).
    moe_gemm: rate of the grouped expert GEMMs relative to dense GEMMs of the same shape (routing, token
    permutation and ragged group sizes).
    reference_tdp_w: the board power at which the family's fractions were obtained; a part capped below it
    runs its matrix units at ((tdp - s ref) / (ref - s ref))^(1/3) of the rate, s = 0.25 the share of board power
    that does not scale with clock (dynamic power ~ f V^2 with V ~ f; perf.device.power_scale and its
    STATIC_POWER_FRACTION, an estimate): 500 W against 700 W runs at 0.852.
    """

    family: str
    matmul: Mapping[str, float]
    memory: float
    attention: float
    kernel_overhead_s: float
    layer_overhead_s: float
    compute_units: int
    tile_m: int
    tile_n: int
    reserved_memory_bytes: float
    tp_overlap: float
    dp_overlap: float
    step_overhead_s: float
    microbatch_overhead_s: float
    ep_overlap: float
    moe_gemm: float
    reference_tdp_w: float
    provenance: Mapping[str, FigureRef] = field(default_factory=dict)

    @property
    def carried_from(self) -> str | None:
        """The fitted family whose fractions these are, where no run of this family is in any fit (the catalog's
        derivation opens 'taken from FAMILY (efficiency.FAMILY': Rubin's are Blackwell Ultra's); else None."""
        ref = self.provenance.get("matmul.bf16")
        return carried_family(ref.derivation) if ref is not None else None

    @property
    def unfitted(self) -> bool:
        """Whether no figure of the family is fitted to a published training run, nor carried from a family's that
        is (fitted_figure, on the derivations scripts/calibrate.py writes): its fractions of peak are the catalog's
        priors and its framework overheads the prior's, 0 s for gaudi2, gaudi3 and tpu-v7, where a fitted family's
        carry its measured runs' (trainium1 23.4 us a layer, 1.60 s a step)."""
        return not any(fitted_figure(ref.derivation) for ref in self.provenance.values())

    @property
    def overhead_free(self) -> bool:
        """Whether the family charges no framework time per layer, micro-batch or step (a prior's 0 s): a step priced
        so can only be faster than one that charges it."""
        return self.layer_overhead_s == self.microbatch_overhead_s == self.step_overhead_s == 0.0

    def matmul_fraction(self, precision: str) -> float:
        for p in PRECISION_FALLBACK.get(precision, (precision,)):
            if p in self.matmul:
                return self.matmul[p]
        return self.matmul.get("bf16", min(self.matmul.values()))


@dataclass(frozen=True)
class Chip:
    """One accelerator chip in SI units: FLOP/s (dense), bytes, bytes/s per direction, watts, USD."""

    id: str
    name: str
    vendor: str
    family: str
    status: str
    cores_per_chip: int
    flops: Mapping[str, float]
    hbm_capacity: float
    hbm_bandwidth: float
    sram: float
    tdp: float
    scaleup_bandwidth: float
    scaleout_bandwidth: float
    launch_year: int | None
    unit_price: float | None
    process: str
    efficiency: Efficiency
    provenance: Mapping[str, FigureRef]

    def native_precision(self, precision: str) -> str:
        """The precision the chip actually computes `precision` in (fp4 on a Hopper runs as fp8). A narrow format
        listed at no more than the rate of a wider one it falls back to has no units of its own, and computes in
        the wider one (TPU v5p and Trainium1 list FP8 at their BF16 rate: an FP8 run is priced as BF16, not at an
        unfitted FP8 efficiency 18% slower)."""
        chain = [p for p in PRECISION_FALLBACK.get(precision, (precision,)) if p in self.flops]
        for i, p in enumerate(chain):
            # only a wider format takes over (an H100's INT8 is not its FP8, at the same rate)
            wider = [self.flops[q] for q in chain[i + 1 :] if PRECISION_BYTES.get(q, 2.0) > PRECISION_BYTES.get(p, 2.0)]
            if not wider or self.flops[p] > max(wider):
                return p
        return "bf16" if "bf16" in self.flops else next(iter(self.flops))

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at `precision`, falling back to the next wider precision the chip has."""
        return self.flops[self.native_precision(precision)]

    @property
    def projected(self) -> bool:
        return self.status in ("projected", "announced")


@dataclass(frozen=True)
class Fabric:
    """A scale-up or scale-out fabric: per-step latency and achievable bus-bandwidth fraction."""

    id: str
    name: str
    layer: str
    kind: str
    latency_s: float
    bus_efficiency: float
    status: str
    tiers: tuple[tuple[int, float], ...]
    provenance: Mapping[str, FigureRef]

    @property
    def oversubscription(self) -> float:
        return max((o for _, o in self.tiers), default=1.0)


@dataclass(frozen=True)
class ScaleUpDomain:
    """Chips joined by the fast fabric (NVLink, NeuronLink, ICI). Bandwidth is per chip and per direction."""

    kind: str
    size: int
    dims: tuple[int, ...]
    bandwidth: float
    fabric: Fabric
    #: a torus's bandwidth along each of dims where they differ (they sum to `bandwidth`; build.py: the catalog's
    #: dim_bandwidth, or a given or --set total split in its proportions); empty: an even split
    dim_bandwidth: tuple[float, ...] = ()


@dataclass(frozen=True)
class System:
    """A buyable or rentable unit: an instance, server, UltraServer, rack or pod slice."""

    id: str
    name: str
    kind: str
    provider: str
    chip: Chip
    chips: int
    status: str
    scaleup: ScaleUpDomain
    scaleout_fabric: Fabric
    scaleout_bandwidth_per_chip: float
    power: float
    provenance: Mapping[str, FigureRef]
    members: Mapping[str, int] = field(default_factory=dict)
    links: Mapping[frozenset[str], tuple[float, float]] = field(default_factory=dict)
    #: host CPU time of framework work relative to an x86 DGX host (Grace hosts are slower per thread)
    host_overhead: float = 1.0
    #: the chip counts its provider rents it in (instance sizes, slice shapes), ascending; empty: any count
    rental_chips: tuple[int, ...] = ()
    #: ... in one rental mode, where they differ (EC2 Capacity Blocks sell whole instances)
    rental_modes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def projected(self) -> bool:
        return self.status in ("projected", "announced") or self.chip.projected

    def unit_name(self, chips: int) -> str | None:
        """The instance that holds `chips` of this system's chips where the catalog names one: the system itself at
        its own size, else the name its rental note or derivation gives beside that count ('inf2.24xlarge 6',
        'trn1.2xlarge holds 1', 'whole trn2u.48xlarge instances of 16'); None where it names none. Inf2's 6-chip unit
        had been called an inf2.48xlarge (12 chips); it is an inf2.24xlarge."""
        if chips == self.chips:
            return self.id
        ref = self.provenance.get("rental")
        text = f"{ref.note} {ref.derivation}" if ref is not None else ""
        found = re.search(rf"((?:[\w-]+\.[\w-]+ and )?[\w-]+\.[\w-]+)(?: holds?| instances of)? {chips}\b", text)
        return found.group(1).replace(" and ", " or ") if found else None

    @property
    def hybrid(self) -> bool:
        """Several chip types on one scale-up fabric (e.g. Trainium4 beside NVIDIA GPUs over NVLink Fusion)."""
        return len(self.members) > 1

    def one_chip_type(self, what: str, fix: str) -> System:
        """This system, or one line where it is a hybrid domain of two chip types (the Trainium4 + GB300 NVLink
        Fusion rack), which a search of one chip type had run as its first member alone: `what` says what takes one
        chip type, `fix` how to use both (`{fleet}` in it is the members as --fleet takes them)."""
        if not self.hybrid:
            return self
        members = " and ".join(f"{n} {chip}" for chip, n in self.members.items())
        fleet = ",".join(f"{chip}={n}" for chip, n in self.members.items())
        raise ChipwiseError(
            f"{self.id} holds {members}, two chip types{what}. Fix: {fix.format(fleet=fleet, id=self.id)} (or name "
            f"one of {', '.join(self.members)})."
        )

    def link(self, a: str, b: str) -> tuple[float, float] | None:
        """(bandwidth per chip per direction, latency) between member types a and b, when the system joins them."""
        return self.links.get(frozenset((a, b)))

    def cross_bandwidth(self, a: str, chips_a: float, b: str, chips_b: float) -> float:
        """Bytes/s per direction that `chips_a` chips of member type a move to `chips_b` of type b (fractions of a
        chip: a replica on some of its cores, over that share of its links). Through the domain's switches every
        chip sends or receives over its own port (port_bandwidth), so the smaller end's total sets the rate, and
        each chip of the larger end exchanges with one of the other over a path of the pair link's rate at most
        (path_bandwidth): 2 Trainium4 -> 8 GB300 run at min(2 x 1.8, 8 x 0.9, 8 x 0.9) TB/s x 0.77, the pair link
        a cap of its own (a narrower Fusion bridge, --set to 10 GB/s, is 8 x 10 GB/s; it had been read for its
        latency only)."""
        ports = min(chips_a * self.port_bandwidth(a, b), chips_b * self.port_bandwidth(b, a))
        return min(ports, max(chips_a, chips_b) * self.path_bandwidth(a, b))

    def path_bandwidth(self, a: str, b: str) -> float:
        """Bytes/s per direction of the path between one chip of member type a and one of type b (the pair link), at
        the fabric's achievable fraction."""
        pair = self.link(a, b)
        if pair is None:
            raise ValueError(f"{self.id} joins no {a} to {b}")
        return pair[0] * self.scaleup.fabric.bus_efficiency

    def port_bandwidth(self, chip: str, other: str) -> float:
        """Bytes/s per direction one chip of member type `chip` sends or receives towards type `other`, at the
        fabric's achievable fraction: its type's link to its own kind (the pair link, the slower of the two ports,
        would price a Trainium4 at a GB300's port); the pair link where the catalog gives no own link."""
        own = self.link(chip, chip) or self.link(chip, other)
        if own is None:
            raise ValueError(f"{self.id} joins no {chip} to {other}")
        return own[0] * self.scaleup.fabric.bus_efficiency
