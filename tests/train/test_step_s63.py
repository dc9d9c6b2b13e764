"""Review L of stop 63, checked by hand: FSDP's expert gathers on the expert group, LoRA's model FLOPs, pipeline
hand-offs across a node boundary, hsdp refused by name where it cannot apply, and ep as its own memory lever."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.data_parallel import dp_time
from chipwise.train.plans import from_dicts
from chipwise.train.search import memory_fix, search_plans
from chipwise.train.step import StepResult, train_step
from chipwise.workload import load_model
from chipwise.workload.model import ModelSpec
from chipwise.workload.training import TrainingJob

MIXTRAL = {"tp": 1, "pp": 1, "dp": 128, "ep": 8, "microbatch": 1, "recompute": "none"}


def _step(
    catalog: Catalog,
    hw: Hardware,
    model: str,
    chips: int,
    seq: int,
    gbs: int,
    plans: list[dict[str, Any]],
    lora: bool = False,
) -> tuple[StepResult, ModelSpec]:
    spec = load_model(catalog, model)
    system = hw.system("p5.48xlarge")
    job = TrainingJob(spec, seq, gbs, "bf16", lora=lora)
    return train_step(spec, job, device_of(system), topology_of(system), from_dicts(plans), chips), spec


@pytest.mark.parametrize("hsdp", [0, 1])
def test_fsdp_gathers_the_experts_over_the_expert_group_by_hand(catalog: Catalog, hw: Hardware, hsdp: int) -> None:
    """Mixtral on 128 H100s, DP128 EP8: a rank's E = 45.10e9 / 8 expert parameters are sharded over the 16 ranks
    holding the same experts, 8 apart, one a node (memory.py), so FSDP gathers them over the network. At one
    micro-batch with nothing to hide behind, ZeRO-3 is 2 all-gathers + 1 reduce-scatter + the first layer's
    gather, ZeRO-1 one of each. Hybrid FSDP shards over 8 (the dense part in a node, the experts on 8 nodes) and
    all-reduces the shards over 16 dense replicas 8 apart and 2 expert replicas 64 apart."""
    system = hw.system("p5.48xlarge")
    topo, dev = topology_of(system), device_of(system)
    spec = load_model(catalog, "mixtral-8x7b")
    d, e = float(spec.dense_params), spec.expert_params / 8.0
    b_in, b_out = 450e9 * 0.82, 50e9 * 0.8
    a_in, a_out = 1e-6, 10e-6
    z = np.zeros(1)

    def exposed(zero: int) -> float:
        plans = from_dicts([{**MIXTRAL, "zero": zero, "hsdp": hsdp if zero == 3 else 0}])
        t, _ = dp_time(np.array([d]), np.array([e]), plans, topo, dev, np.ones(1), z, z, z, 32, True, 2.0)
        return float(t[0])

    if not hsdp:
        # dense: 128 ranks, 8 a node over 16 nodes (tree steps 2 ceil(log2 16) = 8); experts: 16, one a node
        dense = 7 / 8 * 2 * d / b_in + 15 / 16 * 2 * d / (8 * b_out) + 7 * a_in + 8 * a_out
        ag = dense + 15 / 16 * 2 * e / b_out + 8 * a_out
        assert exposed(1) == pytest.approx(2 * ag, rel=1e-9)
        assert exposed(3) == pytest.approx(3 * ag + ag / 32, rel=1e-9)  # it had been 0.077 s a gather, not 0.281
        assert ag == pytest.approx(0.281, rel=0.01)
        assert exposed(3) > exposed(1)
    else:
        ag = 7 / 8 * 2 * d / b_in + 7 * a_in + 7 / 8 * 2 * e / b_out + 7 * a_out
        cross = 2 * (15 / 16 * 2 * d / 8 / b_out + 8 * a_out) + 2 * (1 / 2 * 2 * e / 8 / b_out + a_out)
        assert exposed(3) == pytest.approx(3 * ag + ag / 32 + cross, rel=1e-9)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_a_dense_model_launches_no_expert_collective(catalog: Catalog, hw: Hardware, zero: int) -> None:
    """Llama-3.1-8B on 8 H100s, DP8: its data-parallel traffic is its dense parameters' alone, by hand (one node:
    7/8 of the bytes over NVLink, 7 latencies a collective). An empty expert collective had added its latency to
    every stage (77 us a step on 64 ranks)."""
    system = hw.system("p5.48xlarge")
    topo, dev = topology_of(system), device_of(system)
    d = float(load_model(catalog, "llama-3.1-8b").dense_params)
    one = 7 / 8 * 2 * d / (450e9 * 0.82) + 7 * 1e-6  # a reduce-scatter or all-gather of 2-byte values
    plans = from_dicts([{"tp": 1, "pp": 1, "dp": 8, "microbatch": 1, "zero": zero, "recompute": "none"}])
    z = np.zeros(1)
    t, _ = dp_time(np.array([d]), z, plans, topo, dev, np.ones(1), z, z, z, 32, True, 2.0)
    expected = {0: 2 * one, 1: 2 * one, 2: 2 * one, 3: 3 * one + one / 32}[zero]
    assert float(t[0]) == pytest.approx(expected, rel=1e-9)


def test_zero3_with_experts_is_not_priced_below_zero1(catalog: Catalog, hw: Hardware) -> None:
    """The review's plan (seq 2048, 2,048 sequences, m = 16): 16 x 3 x 0.281 s of gathers and scatters against
    16 x 0.555 s of compute exposes about 4.64 s, a 13.7 s step; it had read 0.0024 s and 9.02 s, below ZeRO-1's
    0.102 s of DP traffic."""
    plans = [{**MIXTRAL, "zero": z} for z in (3, 1)]
    r, _ = _step(catalog, hw, "mixtral-8x7b", 128, 2048, 2048, plans)
    z3, z1 = (float(v) for v in r.breakdown["dp_comm"])
    assert z3 >= z1
    assert z3 == pytest.approx(4.64, rel=0.03)
    assert float(r.step_time[0]) == pytest.approx(13.7, rel=0.02)


@pytest.mark.parametrize("seq", [8192, 131072])
def test_lora_model_flops_keep_attention_whole(catalog: Catalog, hw: Hardware, seq: int) -> None:
    """LoRA saves the weight gradients only: 2 x matmul + 3 x attention forward FLOPs a token (793.4e9 for
    Llama-3.1-70B at 128K, where two thirds of all of it had read 621.6e9 and MFU 12.4% for 15.8%)."""
    plan = [{"tp": 8, "pp": 1, "dp": 8, "microbatch": 1, "zero": 3, "recompute": "full"}]
    r, spec = _step(catalog, hw, "llama-3.1-70b", 64, seq, max(1, 4194304 // seq), plan, lora=True)
    expected = 2 * spec.matmul_flops_per_token_fwd() + 3 * spec.attention_flops_per_token_fwd(seq)
    assert r.model_flops_per_token == pytest.approx(expected, rel=1e-12)
    assert r.model_flops_per_token == pytest.approx({8192: 310.2e9, 131072: 793.4e9}[seq], rel=1e-3)
    full, _ = _step(catalog, hw, "llama-3.1-70b", 64, seq, max(1, 4194304 // seq), plan)
    assert full.model_flops_per_token == spec.training_flops_per_token(seq)


@pytest.mark.parametrize(("chips", "network"), [(16, True), (8, False)])
def test_a_pipeline_across_nodes_hands_off_over_the_network(
    catalog: Catalog, hw: Hardware, chips: int, network: bool
) -> None:
    """TP1 PP16 on 16 H100s: stage 7 hands its 8192 x 4096 x 2 B of activations to stage 8 on the next node, and
    takes its gradients back, over the network (1.688 ms each way), and exchanges with stage 6 on NVLink (0.183 ms):
    that stage paces the pipeline, 64 x (1.688 + 0.183) ms = 0.120 s, where NVLink's 0.0234 s had been priced.
    TP1 PP8 on one node stays on NVLink."""
    plan = [{"tp": 1, "pp": chips, "dp": 1, "vpp": 1, "microbatch": 1, "zero": 1, "recompute": "none"}]
    r, _ = _step(catalog, hw, "llama-3.1-8b", chips, 8192, 64, plan)
    s = 8192 * 4096 * 2.0
    up, out = s / (450e9 * 0.82) + 1e-6, s / (50e9 * 0.8) + 10e-6
    expected = 64 * (out + up) if network else 2 * 64 * up
    assert float(r.breakdown["pp_comm"][0]) == pytest.approx(expected, rel=1e-9)
    assert float(r.breakdown["pp_comm"][0]) == pytest.approx(0.1197 if network else 0.0234, rel=1e-3)


def test_an_interleaved_pipeline_hides_its_hand_offs_outside_fill_and_flush(catalog: Catalog, hw: Hardware) -> None:
    """TP1 PP16 on 16 H100s, 64 micro-batches: at vpp 1 each micro-batch waits for its hand-offs; interleaved
    (vpp 2) the 1F1B phase overlaps them with independent compute (Megatron-Core's overlap_p2p_comm), so the
    step is m (t_mb - hand-offs) + the bubble (pp - 1) / vpp t_mb, whose fill and flush still wait for them."""
    plans = [{"tp": 1, "pp": 16, "dp": 1, "vpp": v, "microbatch": 1, "zero": 1, "recompute": "none"} for v in (1, 2)]
    r, _ = _step(catalog, hw, "llama-3.1-8b", 16, 8192, 64, plans)
    b = r.breakdown
    fixed = device_of(hw.system("p5.48xlarge")).eff.step_overhead_s
    # the 1F1B phase: m micro-batches of what the step spends outside the bubble, DP and the optimizer
    steady = r.step_time - b["bubble"] - b["dp_comm"] - b["optimizer"] - fixed
    s = 8192 * 4096 * 2.0
    hand_offs = 64 * 2 * 0.5 * (s / (450e9 * 0.82) + 1e-6 + s / (50e9 * 0.8) + 10e-6)  # m x 2 ways, per virtual stage
    assert float(b["pp_comm"][0]) == pytest.approx(hand_offs, rel=1e-9)  # vpp 1: every micro-batch waits for them
    assert float(b["bubble"][0]) == pytest.approx(15 / 64 * steady[0], rel=1e-9)
    assert float(b["pp_comm"][1]) == 0.0  # vpp 2: a hand-off is far shorter than the compute beside it
    t_mb = (steady[1] + 2 * hand_offs) / 64  # twice the sends, one per virtual stage, back in the micro-batch
    assert float(b["bubble"][1]) == pytest.approx(15 / 2 * t_mb, rel=1e-9)  # fill and flush still wait for them


@pytest.mark.parametrize(
    ("chips", "plan", "message"),
    [
        (
            8,
            {"zero": 3, "hsdp": True},
            "invalid plan: hsdp replicates FSDP across scale-up domains of 8 ranks, and this plan's tp x cp x dp is at "
            "most 8, within one (there it is plain zero 3). Fix: set hsdp to false, or use more chips.",
        ),
        (
            64,
            {"tp": 8, "zero": 3, "hsdp": True},
            "invalid plan: hsdp shards within a scale-up domain of 8 ranks, which tp 8 fills, leaving no second "
            "data-parallel rank in it to shard over. Fix: set hsdp to false, or use a tp of at most 4.",
        ),
        (
            64,
            {"tp": 4, "pp": 2, "dp": 1, "zero": 3, "hsdp": True},
            "invalid plan: hsdp replicates FSDP across scale-up domains of 8 ranks, and this plan's tp x cp x dp is at "
            "most 4, within one (there it is plain zero 3). Fix: set hsdp to false, or use a larger dp.",
        ),
    ],
)
def test_hsdp_that_cannot_apply_is_refused_by_name(
    catalog: Catalog, hw: Hardware, chips: int, plan: dict[str, object], message: str
) -> None:
    """These had found 'no valid parallel plan ... Fix: change the chip count, the batch or the fixed plan knobs'."""
    spec = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(spec, 8192, 128, "bf16")
    with pytest.raises(ChipwiseError) as err:
        search_plans(spec, job, hw.system("h100-sxm"), chips, plan)
    assert str(err.value) == message


def test_hsdp_that_applies_is_still_searched(catalog: Catalog, hw: Hardware) -> None:
    spec = load_model(catalog, "llama-3.1-8b")
    found = search_plans(spec, TrainingJob(spec, 8192, 128, "bf16"), hw.system("h100-sxm"), 64, {"tp": 2, "hsdp": True})
    assert found.result.plans.hsdp.all() and found.feasible > 0


def test_a_larger_ep_is_its_own_memory_lever(catalog: Catalog) -> None:
    """ep splits the experts over the tp x dp x cp ranks already there: it needs no smaller dp (ep 128 at dp 128
    fits DeepSeek-V3 in 84.1 GiB where ep 64 needs 85.7); at ep 128 no larger ep divides both, so none is offered."""
    spec = load_model(catalog, "deepseek-v3")
    plan = {"tp": 1, "pp": 16, "dp": 128, "vpp": 1, "microbatch": 1, "zero": 1, "recompute": "selective"}
    head = "free memory with the knobs the plan fixes: zero 2, recompute full, a larger tp or pp with a smaller dp "
    head += "(tp x pp x dp x cp may not exceed the 2,048 ranks)"
    tail = "; or use more chips (with a larger dp), a chip with more memory or a shorter sequence"
    ep = ", a larger ep (up to tp x dp x cp = 128 and dividing the 256 experts)"
    assert memory_fix({**plan, "ep": 64}, spec, 2048) == head + ep + tail
    assert memory_fix({**plan, "ep": 128}, spec, 2048) == head + tail
