"""Serving scenarios, length distributions, traces and arrival processes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.sim.arrivals import arrival_times, open_loop_times
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serving import LengthDist, LengthSpec, Load, ServeScenario, read_trace, serving_job

BASE = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\n"


def test_design_contract_scenario_parses() -> None:
    sc = load_scenario(
        "kind: serve\nmodel: llama-2-70b\nhardware: h200\nchips: 8\nprecision: fp8\ninput_tokens: 1024\n"
        "output_tokens: 1024\narrival_rate: 20\nrequests: 10000\nslo: {ttft_p99_s: 2.0, tpot_p99_s: 0.05}\n"
        "plan: {tp: 8, pp: 1, ep: 1, max_batch: 256, disaggregated: false}\n"
    )
    assert isinstance(sc, ServeScenario)
    assert sc.arrival_rate == 20 and sc.slo is not None and sc.slo.targets() == {"ttft_p99": 2.0, "tpot_p99": 0.05}
    assert sc.plan is not None and sc.plan.tp == 8


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("input_tokens: 100\noutput_tokens: 10\narrival_rate: -3\n", "arrival_rate"),
        ("input_tokens: 100\noutput_tokens: 10\n", "give a load"),
        ("input_tokens: 100\noutput_tokens: 10\noffline: true\nconcurrency: 4\n", "one of"),
        ("input_tokens: 100\noutput_tokens: 10\noffline: true\ncolour: red\n", "unknown key"),
        ("input_tokens: {dist: lognormal}\noutput_tokens: 10\noffline: true\n", "mean"),
    ],
)
def test_bad_scenarios_are_one_line_errors(extra: str, needle: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(BASE + extra)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_inline_scenarios_in_json_or_yaml_flow_style() -> None:
    flow = load_scenario(
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, offline: true, input_tokens: 100,"
        " output_tokens: 10}"
    )
    assert isinstance(flow, ServeScenario) and flow.offline
    js = load_scenario(
        '{"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "offline": true,'
        ' "input_tokens": 100, "output_tokens": 10, "requests": 1e3}'
    )
    assert isinstance(js, ServeScenario) and js.requests == 1000  # JSON's 1e3, which YAML 1.1 reads as text
    with pytest.raises(ChipwiseError, match=r"not valid YAML or JSON \(line 1\)"):
        load_scenario("{kind: serve, model: [llama")


def test_length_distributions_have_their_mean() -> None:
    rng = np.random.default_rng(0)
    for spec in (
        LengthSpec(dist="lognormal", mean=500, std=250),
        LengthSpec(dist="normal", mean=500, std=50),
        LengthSpec(dist="exponential", mean=500),
        LengthSpec(dist="uniform", min=100, max=900),
    ):
        d = LengthDist.of(spec)
        x = d.sample(20000, rng)
        assert x.min() >= 1 and abs(x.mean() - 500) < 25, spec.dist
    assert (LengthDist.of(64).sample(5, rng) == 64).all()


def test_poisson_and_bursty_gaps() -> None:
    rng = np.random.default_rng(0)
    t = open_loop_times(Load("rate", rate=10.0), 50000, rng)
    gaps = np.diff(t)
    assert t[0] == 0 and gaps.mean() == pytest.approx(0.1, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.05)
    bursty = np.diff(open_loop_times(Load("rate", rate=10.0, burstiness=3.0), 50000, rng))
    assert bursty.mean() == pytest.approx(0.1, rel=0.05)
    assert bursty.std() / bursty.mean() == pytest.approx(3.0, rel=0.1)
    assert (open_loop_times(Load("offline"), 10, rng) == 0).all()


def test_trace_csv_and_jsonl(tmp_path: Path, catalog: Catalog) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("arrival_s,input_tokens,output_tokens\n0.5,100,10\n0.0,200,20\n1.5,300,30\n")
    tr = read_trace(str(csv))
    assert tr.arrival.tolist() == [0.0, 0.5, 1.5] and tr.input.tolist() == [200, 100, 300]
    jl = tmp_path / "t.jsonl"
    jl.write_text(
        '{"timestamp": 3, "prompt_tokens": 5, "completion_tokens": 7}\n'
        '{"timestamp": 4, "prompt_tokens": 6, "completion_tokens": 8}\n'
    )
    assert read_trace(str(jl)).output.tolist() == [7, 8]
    sc = load_scenario(BASE + f"input_tokens: {csv}\n")
    job = serving_job(load_model(catalog, "llama-3.1-8b"), sc)
    assert job.load.kind == "trace" and job.requests == 3
    times = arrival_times(job, 6, np.random.default_rng(0))
    assert times is not None and times.tolist()[:3] == [0.0, 0.5, 1.5] and times[3] > times[2]


def test_trace_with_a_missing_column(tmp_path: Path, catalog: Catalog) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival_s,input_tokens\n0,100\n")
    with pytest.raises(ChipwiseError, match="no output column"):
        read_trace(str(bad))
    sc = load_scenario(BASE + f"input_tokens: {bad}\n")
    with pytest.raises(ChipwiseError, match="no output column"):
        serving_job(load_model(catalog, "llama-3.1-8b"), sc)
