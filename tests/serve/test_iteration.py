"""The closed-form iteration model: hand-computed pieces, invariants, and that it broadcasts."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.perf.compute import gemm_compute_time
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.serving import attention_rate, context_attention_time, small_all_reduce, streamed_gemm_time
from chipwise.serve.build import setup_replica
from chipwise.serve.engine import engine_profile, serving_device, sglang_static_fraction
from chipwise.serve.iteration import (
    IterationInputs,
    Shapes,
    busiest_rank_experts,
    context_coefficient,
    eager_launches,
    experts_read_and_rows,
    iteration_breakdown,
    pair_coefficient,
    prefill_pairs,
    token_costs,
)
from chipwise.serve.kvcache import kv_bytes_per_token_rank, replica_memory, weights_per_rank
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import layer_precisions, matmul_precision, stored_bytes
from chipwise.serve.sim.steps import StepModel
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model


@pytest.fixture(scope="module")
def h100(catalog: Catalog, hw: Hardware):  # type: ignore[no-untyped-def]
    system = hw.system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", system.chip.family)
    return serving_device(device_of(system), eng), topology_of(system), eng


def test_weight_streaming_gemm_is_bytes_over_bandwidth(h100) -> None:  # type: ignore[no-untyped-def]
    dev, _, _ = h100
    # one token through a 4096 x 4096 fp8 weight: the weight read dominates
    nbytes = 1.0 * 4096 * 4096 + 2.0 * 1 * (4096 + 4096)
    t_memory = nbytes / (dev.hbm_bandwidth * dev.eff.memory)
    # the compute term of one row: a 4,096-row GEMM's at the large-shape rate, over 4,096
    t_compute = float(gemm_compute_time(4096, 4096, 4096, dev, "fp8", waves=False)) / 4096
    assert t_compute < 0.01 * t_memory
    expected = math.hypot(t_compute, t_memory) + dev.eff.kernel_overhead_s
    got = float(streamed_gemm_time(1, 4096, 4096, dev, "fp8", 1.0))
    assert got == pytest.approx(expected, rel=1e-9)
    assert got == pytest.approx(t_memory + dev.eff.kernel_overhead_s, rel=1e-4)  # the larger term, far from the ridge


def test_large_gemm_is_compute_bound_and_grouped_kernels_pay_one_launch(h100) -> None:  # type: ignore[no-untyped-def]
    dev, _, _ = h100
    big = float(streamed_gemm_time(8192, 8192, 8192, dev, "fp8", 1.0))
    flops = 2.0 * 8192**3
    assert big > flops / dev.peak_flops("fp8")  # never faster than peak
    four = float(streamed_gemm_time(1, 4096, 4096, dev, "fp8", 1.0, count=4))
    one = float(streamed_gemm_time(1, 4096, 4096, dev, "fp8", 1.0))
    overhead = dev.eff.kernel_overhead_s
    assert four - overhead == pytest.approx(4 * (one - overhead), rel=1e-9)


def test_decode_attention_is_linear_in_context(h100) -> None:  # type: ignore[no-untyped-def]
    dev, _, _ = h100
    one = float(context_attention_time(1000.0, 4096.0, 4096.0, dev))
    assert float(context_attention_time(3000.0, 4096.0, 4096.0, dev)) == pytest.approx(3 * one)
    # a FLOP a byte: the read, with the score FLOPs joined by the roofline's norm
    t_memory, t_compute = 4096.0 / (dev.hbm_bandwidth * dev.eff.memory), 4096.0 / attention_rate(dev, "bf16")
    assert one == pytest.approx(1000.0 * math.hypot(t_compute, t_memory), rel=1e-12)
    assert one == pytest.approx(1000.0 * t_memory, rel=1e-3)


def test_small_all_reduce_pays_one_latency(h100) -> None:  # type: ignore[no-untyped-def]
    _, topo, eng = h100
    near, far = eng.collective_latency_s, eng.network_collective_latency_s
    assert float(small_all_reduce(16384.0, 1, topo, near, far)) == 0.0
    t8 = float(small_all_reduce(16384.0, 8, topo, near, far))
    bw = 2.0 * 7 / 8 * 16384.0 / (topo.up_bandwidth * topo.up_efficiency)
    assert t8 == pytest.approx(eng.collective_latency_s + bw)


def test_prefill_pairs_by_hand() -> None:
    # a 4-token chunk after 10 cached tokens: queries attend to 11, 12, 13, 14 keys
    assert float(prefill_pairs(10, 4)) == 11 + 12 + 13 + 14
    assert float(prefill_pairs(0, 3)) == 1 + 2 + 3


def test_batch_one_decode_is_the_weight_read(h100, llama8b: ModelSpec) -> None:  # type: ignore[no-untyped-def]
    """Decode at batch 1 reads every weight once: its time is the weight bytes over the HBM rate plus fixed costs."""
    dev, topo, eng = h100
    shapes = Shapes.of(1)
    g = token_costs(llama8b, dev, topo, eng, "fp8", shapes, 1.0)
    linear = llama8b.params_total - llama8b.embedding_params - llama8b.lm_head_params
    weight_read = linear * 1.0 / (dev.hbm_bandwidth * dev.eff.memory)
    launches = 4 * llama8b.layers * dev.eff.kernel_overhead_s  # QKV, O, gate-up and down GEMMs per layer
    assert float(g["gemm"]) == pytest.approx(weight_read + launches, rel=0.01)
    assert float(g["tp_comm"]) == 0.0 and float(g["ep_comm"]) == 0.0


def test_iteration_grows_with_tokens_and_context(h100, llama8b: ModelSpec) -> None:  # type: ignore[no-untyped-def]
    dev, topo, eng = h100
    shapes = Shapes.of(1)

    def t(tokens: float, context: float) -> float:
        work = IterationInputs(np.asarray(tokens), np.asarray(1.0), np.asarray(context), np.asarray(0.0))
        parts = iteration_breakdown(llama8b, dev, topo, eng, "fp8", "fp8", shapes, work, 1024.0, 512.0)
        return float(sum(parts.values()))

    assert t(1, 0) < t(64, 0) < t(2048, 0)
    assert t(64, 1000) < t(64, 100000)


def test_breakdown_broadcasts_over_shapes(h100, catalog: Catalog) -> None:  # type: ignore[no-untyped-def]
    dev, topo, eng = h100
    model = load_model(catalog, "llama-3.1-70b")
    tps = np.asarray([1, 2, 4, 8])
    work = IterationInputs(np.asarray(128.0), np.asarray(128.0), np.asarray(128.0 * 1500), np.asarray(0.0))
    parts = iteration_breakdown(model, dev, topo, eng, "fp8", "fp8", Shapes.of(tps), work, 1500.0, 1024.0)
    for i, tp in enumerate(tps):
        one = iteration_breakdown(model, dev, topo, eng, "fp8", "fp8", Shapes.of(int(tp)), work, 1500.0, 1024.0)
        for key, part in parts.items():
            assert float(part[i]) == pytest.approx(float(one[key]), rel=1e-12), key
    assert float(parts["tp_comm"][0]) == 0.0 and float(parts["tp_comm"][-1]) > 0.0


def test_tensor_parallel_experts_permute_every_routed_copy(h100, catalog: Catalog) -> None:  # type: ignore[no-untyped-def]
    """Each rank of a tensor-parallel MoE layer holds a slice of every expert, so it gathers and scatters every routed
    copy's whole hidden row (4 k h values a token: gather, expert input, output, unpermute); with expert parallelism a
    rank takes only the copies its experts own. Mixtral-8x7B (k = 2, h = 4,096) at TP2: the permutes of EP1 cost
    4 x 2 x 4,096 x 2 B x (1 - 1/2) = 32,768 B a token a layer more than those of EP2; they were divided by TP."""
    dev, topo, eng = h100
    model = load_model(catalog, "mixtral-8x7b")
    tokens = 8192.0
    ep1, ep2 = (token_costs(model, dev, topo, eng, "fp8", Shapes.of(2, 1, ep), tokens)["memory_bound"] for ep in (1, 2))
    extra = tokens * model.layers * 4 * 2 * 4096 * 2.0 * (1 - 1 / 2)
    assert float(ep1 - ep2) == pytest.approx(extra / (dev.hbm_bandwidth * dev.eff.memory), rel=1e-9)


@pytest.mark.parametrize(
    ("tokens", "ep", "simulated"),
    # the mean of 3,000 random routings of DeepSeek-R1's 8 copies a token over 256 experts (max of the ranks' counts)
    [(1, 8, 2.55), (4, 8, 6.55), (16, 8, 16.75), (1, 4, 3.52), (64, 16, 15.83)],
)
def test_the_busiest_expert_rank_reads_what_random_routing_gives(tokens: int, ep: int, simulated: float) -> None:
    """A step waits for its busiest expert rank: the expected largest count of distinct experts hit on one of `ep`
    ranks, within 6% of a Monte Carlo of uniform top-8 routing (2.4 experts at one token on EP8, where the average
    is 1; the same rank reads 6.5 at four tokens)."""
    hit = 256 * (1 - (1 - 8 / 256) ** tokens)
    got = float(busiest_rank_experts(np.asarray(hit), 256.0, np.asarray(1.0), float(ep)))
    assert got == pytest.approx(simulated, rel=0.06)
    assert hit / ep < got <= 256 / ep


def test_one_expert_rank_or_every_expert_hit_reads_the_average() -> None:
    hit = np.asarray([8.0, 100.0, 256.0])
    assert busiest_rank_experts(hit, 256.0, np.ones(3), 1.0) == pytest.approx(hit, rel=1e-12)
    assert float(busiest_rank_experts(np.asarray(256.0), 256.0, np.asarray(1.0), 8.0)) == pytest.approx(32.0)


@pytest.mark.parametrize(
    ("hit", "experts", "ep", "expected"),
    [
        (2.0, 8.0, 8.0, 1.0),  # Mixtral 8x7B, EP8, one token: its 2 experts on 2 ranks of one slot (0.871 before)
        (8.0, 256.0, 256.0, 1.0),  # DeepSeek-V3 over EP256, one token (0.521 before)
        (8.0, 256.0, 64.0, 1.0),  # 4 slots a rank: at least the one (0.936 before)
        (0.0, 8.0, 8.0, 0.0),  # nothing routed, nothing read
    ],
)
def test_the_busiest_expert_rank_reads_at_least_one_whole_expert(
    hit: float, experts: float, ep: float, expected: float
) -> None:
    """Once a step routes any token, the slowest expert rank reads at least one whole expert: the normal tail of a
    count that is 0 or 1 on each rank had put it below one."""
    assert float(busiest_rank_experts(np.asarray(hit), experts, np.asarray(1.0), ep)) == pytest.approx(expected)


def test_the_busiest_rank_floor_leaves_large_batches_alone() -> None:
    """At DeepSeek-V3's 64 tokens on EP8 (222.4 distinct experts) the count stays the normal approximation's, 30.54
    (mean 27.81 + Blom's z 1.434 x sd 1.909)."""
    hit = 256 * (1 - (1 - 8 / 256) ** 64)
    n, p = 32.0, hit / 256
    z = 1.43420  # Phi^-1((8 - 0.375) / 8.25)
    got = float(busiest_rank_experts(np.asarray(hit), 256.0, np.asarray(1.0), 8.0))
    assert got == pytest.approx(n * p + z * math.sqrt(n * p * (1 - p)), rel=1e-4)
    assert got == pytest.approx(30.54, abs=0.01)


def test_expert_parallel_decode_at_batch_one_reads_its_busiest_rank(h100, catalog: Catalog) -> None:  # type: ignore[no-untyped-def]
    """DeepSeek-R1 at one token a step: TP8 with EP1 slices each of the 8 experts hit over the 8 ranks (one expert's
    weights a rank); EP8 puts whole experts on ranks, and the step waits for the rank that holds the most of the 8,
    2.4 on average, so the routed experts' read takes 2.4x TP8's and the block, with its router and shared expert
    slices, 1.9x (it was priced at the average rank's one expert, as fast as TP8)."""
    dev, topo, eng = h100
    model = load_model(catalog, "deepseek-r1")
    tp8, ep8 = (token_costs(model, dev, topo, eng, "fp8", Shapes.of(8, 1, ep), 1.0)["moe"] for ep in (1, 8))
    assert 1.7 < float(ep8 / tp8) < 2.4


@settings(max_examples=25, deadline=None)
@given(tokens=st.integers(min_value=1, max_value=8192))
def test_moe_reads_at_most_all_experts(tokens: int, catalog: Catalog, hw: Hardware) -> None:
    """A MoE layer never costs more than reading every expert once and running every routed copy."""
    model = load_model(catalog, "mixtral-8x7b")
    system = hw.system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", system.chip.family)
    dev, topo = serving_device(device_of(system), eng), topology_of(system)
    g = token_costs(model, dev, topo, eng, "fp8", Shapes.of(1), float(tokens))
    moe = model.moe
    assert moe is not None
    all_experts = model.moe_layers * moe.experts * moe.expert_params(model.hidden) * 1.0
    floor_read = min(moe.experts, moe.top_k) * model.moe_layers * moe.expert_params(model.hidden) * 1.0
    bw = dev.hbm_bandwidth * dev.eff.memory
    assert float(g["moe"]) >= 0.9 * floor_read / bw
    if tokens >= 64:  # every expert is hit: the whole expert set is read at least once
        assert float(g["moe"]) >= 0.95 * all_experts / bw


def test_kv_per_token_by_attention_variant(catalog: Catalog) -> None:
    llama = load_model(catalog, "llama-3.1-70b")  # GQA, 8 KV heads, head_dim 128, 80 layers
    per_token = 80 * 8 * 2 * 128 * 1.0  # fp8
    assert float(kv_bytes_per_token_rank(llama, Shapes.of(1), "fp8", 1000)) == per_token
    assert float(kv_bytes_per_token_rank(llama, Shapes.of(8), "fp8", 1000)) == per_token / 8
    # beyond kv_heads ranks, a KV head is replicated: no further split
    assert float(kv_bytes_per_token_rank(llama, Shapes.of(16), "fp8", 1000)) == per_token / 8
    ds = load_model(catalog, "deepseek-v3")  # MLA: a 512 + 64 latent, shared by all heads
    latent = 61 * (512 + 64) * 1.0
    assert float(kv_bytes_per_token_rank(ds, Shapes.of(8), "fp8", 1000)) == latent
    assert float(kv_bytes_per_token_rank(ds, Shapes.of(8, adp=1), "fp8", 1000)) == latent / 8


def test_mla_prompts_attend_over_decompressed_heads_and_decode_reads_the_latent(catalog: Catalog, hw: Hardware) -> None:
    """DeepSeek-V3's prompts run as ordinary attention (q.k over 192 dims, p.v over 128, 128 heads), as the engines
    encode them: 81,920 FLOPs per (query, key) pair; its decode steps attend in the 512 + 64 latent (absorbed),
    2 x 128 x (2 x 512 + 64) = 278,528 FLOPs per cached token, 3.4x as many. The prefill pair cost is the MHA one of
    the same head shapes, not the absorbed one."""
    ds = load_model(catalog, "deepseek-v3")
    dev = device_of(hw.system("h200"))
    shapes = Shapes.of(8)
    b = float(pair_coefficient(ds, dev, shapes, 512.0, "bf16"))
    rate = b * 8.0 / 61.0  # seconds per pair per layer per rank x ranks
    assert ds.attention.score_flops_per_position == 2 * 128 * (192 + 128) == 81_920
    absorbed = 2 * 128 * (2 * 512 + 64)
    mha_like = float(pair_coefficient(load_model(catalog, "llama-3.1-70b"), dev, shapes, 512.0, "bf16")) * 8.0 / 80.0
    per_flop = mha_like / load_model(catalog, "llama-3.1-70b").attention.score_flops_per_position
    assert rate == pytest.approx(81_920 * per_flop, rel=1e-9) and rate < absorbed * per_flop / 3


def test_prompt_attention_runs_on_a_ranks_padded_heads(catalog: Catalog, hw: Hardware) -> None:
    """Llama-2-13B's 40 heads on 32 NeuronCores: each rank computes two heads (padded), as on 20 ranks, not 1.25;
    on 40 ranks one. Decoding and the projections pad alike."""
    model = load_model(catalog, "llama-2-13b")
    dev = device_of(hw.system("trn1.32xlarge"))
    b = {tp: float(pair_coefficient(model, dev, Shapes.of(tp), 4096.0, "bf16")) for tp in (20, 32, 40)}
    assert model.attention.heads == 40
    assert b[32] == pytest.approx(b[20], rel=1e-12) and b[40] == pytest.approx(b[20] / 2.0, rel=1e-12)


def test_kv_capacity_by_hand(h100_setup, llama8b: ModelSpec) -> None:  # type: ignore[no-untyped-def]
    s = h100_setup
    mem = s.memory
    free = float(mem.capacity - mem.weights - mem.activations - mem.reserved)
    per_token = 32 * 8 * 2 * 128 * 1.0  # llama 3.1 8B, fp8 KV
    blocks = np.floor(0.9 * free / (per_token * 32))
    assert s.kv_tokens == int(blocks * 32)
    # weights: every parameter at 1 byte except the 16-bit embedding and LM head
    ends = llama8b.embedding_params + llama8b.vocab * llama8b.hidden
    assert float(mem.weights) == pytest.approx((llama8b.params_total - ends) * 1.0 + ends * 2.0, rel=1e-3)


def test_context_coefficient_halves_with_pipeline(h100, llama8b: ModelSpec) -> None:  # type: ignore[no-untyped-def]
    dev, _, _ = h100
    a1 = float(context_coefficient(llama8b, dev, Shapes.of(1, 1), "fp8", 1000.0))
    a2 = float(context_coefficient(llama8b, dev, Shapes.of(1, 2), "fp8", 1000.0))
    assert a2 == pytest.approx(a1 / 2)


def test_memory_vectorised(h100, catalog: Catalog) -> None:  # type: ignore[no-untyped-def]
    dev, _, eng = h100
    model = load_model(catalog, "llama-3.1-70b")
    mem = replica_memory(model, dev, eng, Shapes.of(np.asarray([1, 2, 4, 8])), "fp8", "fp8", 8192, 256, 2048.0)
    assert np.all(np.diff(mem.weights) < 0) and np.all(np.diff(mem.kv_tokens) > 0)
    assert not mem.fits[0] or float(mem.kv_tokens[0]) < float(mem.kv_tokens[1])


def test_nxd_moe_dispatch_follows_the_selective_loading_threshold() -> None:
    """NxD: T k < E loads T k experts of one row each; a decode step above it runs every token through every
    expert; a context encoding runs the worst-case number of 512-row blocks its static graph is compiled for,
    each loading one expert. Grouped GEMMs read the distinct experts hit."""
    e, k = 128.0, 8.0
    loads, rows = experts_read_and_rows(np.asarray([4.0, 32.0, 2048.0]), e, k, True, 32.0)
    # 2048 x 8 = 16384 copies: ceil((16384 - 127) / 512) + 127 = 32 + 127 = 159 blocks (not 128 = one per expert)
    assert list(loads) == [32.0, 128.0, 159.0]
    assert list(rows) == [1.0, 32.0, 512.0]
    # a short prompt: 100 tokens x 8 = 800 copies, ceil((800 - 127) / 512) + 127 = 2 + 127 = 129 blocks
    loads, rows = experts_read_and_rows(np.asarray([100.0]), e, k, True, 4.0)
    assert list(loads) == [129.0] and list(rows) == [512.0]
    # 16 experts, top-1 (Llama 4 Scout), 600 tokens: ceil((600 - 15) / 512) + 15 = 2 + 15 = 17 blocks
    loads, rows = experts_read_and_rows(np.asarray([600.0]), 16.0, 1.0, True, 4.0)
    assert list(loads) == [17.0] and list(rows) == [512.0]
    hit, per = experts_read_and_rows(np.asarray([1.0, 4096.0]), e, k, False, 0.0)
    assert float(hit[0]) == pytest.approx(k) and float(hit[1]) == pytest.approx(e)
    assert float(per[1]) == pytest.approx(4096.0 * k / e)


def test_serving_gemm_compute_is_linear_below_full_rows(h100) -> None:  # type: ignore[no-untyped-def]
    """Decode-sized GEMMs are not padded to training tiles: compute scales with the rows at the large-shape rate."""
    dev = h100[0]
    one = streamed_gemm_time(256.0, 8192.0, 8192.0, dev, "fp8", 1e-9)
    two = streamed_gemm_time(512.0, 8192.0, 8192.0, dev, "fp8", 1e-9)
    overhead = dev.eff.kernel_overhead_s
    assert float(two - overhead) == pytest.approx(2.0 * float(one - overhead), rel=1e-9)


def test_mxfp4_quantises_the_routed_experts_only(catalog: Catalog, hw: Hardware) -> None:
    """The gpt-oss checkpoint: MXFP4 experts (4.25 bits), bf16 attention and router; bf16 x MXFP4 matmuls on Hopper,
    MXFP8 x MXFP4 (the fp8 rate) on Blackwell."""
    assert layer_precisions("mxfp4") == ("bf16", "mxfp4") and layer_precisions("fp8") == ("fp8", "fp8")
    assert stored_bytes("mxfp4") == pytest.approx((32 * 4 + 8) / 32 / 8)
    assert matmul_precision("mxfp4", hw.system("h100-sxm").chip) == "bf16"
    assert matmul_precision("mxfp4", hw.system("b200").chip) == "fp8"
    assert matmul_precision("fp4", hw.system("b200").chip) == "fp4"
    model = load_model(catalog, "gpt-oss-120b")
    h = model.hidden
    expert_bytes = dense_bytes = 0.0
    for g in model.groups:
        assert g.moe is not None
        expert_bytes += g.count * g.moe.experts * g.moe.expert_params(h) * stored_bytes("mxfp4")
        dense = model.attention.params(h) + model.norm_params_per_layer + g.moe.shared_params(h)
        dense_bytes += g.count * (dense + g.moe.router_params(h)) * 2.0
    ends = (model.embedding_params + model.vocab * h) * 2.0
    got = float(weights_per_rank(model, Shapes.of(1), "mxfp4"))
    assert got == pytest.approx(expert_bytes + dense_bytes + ends, rel=1e-9)
    assert got < float(weights_per_rank(model, Shapes.of(1), "bf16")) / 3.0


def test_experts_exchange_tokens_only_beside_attention_dp(h100, catalog: Catalog) -> None:  # type: ignore[no-untyped-def]
    """With tensor-parallel attention every rank holds every token: expert parallelism changes which copies a rank's
    experts take, and the block's output is still all-reduced, two all-reduces a layer as with tensor-parallel
    experts and no all-to-all (TensorRT-LLM's DeepseekV3MoE enables its all-to-all only with attention DP). Beside
    attention DP (DEP8) each rank dispatches its own tokens and combines them back instead of an all-reduce.
    InferenceX's DeepSeek-R1 TP8 EP8 prompts run no faster than TP8 EP1 ones (8K tokens on 8 H200 under
    TensorRT-LLM: TTFT 0.387 s against 0.374 s at 4 users)."""
    dev, topo, eng = h100
    deepseek = load_model(catalog, "deepseek-v3")
    tokens = 8192.0
    tp, ep, dep = (token_costs(deepseek, dev, topo, eng, "fp8", s, tokens) for s in (
        Shapes.of(8, 1, 1), Shapes.of(8, 1, 8), Shapes.of(8, 1, 8, 1)))  # fmt: skip
    assert float(ep["tp_comm"]) == pytest.approx(float(tp["tp_comm"]), rel=1e-12)
    assert float(ep["ep_comm"]) == 0.0 and float(ep["memory_bound"]) < float(tp["memory_bound"])
    assert float(dep["tp_comm"]) < float(tp["tp_comm"]) / 2  # the dense layers' attention all-reduces only
    chip = dev.chip
    # TP8 EP8 launches an all-reduce after each MoE block, DEP8 a dispatch and a combine (and no attention all-reduce)
    assert float(eager_launches(deepseek, chip, "fp8", Shapes.of(8, 1, 8))) == 3 * (19 + 7) + 58 * (19 + 17)
    assert float(eager_launches(deepseek, chip, "fp8", Shapes.of(8, 1, 8, 1))) == 3 * (18 + 7) + 58 * (18 + 18)


def test_eager_prompt_iterations_take_their_launches_host_time(catalog: Catalog, hw: Hardware) -> None:
    """SGLang runs prompt iterations eagerly: one takes the longer of its device work and its kernels' host time
    (EAGER_LAUNCHES per layer, counted by hand here); decode steps (CUDA graphs) and compiled engines do not."""
    llama8b = load_model(catalog, "llama-3.1-8b")
    chip = hw.system("h100-sxm").chip
    # 32 layers x (GQA attention 6 + dense MLP 4) in bf16 on one GPU: no quantisation or all-reduce kernels
    assert float(eager_launches(llama8b, chip, "bf16", Shapes.of(1))) == 32 * 10
    deepseek = load_model(catalog, "deepseek-v3")
    # fp8 at TP8: 3 dense layers of (MLA 13 + 5 quant + AR) + (MLP 4 + 2 quant + AR), 58 MoE layers of the same
    # attention + (MoE 8 + 2 quant + shared 4 + 2 quant + AR)
    assert float(eager_launches(deepseek, chip, "fp8", Shapes.of(8))) == 3 * (19 + 7) + 58 * (19 + 17)
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=8192, weight_precision="bf16", kv_precision="bf16")
    steps = setup_replica(catalog, llama8b, hw.system("h100-sxm"), "sglang", plan, 512.0, 128.0).steps
    eng = engine_profile(catalog, "sglang", chip.family)
    assert steps.eager_floor == pytest.approx(320 * eng.eager_launch_s) and steps.eager_floor > 0.02
    assert steps.prompt_time(16, 1, 0.0, 136.0) == pytest.approx(steps.fixed + steps.seq_time(1) + steps.eager_floor)
    long = steps.time(8192, 1, 0.0, 8192 * 8193 / 2)
    assert long > steps.fixed + steps.seq_time(1) + steps.eager_floor
    assert steps.prompt_time(8192, 1, 0.0, 8192 * 8193 / 2) == long
    compiled = setup_replica(catalog, llama8b, hw.system("h100-sxm"), "vllm", plan, 512.0, 128.0).steps
    assert compiled.eager_floor == 0.0 and compiled.prompt_time(16, 1, 0.0, 136.0) == compiled.time(16, 1, 0.0, 136.0)


