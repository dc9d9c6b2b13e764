"""Training plans: balanced interleaving degrees, plans that leave ranks the batch cannot use idle, such plans given
back, the chips a plan on multi-core chips occupies, fp8 FSDP gathers, a reserve past the device's memory, and whole
MoE layers on a pipeline stage."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from chipwise import api
from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import Hardware
from chipwise.interfaces.cli.train_views import _cores_note
from chipwise.perf.device import device_of, topology_of
from chipwise.train.data_parallel import dp_time
from chipwise.train.memory import local_params, memory_per_rank
from chipwise.train.plans import (
    check_partial_plan,
    check_plan,
    enumerate_plans,
    from_dicts,
    stage_group_layers,
    vpp_options,
)
from chipwise.train.search import search_plans
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def test_interleaving_degrees_include_those_that_balance_the_stage() -> None:
    """80 layers at pp 4 are 20 a stage: v 5, 10 and 20 keep 20 layers on the critical stage (80 / (4 v) whole) and
    had not been tried; 126 at pp 8 are 16 a stage (v 16: one layer a virtual stage). pp x v stays within layers + 2."""
    assert vpp_options(80, 4) == [1, 2, 3, 4, 5, 6, 8, 10, 20]
    assert 16 in vpp_options(126, 8) and vpp_options(126, 63) == [1, 2]
    assert vpp_options(80, 1) == [1]


def test_the_search_takes_the_balanced_interleaving(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-405B, 2,048 sequences of 8K on 16,384 H100: the search chose PP8v8 (126 layers: ceil(126/64) x 8 =
    16 on the critical stage, bubble 7/8 t_mb); v16 has the same 16 layers, a bubble of 7/16 t_mb and fewer
    activations in flight. Its plan had been TP4 PP8v16 DP256 CP2 at ZeRO-2 (6.182 s), which no framework runs with a
    pipeline; at ZeRO-1 it is TP8 PP8v16 DP128 CP2, 6.614 s against v8's 6.778, 74.9 GiB a chip against 76.6."""
    spec = load_model(catalog, "llama-3.1-405b")
    job = TrainingJob(spec, 8192, 2048, "bf16")
    search = search_plans(spec, job, hw.system("h100-sxm"), 16384)
    plan = search.result.plans.plan(search.best)
    assert (plan["tp"], plan["pp"], plan["vpp"], plan["dp"], plan["cp"], plan["zero"]) == (8, 8, 16, 128, 2, 1)
    assert float(search.result.step_time[search.best]) == pytest.approx(6.6190, abs=1e-4)


@pytest.mark.parametrize("chips", [32, 128, 512, 544])
def test_a_one_sequence_batch_runs_as_fast_on_more_chips(catalog: Catalog, hw: Hardware, chips: int) -> None:
    """Llama-3.1-8B, one 512-token sequence: 32 H100 run TP8 PP4 at 0.1748 s. Larger fleets had to use half their
    chips, so deeper pipelines (PP8 0.1759 s at 128, PP32 0.1889 s at 512) and none at all on 544; the batch has no
    sequence for the idle chips, so the 32-chip plan is kept on each."""
    spec = load_model(catalog, "llama-3.1-8b")
    search = search_plans(spec, TrainingJob(spec, 512, 1, "bf16"), hw.system("h100-sxm"), chips)
    plan = search.result.plans.plan(search.best)
    assert (plan["tp"], plan["pp"], plan["dp"]) == (8, 4, 1)
    assert float(search.result.step_time[search.best]) == pytest.approx(0.1748, abs=1e-4)


