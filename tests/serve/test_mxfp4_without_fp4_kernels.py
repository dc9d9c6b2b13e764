"""gpt-oss's MXFP4 experts on chips without FP4 units whose engine has no kernels that keep them 4-bit: vLLM on TPU
v6e and earlier (tpu-inference dequantises them to bf16 as it loads them) and on Gaudi (vllm-gaudi the same) holds
bf16 experts, as Neuron does on trn2; vLLM and SGLang on MI300X (W4A16 MoE kernels) and vLLM on TPU7x (FP8 x FP4)
keep them 4-bit, as the engines on Hopper do. A TPU v6e had been priced holding them 4-bit and ranked cheapest on
a fleet that cannot hold the model."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.serve.quant import as_loaded, dequantised_note, float8_fallback, holds_mxfp4

#: /tmp/explore46/g2.yaml, the tester's scenario
GPT_OSS_V6E: dict[str, Any] = {
    "kind": "serve",
    "model": "gpt-oss-120b",
    "hardware": "tpu-v6e",
    "chips": 4,
    "input_tokens": 1024,
    "output_tokens": 128,
    "concurrency": 8,
    "requests": 64,
}


@pytest.mark.parametrize(
    ("chip", "engine", "held"),
    [
        ("tpu-v6e", "vllm", "bf16"),  # tpu-inference PR #1080: dequantised into bf16
        ("tpu-v5e", "vllm", "bf16"),
        ("tpu-v5p", "vllm", "bf16"),
        ("tpu-v7", "vllm", "mxfp4"),  # FP8 units: FP8 x FP4 on Ironwood (tpu-inference issue #2952, PR #2427)
        ("gaudi3", "vllm", "bf16"),  # vllm-gaudi dequantises at load (PR #1328 would keep them packed)
        ("gaudi2", "vllm", "bf16"),
        ("mi300x", "vllm", "mxfp4"),  # W4A16 aiter_triton_mxfp4_bf16 on gfx942 (vllm PR #55934)
        ("mi325x", "sglang", "mxfp4"),
        ("mi355x", "vllm", "mxfp4"),  # FP4 units
        ("h100-sxm", "vllm", "mxfp4"),
        ("a100-80gb", "trtllm", "mxfp4"),
    ],
)
def test_which_engines_keep_mxfp4_experts_without_fp4_units(hw: Hardware, chip: str, engine: str, held: str) -> None:
    c = hw.system(chip).chip
    assert as_loaded("mxfp4", engine, c) == held
    assert holds_mxfp4(engine, c) is (held == "mxfp4")


def test_auto_on_four_tpu_v6e_is_the_bf16_checkpoint_which_does_not_fit() -> None:
    """It had read 'mxfp4 weights' with 1,312,944 tokens of KV cache; dequantised, gpt-oss-120b's 116.8e9 parameters
    take 217.6 GiB (2 bytes each), 54.4 GiB a rank at TP4, past a v6e's 32 GiB."""
    with pytest.raises(ChipwiseError) as err:
        cw.predict(GPT_OSS_V6E)
    assert str(err.value).startswith("gpt-oss-120b (bf16) fits no replica shape on tpu-v6e within 4 chips")
    with pytest.raises(ChipwiseError) as err:
        cw.predict({**GPT_OSS_V6E, "plan": {"tp": 4}})
    assert str(err.value).startswith("gpt-oss-120b (bf16) does not fit TP4 on tpu-v6e: 54.4 GiB of weights")


def test_auto_on_sixteen_tpu_v6e_is_bf16_with_the_note() -> None:
    sixteen = {**GPT_OSS_V6E, "chips": 16, "plan": {"tp": 16}}
    auto, bf16 = cw.predict(sixteen), cw.predict({**sixteen, "precision": "bf16"})
    assert auto["precision"] == bf16["precision"] == "bf16"
    assert auto["plan"]["kv_cache_tokens_per_replica"] == bf16["plan"]["kv_cache_tokens_per_replica"]
    assert auto["precision_note"] == (
        "the checkpoint's MXFP4 experts are dequantised to bf16 as vllm loads them on tpu-v6e"
    )


def test_mxfp4_asked_for_on_tpu_v6e_is_refused_in_one_line() -> None:
    with pytest.raises(ChipwiseError) as err:
        cw.predict({**GPT_OSS_V6E, "chips": 16, "precision": "mxfp4"})
    assert str(err.value).startswith(
        "vllm cannot serve mxfp4 weights on tpu-v6e: the chip has no FP4 units, and the engine dequantises MXFP4 "
        "experts to bf16 as it loads them. Fix: give the precision bf16 or auto"
    )


def test_a_chip_of_a_vendor_no_source_covers_is_dequantised_as_an_estimate(hw: Hardware) -> None:
    """No engine is known to keep MXFP4 experts 4-bit on a chip without FP4 units of a vendor no source covers: the
    conservative reading (bf16), said to be an estimate."""
    acme = replace(hw.chip("tpu-v6e"), id="acme-x1", vendor="acme")
    assert as_loaded("mxfp4", "vllm", acme) == "bf16"
    assert dequantised_note("mxfp4", "bf16", "vllm", acme) == (
        "the checkpoint's MXFP4 experts are dequantised to bf16 as vllm loads them on acme-x1 (status: estimate: "
        "vllm has no known kernels that keep them 4-bit on a chip without FP4 units)"
    )
    with pytest.raises(ChipwiseError, match="the engine has no known kernels that keep MXFP4 experts 4-bit there"):
        float8_fallback("vllm", acme, "mxfp4", "bf16")


def test_plan_serve_no_longer_ranks_four_tpu_v6e_for_gpt_oss() -> None:
    """The tester's fleet: tpu-v6e had ranked first at $0.785/M on 4 chips holding 4-bit experts; it now takes 8
    chips for the 217.6 GiB of bf16 weights and says why."""
    found = cw.plan_serve(
        "gpt-oss-120b", concurrency=64, input_tokens=1024, output_tokens=256, hardware=["tpu-v6e"], verify=1,
        requests=100, disaggregated=False,
    )  # fmt: skip
    row = found["results"][0]
    assert row["hardware"] == "tpu-v6e" and row["chips"] >= 8
    assert found["precision_notes"]["tpu-v6e"] == (
        "the checkpoint's MXFP4 experts are dequantised to bf16 as vllm loads them on tpu-v6e"
    )