def test_a_deployment_sets_whether_its_prompt_iterations_replay_graphs(catalog: Catalog, hw: Hardware) -> None:
    """piecewise_graphs: True drops an eager engine's launch floor; False gives an engine that captures its prompt
    iterations by default (vLLM) its uncaptured launch time, 45 us a kernel (vLLM issue #45709: Qwen3-30B-A3B at
    TP4, 35.20 ms a host-bound step over its 768 kernels), and leaves an eager engine's own (SGLang's 69 us)."""
    llama8b, h100 = load_model(catalog, "llama-3.1-8b"), hw.system("h100-sxm")
    qwen = load_model(catalog, "qwen3-30b-a3b")
    assert float(eager_launches(qwen, h100.chip, "bf16", Shapes.of(4))) == 768  # 48 x (GQA 6 + AR, MoE 8 + AR)
    assert engine_profile(catalog, "vllm", "hopper").uncaptured_launch_s == pytest.approx(45e-6)

    def floor(engine: str, graphs: bool | None) -> float:
        plan = ReplicaPlan(max_batch=64, max_tokens=8192, weight_precision="bf16", piecewise_graphs=graphs)
        return setup_replica(catalog, llama8b, h100, engine, plan, 512.0, 128.0).steps.eager_floor

    assert floor("vllm", None) == floor("vllm", True) == 0.0
    assert floor("vllm", False) == pytest.approx(320 * 45e-6)  # 32 layers x 10 kernels
    assert floor("sglang", None) == floor("sglang", False) == pytest.approx(320 * 69e-6)
    assert floor("sglang", True) == 0.0
    with pytest.raises(ChipwiseError, match="trtllm-engine runs its prompt iterations only as compiled graphs"):
        floor("trtllm-engine", False)  # a TensorRT engine has no CUDA graphs to turn off
    labels = [ReplicaPlan(max_batch=8, piecewise_graphs=g).label() for g in (None, True, False)]
    assert labels == ["TP1 b8", "TP1 b8 pcg", "TP1 b8 nopcg"]


