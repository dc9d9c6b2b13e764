"""A refused KV-cache precision's fix names only caches the engine holds on that chip (serving_inputs.held_kv): it had
read 'use an fp8 KV cache' on a TPU v6e and an A100, where that cache is refused next, and never named TensorRT-LLM's
int8 cache on an A100."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError

FP4 = "an fp4 (NVFP4) KV cache runs on NVIDIA's Blackwell chips alone, and {} is not one. Fix: use {} KV cache."
INT8 = "{} has no int8 KV cache (its --kv-cache-dtype takes 16-bit and fp8 formats). Fix: use {} KV cache{}."


def _scenario(**over: Any) -> dict[str, Any]:
    base = {"kind": "serve", "model": "llama-3.1-8b", "chips": 1, "input_tokens": 512, "output_tokens": 64,
            "concurrency": 4, "requests": 20}  # fmt: skip
    return {**base, **over}


def _refusal(**over: Any) -> str:
    with pytest.raises(ChipwiseError) as err:
        cw.predict(_scenario(**over))
    return str(err.value)


@pytest.mark.parametrize(
    ("hardware", "engine", "kv", "expected"),
    [
        ("tpu-v6e", "vllm", "fp4", FP4.format("tpu-v6e", "a bf16")),  # no fp8 cache on a TPU v6e
        ("tpu-v6e", "vllm", "int8", INT8.format("vllm", "a bf16", "")),  # and no TensorRT-LLM off NVIDIA
        ("a100-80gb", "trtllm", "fp4", FP4.format("a100-80gb", "an int8")),  # TensorRT-LLM's int8 cache on Ampere
        ("a100-80gb", "sglang", "int8", INT8.format("sglang", "a bf16", ", or engine: trtllm for an int8 one")),
        ("h100-sxm", "trtllm", "fp4", FP4.format("h100-sxm", "an fp8 or int8")),
        ("h100-sxm", "vllm", "int8", INT8.format("vllm", "an fp8", ", or engine: trtllm for an int8 one")),
    ],
)
def test_the_fix_names_a_cache_the_engine_holds_there(hardware: str, engine: str, kv: str, expected: str) -> None:
    assert _refusal(hardware=hardware, engine=engine, kv_precision=kv) == expected


def test_the_cache_each_fix_names_runs() -> None:
    """Taking the fix runs: a bf16 cache on the TPU, TensorRT-LLM's int8 one on the A100."""
    assert cw.predict(_scenario(hardware="tpu-v6e", engine="vllm", kv_precision="bf16"))["kv_precision"] == "bf16"
    assert cw.predict(_scenario(hardware="a100-80gb", engine="trtllm", kv_precision="int8"))["kv_precision"] == "int8"
