"""Goodput's fraction and its rates count the same requests: in a run shorter than its fill, whose throughput window
holds no finished request, both fall back to every request (only the fraction had)."""

from __future__ import annotations

import pytest

from cli_run import run_json

SHORT = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100, chips: 1, precision: fp8, input_tokens: 1024, "
    "output_tokens: 256, arrival_rate: 25, requests: 50, plan: {tp: 1}, slo: {ttft_p99_s: TARGET}}"
)


@pytest.mark.parametrize(("target", "fraction"), [("1.0", 1.0), ("0.04", 0.68)])
def test_goodput_of_a_run_shorter_than_its_fill(
    capsys: pytest.CaptureFixture[str], target: str, fraction: float
) -> None:
    """50 requests at 25 req/s: none finishes in the window of 0.98-1.96 s. Every one met a 1 s TTFT target, and
    goodput had read a fraction of 1.0 beside 0 req/s and 0 output tok/s while 13.07 req/s were served; it now
    reads the served rates. Under 40 ms, 34 of the 50 (0.68) meet it, and goodput is 0.68 of each rate. (10.41 req/s
    while TensorRT-LLM's fp8 quantises were counted unfused.)"""
    data = run_json(capsys, ["predict", SHORT.replace("TARGET", target), "--json"])
    good = data["goodput"]
    assert data["requests"]["finished"] == 50 and data["requests_per_s"] == pytest.approx(13.07, abs=0.01)
    assert good["fraction"] == fraction
    assert good["requests_per_s"] == pytest.approx(fraction * data["requests_per_s"], rel=1e-9)
    assert good["output_tokens_per_s"] == pytest.approx(fraction * data["output_tokens_per_s"], rel=1e-9)