@pytest.fixture(scope="module")
def eager_steps(catalog: Catalog, hw: Hardware) -> StepModel:
    """DeepSeek-V3 fp8 on 8 H200 with SGLang (TP8 EP8): prompt iterations run eagerly."""
    plan = ReplicaPlan(tp=8, ep=8, max_batch=64, max_tokens=16384, weight_precision="fp8", kv_precision="fp8")
    deepseek = load_model(catalog, "deepseek-v3")
    return setup_replica(catalog, deepseek, hw.system("h200"), "sglang", plan, 1024.0, 256.0).steps


@settings(max_examples=40, deadline=None)
@given(tokens=st.integers(1, 16384), seqs=st.integers(1, 64), context=st.floats(0.0, 1e6))
def test_an_eager_prompt_iteration_is_never_faster_than_its_parts(
    tokens: int, seqs: int, context: float, eager_steps: StepModel
) -> None:
    """prompt_time is the longer of the device iteration and the launches: never below either, equal to one."""
    steps = eager_steps
    pairs = tokens * (tokens + 1) / 2.0
    t = steps.time(tokens, seqs, context, pairs)
    floor = steps.fixed + steps.seq_time(seqs) + steps.eager_floor
    got = steps.prompt_time(tokens, seqs, context, pairs)
    assert got >= t and got >= floor and got in (t, floor)


