"""How validation reads serving rows: MLPerf DeepSeek-R1 prompt lengths, AMD's FP8 KV cache on Mixtral, a batch cap
past the KV cache, and a request rate printed too coarsely for Little's law."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_case_lengths import MLPERF_DATASETS, row_lengths
from chipwise.validation.serving_case_load import _rounding_share, achieved_rate, occupancy
from chipwise.validation.serving_simulation import simulate_case
from inference_rows import inference_row as _row


def _r1(output_len: str) -> dict[str, str]:
    return {"source_family": "MLPerf Inference v5.1", "model": "DeepSeek-R1 (DeepSeek-V3 arch)", "input_len": "",
            "output_len": output_len}  # fmt: skip


def test_deepseek_r1_prompts_are_the_datasets_mean_not_the_output() -> None:
    """The MLPerf DS-R1 set's mean prompt is 803.8 tokens (3,527,036 over 4,388 samples), its longest 3,140: the
    mean output (3,714) is no prompt length of it."""
    notes: list[str] = []
    assert row_lengths(_row(**_r1("3714")), notes) == (803.8, 3714.0)
    assert "4,388 samples): 804" in notes[0]
    data = MLPERF_DATASETS["deepseekr1"]
    assert (data.status, data.max_input) == ("estimate", 3140.0) and "derivation" in data.source


def test_input_equal_to_output_is_refused_past_the_longest_prompt() -> None:
    unknown = replace(MLPERF_DATASETS["deepseekr1"], mean_input=None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(MLPERF_DATASETS, "deepseekr1", unknown)
        with pytest.raises(ChipwiseError, match=r"mean prompt length is not published: .* \(3714\) would be longer"):
            row_lengths(_row(**_r1("3714")), [])
        # an output no longer than the longest prompt may still stand for the input, as the notes say
        notes: list[str] = []
        assert row_lengths(_row(**_r1("2000")), notes) == (2000.0, 2000.0)
        assert "taken equal to the mean output length (2000)" in notes[0]


def test_amd_mlperf_mixtral_runs_keep_their_kv_cache_in_fp8() -> None:
    """AMD's v5.1 Mixtral yamls set kv_cache_dtype: fp8 and its Quark script quantises the KV cache to FP8; the
    results' weight_data_types=fp8 says only the weights."""
    source = "github mlcommons/inference_results_v5.1 closed/AMD/results/8xMI300X_2xEPYC_9575F/mixtral-8x7b/Server/x"
    row = _row(precision="FP8 weights (weight_data_types=fp8)", source=source)
    assert (row.weight_precision, row.kv_precision) == ("fp8", "fp8")
    other = _row(precision="FP8 weights (weight_data_types=fp8)", source=source.replace("AMD", "Other"))
    assert other.kv_precision == "bf16"


def _capped(cap: int) -> dict[str, str]:
    return {"serving_engine": "vLLM", "precision": "BF16", "batch_or_concurrency": f"max_num_seqs {cap}",
            "scenario": "Offline", "notes": "num_prompts=1000"}  # fmt: skip


def test_a_batch_cap_past_the_kv_cache_says_so_with_the_simulated_preemptions(catalog: Catalog) -> None:
    """Llama 3.1 8B in BF16 on one H100, 1,000 + 1,000 tokens a request: the cache holds kv_tokens // 2,000
    sequences at full length, fewer than the stated 2,048, so vLLM admits on demand and preempts."""
    case = prepare(catalog, _row(**_capped(2048)))
    setup = case.setup.pools[0].setup
    assert case.kv_holds == setup.kv_tokens // 2000 < 2048
    sim = simulate_case(case)
    preempted = sim.summary["requests"]["preemptions"]
    assert preempted > 0
    said = f"batch cap 2048 exceeds the {case.kv_holds} sequences the KV cache holds at full length"
    assert f"{said}; the engine admits on demand and preempts ({preempted} preemptions simulated)" in sim.notes
    assert prepare(catalog, _row(**_capped(128))).kv_holds == 0  # a cap the cache holds: nothing to say


#: optimum-neuron's guidellm throughput run of Qwen3-30B-A3B on inf2 (TI209): 0.04 req/s printed with two decimals
_COARSE = {"output_len": "~250 (emulated, var 20)", "output_tokens_per_s_total": "8.07", "requests_per_s": "0.04",
           "ttft_ms": "52445", "tpot_ms": "174.8", "e2e_latency_s": "92.42"}  # fmt: skip


def test_a_coarsely_printed_rate_is_derived_from_the_tokens_generated() -> None:
    """'0.04' is 0.035-0.045 (+-12.5%): the rate is 8.07 output tokens/s over the 229.7 tokens a request generated
    (1 + (92.42 - 52.445) / 0.1748), and Little's law takes those 229.7 tokens too: N = 0.03513 x (52.445 + 228.7
    x 0.1748) = 0.03513 x 92.42 = 3.247 requests in flight (it read 0.04 x (52.445 + 249 x 0.1748) = 3.84)."""
    row = _row(**_COARSE)
    generated = 1.0 + (92.42 - 52.445) / 0.1748
    rate, note = achieved_rate(row)
    assert rate == pytest.approx(8.07 / generated)
    assert note.startswith("requests/s printed as 0.04: ") and note.endswith("8.07 / 230 = 0.0351")
    assert occupancy(row) == pytest.approx(8.07 / generated * 92.42, rel=1e-9)
    assert occupancy(row) == pytest.approx(3.247, abs=1e-3)
    assert _rounding_share("0.04") == pytest.approx(0.125)
    assert _rounding_share("0.11") == pytest.approx(0.005 / 0.11)  # 4.5%: printed finely enough, kept
    assert achieved_rate(_row(**{**_COARSE, "requests_per_s": "0.11"})) == (0.11, "")
