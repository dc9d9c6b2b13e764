"""Load-generator protocols: a validation case runs the benchmark the row ran (requests, lengths, window)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.validation.groundtruth import read_inference
from chipwise.validation.harness import (
    AIPERF,
    BENCH_SERVING,
    GENAI_PERF,
    GUIDELLM,
    INFERENCEX,
    SGLANG_RANDOM_DEFAULT,
    SHAREGPT_MAX_TOTAL,
    SHAREGPT_MIN_TOKENS,
    SglangRun,
    harness_of,
    mean_length,
    sharegpt_replies,
)
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving_case import Case, prepare
from chipwise.validation.serving_case_lengths import generated_length, served_prompt
from chipwise.validation.serving_row_engine import parse_compiled_length, parse_recv_interval, states_piecewise_graphs
from chipwise.validation.serving_row_load import parse_request_count
from chipwise.validation.serving_simulation import _run, predict_case, simulate_case
from inference_rows import inference_row, write_rows


def test_inferencex_llama_70b_fp8_trtllm_points_below_tp8_wait_for_a_batch(catalog: Catalog, tmp_path: Path) -> None:
    """70b_fp8_h200_trt_slurm.sh holds prompts at 1k/1k below TP8; at TP8, or at 1k/8k, it does not."""
    row = {
        "model": "Llama-3.1-70B-Instruct",
        "chip": "h200",
        "num_chips": "2",
        "precision": "FP8",
        "parallelism": "TP2",
        "serving_engine": "TensorRT-LLM 1.1.0rc1",
        "scenario": "InferenceX benchmark_serving closed-loop sweep, 4 concurrent requests",
        "batch_or_concurrency": "concurrency=4",
        "input_len": "1024",
        "output_len": "1024",
        "ttft_ms": "300",
        "tpot_ms": "18",
    }
    tp8 = {**row, "id": "X2", "num_chips": "8", "parallelism": "TP8"}
    long_out = {**row, "id": "X3", "output_len": "8192"}
    rows = read_inference(write_rows(tmp_path / "rows.csv", row, tp8, long_out), known_chips=frozenset({"h200"}))
    plans = [prepare(catalog, r).setup.pools[0].setup.plan for r in rows]
    assert [(p.batch_wait_iters, p.batch_wait_ratio) for p in plans] == [(20, 0.9), (0, 0.0), (0, 0.0)]


@pytest.mark.parametrize(
    ("scenario", "source_family", "expect"),
    [
        ("InferenceX benchmark_serving closed-loop sweep, 8 concurrent requests", "", INFERENCEX),
        ("closed-loop sweep", "SemiAnalysis InferenceMAX", INFERENCEX),
        ("sa-bench benchmark_serving, max concurrency 256", "NVIDIA srt-slurm recipe", INFERENCEX),
        ("AIPerf closed-loop concurrency sweep, 50 concurrent requests", "NVIDIA NIM benchmarking docs", AIPERF),
        ("genai-perf concurrency 16", "", GENAI_PERF),
        ("GenAI-Perf closed-loop sweep, 25 concurrent requests", "NVIDIA NIM GenAI-Perf dataset", GENAI_PERF),
        ("perf_analyzer --concurrency-range 8", "", GENAI_PERF),
        ("guidellm throughput (saturating, max concurrency)", "", GUIDELLM),
        ("vllm bench serve --max-concurrency 64", "", BENCH_SERVING),
        ("closed loop, python -m sglang.bench_serving", "", BENCH_SERVING),
        ("benchmarks/benchmark_serving.py, 32 users", "vLLM docs", BENCH_SERVING),
        ("LLMPerf against trtllm-serve, 1 concurrent request", "", None),
    ],
)
def test_the_load_generator_is_read_from_the_row(scenario: str, source_family: str, expect: object) -> None:
    assert harness_of(inference_row(scenario=scenario, source_family=source_family)) is expect


def test_inferencex_lengths_are_uniform_below_the_stated_length() -> None:
    """benchmark_serving --random-range-ratio 0.8: randint(int(0.8 L), L + 1)."""
    dist = INFERENCEX.lengths(1024)
    assert (dist.kind, dist.low, dist.high) == ("uniform", 819, 1024)
    assert mean_length(INFERENCEX, 1024.0) == pytest.approx(921.5)
    assert mean_length(AIPERF, 1024.0) == 1024.0  # a stated length is the length
    sample = dist.sample(20000, np.random.default_rng(0))
    assert sample.min() == 819 and sample.max() == 1024


def test_sglangs_random_dataset_at_its_default_range_ratio_spreads_lengths_from_one() -> None:
    """sglang.bench_serving --dataset-name random without --random-range-ratio draws lengths uniform in [1, L]
    (the ratio defaults to 0); a row that says so states the mean it counted (500 of --random-input-len 1000), so L
    is twice that. Without the note, a stated length is the length."""
    scenario = "sglang.bench_serving random-dataset closed loop, max-concurrency 100, 500 prompts"
    said = inference_row(
        scenario=scenario, notes="--random-range-ratio not set (SGLang default), so lengths are random"
    )
    assert harness_of(said) is SGLANG_RANDOM_DEFAULT
    assert harness_of(inference_row(scenario=scenario)) is BENCH_SERVING
    dist = SGLANG_RANDOM_DEFAULT.lengths(500.0)
    assert (dist.kind, dist.low, dist.high) == ("uniform", 1, 1000)
    assert mean_length(SGLANG_RANDOM_DEFAULT, 500.0) == pytest.approx(500.5)


def test_an_inferencex_point_issues_ten_requests_per_user_and_times_the_whole_run(catalog: Catalog) -> None:
    row = inference_row(
        scenario="InferenceX benchmark_serving closed-loop sweep, 16 concurrent requests",
        batch_or_concurrency="concurrency=16",
        input_len="1024",
        output_len="1024",
        ttft_ms="300",
        tpot_ms="20",
    )
    case = prepare(catalog, row)
    assert case.job.requests == 160 and case.basis == "run" and not case.after_warmup
    assert (case.job.input.low, case.job.input.high) == (819, 1024)
    assert (case.job.output.low, case.job.output.high) == (819, 1024)
    assert any("InferenceX" in n for n in case.notes)


def _long_prompts_at_32_users(scenario: str, **columns: str) -> InferenceRow:
    """A closed-loop point of 32 users with 4,000-token prompts: the first burst's queue is long."""
    return inference_row(
        scenario=scenario,
        batch_or_concurrency="concurrency=32",
        input_len="4000",
        output_len="200",
        ttft_ms="300",
        tpot_ms="20",
        **columns,
    )