def test_an_interleaved_plan_keeps_its_dp_on_a_larger_fleet(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-8B, 16 sequences of 4K: 512 H100 run TP8 PP4v8 DP4 CP4 (16 / 4 = 4 micro-batches, a multiple of
    pp) at 0.2039 s. On 1,024 dp was the largest that fits, 8, whose 2 micro-batches cannot interleave over 4
    stages: the plan was dropped and CP8 took 0.2089 s."""
    spec = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(spec, 4096, 16, "bf16")
    times = {}
    for chips in (512, 1024):
        search = search_plans(spec, job, hw.system("h100-sxm"), chips)
        times[chips] = float(search.result.step_time[search.best])
        plan = search.result.plans.plan(search.best)
        assert (plan["tp"], plan["pp"], plan["vpp"], plan["dp"], plan["cp"]) == (8, 4, 8, 4, 4)
    assert times[512] == pytest.approx(0.2039, abs=1e-4) and times[1024] == times[512]


def test_a_plan_the_search_returns_is_accepted_back(catalog: Catalog) -> None:
    """1,000 H100 run Llama-3.1-70B's 512 sequences as TP2 PP7 DP16 CP4 on 896 ranks: given back it had been refused
    (the product must equal 1,000), and DeepSeek-V3's TP1 DP1920 EP16 on 2,048 H800 could not be given at all (no dp
    divides 15,360 sequences into 2,048)."""
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512, "bf16")
    check_plan({"tp": 2, "pp": 7, "dp": 16, "cp": 4}, spec, job, 1000)
    ds = load_model(catalog, "deepseek-v3")
    check_plan({"tp": 1, "pp": 1, "dp": 1920, "ep": 16, "zero": 3}, ds, TrainingJob(ds, 4096, 15360, "fp8"), 2048)
    with pytest.raises(ChipwiseError, match=r"= 448 leaves 552 of the job's 1,000 ranks idle, more than half"):
        check_plan({"tp": 2, "pp": 7, "dp": 8, "cp": 4}, spec, job, 1000)
    with pytest.raises(ChipwiseError, match=r"= 1,792, more than the job's 1,000 ranks\. Fix"):
        check_plan({"tp": 2, "pp": 7, "dp": 32, "cp": 4}, spec, job, 1000)
    # a batch with no sequence for a larger dp may leave most ranks idle: 1 x 1 x 7 x 1 on 64 ranks, 7 sequences
    check_plan({"tp": 1, "pp": 1, "dp": 7}, spec, TrainingJob(spec, 8192, 7, "bf16"), 64)


def test_a_partly_used_chip_counts_as_used() -> None:
    """TP1 PP7 DP7 on 4-core Trn2 is 49 ranks: 12 whole chips and a 13th with one busy core. chips_used had read 12,
    and the table '48 ranks on 12 chips'."""
    r = api.predict(
        {
            "kind": "train",
            "model": "llama-3.2-1b",
            "hardware": "trn2",
            "chips": 16,
            "global_batch": 7,
            "tokens": 1e9,
            "seq_len": 4096,
            "plan": {"tp": 1, "pp": 7, "cp": 1},
        }
    )
    assert (r["plan"]["dp"], r["chips_used"]) == (7, 13)
    assert _cores_note(r) == "a rank is a core (4 NeuronCores a chip): tp x pp x dp x cp = 49 ranks on 13 chips"


def test_fp8_fsdp_gathers_its_layers_in_fp8(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B TP1 DP512 CP2 FSDP on 1,024 H100: ZeRO-3 holds two gathered layers, 2 x p / 80 working weights
    of the 70.6B parameters p: 3.28 GiB in bf16, 1.64 in fp8 (fp8 had held them in bf16 too)."""
    spec = load_model(catalog, "llama-3.1-70b")
    system = hw.system("h100-sxm")
    dev, topo = device_of(system), topology_of(system)
    plans = from_dicts([{"tp": 1, "pp": 1, "dp": 512, "cp": 2, "zero": 3}])
    p = float(local_params(spec, plans)[0][0])
    weights = {
        prec: float(memory_per_rank(spec, TrainingJob(spec, 8192, 512, prec), dev, topo, plans).weights[0])
        for prec in ("bf16", "fp8")
    }
    assert weights["bf16"] == pytest.approx(4.0 * p / 1024 + 2 * 2.0 * p / 80, rel=1e-12)
    assert weights["fp8"] == pytest.approx(4.0 * p / 1024 + 2 * 1.0 * p / 80, rel=1e-12)
    assert (weights["bf16"] - weights["fp8"]) / 2**30 == pytest.approx(1.643, abs=1e-3)


@pytest.mark.parametrize("zero", [1, 3])
def test_fp8_parameter_gathers_move_one_byte_a_weight(hw: Hardware, zero: int) -> None:
    """E parameters over a 16-rank data-parallel group all network (TP8 DP16 on 8-GPU servers), nothing hidden:
    ZeRO-1 all-gathers the updated weights once (15/16 x E x bytes / B_out), FSDP every layer twice a micro-batch and
    once more for the last (2 + 1/L of that, L = 32). In fp8 one byte a weight, as memory.py holds them (had: two)."""
    system = hw.system("p5.48xlarge")
    topo = topology_of(system)
    plans = from_dicts([{"tp": 8, "pp": 1, "dp": 16, "zero": zero, "recompute": "full"}])
    e, none = 5.64e9, np.zeros(1)
    dev, one = device_of(system), np.ones(1)
    args = (none, plans, topo, dev, one, none, none, none, 32, True)
    exposed = {wb: float(dp_time(np.array([e]), *args, wb, "bf16")[0][0]) for wb in (1.0, 2.0)}
    gathers = 1.0 if zero == 1 else 2.0 + 1.0 / 32
    saved = gathers * 15 / 16 * e / (topo.out_bandwidth * topo.out_efficiency)
    assert exposed[2.0] - exposed[1.0] == pytest.approx(saved, rel=1e-9, abs=1e-12)


