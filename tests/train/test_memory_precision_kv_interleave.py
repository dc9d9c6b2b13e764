"""Memory per rank, by hand: fp32/tf32 states, LoRA's frozen base on the chip's format, K/V projections replicated
past the KV heads, and interleaved 1F1B capped by the batch's micro-batches, its last rank keeping its own warm-up
and the loss's logits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.memory import MemoryBreakdown, local_params, memory_per_rank
from chipwise.train.plans import from_dicts
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

GIB = 2**30
P_8B = 8_030_261_248  # Llama-3.1-8B parameters
P_70B = 70_553_706_496  # Llama-3.1-70B parameters
#: Llama-3.1-8B's LoRA adapters: 32 layers x 16 x ((4,096 + 6,144) + (4,096 + 4,096)) = 9,437,184 (train.lora)
A_8B = 9_437_184


def _mem(
    catalog: Catalog,
    hw: Hardware,
    plans: Sequence[Mapping[str, object]],
    model: str = "llama-3.1-8b",
    chip: str = "h100-sxm",
    seq: int = 4096,
    gbs: int = 128,
    precision: str = "bf16",
    lora: bool = False,
) -> MemoryBreakdown:
    spec = load_model(catalog, model)
    system = hw.system(chip)
    job = TrainingJob(spec, seq, gbs, precision, lora=lora)
    return memory_per_rank(spec, job, device_of(system), topology_of(system), from_dicts(plans))


ZERO_0_TO_3: list[dict[str, object]] = [{"dp": 8, "zero": z, "recompute": "full"} for z in (0, 1, 2, 3)]


@pytest.mark.parametrize("precision", ["fp32", "tf32"])
def test_fp32_training_keeps_fp32_weights_and_no_separate_master(
    catalog: Catalog, hw: Hardware, precision: str
) -> None:
    """Llama-3.1-8B (P = 8,030,261,248) on 8 H100s in fp32: the fp32 weight is its own master, so 4 (weight) + 4
    (gradient) + 8 (Adam's two moments) bytes a parameter. ZeRO-0: 4P, 4P, 8P; ZeRO-1: 4P, 4P, 8P/8 = P; ZeRO-2:
    4P, P/2, P; ZeRO-3: 16P/8 sharded plus two of 32 layers gathered at 4 B (2 x 4P/32 = P/4): weights P/2 + P/4.
    The review's ZeRO-1 plan: 29.915 + 29.915 + 7.479 GiB of states, 78.22 GiB in all (67.0 with 2-byte weights)."""
    m = _mem(catalog, hw, ZERO_0_TO_3, precision=precision)
    p = float(P_8B)
    assert m.weights.tolist() == pytest.approx([4 * p, 4 * p, 4 * p, 0.75 * p], rel=1e-12)
    assert m.gradients.tolist() == pytest.approx([4 * p, 4 * p, 0.5 * p, 0.5 * p], rel=1e-12)
    assert m.optimizer.tolist() == pytest.approx([8 * p, p, p, p], rel=1e-12)
    assert float(m.weights[1]) / GIB == pytest.approx(29.915, abs=1e-3)
    assert float(m.total[1]) / GIB == pytest.approx(78.223, abs=1e-3)


def test_lora_frozen_base_takes_the_chips_format(catalog: Catalog, hw: Hardware) -> None:
    """A LoRA run's frozen base is stored as the chip computes: fp8 on an H100 (1 B a parameter), bf16 on an A100
    asked for fp8 (2 B, as its full fine-tune's working weights), fp32 at 4 B; FSDP gathers it at that size
    (fp32, ZeRO-3 on 8: 4P/8 + 2 x 4P/32 = 0.75P). Its adapters (A) train beside it, in bf16 (fp32 in fp32)."""
    p, a = float(P_8B), float(A_8B)
    plan = [{"dp": 8, "zero": 1, "recompute": "full"}]
    a100 = _mem(catalog, hw, plan, chip="a100-80gb", gbs=64, precision="fp8", lora=True)
    a100_full = _mem(catalog, hw, plan, chip="a100-80gb", gbs=64, precision="fp8")
    h100 = _mem(catalog, hw, plan, gbs=64, precision="fp8", lora=True)
    fp32 = _mem(catalog, hw, [*plan, ZERO_0_TO_3[3]], precision="fp32", lora=True)
    assert float(a100.weights[0]) == pytest.approx(2 * p + 2 * a) == float(a100_full.weights[0]) + 2 * a
    assert float(h100.weights[0]) == pytest.approx(p + 2 * a)
    assert fp32.weights.tolist() == pytest.approx([4 * p + 4 * a, 0.75 * p + 4 * a / 8], rel=1e-12)


def test_lora_adapters_hold_their_gradients_and_optimizer_state(catalog: Catalog, hw: Hardware) -> None:
    """The adapters are a LoRA run's trained parameters: an fp32 gradient (4 B) and Adam's fp32 master and moments
    (12 B) each, sharded by the plan's ZeRO stage over dp 8, and 4 + 8 B in fp32. Llama-3.1-8B, A = 9,437,184:
    ZeRO-1 4A and 12A/8, ZeRO-2 4A/8 and 12A/8; fp32 at ZeRO-3 4A/8 and 8A/8. They had read 0.0 and 0.0."""
    a = float(A_8B)
    bf16 = _mem(catalog, hw, ZERO_0_TO_3[1:3], gbs=64, lora=True)
    fp32 = _mem(catalog, hw, [ZERO_0_TO_3[3]], gbs=64, precision="fp32", lora=True)
    assert bf16.gradients.tolist() == pytest.approx([4 * a, 4 * a / 8], rel=1e-12)
    assert bf16.optimizer.tolist() == pytest.approx([12 * a / 8, 12 * a / 8], rel=1e-12)
    assert fp32.gradients.tolist() == pytest.approx([4 * a / 8], rel=1e-12)
    assert fp32.optimizer.tolist() == pytest.approx([8 * a / 8], rel=1e-12)


def test_kv_projections_replicate_past_the_kv_heads(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B (h 8192, 8 KV heads of 128, 80 layers): the K and V projections hold 80 x 8192 x 2 x 8 x 128 =
    1,342,177,280 parameters. Past 8 ranks a rank keeps one whole KV head: TP16 holds (P - KV)/16 + KV/8 =
    4,325,720,576 + 167,772,160 = 4,493,492,736 parameters, TP64 1,081,430,144 + 167,772,160 = 1,249,202,304 (P/64
    = 1,102,401,664 had split the heads further); TP8 is P/8. bf16 ZeRO-1 on one DP rank: 2 + 4 + 12 B of each."""
    kv = 80 * 8192 * 2 * 8 * 128
    assert kv == 1_342_177_280
    spec = load_model(catalog, "llama-3.1-70b")
    plans = from_dicts([{"tp": t} for t in (8, 16, 64)])
    dense, _ = local_params(spec, plans)
    assert dense.tolist() == pytest.approx([P_70B / 8, 4_493_492_736, 1_249_202_304], rel=1e-12)
    m = _mem(catalog, hw, [{"tp": 64, "zero": 1, "recompute": "full"}], model="llama-3.1-70b", chip="trn2",
             seq=8192, gbs=32)  # fmt: skip
    states = float(m.weights[0] + m.gradients[0] + m.optimizer[0])
    assert states == pytest.approx(18 * 1_249_202_304, rel=1e-12)


def _interleaved(catalog: Catalog, hw: Hardware, gbs: int) -> MemoryBreakdown:
    plans = [{"tp": 8, "pp": 4, "dp": 8, "vpp": v, "zero": 1, "recompute": "selective"} for v in (1, 2)]
    return _mem(catalog, hw, plans, model="llama-3.1-70b", seq=8192, gbs=gbs)


def test_interleaving_holds_no_more_micro_batches_than_the_batch_has(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B, TP8 (SP) PP4 DP8 mb1, 8K tokens, selective recompute: a layer keeps 11,520 elements a token
    (4h/8 + (q + o)/8 + one KV head + 3 ffn/8 - ffn/8 - 2h/8), and rebuilds 5,632 in its backward. With 32
    sequences there are m = 4 = pp micro-batches: stage 0's 20 layers hold at most 4 x 20 = 80 layer-micro-batches,
    80 x 11,520 x 8,192 x 2 B + 5,632 x 8,192 x 2 B = 14.1484375 GiB at VPP1 and at VPP2 (Megatron runs all
    forwards first; Korthikanti's 1 + 3/8 had made it 19.42)."""
    layer, rebuilt = 11_520 * 8192 * 2, 5_632 * 8192 * 2
    m = _interleaved(catalog, hw, 32)
    assert m.activations.tolist() == pytest.approx([80 * layer + rebuilt] * 2, rel=1e-12)
    assert float(m.activations[1]) / GIB == pytest.approx(14.1484375, rel=1e-12)


def test_interleaving_keeps_korthikantis_factor_with_enough_micro_batches(catalog: Catalog, hw: Hardware) -> None:
    """The same plans with m = 8 = 2pp micro-batches: VPP2 holds (1 + 3/8) x 80 = 110 layer-micro-batches (Megatron's
    warm-up of 2 (pp - 1) + (vpp - 1) pp + 1 = 11 chunks of 10 layers), VPP1 80."""
    layer, rebuilt = 11_520 * 8192 * 2, 5_632 * 8192 * 2
    m = _interleaved(catalog, hw, 64)
    assert m.activations.tolist() == pytest.approx([80 * layer + rebuilt, 110 * layer + rebuilt], rel=1e-12)


def test_the_last_rank_keeps_its_interleaved_warm_up(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B TP4 PP2v40 DP2 CP4 at 128K, full recompute, 16 micro-batches: a layer keeps h/tp = 2,048
    elements a token, 32,768 tokens a rank, 0.125 GiB a layer-micro-batch. The first rank holds 2 x 40 + 1 = 81 of
    them (10.125 GiB) and the transient rebuild (34,304 - 2,048) x 32,768 x 2 B = 1.96875 GiB; the last rank runs
    (40 - 1) x 2 = 78 warm-up chunk forwards of one layer and keeps 79 (9.875 GiB) with the loss's logits,
    32,768 x 128,256 / 4 x 6 B = 5.87109375 GiB. It had been counted with one layer-micro-batch: 78.4 GiB, 'fits'."""
    plan = {"tp": 4, "pp": 2, "dp": 2, "cp": 4, "vpp": 40, "microbatch": 1, "zero": 1, "recompute": "full"}
    m = _mem(catalog, hw, [plan], model="llama-3.1-70b", seq=131072, gbs=32)
    assert m.activations[0] / GIB == pytest.approx(10.125 + 1.96875, rel=1e-12)
    assert (m.activations[0] + m.logits[0]) / GIB == pytest.approx(9.875 + 5.87109375 + 1.96875, rel=1e-12)
    assert m.total[0] > device_of(hw.system("h100-sxm")).hbm_capacity  # 83.3 GiB: it does not fit


def test_all_forwards_first_keeps_every_micro_batch_s_logits(catalog: Catalog, hw: Hardware) -> None:
    """m = pp = 2 (README's H100 row, TP4 PP2v40 DP256 CP2): Megatron runs all forwards first, so the last rank
    holds both micro-batches of its 40 layers, as the first does, and the loss's fp32 logits of both: 4,096 tokens x
    32,064 vocabulary columns x (4 + 2 + 4) B = 1.2231 GiB."""
    plan = {"tp": 4, "pp": 2, "dp": 256, "cp": 2, "vpp": 40, "microbatch": 1, "zero": 1}
    m = _mem(catalog, hw, [plan], model="llama-3.1-70b", seq=8192, gbs=512)
    assert m.logits[0] == pytest.approx(4096 * 32064 * 10.0, rel=1e-12)
