"""plan serve over request lengths drawn from distributions: the search prices their means and sizes replicas for
their longest, the checks draw them, the report and the scenario it writes carry them, and the check's capacity
probe runs the mean request (two batches run offline end on their longest answers, a drain that had read as the
deployment's capacity and grown healthy fleets)."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.planner.serving_check import _mean_lengths
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.lengths import LengthDist, read_length
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob
from cli_run import run_error, run_json

PROMPTS = "lognormal:mean=1k,std=800,max=8k"
ANSWERS = "uniform:min=32,max=224"


def test_a_searched_and_checked_option_carries_the_distributions(catalog: Catalog) -> None:
    inp, out = read_length(PROMPTS, "x", "1"), read_length(ANSWERS, "x", "1")
    report = plan_serving(catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=4.0), inp, out, "ttft_p99=2s",
                          verify=1, disaggregated=False)  # fmt: skip
    assert report["input_lengths"] == {"dist": "lognormal", "mean": 1000.0, "std": 800.0, "max": 8000}
    assert report["output_lengths"] == {"dist": "uniform", "min": 32, "max": 224}
    assert report["input_tokens"] == pytest.approx(inp.expected) and report["output_tokens"] == 128.0
    best = report["best"]
    assert best["scenario"]["input_tokens"] == report["input_lengths"]
    assert best["scenario"]["output_tokens"] == report["output_lengths"]
    again = cw.predict(best["scenario"])  # the scenario runs as it was checked
    assert again["ttft_s"]["p99"] == pytest.approx(best["ttft_s"]["p99"], rel=1e-9)


def test_fixed_lengths_report_whole_counts(catalog: Catalog) -> None:
    report = plan_serving(catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=2.0), 512, 64, verify=0,
                          disaggregated=False)  # fmt: skip
    assert (report["input_tokens"], report["output_tokens"]) == (512, 64)
    assert (report["input_lengths"], report["output_lengths"]) == (512, 64)


def test_the_capacity_probe_runs_the_mean_request(catalog: Catalog) -> None:
    model = load_model(catalog, "llama-3.1-8b")
    drawn = ServingJob(model, read_length(PROMPTS, "x", "1"), read_length(ANSWERS, "x", "1"), Load("rate", rate=4.0),
                       1200)  # fmt: skip
    probe = _mean_lengths(drawn)
    assert probe.input == LengthDist.fixed(round(drawn.mean_input)) and probe.output == LengthDist.fixed(128)
    fixed = ServingJob(model, LengthDist.fixed(512), LengthDist.fixed(64), Load("rate", rate=4.0), 1200)
    assert _mean_lengths(fixed) is fixed


def test_the_command_line_takes_and_shows_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "4", "--input-tokens", PROMPTS,
                             "--output-tokens", ANSWERS, "--hardware", "h100", "--no-disaggregated", "--workers", "1",
                             "--json"])  # fmt: skip
    assert data["input_lengths"]["dist"] == "lognormal" and data["output_lengths"]["max"] == 224
    line = run_error(capsys, ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "4", "--input-tokens",
                              "lognormal:mean=1k,sd=3"])  # fmt: skip
    assert line.startswith("error: --input-tokens 'lognormal:mean=1k,sd=3': unknown key 'sd'")


def test_the_api_takes_a_mapping() -> None:
    report = cw.plan_serve("llama-3.1-8b", rate=2, input_tokens={"dist": "uniform", "min": 256, "max": 768},
                           output_tokens="64", hardware="h100-sxm", verify=1, disaggregated=False)  # fmt: skip
    assert report["input_lengths"] == {"dist": "uniform", "min": 256, "max": 768} and report["input_tokens"] == 512.0


def test_a_splits_first_token_waits_for_its_long_prompts(catalog: Catalog) -> None:
    """The ranking's p99 first token of a prefill pool is at least the 99th-percentile prompt's own prefill: the
    lognormal prompts' p99 (4,024 tokens) takes about four times the mean prompt's; priced at the mean, the split
    had ranked as if every prompt were 1,000 tokens long."""
    firsts = []
    for prompts in (LengthDist.fixed(1000), read_length(PROMPTS, "x", "1")):
        report = plan_serving(catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=4.0), prompts, 128,
                              "ttft_p99=2s", verify=0)  # fmt: skip
        firsts += [r["estimate"]["ttft_p99_s"] for r in report["results"] if r["disaggregated"]]
    fixed, drawn = firsts
    assert drawn > 1.5 * fixed


def test_drawn_answers_lower_the_rate_a_replica_carries_within_a_tpot_tail(catalog: Catalog) -> None:
    """Short answers average few steps, so their TPOT spreads wider (serve.decode_tail): within a TPOT p99 target a
    replica carries less under lognormal answers than under answers of their mean length, and no less within a TTFT
    target alone. The search reads the answers' spread from the job (ServingJob.answer_spread)."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of
    from chipwise.planner.serving_choice import ShapeQuery, max_rate
    from chipwise.serve.candidates import enumerate_candidates
    from chipwise.serve.decode_tail import answer_probabilities
    from chipwise.serve.engine import engine_profile

    model, system = load_model(catalog, "llama-3.1-70b"), hardware(catalog).system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", system.chip.family)
    answers = read_length("lognormal:mean=400,std=300,max=2000", "x", "1")
    job = ServingJob(model, LengthDist.fixed(2000), answers, Load("rate", rate=4.0), 1200)
    spread = job.answer_spread(answer_probabilities())
    fixed = ShapeQuery(model, system, eng, "fp8", "fp8", 2000.0, answers.expected)
    drawn = ShapeQuery(model, system, eng, "fp8", "fp8", 2000.0, answers.expected, answers=spread)
    cand = enumerate_candidates(model, topology_of(system), None, {"tp": 4, "pp": 1, "ep": 1, "max_batch": 128})
    est = fixed.estimate(cand, eng.max_tokens)
    tpot_fixed, tpot_drawn = (max_rate(q, est, {"tpot_p99": 0.04})[0][0] for q in (fixed, drawn))
    assert 0.0 < tpot_drawn < 0.98 * tpot_fixed  # 5.93 req/s against 6.11
    ttft_fixed, ttft_drawn = (max_rate(q, est, {"ttft_p99": 2.0})[0][0] for q in (fixed, drawn))
    assert ttft_drawn == ttft_fixed