def test_aiperf_latencies_leave_out_the_first_burst(catalog: Catalog) -> None:
    """Every user's first request arrives at t = 0, so their prompts queue behind one another; AIPerf's warm-up
    discards them. The window starts when the last of them has finished and ends before the final drain."""
    row = _long_prompts_at_32_users(
        "AIPerf closed-loop concurrency sweep, 32 concurrent requests", source_family="NVIDIA NIM benchmarking docs"
    )
    case = prepare(catalog, row)
    assert case.after_warmup and case.job.requests == 8 * 32
    warm = _run(case.job, case.setup, 0, case.basis, 0.0, after_warmup=True)["ttft_s"]["mean"]
    cold = _run(case.job, case.setup, 0, case.basis, 0.0, after_warmup=False)["ttft_s"]["mean"]
    assert warm < cold
    (ttft,) = [r.predicted for r in predict_case(case) if r.metric == "ttft_s"]
    assert ttft == pytest.approx(warm)


@pytest.mark.parametrize(
    ("ends", "stop"),
    [
        ([5.0, 15.0, 30.0], 36.0),  # a request ends in each of the first three 12 s windows
        ([5.0, 30.0, 40.0, 50.0], 60.0),  # the second window saw none: three in a row from the third
        ([5.0, 30.0, 60.0, 90.0], 120.0),  # never three in a row: the tenth window ends it
        ([], 120.0),
    ],
)
def test_a_time_window_measurement_stops_after_three_windows_in_a_row_with_a_completion(
    ends: list[float], stop: float
) -> None:
    assert GENAI_PERF.measurement_end(np.array([*ends, np.nan])) == stop


def test_genai_perf_times_the_requests_that_end_within_its_windows_the_first_burst_included(catalog: Catalog) -> None:
    """2024 GenAI-Perf has no warm-up: every user starts at t = 0 and the export holds every request that ended in
    a window, so the burst of first prompts is in it; the run stops issuing after ten windows."""
    case = prepare(catalog, _long_prompts_at_32_users("GenAI-Perf closed-loop sweep, 32 concurrent requests"))
    assert case.windows is GENAI_PERF and not case.after_warmup and case.job.duration_s == pytest.approx(120.0)
    assert any("12 s windows" in n for n in case.notes)
    (ttft,) = [r.predicted for r in predict_case(case) if r.metric == "ttft_s"]
    warm = _run(case.job, case.setup, 0, case.basis, 0.0, after_warmup=True)["ttft_s"]["mean"]
    assert ttft > warm  # the first burst's queue counts
    counted = prepare(catalog, _long_prompts_at_32_users("genai-perf --concurrency 32 --request-count 64"))
    assert counted.windows is None and counted.job.requests == 64  # a stated count (GenAI-Perf from late 2024)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("30000 requests", 30000),
        ("all 274560 queries issued at once", 274560),
        ("--max-concurrency 64 --num-prompts 640 --request-rate inf", 640),
        ("num_prompts=500", 500),
        ("--num-prompts=1,000", 1000),
        ("genai-perf --concurrency 50 --request-count 400", 400),
        ("num_requests: 200", 200),
        ("concurrency=64", None),
        ("rate 10 req/s", None),
    ],
)
def test_request_counts_are_read_in_prose_and_as_benchmark_flags(text: str, count: int | None) -> None:
    assert parse_request_count(text) == count


def test_a_closed_loop_runs_the_request_count_it_states(catalog: Catalog) -> None:
    """The run's own count, the first burst of prompts included, not a shorter window that would weigh that burst
    more; and a stated count wins over a generator's per-user rule."""
    stated = inference_row(
        scenario="closed-loop sweep",
        batch_or_concurrency="--max-concurrency 64 --num-prompts 640",
        input_len="1024",
        output_len="256",
    )
    case = prepare(catalog, stated)
    assert case.job.requests == 640 and case.basis == "run"
    inferencex = inference_row(
        scenario="InferenceX benchmark_serving closed-loop sweep",
        batch_or_concurrency="concurrency=16; 80 prompts",
        input_len="1024",
        output_len="1024",
    )
    case = prepare(catalog, inferencex)
    assert case.job.requests == 80 and case.basis == "run"
    assert any("80 requests, all queued at once" in n for n in case.notes)


def test_vllm_and_sglang_bench_serving_issue_1000_prompts_unless_told(catalog: Catalog) -> None:
    row = inference_row(scenario="vllm bench serve, random dataset", batch_or_concurrency="concurrency=32")
    case = prepare(catalog, row)
    assert case.job.requests == 1000 and case.basis == "run" and not case.after_warmup
    assert case.job.input.low == case.job.input.high  # a stated length is the length


def test_a_run_is_simulated_at_the_output_length_it_generated(catalog: Catalog) -> None:
    """guidellm's emulated data asks for ~250 tokens; requests that stop at an end-of-sequence token generate fewer.
    The row's own mean latencies say how many: e2e = TTFT + (O - 1) TPOT."""
    asked = {
        "scenario": "guidellm throughput (saturating, max concurrency)",
        "batch_or_concurrency": "max concurrent users=32",
        "input_len": "~1500 (emulated, var 150)",
        "output_len": "~250 (emulated, var 20)",
    }
    row = inference_row(**asked, ttft_ms="2138", tpot_ms="59.09", e2e_latency_s="14.76")
    assert generated_length(row) == pytest.approx(1.0 + (14.76 - 2.138) / 0.05909)  # 214.6
    case = prepare(catalog, row)
    assert case.job.output.mean == pytest.approx(215.0)
    assert (case.job.output.low, case.job.output.high) == (195, 235)  # guidellm's +-20 around what was generated
    assert any("generated 215 tokens a request where 250 were asked for" in n for n in case.notes)
    # without latencies, from the request rate when it has three significant digits, not from a rounded one
    by_rate = inference_row(**asked, output_tokens_per_s_total="426.2", requests_per_s="2.002")
    assert generated_length(by_rate) == pytest.approx(426.2 / 2.002)
    assert generated_length(inference_row(**asked, output_tokens_per_s_total="8.07", requests_per_s="0.04")) is None
    # a stated length that is the length (ignore_eos benchmarks) is kept
    fixed = inference_row(output_len="1024", ttft_ms="200", tpot_ms="20", e2e_latency_s="10")
    assert generated_length(fixed) is None


