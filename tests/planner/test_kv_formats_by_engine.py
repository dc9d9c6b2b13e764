"""An int8 KV cache is a format of TensorRT-LLM's, not vLLM's or SGLang's."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError

SCENARIO = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100, chips: 1, engine: ENGINE, precision: bf16, "
    "kv_precision: int8, input_tokens: 1024, output_tokens: 256, arrival_rate: 4, requests: 100}"
)


@pytest.mark.parametrize(("engine", "chip", "named"), [("vllm", "h100", "vllm"), ("sglang", "h100", "sglang"),
                                                       ("vllm", "trn2", "vllm-neuron")])  # fmt: skip
def test_an_engine_without_an_int8_cache_refuses_one(engine: str, chip: str, named: str) -> None:
    """It had been priced at half bf16's bytes: 841,872 tokens a replica where vLLM holds 438,656 in bf16; on a
    Trainium, vLLM's Neuron platform takes vLLM's formats (it had passed there)."""
    scenario = SCENARIO.replace("ENGINE", engine).replace("hardware: h100", f"hardware: {chip}")
    with pytest.raises(ChipwiseError, match=f"{named} has no int8 KV cache"):
        cw.predict(scenario)


def test_tensorrt_llm_holds_an_int8_cache_and_a_search_skips_the_chips_whose_engine_cannot() -> None:
    """TensorRT-LLM's INT8 KV cache is priced (a byte an element, as fp8's); plan serve names mi300x, whose vLLM
    has none, among the chips it could not rank."""
    r = cw.predict(SCENARIO.replace("ENGINE", "trtllm"))
    assert r["kv_precision"] == "int8"
    report = cw.plan_serve("llama-3.1-8b", rate=4, kv_precision="int8", hardware="h100-sxm,mi300x")
    assert [row["hardware"] for row in report["results"]][:1] == ["h100-sxm"]
    assert any("mi300x: vllm has no int8 KV cache" in f"{s['hardware']}: {s['reason']}" for s in report["skipped"])