def test_blockwise_factor_prices_only_a_compiled_context_encodings_experts(catalog: Catalog, hw: Hardware) -> None:
    """NxD runs a context encoding's experts in its blockwise kernel and token generation's in other matmuls: the
    engine's moe_block_scale divides the first only. Its experts' time goes as 1 / factor (fixed launch costs aside:
    at 1/2 it doubles, at 1/4 it quadruples, so the second step adds three times the first), and a token-generation
    step of the compiled slots costs the same whatever the factor (Qwen3-30B-A3B, TP4 on Trn2)."""
    system = hw.system("trn2")
    model = load_model(catalog, "qwen3-30b-a3b")
    base = engine_profile(catalog, "neuron", system.chip.family)
    assert base.moe_compiled and base.moe_block_scale == 1.0
    dev, topo = serving_device(device_of(system), base), topology_of(system)

    def moe(factor: float, tokens: float, slots: float = 8.0) -> float:
        eng = replace(base, moe_block_scale=factor)
        costs = token_costs(model, dev, topo, eng, "bf16", Shapes.of(4), np.asarray(tokens), decode_slots=slots)
        return float(costs["moe"])

    prompt = 1500.0  # 12,000 routed copies: blockwise
    half, quarter = moe(0.5, prompt) - moe(1.0, prompt), moe(0.25, prompt) - moe(1.0, prompt)
    assert half > 0.0 and quarter == pytest.approx(3.0 * half, rel=1e-9)
    assert moe(0.25, 8.0) == moe(1.0, 8.0)  # 8 slots' 64 copies: selective loading
    assert moe(0.25, 128.0, 128.0) == moe(1.0, 128.0, 128.0)  # 128 slots' 1,024 copies: all experts, not blockwise


