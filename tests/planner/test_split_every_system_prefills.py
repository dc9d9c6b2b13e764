"""Every system searched offers its prefill pool to the splits, two systems of one chip included: keyed by chip
(with the chip's Pareto front), only the first-listed system had one, and the answer followed --hardware's order."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load


def _best(catalog: Catalog, hardware_ids: list[str]) -> dict[str, Any]:
    """Llama 3.1 70B fp8 at 10 req/s, 8,192 in / 512 out, under 2 s / 30 ms: the simulated answer."""
    report = plan_serving(
        catalog, "llama-3.1-70b", hardware_ids, Load("rate", rate=10.0), 8192, 512,
        {"ttft_p99": 2.0, "tpot_p99": 0.03}, precision="fp8",
    )  # fmt: skip
    return dict(report["best"])


def test_the_answer_does_not_follow_the_order_of_two_systems_of_one_chip(catalog: Catalog) -> None:
    """azure-nd-h100-v5 listed first had read a colocated p5.48xlarge fleet, 36 H100s at $247.68/h (36 x $6.88);
    p5.48xlarge's prefill pool now joins the splits whichever comes first: p5.48xlarge>p5.48xlarge in both orders,
    22 H100s at $151.36/h (22 x $6.88; 24 until stop 100, when a split's capacity probe came to be timed while its
    decode pool is full)."""
    first = _best(catalog, ["azure-nd-h100-v5", "p5.48xlarge"])
    second = _best(catalog, ["p5.48xlarge", "azure-nd-h100-v5"])
    for best in (first, second):
        assert best["system"] == "p5.48xlarge>p5.48xlarge"
        assert best["chips"] == 22
        assert best["cost_usd_per_hour"] == pytest.approx(22 * 6.88)
