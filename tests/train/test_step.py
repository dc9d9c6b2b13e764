"""Step time: pipeline bubbles and hand-offs, data-parallel, expert and context-parallel collectives by hand (full
recompute reruns the ring exchange), MFU accounting, invariants, vectorisation, and the plan search (ranked by an
objective's figure, the faster of equal plans first)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.planner.training import make_job
from chipwise.train.data_parallel import dp_time
from chipwise.train.plans import MIN_RANK_USE, batch_bound, check_partial_plan, check_plan, enumerate_plans, from_dicts
from chipwise.train.search import memory_fix, search_plans
from chipwise.train.step import StepResult, train_step
from chipwise.workload import load_model
from chipwise.workload.model import ModelSpec
from chipwise.workload.training import TrainingJob


def _run(
    catalog: Catalog,
    hw: Hardware,
    plans: Sequence[Mapping[str, object]],
    chips: int,
    model: str = "gpt3-175b",
    chip: str = "h100-sxm",
    gbs: int = 1024,
    seq: int = 2048,
    precision: str = "fp8",
    peak_scale: float = 1.0,
) -> StepResult:
    spec = load_model(catalog, model)
    system = hw.system(chip)
    dev = device_of(system)
    if peak_scale != 1.0:
        dev = replace(dev, compute_scale=dev.compute_scale * peak_scale)
    job = TrainingJob(spec, seq, gbs, precision)
    return train_step(spec, job, dev, topology_of(system), from_dicts(plans), chips)


def test_pipeline_bubble_fraction(catalog: Catalog, hw: Hardware) -> None:
    """1F1B: bubble = (pp - 1) / (vpp m) of the ideal time (Narayanan et al. 2021)."""
    plans = [
        {"tp": 8, "pp": 8, "dp": 8, "vpp": v, "microbatch": 1, "zero": 1, "recompute": "selective"} for v in (1, 2, 4)
    ]
    r = _run(catalog, hw, plans, 512)
    m = 1024 / 8
    ideal = r.step_time - r.breakdown["bubble"] - r.breakdown["dp_comm"] - r.breakdown["optimizer"]
    ideal = ideal - 0.0  # step overhead is inside 'overhead', counted once per step
    for i, v in enumerate((1, 2, 4)):
        t_mb = r.breakdown["bubble"][i] * v / 7
        assert r.breakdown["bubble"][i] == pytest.approx(7 / v * t_mb)
        assert r.breakdown["bubble"][i] / (m * t_mb) == pytest.approx(7 / (v * m))


def test_mfu_accounting(catalog: Catalog, hw: Hardware) -> None:
    """MFU = tokens/s x 6N-style model FLOPs per token / (chips x dense peak)."""
    r = _run(catalog, hw, [{"tp": 8, "pp": 8, "dp": 8, "vpp": 4, "zero": 1, "recompute": "none"}], 512)
    spec = load_model(catalog, "gpt3-175b")
    flops = spec.training_flops_per_token(2048)
    assert float(r.mfu[0]) == pytest.approx(float(r.tokens_per_s[0]) * flops / (512 * 1978.9e12), rel=1e-6)
    assert 0.2 < float(r.mfu[0]) < 0.7


def test_batch_of_plans_equals_plans_one_by_one(catalog: Catalog, hw: Hardware) -> None:
    plans = [
        {"tp": 4, "pp": 8, "dp": 16, "vpp": 6, "microbatch": 2, "zero": 1, "recompute": "selective"},
        {"tp": 8, "pp": 4, "dp": 16, "vpp": 1, "microbatch": 1, "zero": 2, "recompute": "full"},
        {"tp": 2, "pp": 16, "dp": 16, "vpp": 2, "microbatch": 4, "zero": 0, "recompute": "none"},
    ]
    together = _run(catalog, hw, plans, 512)
    for i, p in enumerate(plans):
        alone = _run(catalog, hw, [p], 512)
        assert float(alone.step_time[0]) == pytest.approx(float(together.step_time[i]), rel=1e-12)
        assert float(alone.memory.total[0]) == pytest.approx(float(together.memory.total[i]), rel=1e-12)


plan_strategy = st.fixed_dictionaries(
    {
        "tp": st.sampled_from([1, 2, 4, 8]),
        "pp": st.sampled_from([1, 2, 4, 8]),
        "vpp": st.sampled_from([1, 2]),
        "microbatch": st.sampled_from([1, 2]),
        "zero": st.sampled_from([0, 1, 2]),
        "recompute": st.sampled_from(["none", "selective", "full"]),
    }
)


@settings(max_examples=50, deadline=None)
@given(plan=plan_strategy, scale=st.floats(1.01, 4.0), model=st.sampled_from(["llama-3.1-70b", "mixtral-8x7b"]))
def test_more_peak_flops_never_slower(
    catalog: Catalog, hw: Hardware, plan: dict[str, object], scale: float, model: str
) -> None:
    tp, pp = int(plan["tp"]), int(plan["pp"])  # type: ignore[call-overload]
    if plan["vpp"] != 1 and pp == 1:
        return
    p = {**plan, "dp": 256 // (tp * pp)}
    base = _run(catalog, hw, [p], 256, model=model, gbs=512, seq=4096, precision="bf16")
    fast = _run(catalog, hw, [p], 256, model=model, gbs=512, seq=4096, precision="bf16", peak_scale=scale)
    assert float(fast.step_time[0]) <= float(base.step_time[0]) * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(dp=st.sampled_from([8, 16, 32, 64, 128]))
def test_more_chips_at_fixed_work_per_chip_never_slower_per_token(catalog: Catalog, hw: Hardware, dp: int) -> None:
    """Weak scaling: double the data-parallel chips and the batch; throughput per chip may drop (communication)
    but never rises above the single-node figure, and total throughput never falls."""
    small = _run(
        catalog,
        hw,
        [{"tp": 8, "pp": 1, "dp": dp, "zero": 1, "recompute": "full"}],
        8 * dp,
        model="llama-3.1-70b",
        gbs=2 * dp,
        seq=4096,
        precision="bf16",
    )
    big = _run(
        catalog,
        hw,
        [{"tp": 8, "pp": 1, "dp": 2 * dp, "zero": 1, "recompute": "full"}],
        16 * dp,
        model="llama-3.1-70b",
        gbs=4 * dp,
        seq=4096,
        precision="bf16",
    )
    assert float(big.tokens_per_s[0]) >= float(small.tokens_per_s[0])
    assert float(big.tokens_per_s_per_chip[0]) <= float(small.tokens_per_s_per_chip[0]) * (1 + 1e-9)


def test_search_returns_the_fastest_feasible_plan(catalog: Catalog, hw: Hardware) -> None:
    spec = load_model(catalog, "gpt3-175b")
    job = TrainingJob(spec, 2048, 1536, "fp8")
    search = search_plans(spec, job, hw.system("h100-sxm"), 1024)
    res = search.result
    feasible = np.flatnonzero(res.feasible)
    assert search.evaluated > 5000 and search.feasible == feasible.size
    assert search.best in feasible
    assert float(res.step_time[search.best]) == pytest.approx(float(res.step_time[feasible].min()))
    assert float(res.memory.total[search.best]) <= hw.chip("h100-sxm").hbm_capacity


def test_partial_plan_is_completed_by_the_search(catalog: Catalog, hw: Hardware) -> None:
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512, "bf16")
    search = search_plans(spec, job, hw.system("h100-sxm"), 512, fixed={"tp": 8})
    assert set(search.result.plans.tp.tolist()) == {8}


def test_model_that_does_not_fit_is_infeasible(catalog: Catalog, hw: Hardware) -> None:
    spec = load_model(catalog, "llama-3.1-405b")
    job = TrainingJob(spec, 8192, 16, "bf16")
    with pytest.raises(InfeasibleError, match="does not fit"):
        search_plans(spec, job, hw.system("a100-40gb"), 8)


@pytest.mark.parametrize(
    ("plan", "needle"),
    [
        ({"tp": 8, "pp": 4, "dp": 4}, "product|= 128"),
        ({"tp": 128, "pp": 1, "dp": 4}, "heads"),
        ({"tp": 8, "pp": 1, "dp": 64, "recompute": "sometimes"}, "unknown recompute mode"),
        ({"tp": 8, "pp": 1, "dp": 64, "zero": 5}, "zero must be"),
        ({"tp": 8, "pp": 1, "dp": 64, "ep": 2}, "dense model"),
    ],
)
def test_bad_plans_are_one_clear_error(catalog: Catalog, plan: dict[str, object], needle: str) -> None:
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 4096, 512, "bf16")
    with pytest.raises(ChipwiseError, match=needle) as info:
        check_plan(plan, spec, job, 512)
    assert "\n" not in str(info.value)


def test_enumeration_respects_divisibility(catalog: Catalog) -> None:
    spec = load_model(catalog, "mixtral-8x7b")
    job = TrainingJob(spec, 4096, 256, "bf16")
    plans = enumerate_plans(spec, job, 64, 8)
    assert len(plans) > 100
    used = plans.tp * plans.pp * plans.dp * plans.cp
    bound = batch_bound(plans.dp, plans.mb, plans.pp, plans.vpp, 256)
    assert np.all((used <= 64) & ((used >= MIN_RANK_USE * 64) | bound)) and np.any(used == 64)
    assert np.all(8 % plans.ep == 0)
    assert np.all(256 % (plans.dp * plans.mb) == 0)


def test_divisors_of_a_huge_batch_come_at_once() -> None:
    """divisors() tried every number up to n: a 1e15-token global batch (1.2e11 sequences) hung plan train and the
    web server's worker; 2**40's forty-one divisors (a trillion trials before) come in a million."""
    from chipwise.perf.vector import divisors  # the plans' divisors

    assert divisors(12) == [1, 2, 3, 4, 6, 12] and divisors(49) == [1, 7, 49] and divisors(1) == [1]
    assert divisors(2**40) == [2**i for i in range(41)]


@pytest.mark.parametrize("chip", ["a100-80gb", "tpu-v5p", "trn1"])
def test_fp8_without_faster_fp8_units_trains_as_bf16(catalog: Catalog, hw: Hardware, chip: str) -> None:
    """An A100 has no FP8 units; TPU v5p and Trainium1 list FP8 at their BF16 rate (no FP8 speed-up). An fp8 run
    computes in bf16 there, so it trains and fits exactly as bf16 does: TPU v5p had read 18% slower (an unfitted fp8
    efficiency, and quantisation kernels), and an A100 plan printed as fitting in 74 GiB needed 82 GiB (1-byte
    working weights the chip cannot multiply)."""
    plan = [{"tp": 8, "pp": 4, "dp": 2, "microbatch": 1, "zero": 1, "recompute": "selective"}]
    fp8 = _run(catalog, hw, plan, 64, model="llama-3.1-70b", chip=chip, gbs=64, seq=4096, precision="fp8")
    bf16 = _run(catalog, hw, plan, 64, model="llama-3.1-70b", chip=chip, gbs=64, seq=4096, precision="bf16")
    assert hw.system(chip).chip.native_precision("fp8") == "bf16"
    assert float(fp8.step_time[0]) == pytest.approx(float(bf16.step_time[0]), rel=1e-12)
    assert float(fp8.memory.total[0]) == pytest.approx(float(bf16.memory.total[0]), rel=1e-12)


def test_a_narrow_format_computes_in_its_own_units_only_where_they_are_faster(hw: Hardware) -> None:
    """Trainium3 lists MXFP4 at its FP8 rate: fp4 computes as fp8. An H100's INT8 runs at its FP8 rate but is its
    own format (only a wider format takes over); a B200's FP4 is twice its FP8."""
    assert hw.system("trn3").chip.native_precision("fp4") == "fp8"
    assert hw.system("h100-sxm").chip.native_precision("int8") == "int8"
    assert hw.system("b200").chip.native_precision("fp4") == "fp4"
    assert hw.system("h100-sxm").chip.native_precision("fp8") == "fp8"