def test_sglang_default_memory_fraction_follows_its_reserve_heuristic() -> None:
    """SGLang's --mem-fraction-static when unset: 1 - reserved / memory (MiB), by hand."""
    h100, b200 = 81559 * 2**20, 183359 * 2**20
    # H100, TP1: 512 + 1.5 x 8,192 + 2 x 256 + 1/8 x 1,024 = 13,440 MiB
    assert float(sglang_static_fraction(h100, 8192, 256, 1, 1, False)) == round((81559 - 13440) / 81559, 3) == 0.835
    # B200, TP8: 512 + 1.5 x 16,384 + 2 x 512 + 1,024 = 27,136 MiB
    assert float(sglang_static_fraction(b200, 16384, 512, 8, 1, False)) == round((183359 - 27136) / 183359, 3)
    # a small reserve is raised to 10 GiB on a GPU above 60 GiB; a drafter adds 2 GiB
    assert float(sglang_static_fraction(h100, 2048, 8, 1, 1, False)) == round((81559 - 10240) / 81559, 3)
    assert float(sglang_static_fraction(h100, 2048, 8, 1, 1, True)) == round((81559 - 12288) / 81559, 3)
    # attention DP over 8 ranks with a 512-graph batch: 512 x 8 x 4.5 MiB more (vectorised over the ranks)
    got = sglang_static_fraction(b200, 16384, 512, np.asarray([8, 8]), np.asarray([1, 8]), False)
    assert float(got[1]) == round((183359 - 27136 - 512 * 8 * 4.5) / 183359, 3) and float(got[1]) < float(got[0])


