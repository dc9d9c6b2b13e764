"""The precisions quantised weights and KV caches multiply in. NVFP4 weights off Blackwell run weight-only (vLLM's
and SGLang's Marlin W4A16: bf16 matmuls, priced as int4), where an H100 had prefilled them at its FP8 rate, 2.5x
too fast; TensorRT-LLM has no such path and is refused. A KV cache is a storage format: an int8 one is read back to
bf16 for attention, an NVFP4 one to fp8, where both had run at the int8 / fp4 tensor rate."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.perf.serving import attention_rate
from chipwise.serve.build import setup_replica
from chipwise.serve.iteration import IterationInputs, Shapes, iteration_breakdown
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import float8_fallback, matmul_precision
from chipwise.workload.presets import load_model

PROMPT = 8192


def _one_user(**keys: Any) -> dict[str, Any]:
    """Llama-3.1-8B on one chip at one user, 1,024 in / 256 out, with `keys` (hardware, engine, precisions)."""
    base = {"kind": "serve", "model": "llama-3.1-8b", "chips": 1, "input_tokens": 1024, "output_tokens": 256}
    return {**base, "concurrency": 1, "requests": 20, "plan": {"tp": 1}, **keys}


def _prefill(catalog: Catalog, hw: Hardware, chip: str, engine: str, weight: str, kv: str) -> dict[str, float]:
    """One 8,192-token prompt of Llama 3.1 8B through one chip: the iteration's pieces in seconds."""
    model = load_model(catalog, "llama-3.1-8b")
    plan = ReplicaPlan(tp=1, max_batch=64, weight_precision=weight, kv_precision=kv)
    r = setup_replica(catalog, model, hw.system(chip), engine, plan, PROMPT, 256)
    work = IterationInputs(
        np.asarray(float(PROMPT)), np.asarray(1.0), np.asarray(0.0), np.asarray(PROMPT * (PROMPT + 1) / 2.0)
    )
    out = iteration_breakdown(
        model, r.dev, r.topo, r.engine, weight, kv, Shapes.of(1, 1, 1, 0), work, r.typical_context, r.typical_prompt
    )
    return {k: float(v) for k, v in out.items()}


def test_nvfp4_weights_on_an_h100_prefill_as_int4_does(catalog: Catalog, hw: Hardware) -> None:
    """vLLM falls back to Marlin W4A16 below SM100 (vllm PR #19563): the prompt's weight GEMMs take int4's 193 ms
    at the bf16 rate, not 76.7 ms at the fp8 one."""
    assert matmul_precision("fp4", hw.chip("h100-sxm")) == "bf16"
    fp4 = _prefill(catalog, hw, "h100-sxm", "vllm", "fp4", "bf16")["gemm"]
    int4 = _prefill(catalog, hw, "h100-sxm", "vllm", "int4", "bf16")["gemm"]
    assert fp4 == pytest.approx(int4, rel=1e-3)  # compute-bound: 0.5625 against 0.516 B a weight does not show
    assert fp4 == pytest.approx(0.193, rel=0.01)


def test_nvfp4_weights_on_a_b200_still_multiply_in_fp4(catalog: Catalog, hw: Hardware) -> None:
    b200 = hw.chip("b200")
    assert matmul_precision("fp4", b200) == "fp4"
    assert float8_fallback("trtllm", b200, "fp4", "fp4") is None
    fp4 = _prefill(catalog, hw, "b200", "vllm", "fp4", "bf16")["gemm"]
    int4 = _prefill(catalog, hw, "b200", "vllm", "int4", "bf16")["gemm"]
    assert fp4 == pytest.approx(0.0320, rel=0.01)  # at the FP4 tensor rate, as before
    assert fp4 < int4 / 1.5  # int4's weight-only GEMMs take 60.9 ms at the bf16 rate


def test_nvfp4_off_blackwell_by_engine(hw: Hardware) -> None:
    h100 = hw.chip("h100-sxm")
    for engine in ("vllm", "sglang"):
        assert float8_fallback(engine, h100, "fp4", "fp8") == (
            f"h100-sxm has no FP4 units, so {engine} computes in bf16: fp4 weights run weight-only (dequantised in "
            "the kernel, the matmuls in bf16)"
        )
    assert float8_fallback("trtllm", h100, "fp8", "fp8") is None
    with pytest.raises(ChipwiseError) as err:  # the line names the units the refused part lacks
        float8_fallback("sglang", hw.chip("a100"), "fp4", "fp8")
    assert str(err.value).startswith("sglang cannot run an fp8 KV cache on a100-80gb: the chip has no FP8 units,")