def test_sharegpt_replies_spread_as_the_benchmarks_sample_them() -> None:
    """A lognormal with CV 0.93 keeps the stated mean, its median about 0.73 of it (the SGLang cookbook's one-user
    run: 156 against 212.5 tokens), within the benchmarks' filter: 4 tokens at least, 2,048 with the prompt."""
    lengths = sharegpt_replies(195.0, 215.0).sample(200_000, np.random.default_rng(0))
    assert lengths.mean() == pytest.approx(195.0, rel=0.01)
    assert np.median(lengths) / lengths.mean() == pytest.approx(0.73, abs=0.02)
    assert lengths.min() >= SHAREGPT_MIN_TOKENS and lengths.max() <= SHAREGPT_MAX_TOTAL - 215
    # near the room a long prompt leaves, the bounded lengths still keep the stated mean
    near_cap = sharegpt_replies(600.0, 1000.0)
    assert near_cap.high == SHAREGPT_MAX_TOTAL - 1000
    assert near_cap.expected == pytest.approx(600.0, rel=0.01)


def test_a_sharegpt_burst_drains_at_the_pace_of_its_longest_replies(catalog: Catalog) -> None:
    """1,000 prompts released at once: with ShareGPT's replies the run lasts until its longest ones finish at a small
    batch, so it delivers fewer tokens a second than the same burst at the mean length (GPUStack's gpt-oss-120b on
    four H100s read +178% at the mean length, docs/research/heldout_gpustack_h100.csv W006)."""
    burst = {
        "model": "gpt-oss-120b",
        "num_chips": "4",
        "precision": "MXFP4 MoE weights",
        "serving_engine": "vLLM v0.10.2",
        "parallelism": "TP4",
        "batch_or_concurrency": "burst=1000 prompts",
        "input_len": "215",
        "output_len": "196",
    }
    fixed = prepare(catalog, inference_row(**burst, scenario="vllm bench serve, random dataset, request rate inf"))
    spread = prepare(catalog, inference_row(**burst, scenario="vllm bench serve, ShareGPT dataset, request rate inf"))
    assert fixed.job.output.kind == "fixed" and spread.job.output.kind == "lognormal"
    assert any("ShareGPT replies" in n for n in spread.notes)
    rate = {c.job.output.kind: predict_case(c)[0].predicted for c in (fixed, spread)}
    assert rate["lognormal"] < 0.6 * rate["fixed"]


@pytest.mark.parametrize(
    ("text", "interval"),
    [
        ("SGLang v0.5.12, --scheduler-recv-interval 30 --stream-interval 30", 30),
        ("server args: scheduler_recv_interval=10, numa_node=None", 10),
        ("scheduler-recv-interval: 1", 1),
        ("--stream-interval 30", None),
    ],
)
def test_sglang_polling_intervals_are_read_as_flags_and_server_args(text: str, interval: int | None) -> None:
    assert parse_recv_interval(text) == interval


def test_inferencex_sglang_recipes_poll_every_10_then_30_iterations_on_blackwell_only() -> None:
    """dsr1_fp8_b200.sh et al.: CONC >= 16 -> 30, else 10; DP attention -> 1; the H200 scripts set nothing."""
    rule = INFERENCEX.recv_interval
    assert [rule("sglang", "blackwell", users, False) for users in (1, 8, 15, 16, 64)] == [10, 10, 10, 30, 30]
    assert rule("sglang", "blackwell-ultra", 32, False) == 30
    assert rule("sglang", "blackwell", 32, True) == 1
    assert rule("sglang", "hopper", 32, False) == 1
    assert rule("trtllm", "blackwell", 32, False) == 1
    assert AIPERF.recv_interval("sglang", "blackwell", 32, False) == 1


def test_a_validation_case_runs_the_polling_its_row_or_its_recipes_set(catalog: Catalog, tmp_path: Path) -> None:
    sglang = {
        "chip": "b200",
        "serving_engine": "SGLang v0.5.12",
        "scenario": "InferenceX benchmark_serving closed-loop sweep, 32 concurrent requests",
        "batch_or_concurrency": "concurrency=32",
        "input_len": "1024",
        "output_len": "1024",
        "ttft_ms": "400",
        "tpot_ms": "15",
    }
    stated = {**sglang, "id": "X2", "scenario": "closed loop", "notes": "--scheduler-recv-interval 5"}
    hopper = {**sglang, "id": "X3", "chip": "h200"}
    trt = {**sglang, "id": "X4", "serving_engine": "TensorRT-LLM 1.3"}
    path = write_rows(tmp_path / "rows.csv", sglang, stated, hopper, trt)
    rows = read_inference(path, known_chips=frozenset({"b200", "h200"}))
    cases = [prepare(catalog, row) for row in rows]
    assert [c.setup.pools[0].setup.plan.recv_interval for c in cases] == [30, 5, 1, 1]
    assert any("every 30 decode iterations (InferenceX" in n for n in cases[0].notes)
    assert any("every 5 decode iterations (as stated)" in n for n in cases[1].notes)