def test_a_context_parallel_ring_past_the_node_waits_for_the_network(catalog: Catalog, hw: Hardware) -> None:
    """Llama 3.1 8B at 8K tokens on H100s, TP4 x CP8: the ring's eight members, four ranks apart, span 32 GPUs, four
    8-GPU nodes, so each step waits for hops over the network; it had been priced at NVLink speed (its stride, 4,
    is inside a node). TP4 x CP2 stays within a node."""
    plans = [
        {"tp": 4, "cp": 8, "dp": 2, "pp": 1, "microbatch": 1, "zero": 1, "recompute": "none"},
        {"tp": 4, "cp": 2, "dp": 8, "pp": 1, "microbatch": 1, "zero": 1, "recompute": "none"},
    ]
    r = _run(catalog, hw, plans, 64, model="llama-3.1-8b", gbs=64, seq=8192, precision="bf16")
    wide, narrow = (float(v) for v in r.breakdown["cp_comm"])
    assert wide > 0.3 and narrow < 0.05


def test_a_partial_plan_with_an_ep_that_splits_experts_is_the_full_plans_error(catalog: Catalog, hw: Hardware) -> None:
    """Mixtral 8x7B has 8 experts: {ep: 16} on 64 H100s had been completed to TP1 DP64 EP16 and priced with half an
    expert a rank (16.66 s), where the same plan given in full was rejected. Both now give one error."""

    spec = load_model(catalog, "mixtral-8x7b")
    job = TrainingJob(spec, 4096, 256, "bf16")
    message = "invalid plan: ep=16 must divide the 8 experts. Fix: choose an ep that divides them."
    with pytest.raises(ChipwiseError) as full:
        check_plan({"tp": 1, "pp": 1, "dp": 64, "ep": 16}, spec, job, 64)
    with pytest.raises(ChipwiseError) as partial:
        check_partial_plan({"ep": 16}, spec, job, 64)
    assert str(full.value) == str(partial.value) == message
    with pytest.raises(ChipwiseError, match="must divide the 8 experts"):
        search_plans(spec, job, hw.system("h100-sxm"), 64, fixed={"ep": 16})
    assert len(enumerate_plans(spec, job, 64, 8, fixed={"ep": 16})) == 0
    assert set(enumerate_plans(spec, job, 64, 8, fixed={"ep": 8}).ep.tolist()) == {8}


