"""Activation-quantise kernels in an eager iteration's launch count: TensorRT-LLM's PyTorch back end writes the O
projection's fp8/NVFP4 input from the attention kernel, the down projection's fp8 input from SwiGLU, and, under
tensor parallelism on layers wider than 4096, the QKV and gate-up inputs from its fused all-reduce + RMSNorm + quant
kernels (serve.iteration.QUANT_FUSING_ENGINES). An fp8 prompt had been priced slower than bf16 from four quantise
launches a layer the engine never makes. Counts by hand from EAGER_LAUNCHES: GQA attention 6, dense MLP 4, one
all-reduce each under TP."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.iteration import Shapes, eager_launches, quantise_launches
from chipwise.workload.presets import load_model


@pytest.mark.parametrize("chip", ["b200", "h100-sxm"])
def test_llama_70b_fp8_at_tp8_on_trtllm_launches_what_bf16_does(catalog: Catalog, hw: Hardware, chip: str) -> None:
    """80 layers x (attention 6 + AR 1, MLP 4 + AR 1) = 960 in bf16 and, every quantise fused, in fp8 too; it had
    read 80 x 16 = 1,280 (88.3 ms of launches at 69 us against bf16's 66.2 ms)."""
    llama = load_model(catalog, "llama-3.1-70b")
    c, tp8 = hw.chip(chip), Shapes.of(8)
    assert float(eager_launches(llama, c, "bf16", tp8, "trtllm")) == 80 * 12
    assert float(eager_launches(llama, c, "fp8", tp8, "trtllm")) == 80 * 12
    # an engine that fuses none (SGLang, and the count with no engine named) launches all four
    assert float(eager_launches(llama, c, "fp8", tp8, "sglang")) == 80 * 16
    assert float(eager_launches(llama, c, "fp8", tp8)) == 80 * 16


def test_nvfp4_keeps_its_down_projection_quantise(catalog: Catalog, hw: Hardware) -> None:
    """SwiGLU quantises to fp8 only: NVFP4's down-projection input is one kernel a layer, 80 x 13 = 1,040."""
    llama = load_model(catalog, "llama-3.1-70b")
    assert float(eager_launches(llama, hw.chip("b200"), "fp4", Shapes.of(8), "trtllm")) == 80 * 13
    attn, mlp = quantise_launches(llama, hw.chip("b200"), "fp4", Shapes.of(8), "trtllm")
    assert (float(attn), float(mlp)) == (0.0, 1.0)


def test_the_all_reduce_fusions_need_tp_and_a_hidden_size_over_4096(catalog: Catalog, hw: Hardware) -> None:
    """On one GPU, or on llama-3.1-8b (hidden 4096), the QKV and gate-up quantise kernels run on their own."""
    h100 = hw.chip("h100-sxm")
    llama70, llama8 = load_model(catalog, "llama-3.1-70b"), load_model(catalog, "llama-3.1-8b")
    # TP1: attention 6 + QKV quant, MLP 4 + gate-up quant (O and down fused): 80 x 12, against bf16's 80 x 10
    assert float(eager_launches(llama70, h100, "fp8", Shapes.of(1), "trtllm")) == 80 * 12
    # TP2 on 8B: (6 + 1 + AR) + (4 + 1 + AR) = 14 a layer; SGLang (6 + 2 + AR) + (4 + 2 + AR) = 16
    assert float(eager_launches(llama8, h100, "fp8", Shapes.of(2), "trtllm")) == 32 * 14
    assert float(eager_launches(llama8, h100, "fp8", Shapes.of(2), "sglang")) == 32 * 16
    # under attention DP the pre-MLP fusion is off: both stay
    attn, mlp = quantise_launches(llama70, h100, "fp8", Shapes.of(8, 1, 1, 1), "trtllm")
    assert (float(attn), float(mlp)) == (1.0, 1.0)


def test_weight_only_and_mla_models_are_counted_as_before(catalog: Catalog, hw: Hardware) -> None:
    """fp8 weights on an A100 run weight-only (no quantise kernels at all); DeepSeek's MLA layers keep every one."""
    llama = load_model(catalog, "llama-3.1-70b")
    assert float(eager_launches(llama, hw.chip("a100-80gb"), "fp8", Shapes.of(8), "trtllm")) == 80 * 12
    deepseek = load_model(catalog, "deepseek-v3")
    b200 = hw.chip("b200")
    assert float(eager_launches(deepseek, b200, "fp8", Shapes.of(8), "trtllm")) == 3 * (19 + 7) + 58 * (19 + 17)


def test_a_moe_models_qkv_quantise_is_not_folded_into_its_reduce(catalog: Catalog, hw: Hardware) -> None:
    """Mixtral 8x22B (56 layers, hidden 6,144) in fp8 at TP8 on TensorRT-LLM: the attention kernel writes O's fp8
    input, but the QKV input follows a MoE block's reduce, which no source folds: one quantise left in attention,
    and the MoE block's two counted as before. 56 x (6 + 1 + 1) attention + the MoE block's; it had folded QKV's too,
    one kernel a layer short."""
    mixtral = load_model(catalog, "mixtral-8x22b")
    c, tp8 = hw.chip("h100-sxm"), Shapes.of(8)
    attn, _ = quantise_launches(mixtral, c, "fp8", tp8, "trtllm")
    assert float(attn) == 1.0
    assert float(eager_launches(mixtral, c, "fp8", tp8, "trtllm")) - float(eager_launches(mixtral, c, "bf16", tp8)) == (
        56 * (1 + 2)
    )


def test_the_search_and_the_simulator_count_the_launches_the_engine_makes(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B at TP8 on 8 B200 under TensorRT-LLM: an fp8 prompt's eager launches are bf16's 960 (every
    quantise fused), so its host-launch floor is bf16's, in the search's estimate (80 x 12 launches at the host's
    launch time, 66.2 ms, and a little after) and in predict's simulated prompt alike; each had counted 1,280
    (88.3 ms against 66.2 ms), an fp8 prompt priced slower than bf16's."""
    from chipwise.api import predict
    from chipwise.perf.device import topology_of
    from chipwise.serve.candidates import enumerate_candidates
    from chipwise.serve.engine import engine_profile
    from chipwise.serve.estimate import estimate

    llama, b200 = load_model(catalog, "llama-3.1-70b"), hw.system("b200")
    eng = engine_profile(catalog, "trtllm", b200.chip.family)
    cand = enumerate_candidates(llama, topology_of(b200), None, {"tp": 8, "pp": 1, "ep": 1, "max_batch": 1})
    floor = 80 * 12 * eng.on_host(b200.host_overhead).host_eager_launch_s
    est = estimate(llama, b200, eng, cand, "fp8", "fp8", 1024.0, 256.0, eng.max_tokens)
    assert floor <= float(est.prefill_s[0]) < 1.1 * floor
    launched = {}
    for precision in ("bf16", "fp8"):
        scenario = {"kind": "serve", "model": "llama-3.1-70b", "hardware": "b200", "chips": 8, "plan": {"tp": 8},
                    "precision": precision, "input_tokens": 1024, "output_tokens": 16, "concurrency": 1,
                    "requests": 4}  # fmt: skip
        launched[precision] = predict(scenario)["prefill_one_prompt"]["host_launches_s"]
    assert launched["fp8"] == pytest.approx(launched["bf16"], rel=1e-9) == pytest.approx(floor, rel=1e-9)
