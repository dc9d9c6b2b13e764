"""AMD's MLPerf v5.1 harness runs vLLM's FP8 GEMMs as hipBLASLt tuned them: its rows are priced at the rate its own
tuning results measured, other runs of vLLM on CDNA at the engine's fitted one."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.perf.device import device_of
from chipwise.perf.serving import streamed_gemm_time
from chipwise.serve.engine import engine_profile
from chipwise.validation.serving import catalog_rows
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_case_engine import AMD_MLPERF_TUNED_COMPUTE_SCALE, tuned_compute_scale
from inference_rows import inference_row

#: (output features, tokens, input features, TFLOP/s) from AMD's tuning results for Llama 2 70B on MI300X
#: (MLCommons inference_results_v5.1 at github ntuhpc/inference_results_v5.1 @a634ab77, closed/AMD/code/
#: llama2-70b-99.9/scripts/gemm_llama2-70b/aa0bda7b/tuning_spx_1700_formatted.txt: hipBLASLt's measured GFLOP/s)
TUNED = [
    (10240, 1024, 8192, 1294.83),
    (10240, 2032, 8192, 1325.45),
    (10240, 1696, 8192, 1262.02),
    (8192, 1775, 8192, 1365.21),
    (8192, 2432, 8192, 1361.84),
    (57344, 1424, 8192, 1352.2),
]


def test_the_scale_is_the_tuned_rate_over_the_models(catalog: Catalog) -> None:
    """The constant is what the tuning results measure against perf.serving's GEMM at compute scale 1: a change to
    the GEMM model or to CDNA3's FP8 fraction that moves this ratio must move the constant with it."""
    dev = device_of(hardware(catalog).system("mi300x"))
    ratios = []
    for out, tokens, inp, tflops in TUNED:
        measured = 2.0 * out * tokens * inp / (tflops * 1e12)
        ratios.append(float(streamed_gemm_time(tokens, out, inp, dev, "fp8", 1.0)) / measured)
    assert all(1.2 <= r <= 1.4 for r in ratios), ratios
    assert math.exp(sum(map(math.log, ratios)) / len(ratios)) == pytest.approx(AMD_MLPERF_TUNED_COMPUTE_SCALE, abs=0.01)
    assert engine_profile(catalog, "vllm", "cdna3").compute_scale < AMD_MLPERF_TUNED_COMPUTE_SCALE / 2.0


def test_only_amds_v51_vllm_harness_is_tuned() -> None:
    v51 = inference_row(source_family="MLPerf Inference v5.1")
    assert tuned_compute_scale(v51, "vllm", "amd") == AMD_MLPERF_TUNED_COMPUTE_SCALE
    assert tuned_compute_scale(v51, "sglang", "amd") is None
    assert tuned_compute_scale(v51, "vllm", "nvidia") is None
    assert tuned_compute_scale(inference_row(source_family="MLPerf Inference v4.1"), "vllm", "amd") is None
    assert tuned_compute_scale(inference_row(source_family="AMD ROCm perf page"), "vllm", "amd") is None


def test_the_shared_tables_amd_mlperf_rows_run_the_tuned_gemms(catalog: Catalog, shared_data: Path) -> None:
    rows = {r.id: r for r in catalog_rows(catalog, shared_data / "groundtruth_inference.csv")}
    stock = engine_profile(catalog, "vllm", "cdna3").compute_scale
    for rid, scale in (
        ("I044", AMD_MLPERF_TUNED_COMPUTE_SCALE),
        ("I046", AMD_MLPERF_TUNED_COMPUTE_SCALE),
        ("I012", stock),
    ):
        case = prepare(catalog, rows[rid])
        assert case.setup.pools[0].setup.engine.compute_scale == pytest.approx(scale), rid
        assert any("tuned shape by shape" in n for n in case.notes) == (scale != stock), rid
        # calibration prices the case with another profile; the harness's tuned rate stays its own
        refit = case.with_profile(catalog, engine_profile(catalog, "vllm", "cdna3"))
        assert refit.setup.pools[0].setup.engine.compute_scale == pytest.approx(scale), rid