def test_inferencex_trtllm_recipes_delay_batching_where_their_scripts_say() -> None:
    """dsr1_fp8_b200_trt.sh: 1k/1k from 64 users, 40 iterations, 0.8; the Llama 3.x 70B scripts (70b_fp4_b200_trt,
    70b_fp8_b200_trt, 70b_fp8_h200_trt): 1k/1k below TP8, 20 iterations, 0.9; nothing elsewhere."""
    wait = INFERENCEX.batch_wait
    rule = wait("trtllm", "deepseek-v3", "b200", "fp8", (1024.0, 1024.0), 64, 8)
    assert rule is not None and (rule.iters, rule.ratio) == (40, 0.8)
    assert wait("trtllm", "deepseek-v3", "b200", "fp8", (1024.0, 1024.0), 32, 8) is None
    assert wait("trtllm", "deepseek-v3", "b200", "fp8", (8192.0, 1024.0), 64, 8) is None
    assert wait("trtllm", "deepseek-v3", "h200", "fp8", (1024.0, 1024.0), 64, 8) is None
    assert wait("sglang", "deepseek-v3", "b200", "fp8", (1024.0, 1024.0), 64, 8) is None
    llama = wait("trtllm", "llama-3.3-70b", "b200", "fp4", (1024.0, 1024.0), 4, 2)
    assert llama is not None and (llama.iters, llama.ratio) == (20, 0.9)
    assert wait("trtllm", "llama-3.3-70b", "b200", "fp4", (1024.0, 1024.0), 4, 8) is None
    for chip in ("h200", "b200"):
        fp8 = wait("trtllm", "llama-3.1-70b", chip, "fp8", (1024.0, 1024.0), 4, 4)
        assert fp8 is not None and (fp8.iters, fp8.ratio) == (20, 0.9)
        assert wait("trtllm", "llama-3.1-70b", chip, "fp8", (1024.0, 8192.0), 4, 4) is None
    assert wait("trtllm", "llama-3.1-70b", "h100-sxm", "fp8", (1024.0, 1024.0), 4, 4) is None
    assert AIPERF.batch_wait("trtllm", "deepseek-v3", "b200", "fp8", (1024.0, 1024.0), 64, 8) is None


def _dsr1_point(users: int, **fields: str) -> dict[str, str]:
    """An InferenceX sweep point of DeepSeek-R1 FP8 on 8 B200 at TP8 (1k/1k), with `fields` changed."""
    row = {
        "model": "DeepSeek-R1-0528",
        "chip": "b200",
        "num_chips": "8",
        "precision": "FP8",
        "parallelism": "TP8 EP1",
        "scenario": f"InferenceX benchmark_serving closed-loop sweep, {users} concurrent requests",
        "batch_or_concurrency": f"concurrency={users}",
        "input_len": "1024",
        "output_len": "1024",
    }
    return {**row, **fields}


def test_an_inferencex_trtllm_point_runs_with_its_scripts_batch_waiting(catalog: Catalog, tmp_path: Path) -> None:
    trt = "TensorRT-LLM 1.3.0rc14 (PyTorch backend)"
    row = _dsr1_point(64, serving_engine=trt, ttft_ms="569", tpot_ms="20")
    fewer = {**row, "id": "X2", "batch_or_concurrency": "concurrency=32"}
    rows = read_inference(write_rows(tmp_path / "rows.csv", row, fewer), known_chips=frozenset({"b200"}))
    held, free = (prepare(catalog, r) for r in rows)
    plan = held.setup.pools[0].setup.plan
    assert (plan.batch_wait_iters, plan.batch_wait_ratio, plan.max_tokens) == (40, 0.8, 8192)
    assert any("at most 40 iterations" in n for n in held.notes)
    assert free.setup.pools[0].setup.plan.batch_wait_iters == 0


@pytest.mark.parametrize(
    ("engine", "model", "image", "date", "factor"),
    [
        ("sglang", "deepseek-v3", "SGLang (lmsysorg/sglang:v0.5.10.post1-cu130)", "run 2026-04-17", 35921 / 7140),
        ("sglang", "deepseek-v3", "SGLang (lmsysorg/sglang:v0.5.12-cu130)", "published 2026-05-14", 35921 / 7140),
        ("sglang", "deepseek-v3", "SGLang (lmsysorg/sglang:v0.5.12-cu130)", "published 2026-05-17", 1.0),
        ("sglang", "deepseek-v3", "SGLang (lmsysorg/sglang:v0.5.9-cu130)", "run 2026-03-25", 1.0),
        ("sglang", "deepseek-v3", "SGLang (lmsysorg/sglang:v0.5.10.post1-cu130)", "", 1.0),
        ("sglang", "qwen3-235b-a22b", "SGLang (lmsysorg/sglang:v0.5.10.post1-cu130)", "run 2026-04-17", 1.0),
        ("trtllm", "deepseek-v3", "TensorRT-LLM 1.3.0rc10", "run 2026-04-17", 1.0),
    ],
)
def test_inferencex_prompts_the_sglang_server_retokenised_between_transformers_5_and_the_client_fix(
    engine: str, model: str, image: str, date: str, factor: float
) -> None:
    """InferenceX PR #937: DeepSeek's prompts read as about 5x their tokens by an SGLang server on transformers 5
    (from v0.5.10); PR #1381 made the client's patch apply to Hub ids on 2026-05-15."""
    row = inference_row(serving_engine=image, date_or_version=date)
    assert served_prompt(row, INFERENCEX, engine, model, 1.0, []) == pytest.approx(factor)
    assert served_prompt(row, AIPERF, engine, model, 1.0, []) == 1.0


def test_an_inferencex_point_prefills_the_prompts_its_server_received(catalog: Catalog, tmp_path: Path) -> None:
    row = _dsr1_point(
        4,
        chip="b300",
        serving_engine="SGLang (lmsysorg/sglang:v0.5.10.post1-cu130)",
        input_len="8192",
        ttft_ms="2145",
        tpot_ms="11.7",
        date_or_version="run 2026-04-17 (lmsysorg/sglang:v0.5.10.post1-cu130)",
    )
    fixed = {**row, "id": "X2", "date_or_version": "run 2026-05-20"}
    rows = read_inference(write_rows(tmp_path / "rows.csv", row, fixed), known_chips=frozenset({"b300"}))
    retokenised, stated = (prepare(catalog, r) for r in rows)
    assert stated.job.input.mean == pytest.approx(0.9 * 8192, abs=1.0)
    assert retokenised.job.input.mean == pytest.approx(35921 / 7140 * 0.9 * 8192, rel=1e-3)
    assert any("5.03 x the stated length" in n for n in retokenised.notes)
    assert not any("stated length" in n for n in stated.notes)
    slow, fast = ({r.metric: r.predicted for r in predict_case(c)} for c in (retokenised, stated))
    assert slow["ttft_s"] > 3.0 * fast["ttft_s"]


