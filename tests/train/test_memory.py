"""Memory per rank against hand computations (Korthikanti et al. 2022; ZeRO) and its invariants."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.memory import MemoryBreakdown, memory_per_rank
from chipwise.train.plans import from_dicts
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _mem(
    catalog: Catalog,
    hw: Hardware,
    plan: Mapping[str, object],
    model: str = "gpt3-175b",
    gbs: int = 1536,
    seq: int = 2048,
    precision: str = "bf16",
    chip: str = "a100-80gb",
) -> MemoryBreakdown:
    spec = load_model(catalog, model)
    system = hw.system(chip)
    job = TrainingJob(spec, seq, gbs, precision)
    return memory_per_rank(spec, job, device_of(system), topology_of(system), from_dicts([plan]))


def test_gpt3_full_recompute_activations_korthikanti(catalog: Catalog, hw: Hardware) -> None:
    """GPT-3 175B, TP8 (with SP) PP8, b=1, s=2048, full recompute: the first stage keeps each layer's input for
    p micro-batches of L/p layers, 2 s b h L / t bytes = 2 x 2048 x 12288 x 96 / 8 = 603,979,776 bytes, plus what
    recompute rebuilds for the layer in backward: its 16 s b h / t elements (no dropout masks) less the input
    s b h / t already kept, x 2 bytes."""
    m = _mem(catalog, hw, {"tp": 8, "pp": 8, "dp": 16, "microbatch": 1, "recompute": "full", "zero": 1})
    s, h, layers, t = 2048, 12288, 96, 8
    kept = 2 * s * h * layers / t
    transient = (16 - 1) * s * h / t * 2
    assert float(m.activations[0]) == pytest.approx(kept + transient, rel=1e-9)


def test_gpt3_interleaved_pipeline_holds_more_in_flight_activations(catalog: Catalog, hw: Hardware) -> None:
    """The interleaved (VPP2) twin of test_gpt3_full_recompute_activations_korthikanti: the first stage holds
    (1 + (p - 1) / (p v)) = 1 + 7/16 times the kept inputs (Korthikanti et al. 2022, eq. 5; its 96/16 = 6 layers
    per virtual stage, 12 per stage, as at VPP1). kept = 2 s h L / t = 603,979,776 B; transient = 15 s h / t x 2 =
    94,371,840 B; activations = 603,979,776 x 23/16 + 94,371,840 = 962,592,768 B (698,351,616 without the factor)."""
    plan = {"tp": 8, "pp": 8, "vpp": 2, "dp": 16, "microbatch": 1, "recompute": "full", "zero": 1}
    m = _mem(catalog, hw, plan)
    s, h, layers, t = 2048, 12288, 96, 8
    kept = 2 * s * h * layers / t
    transient = (16 - 1) * s * h / t * 2
    assert float(m.activations[0]) == pytest.approx(kept * (1 + 7 / 16) + transient, rel=1e-12)
    assert float(m.activations[0]) == pytest.approx(962_592_768, rel=1e-12)


def test_gpt3_no_recompute_activations(catalog: Catalog, hw: Hardware) -> None:
    """Without recompute and with sequence parallelism: 16 s b h / t elements per layer (Korthikanti's 34 s b h / t
    bytes less the 2 s b h dropout masks that flash-attention-era training no longer keeps)."""
    m = _mem(catalog, hw, {"tp": 8, "pp": 8, "dp": 16, "microbatch": 1, "recompute": "none", "zero": 1})
    s, h, layers, t = 2048, 12288, 96, 8
    assert float(m.activations[0]) == pytest.approx(32 * s * h * layers / t, rel=1e-9)


def test_zero_states_by_hand(catalog: Catalog, hw: Hardware) -> None:
    """Llama-2-7B on 8 ranks, ZeRO-1: 2 + 4 bytes/param of weights and grads, 12/8 of optimizer states."""
    spec = load_model(catalog, "llama-2-7b")
    m = _mem(
        catalog,
        hw,
        {"tp": 1, "pp": 1, "dp": 8, "microbatch": 1, "recompute": "full", "zero": 1},
        model="llama-2-7b",
        gbs=64,
        seq=4096,
    )
    p = spec.params_total
    assert float(m.weights[0]) == pytest.approx(2 * p)
    assert float(m.gradients[0]) == pytest.approx(4 * p)
    assert float(m.optimizer[0]) == pytest.approx(12 * p / 8)


plans = st.fixed_dictionaries(
    {
        "tp": st.sampled_from([1, 2, 4, 8]),
        "pp": st.sampled_from([1, 2, 4]),
        "dp": st.sampled_from([2, 4, 8, 16]),
        "microbatch": st.sampled_from([1, 2, 4]),
        "recompute": st.sampled_from(["none", "selective", "full"]),
    }
)


def _pipelined(plan: dict[str, object]) -> bool:
    """A plan of more than one pipeline stage."""
    pp = plan["pp"]
    return isinstance(pp, int) and pp > 1


@settings(max_examples=60, deadline=None)
@given(plan=plans, model=st.sampled_from(["llama-3.1-70b", "mixtral-8x7b", "gpt3-175b", "deepseek-v3"]))
def test_zero3_never_uses_more_memory_than_zero1_without_a_pipeline(
    catalog: Catalog, hw: Hardware, plan: dict[str, object], model: str
) -> None:
    """At pp 1 only: with a pipeline ZeRO-3 holds more (test_zero3_with_a_pipeline_holds_more_than_zero1_and_2)."""
    base = {**plan, "pp": 1}
    m1 = _mem(catalog, hw, {**base, "zero": 1}, model=model, gbs=256, seq=4096)
    m3 = _mem(catalog, hw, {**base, "zero": 3}, model=model, gbs=256, seq=4096)
    assert float(m3.total[0]) <= float(m1.total[0])


@settings(max_examples=30, deadline=None)
@given(plan=plans.filter(_pipelined), model=st.sampled_from(["llama-3.1-70b", "gpt3-175b"]))
def test_zero3_with_a_pipeline_holds_more_than_zero1_and_2(
    catalog: Catalog, hw: Hardware, plan: dict[str, object], model: str
) -> None:
    """torchtitan's FSDP + PP (memory.py): a stage keeps its gathered weights (2 B) and unsharded fp32 gradients
    (4 B) on top of the sharded 16/s, so per local parameter ZeRO-3 holds 4/s more than ZeRO-1's 2 + 4 + 12/s and
    4 more than ZeRO-2's 2 + 16/s; activations are the same. predict says so (explain.fsdp_pipeline_note)."""
    from chipwise.train.memory import local_params

    mems = {z: _mem(catalog, hw, {**plan, "zero": z}, model=model, gbs=256, seq=4096) for z in (1, 2, 3)}
    p = float(local_params(load_model(catalog, model), from_dicts([plan]))[0][0])
    s = int(str(plan["dp"]))
    assert float(mems[3].total[0] - mems[1].total[0]) == pytest.approx(4.0 * p / s, rel=1e-9)
    assert float(mems[3].total[0] - mems[2].total[0]) == pytest.approx(4.0 * p, rel=1e-9)
    assert float(mems[3].activations[0]) == float(mems[1].activations[0])


