"""Load-generator protocols: a validation case runs the benchmark the row ran (requests, lengths, window)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.validation.harness import AIPERF, GUIDELLM, INFERENCEX, harness_of, mean_length
from chipwise.validation.serving import _run, predict_case, prepare

from .test_serving_accuracy import _row


@pytest.mark.parametrize(
    ("scenario", "source_family", "expect"),
    [
        ("InferenceX benchmark_serving closed-loop sweep, 8 concurrent requests", "", INFERENCEX),
        ("closed-loop sweep", "SemiAnalysis InferenceMAX", INFERENCEX),
        ("sa-bench benchmark_serving, max concurrency 256", "NVIDIA srt-slurm recipe", INFERENCEX),
        ("AIPerf closed-loop concurrency sweep, 50 concurrent requests", "NVIDIA NIM benchmarking docs", AIPERF),
        ("genai-perf concurrency 16", "", AIPERF),
        ("guidellm throughput (saturating, max concurrency)", "", GUIDELLM),
        ("LLMPerf against trtllm-serve, 1 concurrent request", "", None),
    ],
)
def test_the_load_generator_is_read_from_the_row(scenario: str, source_family: str, expect: object) -> None:
    assert harness_of(_row(scenario=scenario, source_family=source_family)) is expect


def test_inferencex_lengths_are_uniform_below_the_stated_length() -> None:
    """benchmark_serving --random-range-ratio 0.8: randint(int(0.8 L), L + 1)."""
    dist = INFERENCEX.lengths(1024)
    assert (dist.kind, dist.low, dist.high) == ("uniform", 819, 1024)
    assert mean_length(INFERENCEX, 1024.0) == pytest.approx(921.5)
    assert mean_length(AIPERF, 1024.0) == 1024.0  # a stated length is the length
    sample = dist.sample(20000, np.random.default_rng(0))
    assert sample.min() == 819 and sample.max() == 1024


def test_an_inferencex_point_issues_ten_requests_per_user_and_times_the_whole_run(catalog: Catalog) -> None:
    row = _row(
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


def test_aiperf_latencies_leave_out_the_first_burst(catalog: Catalog) -> None:
    """Every user's first request arrives at t = 0, so their prompts queue behind one another; AIPerf's warm-up
    discards them. The window starts when the last of them has finished and ends before the final drain."""
    row = _row(
        scenario="AIPerf closed-loop concurrency sweep, 32 concurrent requests",
        source_family="NVIDIA NIM benchmarking docs",
        batch_or_concurrency="concurrency=32",
        input_len="4000",
        output_len="200",
        ttft_ms="300",
        tpot_ms="20",
    )
    case = prepare(catalog, row)
    assert case.after_warmup and case.job.requests == 8 * 32
    warm = _run(case.job, case.setup, 0, case.basis, 0.0, after_warmup=True)["ttft_s"]["mean"]
    cold = _run(case.job, case.setup, 0, case.basis, 0.0, after_warmup=False)["ttft_s"]["mean"]
    assert warm < cold
    (ttft,) = [r.predicted for r in predict_case(case) if r.metric == "ttft_s"]
    assert ttft == pytest.approx(warm)
