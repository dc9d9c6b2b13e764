"""Without chunked prefill a prompt longer than the token budget runs whole, alone (policies.chunks): the replica's
activation buffers hold its whole longest request, as vLLM (max_num_batched_tokens >= max_model_len) and TensorRT-LLM
(max_num_tokens >= the longest prompt) require, not the budget's 8,192 tokens (serve.build.buffer_tokens). A
compiled-shape engine (Neuron) sizes its buffers by its buckets: its budget stands."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware
from chipwise.serve.build import setup_replica
from chipwise.serve.engine import engine_profile
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.model import ModelSpec

#: Llama-3.1-8B's working bytes a token at TP1: (6 x 4,096 + 3 x 14,336) x 2 B
PER_TOKEN = (6 * 4096 + 3 * 14336) * 2
#: its fp32 logits of three sequences: 3 x 128,256 x 4 B
LOGITS = 3 * 128_256 * 4


def _unchunked(catalog: Catalog, hw: Hardware, llama8b: ModelSpec, chunked: bool, max_tokens: int) -> float:
    plan = ReplicaPlan(tp=1, max_batch=3, max_tokens=max_tokens, chunked_prefill=chunked)
    setup = setup_replica(catalog, llama8b, hw.system("h100-sxm"), "trtllm", plan, 131_000.0, 64.0, 131_064)
    return float(setup.memory.activations)


def test_an_unchunked_long_prompt_sizes_the_buffers_for_itself(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """131,000 prompt + 64 output tokens unchunked on one H100 at the default 8,192-token budget: the buffers had
    read 8,192 x 135,168 B + 1,539,072 B = 1.03 GiB; they now read 131,064 x 135,168 B + 1,539,072 B =
    17,717,197,824 B (16.50 GiB), as a chunked replica with max_tokens 131,064 holds. Chunked, the budget's stand."""
    assert _unchunked(catalog, hw, llama8b, False, 8192) == pytest.approx(131_064 * PER_TOKEN + LOGITS, rel=1e-12)
    assert _unchunked(catalog, hw, llama8b, False, 8192) == pytest.approx(17_717_197_824, rel=1e-12)
    assert _unchunked(catalog, hw, llama8b, True, 8192) == pytest.approx(8192 * PER_TOKEN + LOGITS, rel=1e-12)
    # a budget above the longest request is what the buffers hold, chunked or not
    assert _unchunked(catalog, hw, llama8b, False, 200_000) == pytest.approx(200_000 * PER_TOKEN + LOGITS, rel=1e-12)


def test_predict_without_chunked_prefill_no_longer_overstates_the_cache() -> None:
    """The tester's scenario: plan {chunked_prefill: false} had read 1.03 GiB of buffers and 439,840 tokens of KV
    cache, where max_tokens 131,072 (the same single 131K-token pass) read 16.50 GiB and 325,792; both now read
    the latter."""
    scenario = (
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, input_tokens: 131000, output_tokens: 64, "
        "arrival_rate: 0.05, requests: 20, plan: {chunked_prefill: false}}"
    )
    plan = cw.predict(scenario)["plan"]
    assert plan["memory_per_rank_gib"]["activations"] == pytest.approx(16.50, abs=0.005)
    assert plan["kv_cache_tokens_per_replica"] == 325_792
    wide = cw.predict(scenario.replace("chunked_prefill: false", "chunked_prefill: false, max_tokens: 131072"))
    assert wide["plan"]["kv_cache_tokens_per_replica"] == 325_792


def test_a_compiled_shape_engine_keeps_its_budget(catalog: Catalog, hw: Hardware) -> None:
    """Neuron compiles its context-encoding buckets (static_batch) and runs no chunked prefill: its buffers stay
    sized by its budget, 8,192 here, for a 131,064-token request; an engine that schedules freely takes the
    request's."""
    from chipwise.serve.build import buffer_tokens

    plan = ReplicaPlan(max_tokens=8192, chunked_prefill=False)
    neuron = engine_profile(catalog, "neuron", hw.system("trn2.48xlarge").chip.family)
    assert neuron.static_batch and not neuron.chunked_prefill
    assert buffer_tokens(neuron, plan, 131_064) == 8192
    trtllm = engine_profile(catalog, "trtllm", hw.system("h100-sxm").chip.family)
    assert buffer_tokens(trtllm, plan, 131_064) == 131_064
    assert buffer_tokens(trtllm, ReplicaPlan(max_tokens=8192), 131_064) == 8192


def test_buffers_of_a_whole_prompt_name_chunked_prefill_as_the_fix(
    catalog: Catalog, hw: Hardware, llama70b: ModelSpec
) -> None:
    """Llama-3.1-70B fp8 at TP1 with a 120,064-token request unchunked: its buffers (120,064 x (6 x 8,192 + 3 x
    28,672) x 2 B = 30.2 GiB) and weights overrun an H100; lowering max_tokens cannot help, chunked prefill does."""
    plan = ReplicaPlan(tp=1, max_batch=1, chunked_prefill=False, weight_precision="fp8", kv_precision="fp8")
    with pytest.raises(InfeasibleError) as err:
        setup_replica(catalog, llama70b, hw.system("h100-sxm"), "trtllm", plan, 120_000.0, 64.0, 120_064)
    text = str(err.value)
    assert "30.2 GiB of activation buffers" in text
    assert "turn chunked_prefill on (a 120,064-token request runs whole)" in text and "lower max_tokens" not in text


def test_the_searched_batch_limit_counts_the_same_buffers() -> None:
    """The search's estimate sized its buffers at the budget: 'b3: the KV cache holds 3 requests' of 131,064 tokens
    beside a 325,792-token cache, which holds 2."""
    import chipwise.api as cw

    r = cw.predict({"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1,
                    "input_tokens": 131000, "output_tokens": 64, "arrival_rate": 0.05, "requests": 20,
                    "plan": {"chunked_prefill": False}})  # fmt: skip
    assert r["plan"]["kv_cache_tokens_per_replica"] == 325_792
    assert r["plan"]["max_batch"] == 325_792 // 131_064 == 2
