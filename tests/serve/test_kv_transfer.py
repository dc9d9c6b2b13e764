"""KV-cache transfer between prefill and decode pools: scale-up, hybrid scale-up (NVLink Fusion), scale-out; in the
simulator, a split's prefill replica holds each prompt's cache until it is sent, and a send takes the first window
both its sender's and its receiver's links leave free."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.disaggregated import hybrid_domain, kv_transfer
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.run import Deployment, SimOutput, book_transfer, simulate, transfer_seconds
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model

FUSION = "trn4-gb300-fusion-rack"
PROMPT, SEND_S = 2000, 1.0  # 2,000-token prompts, each sent in 1 s: the link, not the encoding, sets the pace


def _setup(catalog: Catalog, hw: Hardware, model: ModelSpec, chip: str, engine: str) -> ReplicaSetup:
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
    return setup_replica(catalog, model, hw.system(chip), engine, plan, 2048.0, 128.0)


def test_cross_vendor_kv_goes_over_the_hybrid_link(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    pre = _setup(catalog, hw, llama8b, "trn4", "neuron")
    dec = _setup(catalog, hw, llama8b, "gb300", "trtllm")
    rack = hw.system(FUSION)
    assert hybrid_domain([rack], pre.system, 8, dec.system, 8) is rack
    assert hybrid_domain([rack], pre.system, 40, dec.system, 8) is None  # the rack holds only 36 Trainium4
    over_fusion = kv_transfer(llama8b, pre, dec, False, rack)
    over_network = kv_transfer(llama8b, pre, dec, False)
    bw, latency = rack.link("trn4", "gb300")  # type: ignore[misc]
    assert over_fusion.fabric.startswith("nvlink-fusion")
    assert over_fusion.latency_s == pytest.approx(latency)
    # a TP1 Trainium4 replica is one NeuronCore of the chip's four: it sends over a quarter of the chip's port in
    # this NVLink 5 rack, the switch's 900 GB/s (225 GB/s; it had been given the whole chip's link a core), the
    # GB300 receives over its whole 900 GB/s: the Trainium4 end sets the rate
    cores = hw.system("trn4").chip.cores_per_chip
    eff = rack.scaleup.fabric.bus_efficiency
    assert cores == 4 and bw == pytest.approx(900e9)
    assert over_fusion.bandwidth == pytest.approx(900e9 / 4 * eff)
    pre4 = ReplicaSetup(
        **{
            **pre.__dict__,
            "plan": ReplicaPlan(tp=8, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8"),
        }
    )
    # TP8 on two Trainium4 chips (8 KV heads, 8 holders): 1.8 TB/s against the one GB300's 900 GB/s
    assert kv_transfer(llama8b, pre4, dec, False, rack).bandwidth == pytest.approx(900e9 * eff)
    # 2,048 prompt tokens of Llama 3.1 8B's fp8 KV cache (32 layers x 8 KV heads x 128 x 2 x 1 byte = 64 KiB/token)
    assert over_fusion.bytes_per_token == pytest.approx(32 * 8 * 128 * 2 * 1)
    assert over_fusion.s_per_token < over_network.s_per_token / 5


def test_same_chip_pools_never_use_a_hybrid_domain(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    a = _setup(catalog, hw, llama8b, "gb300", "trtllm")
    assert hybrid_domain([hw.system(FUSION)], a.system, 4, a.system, 4) is None


def test_kv_between_two_networks_runs_at_the_slower_and_names_both(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """A trn2 prefill pool (EFA v3) feeding an A100 decode pool (p4d's EFA v1) moves the KV at the A100's rate,
    in either direction, and says that it crosses both networks (it named the prefill side's alone)."""
    trn, a100 = _setup(catalog, hw, llama8b, "trn2", "neuron"), _setup(catalog, hw, llama8b, "a100-80gb", "trtllm")
    there, back = kv_transfer(llama8b, trn, a100, False), kv_transfer(llama8b, a100, trn, False)
    slow = min(t.topo.out_bandwidth * t.topo.out_efficiency for t in (trn, a100))
    assert there.bandwidth == back.bandwidth == pytest.approx(slow * trn.plan.ranks)
    ends = (trn.system.scaleout_fabric.id, a100.system.scaleout_fabric.id)
    assert ends[0] != ends[1] and there.fabric == f"{ends[0]} to {ends[1]}" and back.fabric == f"{ends[1]} to {ends[0]}"


def test_each_end_sends_over_the_links_of_its_own_ranks(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """Eight Trainium2 ranks (NeuronCores, each with a share of its chip's NICs) feeding four H100 ranks (a GPU's
    NIC share each) move the KV at the slower end's total, min(8 x a core's share, 4 x a GPU's): it was the slower
    per-rank share times the fewer ranks, 4 x a core's share, half the Trainium end's rate."""

    def replica(chip: str, engine: str, tp: int) -> ReplicaSetup:
        plan = ReplicaPlan(tp=tp, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
        return setup_replica(catalog, llama8b, hw.system(chip), engine, plan, 2048.0, 128.0)

    trn, h100 = replica("trn2", "neuron", 8), replica("h100-sxm", "trtllm", 4)
    t = kv_transfer(llama8b, trn, h100, False)
    core, gpu = (s.topo.out_bandwidth * s.topo.out_efficiency for s in (trn, h100))
    assert core < gpu and t.bandwidth == pytest.approx(min(8 * core, 4 * gpu))
    assert t.bandwidth == pytest.approx(2 * 4 * core)


def test_sliding_window_layers_send_their_window_only(catalog: Catalog, hw: Hardware) -> None:
    """gpt-oss-120b: 18 of its 36 layers attend to the last 128 tokens and keep only those, so an 8,192-token
    prompt sends 18 x 8,192 + 18 x 128 token-layers of cache, 50.8% of what full layers would (it sent all 36 x
    8,192); a prompt within the window sends every layer's."""
    model = load_model(catalog, "gpt-oss-120b")
    windowed = [g for g in model.groups if g.window]
    assert sum(g.count for g in windowed) == 18 and {g.window for g in windowed} == {128}
    setup = _setup(catalog, hw, model, "h200", "vllm")
    t = kv_transfer(model, setup, setup, False)
    assert t.seconds(8192) == pytest.approx(model.kv_bytes(8192, 1.0) / t.bandwidth, rel=1e-12)
    assert t.seconds(8192) == pytest.approx(t.s_per_token * (18 * 8192 + 18 * 128) / 36, rel=1e-12)
    assert t.seconds(100) == pytest.approx(t.s_per_token * 100, rel=1e-12)
    # the simulator's links take as long
    assert float(transfer_seconds(t.s_per_token, t.windows, 8192)) == pytest.approx(t.seconds(8192), rel=1e-12)


def test_a_copied_kv_cache_moves_whole_to_each_rank(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """Every tensor-parallel rank of a DeepSeek-R1 replica keeps the whole MLA latent, so each of a TP8 pool's ranks
    receives all of a prompt's cache over its own link: the transfer runs at one rank's rate, not eight's (it had
    divided the copy over the ranks as if they split it, 8x fast). Llama 3.1 8B's 8 KV heads split over TP8 but
    not over TP16, whose extra ranks hold copies: TP16 moves the cache no faster than TP8."""

    def replica(model: ModelSpec, chip: str, tp: int, engine: str = "trtllm") -> ReplicaSetup:
        plan = ReplicaPlan(tp=tp, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
        return setup_replica(catalog, model, hw.system(chip), engine, plan, 8192.0, 128.0)

    r1 = load_model(catalog, "deepseek-r1")
    h200, b200 = replica(r1, "h200", 8), replica(r1, "b200", 8)
    t = kv_transfer(r1, h200, b200, False)
    one_rank = min(s.topo.out_bandwidth * s.topo.out_efficiency for s in (h200, b200))
    assert t.bandwidth == pytest.approx(one_rank)
    assert t.bytes_per_token == pytest.approx(61 * (512 + 64) * 1)  # the fp8 latent and its rope key, 61 layers
    eight, sixteen = (replica(llama8b, "trn2", tp, "neuron") for tp in (8, 16))
    assert kv_transfer(llama8b, sixteen, sixteen, False).bandwidth == pytest.approx(
        kv_transfer(llama8b, eight, eight, False).bandwidth
    )


def _link_limited(setup: ReplicaSetup) -> SimOutput:
    """Six prompts at once on a prefill replica whose cache holds two (4,096 tokens) behind a link that sends one a
    second."""
    pools = (replace(setup.pool(1, "prefill"), kv_tokens=4096), setup.pool(1, "decode"))
    n = 6
    ones = np.ones(n, dtype=np.int64)
    deployment = Deployment(pools, transfer_s_per_token=SEND_S / PROMPT)
    return simulate(deployment, ones * PROMPT, ones * 2, ones * 0, np.zeros(n))


@pytest.mark.parametrize("engine", ["vllm_setup", "h100_setup"])  # on-demand and reserve admission
def test_a_prefill_replica_holds_a_prompt_until_it_is_sent(engine: str, request: pytest.FixtureRequest) -> None:
    """Prompts 0 and 1 are encoded together by e; their sends take [e, e + 1] and [e + 1, e + 2], and each frees its
    blocks when it ends, letting the next prompt in: prompt k >= 2 starts at e + k - 1 (each is encoded in well
    under the second its predecessor's send takes, so the link stays busy). Freed when encoded, prompts 2-5 had
    started by 2e, two an iteration, with their caches queued on the link and none of them counted as held."""
    out = _link_limited(request.getfixturevalue(engine))
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    pre = next(rep for rep in out.replicas if rep["role"] == "prefill")
    e = float(pre["iterations"][0, 0])  # the end of the first prompt iteration, which encoded prompts 0 and 1
    assert 0.0 < e < 0.5 * SEND_S
    assert r["started"][:2] == pytest.approx([0.0, 0.0])
    assert r["started"][2:] == pytest.approx(e + np.arange(2, 6) - 1, rel=1e-12)
    # between e and the first send's end both prompts' caches are held: 4,000 tokens and half a block each
    at = np.searchsorted(pre["util_t"], e + 0.5 * SEND_S, side="right") - 1
    block = request.getfixturevalue(engine).policy().block
    assert pre["util_v"][at] * 4096 == pytest.approx(2 * PROMPT + block)
    # the last send ends at e + 6: the prefill replica holds nothing after it
    assert pre["util_t"][-1] == pytest.approx(e + 6 * SEND_S, rel=1e-12)
    assert pre["util_v"][-1] == 0.0


def test_a_transfer_fits_a_links_idle_window_before_a_later_booking() -> None:
    """Receiver X is busy for 10 s with sender B's prompt; sender A's prompt for X waits for it, [10, 20), and A's
    next prompt, for a free receiver Y, goes at once, [0, 5): A's link is idle until its booking for X (one booked
    behind a busy receiver had held its sender idle for every other receiver, starting at 20 s). A third, for Y,
    waits for both links' first common free window: Y's [0, 5) and A's [10, 20) leave [5, 10) for 5 s."""
    a: list[tuple[float, float]] = []
    b: list[tuple[float, float]] = []
    x: list[tuple[float, float]] = []
    y: list[tuple[float, float]] = []
    assert book_transfer(b, x, 0.0, 10.0) == 0.0
    assert book_transfer(a, x, 0.0, 10.0) == 10.0
    assert book_transfer(a, y, 0.0, 5.0) == 0.0
    assert book_transfer(a, y, 0.0, 5.0) == 5.0
    assert book_transfer(a, y, 0.0, 5.0) == 20.0  # no window of 5 s left on A before its [10, 20)
    assert a == [(0.0, 5.0), (5.0, 10.0), (10.0, 20.0), (20.0, 25.0)]
    # at 12 s the windows over by then are dropped from both lists a booking reads
    assert book_transfer(a, x, 12.0, 1.0) == 25.0 and a[0] == (10.0, 20.0) and x == [(10.0, 20.0), (25.0, 26.0)]