@pytest.mark.parametrize(
    ("text", "length"),
    [
        ("server max batch size=4, sequence_length=4096", 4096),
        ('published "Throughput"=13.4; compiled/total sequence length=512', 512),
        ("compiled batch_size 8, sequence_length 16512", 16512),
        ("max sequence length 8192", 8192),
        ("--max-model-len 768, max-num-batched-tokens 512", 768),
        ("seq_len 512", 512),
        ("input 1024, output 1024", None),
    ],
)
def test_a_compiled_sequence_length_is_read_where_stated(text: str, length: int | None) -> None:
    assert parse_compiled_length(text) == length


def test_a_neuron_deployment_buckets_up_to_its_compiled_length(catalog: Catalog, tmp_path: Path) -> None:
    """The stated compiled length ends the buckets; unstated, the longest request does (NxD Inference's
    max_context_length defaults to seq_len, which must hold it): 10,000 + 1,500 tokens pad to 11,500, not 16,384."""
    base = {
        "chip": "trn2",
        "num_chips": "16",
        "hardware": "trn2.48xlarge",
        "serving_engine": "vLLM + NxD Inference",
        "model": "Llama-3.1-8B-Instruct",
        "parallelism": "TP64",
        "scenario": "single stream",
        "batch_or_concurrency": "batch 1",
        "input_len": "10000",
        "output_len": "1500",
        "ttft_ms": "2000",
    }
    path = write_rows(tmp_path / "rows.csv", base, {**base, "id": "X2", "notes": "compiled sequence_length=16384"})
    row, long_row = read_inference(path, known_chips=frozenset(catalog.chips))
    case = prepare(catalog, row)
    assert case.setup.pools[0].setup.policy().largest_bucket == 11500
    stated = prepare(catalog, long_row)
    assert stated.setup.pools[0].setup.policy().largest_bucket == 16384
    (short,) = [r.predicted for r in predict_case(case) if r.metric == "ttft_s"]
    (padded,) = [r.predicted for r in predict_case(stated) if r.metric == "ttft_s"]
    assert padded > 1.3 * short


@pytest.mark.parametrize(
    ("engine", "lengths", "users", "graphed"),
    [
        ("trtllm", (1024, 1024), 64, True),
        ("trtllm", (1024, 1024), 32, False),
        ("trtllm", (1024, 1024), 256, False),  # DeepGEMM instead from 256 users
        ("trtllm", (1024, 8192), 64, False),
        ("trtllm", (1024, 8192), 128, True),
        ("trtllm", (8192, 1024), 512, True),
        ("sglang", (1024, 1024), 64, False),
    ],
)
def test_inferencex_captures_prompt_iterations_where_its_script_does(
    engine: str, lengths: tuple[int, int], users: int, graphed: bool
) -> None:
    """dsr1_fp8_b200_trt.sh sets PIECEWISE_CUDA_GRAPHS at 1k/1k for 64-255 users, 1k/8k for 128-255, 8k/1k from 64."""
    assert INFERENCEX.piecewise_graphs(engine, "deepseek-v3", "b200", "fp8", lengths, users) is graphed
    assert not INFERENCEX.piecewise_graphs(engine, "deepseek-v3", "b200", "fp4", lengths, users)


@pytest.mark.parametrize(
    ("text", "graphed"),
    [
        ("torch_compile_config: {enable_piecewise_cuda_graph: true}", True),
        ("sglang --enable-piecewise-cuda-graph --tp 8", True),
        ("enable_piecewise_cuda_graph=False", False),
        ("cuda_graph_config: {max_batch_size: 512}", False),
    ],
)
def test_piecewise_cuda_graphs_are_read_where_a_run_states_them(text: str, graphed: bool) -> None:
    assert states_piecewise_graphs(text) is graphed


def test_an_inferencex_tensorrt_llm_point_launches_its_prompts_eagerly_below_64_users(
    catalog: Catalog, tmp_path: Path
) -> None:
    """At 32 users the script leaves TensorRT-LLM's prompt iterations eager (a floor of 69 us per kernel under each);
    at 64 it captures them, and says so in the notes."""
    rows = [
        {
            "id": f"X{users}",
            "scenario": f"InferenceX benchmark_serving closed-loop sweep, {users} concurrent requests",
            "model": "DeepSeek-R1-0528",
            "chip": "b200",
            "num_chips": "8",
            "precision": "FP8",
            "serving_engine": "TensorRT-LLM (PyTorch backend)",
            "parallelism": "TP8 EP1",
            "batch_or_concurrency": f"concurrency={users}",
            "input_len": "1024",
            "output_len": "1024",
            "ttft_ms": "200",
        }
        for users in (32, 64)
    ]
    parsed = read_inference(write_rows(tmp_path / "rows.csv", *rows), known_chips=frozenset(catalog.chips))
    eager, graphed = (prepare(catalog, row) for row in parsed)
    assert not eager.setup.pools[0].setup.plan.piecewise_graphs and eager.setup.pools[0].setup.engine.eager_launch_s > 0
    assert (
        graphed.setup.pools[0].setup.plan.piecewise_graphs and graphed.setup.pools[0].setup.engine.eager_launch_s == 0
    )
    assert any("piecewise CUDA graphs" in n for n in graphed.notes)


