"""A checkpoint's quantization_config read as the weight precision serving's `auto` prices (finding: AWQ, GPTQ,
compressed-tensors, ModelOpt and bitsandbytes checkpoints had been priced as bf16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.quant import check_weight_precision
from chipwise.workload import load_model
from chipwise.workload.hf_config import from_hf_config

LLAMA_CFG = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 1000,
}


@pytest.mark.parametrize(
    ("quant", "precision"),
    [
        ({"quant_method": "awq", "bits": 4, "group_size": 128}, "int4"),
        ({"quant_method": "gptq", "bits": 4}, "int4"),
        ({"quant_method": "gptq", "bits": 8}, "w8a16"),
        ({"quant_method": "awq", "bits": 8}, "w8a16"),
        ({"quant_method": "compressed-tensors",
          "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}}, "fp8"),
        ({"quant_method": "compressed-tensors",
          "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}}, "int4"),
        ({"quant_method": "compressed-tensors",
          "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int"}}}}, "w8a16"),
        ({"quant_method": "compressed-tensors",
          "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int"},
                                        "input_activations": {"num_bits": 8, "type": "int"}}}}, "int8"),
        ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8"),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "fp4"),
        ({"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4"}}, "fp4"),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "int4"),
        ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "w8a16"),
        ({"quant_method": "FP8"}, "fp8"),
        ({"quant_method": "fbgemm_fp8"}, "fp8"),
        ({"quant_method": "mxfp4"}, "mxfp4"),
    ],
)  # fmt: skip
def test_a_checkpoints_quantisation_maps_to_its_precision(quant: dict[str, Any], precision: str) -> None:
    from chipwise.workload.hf_config import released_precision

    assert released_precision({"quantization_config": quant}) == precision
    assert released_precision({}) == "bf16"


@pytest.mark.parametrize(
    "quant",
    [
        {"quant_method": "awq", "bits": 3},
        {"quant_method": "hqq"},
        {"quant_method": "modelopt", "quant_algo": "W4A8"},
        {"quant_method": "compressed-tensors"},  # no config_groups: an AttributeError had been a traceback
    ],
)
def test_an_unmapped_quantisation_is_one_line_where_auto_needs_it(quant: dict[str, Any]) -> None:
    """A 4-bit AWQ 70B had been sized as bf16 (141 GB, TP2 on H100); an unmapped format is asked for, not guessed,
    and only where the checkpoint's own precision is needed (a plan given --precision still runs)."""
    cfg = {**LLAMA_CFG, "quantization_config": quant}
    spec = from_hf_config(cfg, "q", where="q.json")
    assert spec.params_total > 0
    with pytest.raises(ChipwiseError) as exc:
        _ = spec.released_precision
    assert str(exc.value) == (
        f"q.json: quantization_config quant_method '{quant['quant_method']}' is not one chipwise maps to a weight "
        "precision. Fix: pass --precision (a scenario's precision:), e.g. int4, fp8 or bf16."
    )


def test_an_awq_70b_is_served_as_int4_by_default(tmp_path: Path) -> None:
    cat = load_catalog()
    cfg = {**cat.model_config("llama-3.1-70b"), "quantization_config": {"quant_method": "awq", "bits": 4}}
    path = tmp_path / "llama70-awq.json"
    path.write_text(json.dumps(cfg))
    spec = load_model(cat, str(path))
    assert check_weight_precision("auto", spec) == "int4"
    assert check_weight_precision("bf16", spec) == "bf16"
