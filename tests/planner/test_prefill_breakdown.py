"""`prefill_breakdown`: where one prompt's prefill alone goes, priced as the step tables price it, so its parts
add up to `prefill_alone`'s seconds, with the attention of the prompt's (padded) pairs computed by hand."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.perf.serving import attention_rate
from chipwise.planner.serving_breakdown import prefill_alone, prefill_breakdown
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.presets import load_model


def _setup(
    catalog: Catalog, model: str, chip: str, engine: str, plan: ReplicaPlan, prompt: int, longest: int | None = None
) -> ReplicaSetup:
    spec = load_model(catalog, model)
    return setup_replica(catalog, spec, hardware(catalog).system(chip), engine, plan, float(prompt), 128.0, longest)


def _pair_seconds(setup: ReplicaSetup, heads: int, head_dim: int, layers: int) -> float:
    """Seconds of one (query, key) pair over all layers, by hand: q.k and p.v at 2 FLOPs per multiply-add."""
    return 2.0 * heads * 2 * head_dim * layers / attention_rate(setup.dev, setup.plan.kv_precision)


def test_one_gpu_prompt_adds_up_and_its_attention_is_the_pairs_by_hand(catalog: Catalog) -> None:
    """Llama-3.1-8B (32 layers, 32 heads of 128) in bf16 on one H100, a 4,096-token prompt in one iteration:
    4,096 x 4,097 / 2 pairs; the weight GEMMs are 2 x 6.98e9 FLOPs a token (the 8.03e9 parameters less the two
    525M-parameter vocabulary matrices) at the chip's priced matrix rate, within its tile and ramp losses."""
    plan = ReplicaPlan(tp=1, max_batch=16, max_tokens=8192)
    setup = _setup(catalog, "llama-3.1-8b", "h100-sxm", "trtllm", plan, 4096)
    parts = prefill_breakdown(setup, load_model(catalog, "llama-3.1-8b"), 4096)
    alone = prefill_alone(setup, 4096)
    assert sum(parts.values()) == pytest.approx(alone["seconds"], rel=1e-3)
    assert "waits" not in parts and parts["tp_comm"] == 0.0 and parts["moe"] == 0.0
    assert parts["attention"] == pytest.approx(4096 * 4097 / 2 * _pair_seconds(setup, 32, 128, 32), rel=1e-9)
    rate = setup.dev.peak_flops("bf16") * setup.dev.eff.matmul["bf16"]
    assert parts["gemm"] == pytest.approx(2 * 6.98e9 * 4096 / rate, rel=0.1)
    assert max(parts, key=lambda k: parts[k]) == "gemm"


def test_tensor_parallel_prompt_pays_its_all_reduces(catalog: Catalog) -> None:
    """On 8 H100s each layer all-reduces the prompt's activations twice; one rank does an eighth of the work."""
    model = load_model(catalog, "llama-3.1-8b")
    one = _setup(catalog, "llama-3.1-8b", "h100-sxm", "trtllm", ReplicaPlan(tp=1, max_tokens=8192), 4096)
    eight = _setup(catalog, "llama-3.1-8b", "h100-sxm", "trtllm", ReplicaPlan(tp=8, max_tokens=8192), 4096)
    p1, p8 = prefill_breakdown(one, model, 4096), prefill_breakdown(eight, model, 4096)
    assert p8["tp_comm"] > 0 and p8["gemm"] < p1["gemm"] / 6
    assert p8["attention"] == pytest.approx(p1["attention"] / 8, rel=1e-9)  # 4 of the 32 heads a rank
    assert sum(p8.values()) == pytest.approx(prefill_alone(eight, 4096)["seconds"], rel=1e-3)


def test_a_compiled_engine_pays_for_its_padded_bucket(catalog: Catalog) -> None:
    """Neuron compiled for 4,096-token sequences runs a 1,500-token prompt in its 2,048-token context-encoding
    bucket: 2,048 x 2,049 / 2 pairs, each rank attending with 4 of the 32 heads."""
    model = load_model(catalog, "llama-3.1-8b")
    plan = ReplicaPlan(tp=8, max_batch=4, max_tokens=4096)
    setup = _setup(catalog, "llama-3.1-8b", "inf2", "neuron", plan, 1500, longest=4096)
    assert setup.engine.static_batch
    parts = prefill_breakdown(setup, model, 1500)
    assert parts["attention"] == pytest.approx(2048 * 2049 / 2 * _pair_seconds(setup, 4, 128, 32), rel=1e-9)
    assert sum(parts.values()) == pytest.approx(prefill_alone(setup, 1500)["seconds"], rel=1e-3)


def test_chunks_and_a_cached_prefix_are_priced_as_the_simulator_does(catalog: Catalog) -> None:
    """A 10,000-token prompt in 2,048-token chunks (each chunk attends to the ones before it), and half of it a
    prefix-cache hit: the parts still add up to the prompt's seconds, and the hit halves its weight GEMMs."""
    model = load_model(catalog, "llama-3.1-8b")
    plan = ReplicaPlan(tp=1, max_batch=16, max_tokens=2048, chunked_prefill=True)
    setup = _setup(catalog, "llama-3.1-8b", "h100-sxm", "vllm", plan, 10000)
    whole, half = prefill_breakdown(setup, model, 10000), prefill_breakdown(setup, model, 10000, hit=0.5)
    for parts, hit in ((whole, 0.0), (half, 0.5)):
        assert sum(parts.values()) == pytest.approx(prefill_alone(setup, 10000, hit)["seconds"], rel=1e-3)
    assert whole["attention"] == pytest.approx(10000 * 10001 / 2 * _pair_seconds(setup, 32, 128, 32), rel=1e-9)
    assert half["gemm"] == pytest.approx(whole["gemm"] / 2, rel=0.02)


def test_device_work_is_the_sum_of_the_device_rows(catalog: Catalog) -> None:
    """A 128-token prompt of Llama-3.1-8B on one H100 under TensorRT-LLM's PyTorch back end (prompts run
    eagerly): prefill_alone's device work is the breakdown's rows but the host launches, the LM head among them (it
    had left the head out, 7.24 ms against rows of 7.58 ms), and it with the launches beyond it makes the seconds."""
    plan = ReplicaPlan(tp=1, max_batch=64)
    setup = _setup(catalog, "llama-3.1-8b", "h100-sxm", "trtllm", plan, 128)
    parts = prefill_breakdown(setup, load_model(catalog, "llama-3.1-8b"), 128)
    alone = prefill_alone(setup, 128)
    device = {k: v for k, v in parts.items() if k != "host_launches"}
    assert parts["lm_head"] > 0 and parts["host_launches"] > 0
    assert alone["device_s"] == pytest.approx(sum(device.values()), rel=1e-9)
    assert alone["device_s"] + parts["host_launches"] == pytest.approx(alone["seconds"], rel=1e-9)
