"""A short run priced at the load it keeps up with says so, and its energy share of busy time is on the same basis:
one request of Llama-3.1-8B (2,000 in, 200 out) at 0.01 req/s on one H100 is priced at the load's 2 output tok/s,
where its window read 168 tok/s."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chipwise.interfaces.cli.serve_views import _cost_row
from chipwise.planner.serving_economics import busy_shares
from chipwise.serve.sim.run import SimOutput


def _answer(priced: float, shown: float) -> dict[str, Any]:
    """The figures the cost row reads: $6.88/h, priced per `priced` output tok/s, a window of `shown`."""
    return {
        "pricing": "on_demand",
        "price_sources": [],
        "cost_usd_per_hour": 6.88,
        "cost_usd_per_mtok": 6.88 / (priced * 3600 / 1e6),
        "billed_chips": 1,
        "chips": 1,
        "priced_output_tokens_per_s": priced,
        "output_tokens_per_s": shown,
        "load": {"utilisation": 0.0066},
    }


def test_a_short_run_priced_at_the_load_names_the_load() -> None:
    """$6.88 / (2 tok/s x 3,600 / 1e6) = $955.56: it had read 'at the throughput of the batch filling', whose 168
    tok/s would price it at $11.38."""
    text = _cost_row(_answer(2.0, 167.86), {"arrival_span_s": 0.0})[1]
    assert "$955.56 per M output tokens (per the load's 2.00 output tok/s, which the run keeps up with)" in text
    assert "batch filling" not in text


def test_a_short_run_priced_at_its_throughput_says_so() -> None:
    text = _cost_row(_answer(167.86, 167.86), {"arrival_span_s": 0.0})[1]
    assert text.endswith("(at the throughput of the batch filling: see 'run too short')")
    assert "a short run" in _cost_row(_answer(167.86, 167.86), {"window_requests": 3})[1]


def _one_request(busy_s: float, end_s: float) -> SimOutput:
    return SimOutput(
        requests={"finish": np.array([end_s]), "dropped": np.array([0.0])},
        replicas=[{"role": "both", "busy_s": busy_s}],
        last_admit=0.0,
        end=end_s,
        wall_s=0.0,
        closed_loop=False,
        roles=["both"],
    )


def test_busy_share_at_the_priced_load() -> None:
    """One request busy 1.20 s of a 1.23 s run: 97.6% of its makespan, but at the priced 0.01 req/s a request comes
    every 100 s, busy 1.2% of it (1.20 x 0.01 / 1), as 200 such requests read."""
    out = _one_request(1.20, 1.23)
    assert busy_shares(out) == [pytest.approx(1.20 / 1.23)]
    assert busy_shares(out, 0.01) == [pytest.approx(0.012)]