def test_selective_recompute_reruns_no_attention(catalog: Catalog, hw: Hardware) -> None:
    """Meta's Llama 3.1 405B 128K-context plan (16,384 H100s, TP8 CP16 PP16 DP8 vpp8): selective recompute keeps
    Q, K, V and the attention output, so its attention time is that of no recompute, 10.49 s a step (it had been
    charged a second attention forward, 13.49 s, for no memory saved). Only the dropped norms and MLP activation
    are rerun: element-wise time grows by one forward's worth, 1/3 of no recompute's (forward + 2 x backward).
    Full recompute reruns the attention forward too: 4.5/3.5 of it."""
    base = {"tp": 8, "pp": 16, "dp": 8, "cp": 16, "vpp": 8, "microbatch": 1, "zero": 1}
    plans = [{**base, "recompute": r} for r in ("none", "selective", "full")]
    r = _run(catalog, hw, plans, 16384, model="llama-3.1-405b", gbs=128, seq=131072, precision="bf16")
    none, selective, full = (float(v) for v in r.breakdown["attention"])
    assert none == pytest.approx(10.49, abs=0.01)
    assert selective == pytest.approx(none, rel=1e-12)
    assert full == pytest.approx(none * 4.5 / 3.5, rel=1e-12)
    elem_none, elem_sel, _ = (float(v) for v in r.breakdown["memory_bound"])
    head = elem_none - 3.0 * (elem_sel - elem_none)  # the LM head's element-wise work is not recomputed
    assert 0.0 < head < elem_none and elem_sel - elem_none == pytest.approx(0.0363, abs=5e-4)
    assert float(r.step_time[1]) - float(r.step_time[0]) < 0.05  # 18.01 s against 21.40 s before


