"""Memory per rank against hand computations (Korthikanti et al. 2022; ZeRO) and its invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.memory import memory_per_rank
from chipwise.train.plans import from_dicts
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _mem(
    catalog: Catalog,
    hw: Hardware,
    plan: dict[str, object],
    model: str = "gpt3-175b",
    gbs: int = 1536,
    seq: int = 2048,
    precision: str = "bf16",
    chip: str = "a100-80gb",
) -> object:
    spec = load_model(catalog, model)
    system = hw.system(chip)
    job = TrainingJob(spec, seq, gbs, precision)
    return memory_per_rank(spec, job, device_of(system), topology_of(system), from_dicts([plan]))


def test_gpt3_full_recompute_activations_korthikanti(catalog: Catalog, hw: Hardware) -> None:
    """GPT-3 175B, TP8 (with SP) PP8, b=1, s=2048, full recompute: the first stage keeps each layer's input for
    p micro-batches of L/p layers, 2 s b h L / t bytes = 2 x 2048 x 12288 x 96 / 8 = 603,979,776 bytes, plus the
    full activations of the one layer being recomputed, 16 s b h / t elements x 2 bytes (no dropout masks)."""
    m = _mem(catalog, hw, {"tp": 8, "pp": 8, "dp": 16, "microbatch": 1, "recompute": "full", "zero": 1})
    s, h, layers, t = 2048, 12288, 96, 8
    kept = 2 * s * h * layers / t
    transient = 16 * s * h / t * 2
    assert float(m.activations[0]) == pytest.approx(kept + transient, rel=1e-9)


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


@settings(max_examples=60, deadline=None)
@given(plan=plans, model=st.sampled_from(["llama-3.1-70b", "mixtral-8x7b", "gpt3-175b", "deepseek-v3"]))
def test_zero3_never_uses_more_memory_than_zero1(
    catalog: Catalog, hw: Hardware, plan: dict[str, object], model: str
) -> None:
    base = {**plan, "pp": 1}
    m1 = _mem(catalog, hw, {**base, "zero": 1}, model=model, gbs=256, seq=4096)
    m3 = _mem(catalog, hw, {**base, "zero": 3}, model=model, gbs=256, seq=4096)
    assert float(m3.total[0]) <= float(m1.total[0])


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