def test_sglang_kv_pool_is_its_static_share_of_free_memory_less_the_weights(catalog: Catalog, hw: Hardware) -> None:
    """SGLang (profile_max_num_token): kv = f x (memory free at start-up) - weights; its activations live in the
    1 - f left out, so a larger prefill budget does not shrink the pool. vLLM's pool holds them."""
    system = hw.system("b200")
    model = load_model(catalog, "llama-3.1-70b")
    sglang = replace(engine_profile(catalog, "sglang", system.chip.family), memory_fraction=0.85)
    dev = serving_device(device_of(system), sglang)
    shapes = Shapes.of(4)
    mem = replica_memory(model, dev, sglang, shapes, "fp8", "fp8", 16384, 256, 2048.0)
    expected = 0.85 * (dev.hbm_capacity - dev.eff.reserved_memory_bytes) - float(mem.weights)
    assert float(mem.kv_memory) == pytest.approx(expected, rel=1e-12)
    bigger = replica_memory(model, dev, sglang, shapes, "fp8", "fp8", 131072, 256, 2048.0)
    assert float(bigger.kv_memory) == pytest.approx(float(mem.kv_memory), rel=1e-12)
    vllm = engine_profile(catalog, "vllm", system.chip.family)
    small, large = (replica_memory(model, dev, vllm, shapes, "fp8", "fp8", t, 256, 2048.0) for t in (16384, 131072))
    assert float(large.kv_memory) < float(small.kv_memory)
    # unset (0), the fraction is SGLang's default for the deployment, its CUDA graphs captured up to its batch of 256
    default = replica_memory(model, dev, replace(sglang, memory_fraction=0.0), shapes, "fp8", "fp8", 16384, 256, 2048.0)
    fraction = sglang_static_fraction(dev.hbm_capacity, 16384, 256, 4, 1, False)
    assert float(default.kv_memory) == pytest.approx(
        float(fraction) * (dev.hbm_capacity - dev.eff.reserved_memory_bytes) - float(default.weights), rel=1e-12
    )


def test_a_chunked_layer_attends_to_half_a_chunk_past_its_first(catalog: Catalog) -> None:
    """Llama 4 Scout's chunked layers (8,192-token chunks, 36 of 48): past the first chunk a decoding query reads
    its own chunk's earlier keys, (8,192 + 1) / 2 on average, while the layer keeps a whole chunk of cache; within
    the first chunk both are the context. They had been priced as windows of 8,192 (twice the reads)."""
    from chipwise.serve.iteration import attended_share, window_share

    scout = load_model(catalog, "llama-4-scout")
    chunked = next(g for g in scout.groups if g.chunked)
    assert attended_share(chunked, 32768.0) == pytest.approx(4096.5 / 32768.0)
    assert window_share(chunked, 32768.0) == pytest.approx(8192.0 / 32768.0)  # KV kept: one chunk
    assert attended_share(chunked, 4096.0) == window_share(chunked, 4096.0) == 1.0
    full = next(g for g in scout.groups if not g.chunked)
    assert attended_share(full, 32768.0) == 1.0
