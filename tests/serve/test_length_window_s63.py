"""Review M (s63) findings 4-5 and its serving observation: a fixed length's mean is whole, a length error with no
max prints none, and a sparse open loop whose steady window holds no completion is measured to the run's end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from chipwise.workload.serving import LengthDist, LengthSpec
from cli_run import run_error, run_json

BASE = "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, requests: 50, arrival_rate: 2, "


@pytest.mark.parametrize("mean", [1.5, 2.5, 100.5])
def test_a_fixed_length_needs_a_whole_mean(mean: float) -> None:
    """{dist: fixed, mean: 1.5} had been reported as a mean of 1.5 and simulated as 2 tokens (2.5 as 2)."""
    with pytest.raises(ValidationError, match=f"a fixed length is a whole number of tokens, got mean {mean:g}"):
        LengthSpec(dist="fixed", mean=mean)


def test_a_whole_fixed_mean_is_what_is_simulated() -> None:
    dist = LengthDist.of(LengthSpec(dist="fixed", mean=2.0))
    assert dist.expected == 2.0
    assert dist.sample(3, np.random.default_rng(0)).tolist() == [2, 2, 2]


def test_predict_refuses_a_fractional_fixed_mean(capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(
        capsys, ["predict", BASE + "input_tokens: {dist: fixed, mean: 1.5}, output_tokens: 128}", "--json"]
    )
    assert "input_tokens: a fixed length is a whole number of tokens, got mean 1.5; give a whole number" in line


def test_a_mean_below_min_with_no_max_names_no_max() -> None:
    """It had read 'lies outside min 200 .. max None'."""
    with pytest.raises(ValidationError, match="length mean 100 lies below min 200: clipping") as err:
        LengthSpec(dist="normal", mean=100, std=10, min=200)
    assert "None" not in str(err.value)
    with pytest.raises(ValidationError, match=r"length mean 5000 lies outside min 1 \.\. max 4096: clipping"):
        LengthSpec(dist="normal", mean=5000, std=10, max=4096)


def test_a_two_request_trace_is_measured_to_the_runs_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two requests 0.5 s apart of 10 / 5 tokens, each done in about 46 ms: the window from the fill (46 ms) to the
    last arrival (0.5 s) held no completion and read 0 output tok/s and 0 req/s. Run on to the end, it holds the
    second request alone over 0.5 s: 1 / 0.5 = 2 req/s, 5 / 0.5 = 10 output and 10 / 0.5 = 20 input tok/s."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"timestamp": 1700000000000, "input_length": 10, "output_length": 5}\n'
        '{"timestamp": 1700000000500, "input_length": 10, "output_length": 5}\n'
    )
    data = run_json(
        capsys,
        ["predict", f"{{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, trace: '{trace}'}}", "--json"],
    )
    lo, hi = data["simulation"]["window_s"]
    assert hi == pytest.approx(data["simulation"]["makespan_s"], rel=1e-12)
    assert hi - lo == pytest.approx(0.5, rel=1e-9)
    assert data["requests_per_s"] == pytest.approx(2.0, rel=1e-9)
    assert data["output_tokens_per_s"] == pytest.approx(10.0, rel=1e-9)
    assert data["input_tokens_per_s"] == pytest.approx(20.0, rel=1e-9)