def test_a_reserve_past_the_device_asks_for_a_larger_memory_not_more_chips() -> None:
    """A 1 GiB Trn3 (0.25 GiB a core) under the runtime's 0.5 GiB reserve per core (2 GiB a chip): more chips shrink
    the states, never the reserve. It had asked for 'at least 1,626,634,613,842' chips, and then said it per core."""
    scenario = {
        "kind": "train",
        "model": "llama-3.1-405b",
        "hardware": "trn3",
        "chips": 16384,
        "tokens": 1e12,
        "precision": "fp8",
    }
    with pytest.raises(InfeasibleError) as exc:
        api.predict(scenario, sets=["trn3.hbm_capacity=1GiB"])
    assert str(exc.value).endswith(
        "Fix: use a chip with more memory: the runtime's reserve alone takes 2.00 GiB of the chip's 1.00 GiB, so no "
        "chip count fits."
    )


def _eight_b_on_512(plan: dict[str, object]) -> dict[str, object]:
    """Llama-3.1-8B, 4 sequences of 4K on 512 H100 (the review's job)."""
    scenario = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 512, "global_batch": 4}
    return api.predict({**scenario, "tokens": 1e9, "seq_len": 4096, "plan": plan})


def test_a_plan_giving_tp_pp_and_dp_runs_at_cp_1(catalog: Catalog) -> None:
    """tp, pp and dp given leave cp at 1 (left_to_search, docs/guide.md), the plan check_partial_plan checks. The
    search had still tried every cp: TP8 PP4 DP4 on 512 H100 was priced as CP4 on all 512 chips and labelled
    'given'. At cp 1 it runs on 8 x 4 x 4 = 128 chips, the same plan and step as when cp 1 is written out."""
    knobs = {"tp": 8, "pp": 4, "dp": 4, "microbatch": 1, "zero": 1, "recompute": "selective", "vpp": 1}
    r = _eight_b_on_512(knobs)
    plan = r["plan"]
    assert isinstance(plan, dict) and plan["cp"] == 1
    assert (r["chips_used"], r["plan_source"]) == (128, "given")
    assert r["step_time_s"] == _eight_b_on_512({**knobs, "cp": 1})["step_time_s"]
    spec = load_model(catalog, "llama-3.1-8b")
    plans = enumerate_plans(spec, TrainingJob(spec, 4096, 4, "bf16"), 512, 8, {"tp": 8, "pp": 4, "dp": 4})
    assert len(plans) and set(plans.cp.tolist()) == {1}


def test_a_partial_plan_is_judged_at_the_micro_batch_and_interleaving_left_open(catalog: Catalog) -> None:
    """TP8 PP4 DP1 CP1 of a 4-sequence batch uses 32 of 512 ranks. It had been refused for idling ranks the batch
    could use, judged at micro-batch 1 and v 1, though the search was free to pick mb 4 (1 x 4 = 4 sequences) or an
    interleaved pipeline (1 x 1 x 4 = 4): each given was accepted. It now runs PP4v8 mb1, as the search completes it;
    written out complete at mb 1 and v 1 it is still refused, and so is a 256-sequence batch, which no open knob
    (mb at most 16, 16 x 4 = 64 interleaved) leaves without sequences for a larger dp."""
    r = _eight_b_on_512({"tp": 8, "pp": 4, "dp": 1, "cp": 1})
    plan = r["plan"]
    assert isinstance(plan, dict) and (plan["dp"], plan["vpp"], plan["microbatch"]) == (1, 8, 1)
    assert (r["chips_used"], r["plan_source"]) == (32, "partial")
    spec = load_model(catalog, "llama-3.1-8b")
    idle = r"= 32 leaves 480 of the job's 512 ranks idle, more than half"
    with pytest.raises(ChipwiseError, match=idle):
        _eight_b_on_512({"tp": 8, "pp": 4, "dp": 1, "cp": 1, "microbatch": 1, "vpp": 1})
    with pytest.raises(ChipwiseError, match=idle):
        check_partial_plan({"tp": 8, "pp": 4, "dp": 1}, spec, TrainingJob(spec, 4096, 256, "bf16"), 512)
    # only an open interleaving bounds a 64-sequence batch (mb 16 x pp 4, past the largest mb 16); with vpp given
    # as 1 nothing does
    check_partial_plan({"tp": 8, "pp": 4, "dp": 1}, spec, TrainingJob(spec, 4096, 64, "bf16"), 512)
    with pytest.raises(ChipwiseError, match=idle):
        check_partial_plan({"tp": 8, "pp": 4, "dp": 1, "vpp": 1}, spec, TrainingJob(spec, 4096, 64, "bf16"), 512)


def _one(v: int) -> NDArray[np.int64]:
    return np.array([v], dtype=np.int64)