def test_fsdp_with_pipelining_is_planned_and_gathers_once_a_step(catalog: Catalog, hw: Hardware) -> None:
    """torchtitan's Llama 3.1 405B 3D run: 512 H100 (96 GB), FSDP8 x TP8 x PP8, fp8, 8K tokens, 256 sequences.
    FSDP with PP had been filtered out of the search ("no valid parallel plan"). As torchtitan runs it (no reshard
    after forward under PP, gradients synced on the last micro-batch), a stage gathers its weights once a step and
    keeps them, with unsharded fp32 gradients: p local parameters cost 1 (fp8 gather) + 4 bytes each on top of
    the sharded 16/8, and the data-parallel traffic is ZeRO-1's, not 32 micro-batches' re-gathers."""
    from chipwise.train.memory import local_params

    spec = load_model(catalog, "llama-3.1-405b")
    job = TrainingJob(spec, 8192, 256, "fp8")
    fixed = {"tp": 8, "pp": 8, "dp": 8, "zero": 3}
    check_plan(fixed, spec, job, 512)
    found = enumerate_plans(spec, job, 512, 8, fixed=fixed)
    assert len(found) > 0 and set(found.zero.tolist()) == {3} and set(found.pp.tolist()) == {8}
    plans = [{**fixed, "zero": z, "recompute": "full", "microbatch": 1} for z in (3, 1)]
    r = _run(catalog, hw, plans, 512, model="llama-3.1-405b", chip="h100-96gb", gbs=256, seq=8192, precision="fp8")
    p = float(local_params(spec, from_dicts(plans[:1]))[0][0])
    assert p == pytest.approx(6.638e9, rel=1e-3)  # 16 of 126 layers and the 2.1e9 embedding, over TP8
    assert float(r.memory.weights[0]) == pytest.approx(4.0 * p / 8 + 1.0 * p, rel=1e-12)
    assert float(r.memory.gradients[0]) == pytest.approx(4.0 * p / 8 + 4.0 * p, rel=1e-12)
    assert float(r.memory.total[0]) / 2**30 == pytest.approx(51.74, abs=0.01)
    assert float(r.breakdown["dp_comm"][0]) == pytest.approx(float(r.breakdown["dp_comm"][1]), rel=0.05)
    # fp8 working weights are gathered in fp8 (164.1 while the gather was priced at 2 bytes)
    assert float(r.tokens_per_s[0]) / 512 == pytest.approx(165.1, abs=0.1)