def test_one_static_batch_on_several_chips_is_one_model_instance(catalog: Catalog, tmp_path: Path) -> None:
    """Intel's Gaudi tables give one static batch per HPU count and no plan: Llama-2-70B, batch 1750 on 2 Gaudi 3 is
    one TP2 instance (the search took two TP1 replicas, each with the whole batch's KV cache). One card, a stated plan
    and a group the heads do not divide keep their ways."""
    row = {
        "model": "Llama-2-70B",
        "chip": "gaudi3",
        "num_chips": "2",
        "precision": "FP8",
        "serving_engine": "Intel Gaudi SW 1.18.0",
        "parallelism": "",
        "scenario": "static batch, batch size 1750",
        "batch_or_concurrency": "batch=1750",
        "input_len": "128",
        "output_len": "128",
        "output_tokens_per_s_per_chip": "1108",
    }
    one_card = {**row, "id": "X2", "num_chips": "1"}
    stated = {**row, "id": "X3", "parallelism": "TP1 x 2"}
    three = {**row, "id": "X4", "num_chips": "3"}  # 64 heads do not split three ways
    rows = read_inference(
        write_rows(tmp_path / "rows.csv", row, one_card, stated, three), known_chips=frozenset({"gaudi3"})
    )
    cases = [prepare(catalog, r) for r in rows]
    shapes = [(c.setup.pools[0].setup.plan.tp, c.setup.pools[0].replicas, c.plan_source) for c in cases]
    assert shapes[0] == (2, 1, "inferred") and shapes[1] == (1, 1, "given") and shapes[2] == (1, 2, "given")
    assert shapes[3][2] == "searched"
    assert any("one static batch on 2 chips is one model instance" in n for n in cases[0].notes)


def test_inferencex_dynamo_prefill_workers_run_their_recipes_budget_and_moris_keep_the_engines(
    catalog: Catalog,
) -> None:
    """InferenceX's disaggregated runs launch from srt-slurm recipes whose prefill workers encode 16,384 tokens per
    rank an iteration: SGLang's eight attention-DP ranks share a chunked-prefill size of 131,072 (a prompt chunk of
    16,384 each), TensorRT-LLM's ranks take 16,384 each; MoRI's runs keep the engine's budget. Their GB200 decode
    worker of 48 expert-parallel ranks keeps EP48 (whole expert slots, serve.iteration.expert_slot_share) and, its
    per-sequence host work split over its 48 schedulers, steps through 4,096 sequences in under 30 ms (measured TPOT
    23.5 ms; 49 ms with one loop over the batch and the experts tensor-parallel)."""
    from chipwise.planner.serving_breakdown import _breakdown

    path = Path(__file__).resolve().parents[2] / "docs" / "research" / "heldout_inferencex_disagg.csv"
    rows = {r.id: r for r in read_inference(path, known_chips=frozenset(catalog.chips))}
    sglang = prepare(catalog, rows["D159"])  # prefill TP8 EP8 attention DP x 3; decode TP48 EP48 attention DP
    prefill, decode = (pool.setup for pool in sglang.setup.pools)
    assert (prefill.plan.max_tokens, prefill.prompt_chunk) == (131072, 16384)
    assert decode.plan.ep == 48 and decode.plan.attention_dp
    assert any("16384 tokens per rank" in n for n in sglang.notes)
    step = sum(_breakdown(decode, sglang.job.model, 4096.0, 1024.0, 1024.0, prompts=False).values())
    assert step < 0.030
    trtllm = prepare(catalog, rows["D166"])  # prefill TP4 EP4 attention DP x 1
    assert trtllm.setup.pools[0].setup.plan.max_tokens == 16384
    mori = prepare(catalog, rows["D386"])
    assert not any("tokens per rank" in n for n in mori.notes)
    assert mori.setup.pools[0].setup.plan.max_tokens != 16384 * 8


def test_inferencex_vllm_llama_70b_and_b200_gpt_oss_keep_their_kv_cache_in_fp8(catalog: Catalog) -> None:
    """InferenceX's vLLM scripts for Llama 3.x 70B (H100, H200, B200) and gpt-oss on B200 set kv-cache-dtype fp8,
    against vLLM's 16-bit default; its gpt-oss scripts for H100 and H200 do not. One H200 holding Llama-3.1-70B in
    FP8 has room for 32 users' 1k/8k requests only with the fp8 cache: measured TTFT 0.47 s (AIConfigurator's silicon
    sample, S390), 3.6 s predicted with a 16-bit cache that preempts."""
    path = Path(__file__).resolve().parents[2] / "docs" / "research" / "heldout_aic_silicon.csv"
    rows = {r.id: r for r in read_inference(path, known_chips=frozenset(catalog.chips))}
    llama = prepare(catalog, rows["S390"])  # Llama-3.1-70B FP8, vLLM, one H200, 32 users, 1024/8192
    assert llama.setup.pools[0].setup.plan.kv_precision == "fp8"
    assert any("KV cache in fp8" in n for n in llama.notes)
    ttft = next(r for r in predict_case(llama) if r.metric == "ttft_s")
    assert ttft.measured == pytest.approx(0.474, abs=0.001) and ttft.predicted < 1.0
    kv = {i: prepare(catalog, rows[i]).setup.pools[0].setup.plan.kv_precision for i in ("S1369", "S1425", "S1564")}
    assert kv == {"S1369": "fp8", "S1425": "bf16", "S1564": "bf16"}  # gpt-oss on B200, H100, H200


def test_inferencex_vllm_llama_70b_on_b200_runs_its_prompt_iterations_without_cuda_graphs(catalog: Catalog) -> None:
    """InferenceX's vLLM scripts for Llama 3.x 70B on B200 set cudagraph_mode FULL_DECODE_ONLY: an iteration that
    carries a prompt launches its kernels from Python. NVFP4 on 8 B200s, 4 users of 1k/1k (S250): measured TTFT
    84.3 ms, where a prompt's device work is about 20 ms; predicted 58 ms with graphs, about 95 ms without (1,280
    kernels of 45 us beside the 30 ms front end). Its H200 scripts and the gpt-oss ones keep vLLM's graphs."""
    path = Path(__file__).resolve().parents[2] / "docs" / "research" / "heldout_aic_silicon.csv"
    rows = {r.id: r for r in read_inference(path, known_chips=frozenset(catalog.chips))}
    b200 = prepare(catalog, rows["S250"])
    setup = b200.setup.pools[0].setup
    assert setup.plan.piecewise_graphs is False and setup.steps.eager_floor == pytest.approx(1280 * 45e-6)
    assert any("without CUDA graphs (cudagraph_mode FULL_DECODE_ONLY" in n for n in b200.notes)
    ttft = next(r for r in predict_case(b200) if r.metric == "ttft_s")
    assert ttft.measured == pytest.approx(0.0843, abs=1e-4) and 0.075 < ttft.predicted < 0.11
    for other in ("S432", "S1369"):  # Llama-3.1-70B on 8 H200, gpt-oss-120b on a B200
        assert prepare(catalog, rows[other]).setup.pools[0].setup.plan.piecewise_graphs is None
    assert INFERENCEX.uncaptured("vllm", "llama-3.3-70b", "b200")
    assert not INFERENCEX.uncaptured("sglang", "llama-3.1-70b", "b200")


