"""A split's prefill pool, sized for the prompts' arrival rate, is sized for prompts whose prefix-cache hits are
cached rather than encoded."""

from __future__ import annotations

import math
from typing import Any

import pytest

from cli_run import run_json


def _split(capsys: pytest.CaptureFixture[str], hit: float) -> dict[str, Any]:
    scenario = (
        '{"kind":"serve","model":"llama-3.1-70b","hardware":"h100-sxm","precision":"fp8","input_tokens":8000,'
        f'"output_tokens":200,"arrival_rate":20,"requests":200,"prefix_hit_rate":{hit},'
        '"plan":{"disaggregated":true,"prefill":{"tp":4},"decode":{"tp":4}}}'
    )
    return run_json(capsys, ["predict", scenario, "--json"])


def test_prefix_hits_size_fewer_prefill_replicas(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3.1 70B fp8, 8,000-token prompts at 20 req/s, TP4 prefill replicas kept 70% busy: ceil(20 x 0.3615 s /
    0.7) = 11 with no hits, ceil(20 x 0.0664 s / 0.7) = 2 at 0.9, the prompt's 800 new tokens taking the host's
    launch floor of 66.2 ms (12 chips with the decode replica). Both had been sized at 11, the hits left out of the
    prompt's time. (0.0885 s and 3 replicas while TensorRT-LLM's fp8 quantises were counted unfused.)"""
    for hit, replicas in ((0.0, 11), (0.9, 2)):
        d = _split(capsys, hit)
        seconds = d["prefill_one_prompt"]["seconds"]  # one mean prompt alone, at the hit rate
        assert d["plan"]["prefill"]["replicas"] == replicas == math.ceil(20 * seconds / 0.7)
    assert d["chips"] == 12
    assert seconds == pytest.approx(0.0664, abs=5e-4)