def test_tensorrt_llm_refuses_nvfp4_weights_on_an_h100() -> None:
    """TensorRT-LLM has no NVFP4 GEMM on Hopper: it had printed a TPOT of 2.96 ms for one."""
    with pytest.raises(ChipwiseError) as err:
        cw.predict(_one_user(hardware="h100", engine="trtllm", precision="fp4"))
    assert str(err.value) == (
        "trtllm cannot run fp4 weights on h100-sxm: the chip has no FP4 units, and the engine has no known kernels "
        "that run them in bf16. Fix: serve fp8 weights, or serve with vllm, which runs them in bf16 there, or pick a "
        "chip with FP4 units."
    )


def test_an_int8_kv_cache_attends_in_bf16(catalog: Catalog, hw: Hardware) -> None:
    """The prompt's 33,558,528 (query, key) pairs x 524,288 FLOPs (2 x 32 heads x 256 x 32 layers) = 1.76e13 at
    the bf16 attention rate, 989.4 TF/s x 0.552 x 0.6 = 328 TF/s: 53.7 ms, as a bf16 cache's (24.3 ms before, at
    the int8 rate)."""
    int8 = _prefill(catalog, hw, "h100-sxm", "trtllm", "bf16", "int8")["attention"]
    bf16 = _prefill(catalog, hw, "h100-sxm", "trtllm", "bf16", "bf16")["attention"]
    assert int8 == pytest.approx(bf16, rel=1e-12)
    assert int8 == pytest.approx(PROMPT * (PROMPT + 1) / 2 * 524_288 / 328e12, rel=0.01)


def test_an_nvfp4_kv_cache_attends_in_fp8(catalog: Catalog, hw: Hardware) -> None:
    """NVIDIA's NVFP4 KV cache is dequantised to FP8 for attention: 11.6 ms for the prompt, as an fp8 cache's (7.42
    ms before, at the fp4 rate)."""
    fp4 = _prefill(catalog, hw, "b200", "trtllm", "fp4", "fp4")["attention"]
    fp8 = _prefill(catalog, hw, "b200", "trtllm", "fp4", "fp8")["attention"]
    assert fp4 == pytest.approx(fp8, rel=1e-12)
    assert fp8 == pytest.approx(0.0116, rel=0.01)


def test_an_fp8_kv_cache_attends_in_fp8_only_where_the_chip_has_fp8(catalog: Catalog, hw: Hardware) -> None:
    a100 = setup_replica(
        catalog, load_model(catalog, "llama-3.1-8b"), hw.system("a100"), "vllm", ReplicaPlan(tp=1), 1024, 256
    ).dev
    assert attention_rate(a100, "fp8") == attention_rate(a100, "bf16")  # read back to bf16 (vllm issue #3965)
    h100 = setup_replica(
        catalog, load_model(catalog, "llama-3.1-8b"), hw.system("h100-sxm"), "trtllm", ReplicaPlan(tp=1), 1024, 256
    ).dev
    assert attention_rate(h100, "fp8") > 1.5 * attention_rate(h100, "bf16")  # XQA multiplies in fp8


@pytest.mark.parametrize("chip", ["h100-sxm", "mi355x"])
def test_an_nvfp4_kv_cache_runs_on_blackwell_alone(chip: str) -> None:
    """The refusal rests on where the engines run an NVFP4 cache (Blackwell), not on FP4 attention, which none runs;
    an MI355X has FP4 units but no sourced NVFP4 cache."""
    with pytest.raises(ChipwiseError) as err:
        cw.predict(_one_user(hardware=chip, engine="vllm", precision="fp8", kv_precision="fp4"))
    assert str(err.value) == (
        f"an fp4 (NVFP4) KV cache runs on NVIDIA's Blackwell chips alone, and {chip} is not one. "
        "Fix: use an fp8 KV cache."
    )
