"""fp8 weights and an fp8 KV cache on a chip without FP8 units (A100): priced as the engine runs them where it has
a sourced fallback (vLLM's weight-only FP8 Marlin), and said so; refused in one line where it has none (TensorRT-LLM
lists no FP8 on Ampere), as an fp4 KV cache on an H100 is. Which chips have the units: TPUs before Ironwood have no
FP8 (listed at the BF16 rate or not at all), while units at a wider format's rate (Gaudi 3's FP8) are units."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.serve.quant import PrecisionUnsupportedError, float8_fallback, has_units

A100_FP8 = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "a100",
    "chips": 1,
    "precision": "fp8",
    "input_tokens": 1024,
    "output_tokens": 256,
    "concurrency": 1,
    "requests": 20,
    "plan": {"tp": 1},
}


def test_tensorrt_llm_cannot_run_fp8_on_an_a100() -> None:
    """The default engine (TensorRT-LLM) at fp8 on an A100 had been priced silently; the fp8 KV cache it would
    default to there is not what is refused (a 16-bit one is its default where it cannot hold fp8), one stated is."""
    with pytest.raises(ChipwiseError) as err:
        cw.predict(A100_FP8)
    assert str(err.value) == (
        "trtllm cannot run fp8 weights on a100-80gb: the chip has no FP8 units, and the engine has no known kernels "
        "that run them in bf16. Fix: serve bf16 weights, or serve with vllm, which runs them in bf16 there, or pick a "
        "chip with FP8 units."
    )
    with pytest.raises(ChipwiseError) as err:
        cw.predict({**A100_FP8, "kv_precision": "fp8"})
    assert str(err.value).startswith("trtllm cannot run fp8 weights and an fp8 KV cache on a100-80gb")


def test_a_quantised_checkpoints_default_cache_is_16_bit_where_the_engine_cannot_hold_fp8() -> None:
    """gpt-oss-120b (MXFP4 weights) with TensorRT-LLM on an A100 had been refused for an fp8 KV cache the user never
    asked for; it serves with a bf16 one. A stated fp8 is refused, and the default on Hopper stays fp8."""
    gpt_oss = {**A100_FP8, "model": "gpt-oss-120b", "precision": "auto"}
    result: dict[str, Any] = cw.predict(gpt_oss)
    assert (result["engine"], result["precision"], result["kv_precision"]) == ("trtllm", "mxfp4", "bf16")
    assert cw.predict({**gpt_oss, "hardware": "h100-sxm"})["kv_precision"] == "fp8"
    with pytest.raises(ChipwiseError, match=r"^trtllm cannot run an fp8 KV cache on a100-80gb"):
        cw.predict({**gpt_oss, "kv_precision": "fp8"})


def test_vllm_runs_fp8_weight_only_on_an_a100_and_says_so() -> None:
    result: dict[str, Any] = cw.predict({**A100_FP8, "engine": "vllm", "kv_precision": "fp8"})
    assert (result["precision"], result["kv_precision"]) == ("fp8", "fp8")
    assert result["precision_note"] == (
        "a100-80gb has no FP8 units, so vllm computes in bf16: fp8 weights run weight-only (dequantised in the kernel, "
        "the matmuls in bf16); the fp8 KV cache is stored in fp8 and read back to bf16 for attention"
    )
    assert "a100-80gb.flops.bf16" in result["figures"]  # priced at the bf16 matmul rate


def test_the_fallback_by_engine_and_format(hw: Hardware) -> None:
    a100, h100 = hw.system("a100").chip, hw.system("h100-sxm").chip
    assert float8_fallback("trtllm", h100, "fp8", "fp8") is None  # FP8 units
    assert float8_fallback("trtllm", a100, "bf16", "bf16") is None
    assert float8_fallback("trtllm", a100, "int4", "int8") is None  # integer formats are not FP8's
    assert float8_fallback("sglang", a100, "fp8", "bf16") == (
        "a100-80gb has no FP8 units, so sglang computes in bf16: fp8 weights run weight-only (dequantised in the "
        "kernel, the matmuls in bf16)"
    )
    assert float8_fallback("vllm", a100, "fp4", "bf16") == (
        "a100-80gb has no FP4 units, so vllm computes in bf16: fp4 weights run weight-only (dequantised in the "
        "kernel, the matmuls in bf16)"
    )
    with pytest.raises(ChipwiseError) as err:
        float8_fallback("sglang", a100, "fp8", "fp8")  # its fp8 KV cache without FP8 units is not sourced
    assert str(err.value).startswith(
        "sglang cannot run an fp8 KV cache on a100-80gb: the chip has no FP8 units, and the engine has no known "
        "kernels that run them in bf16. Fix: serve a bf16 KV cache, or serve with vllm"
    )
    with pytest.raises(ChipwiseError, match=r"^trtllm cannot run fp4 weights on a100-80gb"):
        float8_fallback("trtllm", a100, "fp4", "bf16")
    with pytest.raises(
        ChipwiseError, match=r"^vllm cannot run fp8 weights on tpu-v5e.*Fix: serve bf16 weights, or pick"
    ):
        float8_fallback("vllm", hw.system("tpu-v5e").chip, "fp8", "bf16")  # no TPU fallback sourced


@pytest.mark.parametrize("chip", ["tpu-v5e", "tpu-v5p", "tpu-v6e"])
def test_tpus_before_ironwood_have_no_fp8_units(hw: Hardware, chip: str) -> None:
    """v5p and v6e list FP8 at their BF16 rate (Google's comparison table), v5e not at all: one rule for the three,
    as training's compute precision (bf16) says. v6e and v5p had served 1-byte weights at a speed-up in silence."""
    assert not has_units(hw.chip(chip), "fp8")
    with pytest.raises(PrecisionUnsupportedError, match=f"vllm cannot run fp8 weights on {chip}: the chip has no FP8"):
        float8_fallback("vllm", hw.chip(chip), "fp8", "bf16")


@pytest.mark.parametrize(
    ("chip", "precision"), [("tpu-v7", "fp8"), ("gaudi3", "fp8"), ("trn1", "fp8"), ("trn3", "fp4")]
)
def test_units_at_the_wider_rate_are_units(hw: Hardware, chip: str, precision: str) -> None:
    """Gaudi 3's FP8 and Trainium1's cFP8 run at the BF16 rate and Trainium3's MXFP4 at its FP8 rate, on units of
    their own (the Gaudi 3 fp8 serving rows are priced with 1-byte weights); Ironwood has FP8 at twice BF16."""
    assert has_units(hw.chip(chip), precision)
    assert float8_fallback("vllm", hw.chip(chip), precision, "bf16") is None


def test_int8_where_the_catalog_gives_no_int8_rate_says_it_runs_weight_only(hw: Hardware) -> None:
    """An MI300X (no INT8 rate in the catalog) prices W8A8 weight-only, as matmul_precision does: its int8 prompt had
    read as bf16's (0.1306 s against 0.1308) with no word. A chip with an INT8 rate needs none."""
    note = float8_fallback("vllm", hw.system("mi300x").chip, "int8", "bf16")
    assert note == (
        "mi300x has no INT8 units listed in the catalog, so vllm computes in bf16: int8 (W8A8) is priced weight-only "
        "(dequantised in the kernel, the matmuls in bf16)"
    )
    assert float8_fallback("vllm", hw.system("h100-sxm").chip, "int8", "bf16") is None
    # beside an fp8 KV cache (which the MI300X holds in fp8), the int8 line still stands
    both = float8_fallback("vllm", hw.system("mi300x").chip, "int8", "fp8")
    assert both is not None and "int8 (W8A8) is priced weight-only" in both
