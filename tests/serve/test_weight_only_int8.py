"""8-bit GPTQ/AWQ/bitsandbytes checkpoints are weight-only (W8A16): 1-byte weights, 16-bit matmuls. An 8-bit GPTQ
Llama 3.1 8B had prefilled an 8,192-token prompt on one H100 in 171 ms against its 4-bit twin's 291 ms: its
matmuls ran at the int8 tensor rate, as a W8A8 (compressed-tensors int8) checkpoint's do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.serving_predict import predict_serving
from chipwise.serve.quant import matmul_precision, stored_bytes
from scenario_kinds import serve_scenario


def test_w8a16_multiplies_in_bf16_with_one_byte_weights(hw: Hardware) -> None:
    h100 = hw.chip("h100-sxm")
    assert (matmul_precision("w8a16", h100), stored_bytes("w8a16")) == ("bf16", 1.0)
    assert matmul_precision("int8", h100) == "int8"  # W8A8


def _prefill(catalog: Catalog, folder: Path, bits: int, precision: str = "auto") -> tuple[str, float, float]:
    """(weight precision, one 8,192-token prompt's prefill in s, weights per rank in GiB) of a GPTQ Llama 3.1 8B."""
    cfg = {**catalog.model_config("llama-3.1-8b"), "quantization_config": {"quant_method": "gptq", "bits": bits}}
    (folder / f"gptq{bits}.json").write_text(json.dumps(cfg))
    (folder / f"p{bits}.yaml").write_text(
        f"kind: serve\nmodel: gptq{bits}.json\nhardware: h100-sxm\nchips: 1\ninput_tokens: 8192\n"
        f"output_tokens: 16\nconcurrency: 1\nrequests: 20\nprecision: {precision}\nplan: {{tp: 1}}\n"
    )
    plan = predict_serving(catalog, serve_scenario(str(folder / f"p{bits}.yaml"), catalog))
    weights = plan["plan"]["memory_per_rank_gib"]["weights"]
    return plan["plan"]["weight_precision"], plan["prefill_one_prompt"]["seconds"], weights


def test_an_8bit_gptq_prefills_no_faster_than_a_4bit_one(catalog: Catalog, tmp_path: Path) -> None:
    w8, prefill8, weights8 = _prefill(catalog, tmp_path, 8)
    w4, prefill4, _ = _prefill(catalog, tmp_path, 4)
    _, prefill_w8a8, weights_w8a8 = _prefill(catalog, tmp_path, 8, "int8")
    assert (w8, w4) == ("w8a16", "int4")
    assert prefill8 == pytest.approx(prefill4, rel=0.01)  # both multiply in bf16 (171 ms against 291 ms before)
    assert prefill8 > 1.5 * prefill_w8a8  # W8A8 int8 runs at the int8 tensor rate
    assert weights8 == pytest.approx(weights_w8a8, rel=1e-9)  # one byte a quantised weight, as int8's