def test_inferencex_tensorrt_llm_llama_70b_takes_16k_tokens_an_iteration(catalog: Catalog) -> None:
    """InferenceX's TensorRT-LLM scripts for Llama 3.x 70B on B200 and H200 pass --max_num_tokens 16384 (the
    engine's default budget is 8,192): a burst of 64 users' 1k prompts is encoded 16 to an iteration. Its
    DeepSeek-R1 scripts size their own budget, and its vLLM Llama scripts keep 8,192."""
    path = Path(__file__).resolve().parents[2] / "docs" / "research" / "heldout_aic_silicon.csv"
    rows = {r.id: r for r in read_inference(path, known_chips=frozenset(catalog.chips))}
    for row_id, budget in (("S067", 16384), ("S013", 16384), ("S190", 8192), ("S1503", 8192)):
        case = prepare(catalog, rows[row_id])  # TRT-LLM B200 TP8 and TP1, vLLM B200, gpt-oss TRT-LLM H200
        assert case.setup.pools[0].setup.plan.max_tokens == budget, row_id
        assert any("16,384 tokens an iteration" in n for n in case.notes) is (budget == 16384)
    assert INFERENCEX.token_budget("trtllm", "llama-3.3-70b", "h200") == 16384
    assert INFERENCEX.token_budget("trtllm", "deepseek-v3", "b200") == 0


def test_guidellm_keeps_one_user_back_and_issues_for_its_window(catalog: Catalog, tmp_path: Path) -> None:
    """guidellm 0.1.0 keeps users - 1 requests in flight (31 of 32 in optimum-neuron's reports) and issues its
    throughput requests for about 42 s, then lets them finish: latencies over all of them, throughput over the
    whole span. optimum-neuron's vLLM takes the prompts that fit max(2,048, the model length) a step. With more
    users than one replica seats (the server's queue, the client's 60 s timeout) the run keeps the occupancy it
    held."""
    row = {
        "source_family": "optimum-neuron vLLM benchmark (Hugging Face)",
        "model": "Llama-3.1-8B-Instruct",
        "chip": "inf2",
        "num_chips": "4",
        "precision": "BF16",
        "serving_engine": "vLLM + optimum-neuron (optimum-cli neuron serve)",
        "parallelism": "TP=8 DP=1",
        "scenario": "guidellm throughput (saturating, max concurrency)",
        "batch_or_concurrency": "max concurrent users=32",
        "input_len": "~1500 (emulated, var 150)",
        "output_len": "~250 (emulated, var 20)",
        "ttft_ms": "2138",
        "tpot_ms": "59.09",
        "e2e_latency_s": "14.76",
        "requests_per_s": "2.002",
        "notes": "server max batch size=32, sequence_length=4096",
    }
    more = {**row, "id": "X2", "batch_or_concurrency": "max concurrency=128 users"}
    rows = read_inference(write_rows(tmp_path / "rows.csv", row, more), known_chips=frozenset({"inf2"}))
    fits, over = (prepare(catalog, r) for r in rows)
    assert GUIDELLM.held_back == 1 and GUIDELLM.duration_s == pytest.approx(42.4)
    assert fits.job.load.concurrency == 31 and fits.job.duration_s == pytest.approx(42.4) and fits.basis == "run"
    assert any("the client keeps 31 requests in flight" in n for n in fits.notes)
    assert fits.setup.pools[0].setup.plan.max_tokens == 4096
    assert any("optimum-neuron's vLLM" in n for n in fits.notes)
    # Little's law on the row, at the 214.6 tokens a request its run generated ((14.76 s - 2.138 s) / 59.09 ms + 1,
    # not the 250 asked for): 2.002 req/s x (2.138 s + 213.6 x 59.09 ms) = 29.5 requests held
    assert over.job.load.concurrency == 30
    assert not any("the client keeps" in n for n in over.notes)
    # it stops issuing and drains, so its 31 users do not bound its throughput: no self-consistency verdict
    assert simulate_case(fits).self_consistent is None


@pytest.mark.parametrize(
    ("chip", "weight", "tp", "lengths", "users", "speculative", "settings"),
    [
        ("b200", "fp8", 8, (1024, 1024), 64, False, (0.82, 32768, 128)),
        ("b200", "fp8", 4, (8192, 1024), 4, False, (0.95, 8192, 32)),
        ("b200", "fp8", 8, (8192, 1024), 64, True, (0.82, 16384, 512)),
        ("b200", "fp4", 4, (1024, 1024), 4, False, (0.85, 16384, 256)),
        ("h200", "fp8", 8, (1024, 1024), 4, False, (0.82, 32768, 512)),
        ("h200", "fp8", 8, (8192, 1024), 4, False, (0.82, 32768, 256)),
        ("mi300x", "fp8", 8, (1024, 1024), 4, False, (0.8, 131072, 0)),
        ("mi355x", "fp4", 8, (8192, 1024), 64, False, (0.8, 32768, 0)),
        ("mi355x", "fp4", 8, (8192, 1024), 32, False, (0.8, 196608, 0)),
    ],
)
def test_inferencex_sglang_scripts_set_the_memory_share_prefill_chunk_and_running_cap(
    chip: str,
    weight: str,
    tp: int,
    lengths: tuple[float, float],
    users: int,
    speculative: bool,
    settings: tuple[float, int, int],
) -> None:
    """dsr1_fp8_b200.sh's TP4 branch (0.95, 8,192, 32) against its TP8 one; its MTP script; H200's cap by lengths;
    the MI355X FP4 script's smaller chunk at 8k/1k above 32 users."""
    run = SglangRun("sglang", "deepseek-v3", chip, weight, tp, lengths, users, speculative)
    rule = INFERENCEX.sglang_launch_of(run)
    assert rule is not None and (rule.memory_fraction, rule.prefill_tokens, rule.max_running) == settings
    assert INFERENCEX.sglang_launch_of(run._replace(engine="vllm")) is None
    assert INFERENCEX.sglang_launch_of(run._replace(speculative=not speculative)) != rule
    assert AIPERF.sglang_launch_of(run) is None