@settings(max_examples=40, deadline=None)
@given(plan=plans)
def test_recompute_never_raises_activation_memory(catalog: Catalog, hw: Hardware, plan: dict[str, object]) -> None:
    mems = [
        float(_mem(catalog, hw, {**plan, "recompute": r, "zero": 1}, model="llama-3.1-70b", seq=4096).activations[0])
        for r in ("none", "selective", "full")
    ]
    assert mems[0] >= mems[1] >= mems[2]


def test_memory_is_vectorised(catalog: Catalog, hw: Hardware) -> None:
    spec = load_model(catalog, "llama-3.1-70b")
    system = hw.system("h100-sxm")
    job = TrainingJob(spec, 4096, 512, "bf16")
    rows = [{"tp": t, "pp": 1, "dp": 64 // t, "zero": 1} for t in (1, 2, 4, 8)]
    m = memory_per_rank(spec, job, device_of(system), topology_of(system), from_dicts(rows))
    assert m.total.shape == (4,)
    assert np.all(np.diff(m.weights) < 0)  # more tensor parallelism, fewer weights per rank


def test_kv_heads_replicate_past_their_count(catalog: Catalog) -> None:
    """Llama-3.1-70B has 8 KV heads: at TP16 a rank still holds one whole head (two ranks share it), not half of one.
    Without sequence parallelism a layer stores 4h + K + X/tp per token, K the rank's KV heads and X all that TP
    splits; TP8 and TP16 give X/16 as their difference, and K one head, as at TP8."""
    from chipwise.train.memory import layer_activation_elems

    model = load_model(catalog, "llama-3.1-70b")
    att = model.attention
    assert att.kv_heads == 8
    none, _, _ = layer_activation_elems(model, model.groups[0], from_dicts([{"tp": t, "sp": False} for t in (8, 16)]))
    x_over_16 = float(none[0] - none[1])
    k = float(none[1]) - 4.0 * model.hidden - x_over_16
    assert k == pytest.approx(att.head_dim + att.v_head_dim)  # one K and one V head on each rank


def test_recompute_adds_only_the_rebuilt_part_of_one_layer(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.2-1B (h 2048, 32 heads of 64, 8 KV heads, SwiGLU ffn 8192), 64 H100s, TP1 PP8 DP8 mb2 at 8K tokens:
    a layer stores 4h + (q + o) + kv + 3 ffn = 8192 + 4096 + 1024 + 24576 = 37,888 elements a token with no
    recompute, 25,600 selectively (less the ffn activation and two norm outputs). The first stage holds 2 layers
    of 4 micro-batches of 16,384 tokens. During a layer's backward recompute adds back only what it dropped,
    12,288 elements a token, not the whole 37,888: selective had totalled 24.90 GiB against 24.50 with none."""
    plan = {"tp": 1, "pp": 8, "dp": 8, "microbatch": 2, "zero": 0}
    tokens_bytes = 2 * 8192 * 2.0
    mems = [
        _mem(catalog, hw, {**plan, "recompute": r}, model="llama-3.2-1b", gbs=64, seq=8192, chip="h100-sxm")
        for r in ("none", "selective", "full")
    ]
    none, selective, full = (float(m.activations[0]) for m in mems)
    assert none == pytest.approx(2 * 4 * 37888 * tokens_bytes, rel=1e-12)
    assert selective == pytest.approx((2 * 4 * 25600 + (37888 - 25600)) * tokens_bytes, rel=1e-12)
    assert full == pytest.approx((2 * 4 * 2048 + (37888 - 2048)) * tokens_bytes, rel=1e-12)
    totals = [float(m.total[0]) / 2**30 for m in mems]
    assert totals == pytest.approx([24.497, 24.122, 23.403], abs=1e-3)


@settings(max_examples=80, deadline=None)
@given(
    plan=plans,
    pp=st.sampled_from([1, 2, 4, 8, 16]),
    vpp=st.sampled_from([1, 2]),
    zero=st.sampled_from([0, 1, 3]),
    model=st.sampled_from(["llama-3.2-1b", "llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "qwen3-0.6b"]),
    seq=st.sampled_from([2048, 8192]),
)
def test_recompute_never_raises_memory(
    catalog: Catalog, hw: Hardware, plan: dict[str, object], pp: int, vpp: int, zero: int, model: str, seq: int
) -> None:
    """Recomputing more never needs more memory in total: none >= selective >= full for any plan, pipelines whose
    last stage is dominated by the logits included (the recomputed layer had been counted twice there)."""
    base = {**plan, "pp": pp, "vpp": vpp if pp > 1 else 1, "zero": zero}
    totals = [
        float(_mem(catalog, hw, {**base, "recompute": r}, model=model, gbs=256, seq=seq, chip="h100-sxm").total[0])
        for r in ("none", "selective", "full")
    ]
    assert totals[0] >= totals[1] >= totals[2]


def test_tensor_split_experts_keep_the_optimizer_state_of_expert_parallel_ones(catalog: Catalog, hw: Hardware) -> None:
    """Mixtral-8x7B on 128 H100s, TP8 DP16, ZeRO-1: with EP1 the experts are tensor-split over TP8, with EP8 each
    rank holds one whole expert; both keep 45.1e9/8 expert parameters replicated 16 times, so both hold
    12 x (dense/16 + 5.64e9/16) bytes of optimizer state, 4.08 GiB. EP1 had split the expert state 128 ways (0.63)."""
    spec = load_model(catalog, "mixtral-8x7b")
    plans = [{"tp": 8, "pp": 1, "dp": 16, "ep": ep, "microbatch": 1, "zero": 1, "recompute": "full"} for ep in (1, 8)]
    ep1, ep8 = (_mem(catalog, hw, p, "mixtral-8x7b", 256, 4096, chip="p5.48xlarge") for p in plans)
    expected = 12 * (spec.dense_params / 8 / 16 + spec.expert_params / 8 / 16)  # one stage: all of it over TP8
    assert float(ep1.optimizer[0]) == pytest.approx(expected) == float(ep8.optimizer[0])
    assert expected / 2**30 == pytest.approx(4.08, abs=0.005)