def test_a_fleet_finds_the_plans_of_a_smaller_one_it_holds(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B, 512 sequences of 8K on H100s: 896 chips run TP2 PP7 DP16 CP4 at 633,769 tokens/s. 1,000 chips
    hold that plan (104 idle, within MIN_RANK_USE) but pp=7 divides neither 1,000 nor 80 layers and was not tried:
    the search found TP2 PP5 DP16 CP4 on 640 chips, 513,480 tokens/s. (Re-pinned 633,762.2 -> 633,757.9: its gathers'
    rings step through every member and its all-reduces climb log2i(nodes) network steps, NCCL's tuning.cc.)"""
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512, "bf16")
    best = {}
    for chips in (896, 1000):
        search = search_plans(spec, job, hw.system("h100-sxm"), chips)
        best[chips] = float(search.result.tokens_per_s[search.best])
    assert best[896] == pytest.approx(633_757.9, rel=1e-6)
    assert best[1000] == pytest.approx(best[896], rel=1e-9)
    # and a user may fix that depth: the rest of the plan leaves the same ranks idle (it had been refused, 'does not
    # divide the 1000 ranks', though the search chose that plan itself); more stages than ranks stay refused
    fixed = search_plans(spec, job, hw.system("h100-sxm"), 1000, fixed={"pp": 7})
    assert float(fixed.result.tokens_per_s[fixed.best]) == pytest.approx(best[896], rel=1e-9)
    with pytest.raises(ChipwiseError, match=r"multiply to 1,?200, more than the 1000 ranks"):
        check_partial_plan({"pp": 8, "tp": 150}, spec, job, 1000)


@pytest.mark.parametrize("zero", [1, 3])
def test_whole_nvl72_racks_train_about_as_fast_per_chip_as_128_gpus(catalog: Catalog, hw: Hardware, zero: int) -> None:
    """Llama-3.1-70B TP8 on GB200 NVL72, one 2048-token sequence per TP group: 144 and 216 GPUs are two and three
    whole racks. Their data-parallel groups (18 and 27 ranks, 8 apart: 9 a rack) had been split as if spread over 9
    and 27 racks, and ran at a third or less of the per-GPU rate of 128 GPUs (ZeRO-3: 0.62 and 1.17 s a step against
    0.22)."""
    rates = [
        float(
            _run(
                catalog,
                hw,
                [{"tp": 8, "pp": 1, "dp": c // 8, "microbatch": 1, "zero": zero, "recompute": "full"}],
                c,
                model="llama-3.1-70b",
                chip="gb200-nvl72",
                gbs=c // 8,
                precision="bf16",
            ).tokens_per_s_per_chip[0]
        )
        for c in (128, 144, 216)
    ]
    assert max(rates) / min(rates) < 2.0


# Checked by hand: FSDP's expert gathers on the expert group, LoRA's model FLOPs, pipeline hand-offs across a node
# boundary, hsdp refused by name where it cannot apply, and ep as its own memory lever.


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
        t, _ = dp_time(np.array([d]), np.array([e]), plans, topo, dev, np.ones(1), z, z, z, 32, True, 2.0, "bf16")
        return float(t[0])

    if not hsdp:
        # dense: 128 ranks, 8 a node over 16 nodes (a ring's 15 network steps: NCCL runs no tree for a gather; and
        # 128 - 16 = 112 on NVLink, tuning.cc's nRanks - nNodes: re-pinned from one node's 7); experts: 16, one a node
        dense = 7 / 8 * 2 * d / b_in + 15 / 16 * 2 * d / (8 * b_out) + 112 * a_in + 15 * a_out
        ag = dense + 15 / 16 * 2 * e / b_out + 15 * a_out
        lat = 112 * a_in + 30 * a_out  # one gather's latency, paid again by each of the 32 layers' 3 collectives
        assert exposed(1) == pytest.approx(2 * ag, rel=1e-9)
        # it had been 0.077 s a gather, not 0.281, and one latency for the whole model's gathers
        assert exposed(3) == pytest.approx(3 * ag + 93 * lat + (ag - lat) / 32 + lat, rel=1e-9)
        assert ag == pytest.approx(0.281, rel=0.01)
        assert exposed(3) > exposed(1)
    else:
        ag = 7 / 8 * 2 * d / b_in + 7 * a_in + 7 / 8 * 2 * e / b_out + 7 * a_out
        # the all-reduces over 16 and 2 replicas climb trees of log2i(16) = 4 and 1 network steps (re-pinned: NCCL's
        # tuning.cc, where 2 ceil(log2 16) = 8 had been paid)
        cross = 2 * (15 / 16 * 2 * d / 8 / b_out + 4 * a_out) + 2 * (1 / 2 * 2 * e / 8 / b_out + a_out)
        lat = 7 * a_in + 7 * a_out
        assert exposed(3) == pytest.approx(3 * ag + 93 * lat + (ag - lat) / 32 + lat + cross, rel=1e-9)


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
    t, _ = dp_time(np.array([d]), z, plans, topo, dev, np.ones(1), z, z, z, 32, True, 2.0, "bf16")
    expected = {0: 2 * one, 1: 2 * one, 2: 2 * one, 3: 3 * one + 93 * 7e-6 + (one - 7e-6) / 32 + 7e-6}[zero]
    assert float(t[0]) == pytest.approx(expected, rel=1e-9)


def test_zero3_with_experts_is_not_priced_below_zero1(catalog: Catalog, hw: Hardware) -> None:
    """The review's plan (seq 2048, 2,048 sequences, m = 16): 16 x 3 x 0.281 s of gathers and scatters against
    16 x 0.444 s of compute exposes about 6.71 s, a 14.1 s step (a ring's latencies each layer); it had read
    0.0024 s and 9.02 s, below ZeRO-1's 0.136 s of DP traffic. (With the router priced as a training GEMM of 8
    columns, 0.1 s a micro-batch more compute had hidden 1.6 s more: 4.64 s exposed, the same step.)"""
    plans = [{**MIXTRAL, "zero": z} for z in (3, 1)]
    r, _ = _step(catalog, hw, "mixtral-8x7b", 128, 2048, 2048, plans)
    z3, z1 = (float(v) for v in r.breakdown["dp_comm"])
    assert z3 >= z1
    assert z3 == pytest.approx(6.708, rel=0.03)
    assert float(r.step_time[0]) == pytest.approx(14.13, rel=0.02)


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
    head = "free memory with the knobs the plan fixes: recompute full, a larger tp or pp with a smaller dp "
    head += "(tp x pp x dp x cp may not exceed the 2,048 ranks)"
    tail = "; or use more chips (with a larger dp), a chip with more memory or a shorter sequence"
    ep = ", a larger ep (up to tp x dp x cp = 128 and dividing the 256 experts)"
    assert memory_fix({**plan, "ep": 64}, spec, 2048) == head + ep + tail
    assert memory_fix({**plan, "ep": 128}, spec, 2048) == head + tail


# ---------------------------------------------------------- one compute window hides expert and data-parallel traffic

DEEPSEEK_B300 = {
    "kind": "train",
    "model": "deepseek-v3",
    "hardware": "b300",
    "chips": 1024,
    "seq_len": 4096,
    "tokens": 1e12,
    "plan": {"tp": 2, "pp": 1, "dp": 512, "cp": 1, "ep": 32, "vpp": 1, "microbatch": 2, "zero": 1, "sp": True},
}


def test_a_lower_precision_with_a_higher_peak_is_never_slower_on_a_moe_plan() -> None:
    """The expert all-to-all and the data-parallel reduce-scatter each hid themselves behind all of the same
    backward: fp4 (3.1x fp8's peak on B300) read 1.141 s a step against fp8's 1.038 s on the same plan."""
    fp8 = cw.predict({**DEEPSEEK_B300, "precision": "fp8"})
    fp4 = cw.predict({**DEEPSEEK_B300, "precision": "fp4"})
    assert fp4["breakdown"]["compute"] < fp8["breakdown"]["compute"]
    assert fp4["step_time_s"] <= fp8["step_time_s"]


@pytest.mark.parametrize("zero", [1, 2, 3])  # ZeRO-0's replicas of 671B do not fit
def test_a_faster_chip_is_never_slower_at_a_fixed_moe_plan(zero: int) -> None:
    """More FLOP/s at the same plan never lengthens a step: the compute a faster chip saves exposes at most as much
    of the traffic it hid (one overlap budget, shared by the all-to-all and the data-parallel collectives)."""
    scenario = {**DEEPSEEK_B300, "precision": "fp8", "plan": {**DEEPSEEK_B300["plan"], "zero": zero}}  # type: ignore[dict-item]
    steps = [cw.predict(scenario, sets=[f"b300.flops.fp8=x{x}"])["step_time_s"] for x in (1.0, 1.5, 2.0, 3.0, 6.0)]
    assert steps == sorted(steps, reverse=True)


def test_full_recompute_reruns_the_ring_exchange(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-8B CP64 at 32K: a K/V chunk of 512 tokens x 8 heads x 256 x 2 B = 2,097,152 B, sent 63 times at
    50 GB/s x 0.8 plus 10 us each: 3.9330 ms a layer forward. Without recompute the ring is exposed by
    3 cp - 3.5 attn per layer and micro-batch; full recompute reruns it, 4 cp - 4.5 attn (it had stayed 3 - 3.5)."""
    spec = load_model(catalog, "llama-3.1-8b")
    system = hw.system("h100-sxm")
    job = TrainingJob(spec, 32768, 4)
    base = {"tp": 1, "pp": 1, "dp": 1, "cp": 64, "microbatch": 1, "zero": 1, "sp": False}
    plans = from_dicts([{**base, "recompute": "none"}, {**base, "recompute": "full"}])
    r = train_step(spec, job, device_of(system), topology_of(system), plans, 64)
    cp = 63 * (2_097_152 / (50e9 * 0.8) + 10e-6)
    mbs = 32 * 4  # layers x micro-batches
    attn = (3.0 * cp - r.breakdown["cp_comm"][0] / mbs) / 3.5
    assert 0.0 < attn < cp
    assert r.breakdown["cp_comm"][1] == pytest.approx(mbs * (4.0 * cp - 4.5 * attn), rel=1e-9)  # 1.590 s, not 1.181


def test_ranked_by_orders_by_the_figure_and_keeps_the_faster_of_equal_ones(catalog: Catalog, hw: Hardware) -> None:
    """PlanSearch.ranked_by orders a fleet's plans by an objective's figure (plan train's search of 8 Trn2 here, at
    the default batch make_job sets for the fleet) and keeps the faster of equal ones first."""
    spec = load_model(catalog, "llama-3.2-1b")
    search = search_plans(spec, make_job(spec, None, None, None, "bf16", None, chips=8), hw.system("trn2"), 8)
    same = search.ranked_by(np.ones(len(search.result.step_time)))
    assert np.array_equal(same.order, search.order)  # all equal: fastest first, as the search ranked them
    slowest_first = search.ranked_by(-search.result.step_time)
    assert slowest_first.best == int(search.order[np.argmax(search.result.step_time[search.order])])
    assert sorted(slowest_first.order) == sorted(search.order)  # the same feasible plans, reordered