def test_an_inferencex_deepseek_point_on_four_b200_fits_as_its_script_launched_it(
    catalog: Catalog, tmp_path: Path
) -> None:
    """DeepSeek-R1 FP8 on four B200 leaves no KV cache at SGLang's default share; the script's 0.95 and fp8 KV
    hold 32 requests of 8k/1k. Without the script, the run's having fitted raises the share to 0.95."""
    row = _dsr1_point(
        32,
        num_chips="4",
        parallelism="TP4 EP1",
        input_len="8192",
        ttft_ms="827",
        tpot_ms="35",
        serving_engine="SGLang (lmsysorg/sglang:v0.5.9-cu130)",
    )
    other = {**row, "id": "X2", "scenario": "closed-loop sweep, 32 concurrent requests"}
    rows = read_inference(write_rows(tmp_path / "rows.csv", row, other), known_chips=frozenset({"b200"}))
    scripted, unscripted = (prepare(catalog, r) for r in rows)
    setup = scripted.setup.pools[0].setup
    assert (setup.plan.max_batch, setup.plan.max_tokens, setup.plan.kv_precision) == (32, 8192, "fp8")
    assert setup.kv_tokens >= 32 * (0.9 * 8192 + 1024)
    assert any("--mem-fraction-static 0.95" in n for n in scripted.notes)
    assert unscripted.setup.pools[0].setup.engine.memory_fraction == 0.95
    assert any("the run fitted" in n for n in unscripted.notes)


def test_a_measured_run_whose_weights_cannot_fit_stays_an_error(catalog: Catalog, tmp_path: Path) -> None:
    """The raised KV share is for a cache that holds too little; weights larger than the memory are not a setting."""
    row = _dsr1_point(4, num_chips="2", parallelism="TP2", serving_engine="SGLang", ttft_ms="500", tpot_ms="20")
    (bad,) = read_inference(write_rows(tmp_path / "rows.csv", row), known_chips=frozenset({"b200"}))
    with pytest.raises(ChipwiseError, match="does not fit"):
        prepare(catalog, bad)


def _eight_users_case(catalog: Catalog, tmp_path: Path, source: str, engine: str, **fields: str) -> Case:
    """The validation's case for a sweep point of 8 closed-loop users that measured a TTFT and a TPOT (`fields`:
    the model, chip, lengths and layout)."""
    row = {
        "source_family": source,
        "serving_engine": engine,
        "scenario": "closed-loop sweep, 8 concurrent requests (load generator not stated in the record)",
        "batch_or_concurrency": "concurrency=8",
        "output_tokens_per_s_per_chip": "",
        "ttft_ms": "mean 50",
        "tpot_ms": "mean 8",
        **fields,
    }
    (parsed,) = read_inference(write_rows(tmp_path / "rows.csv", row), known_chips=frozenset({fields["chip"]}))
    return prepare(catalog, parsed)


@pytest.mark.parametrize(("version", "mixed"), [("0.5.6.post2", True), ("0.5.1.post1", False), ("0.5.8.post1", False)])
def test_aiconfigurator_sglang_deployments_mix_prompts_from_its_0_5_6_template(
    catalog: Catalog, tmp_path: Path, version: str, mixed: bool
) -> None:
    """AIConfigurator's generator asks every aggregated SGLang worker for --enable-mixed-chunk, but only its 0.5.6
    template passes it (the others test a misspelt key): SGLang's default, unmixed, elsewhere."""
    case = _eight_users_case(
        catalog, tmp_path, "AIConfigurator gap-analysis sweeps (silicon sample)", f"SGLang {version}",
        model="Llama-3.1-8B-Instruct", chip="h200", input_len="1000", output_len="100",
    )  # fmt: skip
    assert case.setup.pools[0].setup.engine.mixed_batching is mixed
    assert any("--enable-mixed-chunk" in n for n in case.notes) is mixed


@pytest.mark.parametrize(
    ("source", "engine", "front_end_s"),
    [
        ("AIConfigurator gap-analysis sweeps (silicon sample)", "vLLM 0.12.0", 0.0),
        ("InferenceX sweeps in AIConfigurator's silicon sample", "vLLM 0.18.0 (vllm/vllm-openai:v0.18.0)", 0.030),
        ("a lab's own sweep", "vLLM under Dynamo (nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.1)", 0.0),
    ],
)
def test_vllm_behind_dynamos_front_end_has_no_server_time_of_its_own(
    catalog: Catalog, tmp_path: Path, source: str, engine: str, front_end_s: float
) -> None:
    """AIConfigurator's generator deploys its vLLM workers as `python3 -m dynamo.vllm` behind `dynamo.frontend`, which
    tokenises and hands them token ids: vLLM's own OpenAI server (engines.vllm.request_overhead, 30 ms) is not in the
    path of its gap-analysis points, nor of a row whose engine text names Dynamo. InferenceX runs vLLM's server."""
    case = _eight_users_case(
        catalog, tmp_path, source, engine, model="Qwen3-32B", chip="h100-sxm", num_chips="8", parallelism="TP8",
        input_len="1024", output_len="1024",
    )  # fmt: skip
    assert case.setup.pools[0].setup.engine.host_request_s == pytest.approx(front_end_s)
    assert any("behind Dynamo's front end" in n for n in case.notes) is (front_end_s == 0.0)