def test_a_stage_holds_whole_moe_layers(catalog: Catalog) -> None:
    """DeepSeek-V3's 3 dense and 58 MoE layers at PP16: every stage after the first holds 4 MoE layers, so a rank of
    EP64 holds 4 x 256 x 3 x 7,168 x 2,048 / 64 = 704,643,072 expert parameters (58/61 x 4 of them had given 670 M)."""
    spec = load_model(catalog, "deepseek-v3")
    dense, moe = stage_group_layers(spec, _one(16), _one(1))  # groups in layer order: the dense ones first
    assert (float(dense[0]), float(moe[0])) == (0.0, 4.0)
    assert [float(k[0]) for k in stage_group_layers(spec, _one(1), _one(1))] == [3.0, 58.0]
    plan = from_dicts([{"tp": 1, "pp": 16, "dp": 128, "ep": 64, "zero": 1, "recompute": "full"}])
    assert float(local_params(spec, plan)[1][0]) == 704_643_072.0


def test_zero_2_with_a_pipeline_is_neither_searched_nor_accepted(catalog: Catalog, hw: Hardware) -> None:
    """DeepSpeed's pipeline engine and Colossal-AI refuse ZeRO-2 with pp > 1, and Megatron's distributed optimizer is
    ZeRO-1: 512 H100 had ranked Llama-3.1-70B plans such as PP2 ... Z2, and a stated one was priced. ZeRO-2 stays at
    pp 1, ZeRO-3 (torchtitan's FSDP + PP) with a pipeline."""
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512, "bf16")
    plans = enumerate_plans(spec, job, 512, 8)
    assert not ((plans.zero == 2) & (plans.pp > 1)).any()
    assert ((plans.zero == 2) & (plans.pp == 1)).any() and ((plans.zero == 1) & (plans.pp > 1)).any()
    message = (
        r"invalid plan: zero 2 with pp 4: no framework shards gradients across a pipeline \(DeepSpeed's pipeline "
        r"engine and Colossal-AI refuse ZeRO-2 with pp > 1; Megatron's distributed optimizer is ZeRO-1\)\. Fix: use "
        r"zero 1 \(or 3, torchtitan's FSDP \+ PP\) with pipelining, or pp 1 with zero 2\.$"
    )
    with pytest.raises(ChipwiseError, match=message):
        check_plan({"tp": 8, "pp": 4, "dp": 16, "zero": 2}, spec, job, 512)
    with pytest.raises(ChipwiseError, match="invalid plan: zero 2 with pp 2: no framework"):  # the least pipeline
        check_plan({"tp": 8, "pp": 2, "dp": 32, "zero": 2}, spec, job, 512)
    for partial in ({"pp": 4, "zero": 2}, {"tp": 8, "pp": 4, "dp": 16, "zero": 2}):
        with pytest.raises(ChipwiseError, match=message):
            search_plans(spec, job, hw.system("h100-sxm"), 512, partial)
    # zero 2 alone leaves the search pp 1 only; zero 3 with a pipeline is still accepted
    assert set(search_plans(spec, job, hw.system("h100-sxm"), 512, {"zero": 2}).result.plans.pp) == {1}
    check_plan({"tp": 8, "pp": 4, "dp": 16, "zero": 3}, spec, job, 512)


def test_expert_and_tensor_parallelism_need_sequence_parallelism(catalog: Catalog) -> None:
    """Megatron-Core's TransformerConfig refuses ep > 1 with tp > 1 and sequence parallelism off, and the step prices
    each rank's dispatch as sequence parallelism's tokens / tp: TP8 EP8 with sp false had been accepted and priced as
    with sp. Given, it is refused in one line; the search never makes it; sp false with tp or ep at 1 stays."""
    spec = load_model(catalog, "mixtral-8x22b")
    job = TrainingJob(spec, 4096, 64, "bf16")
    plan = {"tp": 8, "ep": 8, "dp": 8, "pp": 1, "sp": False}
    line = r"invalid plan: ep 8 with tp 8 needs sequence parallelism .* Fix: set sp to true, or tp or ep to 1\.$"
    with pytest.raises(ChipwiseError, match=line):
        check_plan(plan, spec, job, 64)
    with pytest.raises(ChipwiseError, match=line):
        check_partial_plan({"tp": 8, "ep": 8, "sp": False}, spec, job, 64)
    check_plan({**plan, "sp": True}, spec, job, 64)
    check_plan({**plan, "ep": 1}, spec, job, 64)
    check_plan({**plan, "tp": 1, "dp": 64}, spec, job, 64)
    plans = enumerate_plans(spec, job, 64, 8, {"sp": False})
    assert len(plans) and not np.any((plans.tp > 1) & (plans.ep > 1))
    assert np.any(plans.tp > 1) and np.any(plans.ep > 1)
