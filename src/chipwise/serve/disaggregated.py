"""Prefill/decode disaggregation (DistServe, Zhong et al. 2024; Splitwise, Patel et al. 2024): prompts run on a
prefill pool, their KV cache is sent to a decode pool, possibly of another chip, which generates the rest.

KV transfer of a prompt of I tokens: every rank of the prefill replica that holds a share of the cache sends it in
parallel; the decode replica takes the request once it has arrived and streams the first token (which the
prefill replica sampled), as the engines' split front ends do, so TTFT counts the transfer:
    t = latency + kv_bytes(I) / B,   B = min over the two ends of (ranks holding it x per-rank link)
where a sliding-window layer holds, and sends, its last window of the prompt only (ModelSpec.kv_bytes); over the
scale-up fabric when both pools sit in one scale-up domain of the same system; over the hybrid link when the two
chip types are members of one hybrid scale-up domain (e.g. Trainium4 beside GB300 over NVLink Fusion) and both
pools fit in it, each end's chips over their own ports (System.cross_bandwidth), unless the scale-out network moves
a mean prompt's cache faster (planner.serving_deployment.kv_path takes the faster); else over the scale-out network
(the slower side's NIC share per rank, at the fabric's achievable fraction).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chipwise.catalog.loader import Catalog
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.perf.collectives import between
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.quant import stored_bytes
from chipwise.serve.sim.run import transfer_seconds
from chipwise.workload.model import ModelSpec


@dataclass(frozen=True)
class KVTransfer:
    latency_s: float
    s_per_token: float
    bytes_per_token: float
    bandwidth: float
    fabric: str
    #: a projected (announced, not shipping) figure sets it: either end's system, or the hybrid domain it crosses
    projected: bool = False
    #: windowed layer groups' (share of a token's bytes, window): a sliding-window layer sends its window only
    windows: tuple[tuple[float, float], ...] = ()
    #: whether the cache crosses the scale-out network (not a scale-up domain or a hybrid rack's link): the
    #: deployment then draws the network's power and (owned) pays for it (planner.serving_economics)
    network: bool = False

    def seconds(self, tokens: float) -> float:
        """Seconds on the links for one prompt of `tokens` tokens, without the latency."""
        return float(transfer_seconds(self.s_per_token, self.windows, tokens))


def pools_rack(
    catalog: Catalog, prefill: System, prefill_chips: float, decode: System, decode_chips: float
) -> System | None:
    """The catalog's first hybrid rack that holds both pools (hybrid_domain): the one the KV cache may cross
    (planner.serving_deployment.kv_path) and the one site both pools' energy is reckoned at
    (planner.serving_economics)."""
    hw = hardware(catalog)
    racks = (hw.system(k) for k, e in catalog.systems.items() if len(e.members or {}) > 1)
    return hybrid_domain(racks, prefill, prefill_chips, decode, decode_chips)


def hybrid_domain(
    systems: Iterable[System], prefill: System, prefill_chips: float, decode: System, decode_chips: float
) -> System | None:
    """The first hybrid scale-up system that holds both pools' chip types (the pools' systems' chips) in the numbers
    the pools need."""
    a, b = prefill.chip.id, decode.chip.id
    if a == b:
        return None
    for s in systems:
        if s.hybrid and s.link(a, b) and s.members.get(a, 0) >= prefill_chips and s.members.get(b, 0) >= decode_chips:
            return s
    return None


def _holders(model: ModelSpec, setup: ReplicaSetup) -> int:
    """Ranks of a replica that hold a distinct share of one request's KV cache, each moving it over its own links:
    a stage's tensor-parallel ranks split its heads over min(tp, kv_heads) ranks (a KV head is copied beyond that,
    and each copy moves whole), MLA's shared latent not at all (every rank receives the whole of it), and under
    attention DP only the request's own rank of each stage holds it."""
    plan = setup.plan
    if plan.attention_dp or model.attention.kind == "mla":
        return plan.pp
    return plan.pp * min(plan.tp, model.attention.kv_heads)


def kv_transfer(
    model: ModelSpec, prefill: ReplicaSetup, decode: ReplicaSetup, same_domain: bool, hybrid: System | None = None
) -> KVTransfer:
    """Cost of moving one prompt's KV cache from a prefill replica to a decode replica, over the links of the ranks
    that hold distinct shares of it at both ends (_holders). With speculative decoding the prefill pool's drafter
    encodes the prompt too, and its cache goes with the target's (the decode pool drafts from it): a 1B draft
    model adds 32 KiB a token to Llama 3.1 70B's 320 KiB."""
    precision = stored_bytes(prefill.plan.kv_precision)
    target = model.kv_bytes_per_token(precision)
    drafted = prefill.drafter is not None and decode.drafter is not None
    per_token = target + (prefill.drafter.kv_bytes_per_token(precision) if drafted and prefill.drafter else 0.0)
    sending, receiving = _holders(model, prefill), _holders(model, decode)
    link = hybrid.link(prefill.system.chip.id, decode.system.chip.id) if hybrid else None
    if hybrid is not None and link is not None:
        # each end's chips over their own ports, a replica on part of a chip (two of a Trainium4's NeuronCores)
        # over that part of its links: the end that carries less sets the rate
        a, b = prefill.system.chip.id, decode.system.chip.id
        chips = (sending / prefill.system.chip.cores_per_chip, receiving / decode.system.chip.cores_per_chip)
        total_bw = hybrid.cross_bandwidth(a, chips[0], b, chips[1])
        latency = link[1]
        fabric, network = f"{hybrid.scaleup.fabric.id} in {hybrid.id}", False
    elif same_domain and prefill.system.id == decode.system.id:
        total_bw = between(sending, receiving, prefill.topo)
        latency = prefill.topo.up_latency
        fabric, network = prefill.system.scaleup.fabric.id, False
    else:
        # each end's ranks send or receive over their own share of its NICs: the slower end sets the rate (a
        # Trainium rank, a NeuronCore, has a quarter of a chip's share; an H100 rank a whole GPU's)
        total_bw = min(
            prefill.topo.out_bandwidth * prefill.topo.out_efficiency * sending,
            decode.topo.out_bandwidth * decode.topo.out_efficiency * receiving,
        )
        latency = max(prefill.topo.out_latency, decode.topo.out_latency)
        ends = (prefill.system.scaleout_fabric.id, decode.system.scaleout_fabric.id)
        # two systems' networks: the transfer runs at the slower end's rate, and both are named
        fabric, network = (ends[0] if ends[0] == ends[1] else f"{ends[0]} to {ends[1]}"), True
    total_bw = max(total_bw, 1.0)
    # either end's figures can set the rate (a Trainium4's NIC share set GB200 -> Trn4's 10 GB/s over the network,
    # which had read as shipping hardware), and a hybrid domain's link where the path crosses one
    projected = (
        prefill.system.projected
        or decode.system.projected
        or (link is not None and hybrid is not None and hybrid.projected)
    )
    # the target's sliding-window layers, as shares of all the bytes a token sends: the drafter's own cache (a full-
    # attention head or draft model) is sent whole (it had been cut by the target's window share: gpt-oss-120b's
    # EAGLE head sent 4,160 tokens' worth of an 8,192-token prompt)
    windows = tuple(
        (g.count / model.layers * target / per_token, float(g.window)) for g in model.groups if g.window > 0
    )
    return KVTransfer(latency, per_token / total_bw, per_token, total_bw, fabric, projected, windows, network)
