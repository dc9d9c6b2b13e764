"""An open loop's Little's-law check is taken over its throughput window, after the fill: from the first arrival,
the system empty there, lambda W reads above the time-average number in the system near capacity."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.sim.run import Deployment, simulate


def test_open_loop_little_law_balances_near_capacity(vllm_setup: ReplicaSetup) -> None:
    """2,000 requests of 512 + 128 tokens every 1/32 s on one H100 (vLLM), near its capacity: lambda W is within 1.5%
    of the mean in the system over the window (78.41 against 77.62); from the first arrival it read 77.73 against
    76.02 (2.2%). The span starts where the throughput window does."""
    n = 2000
    ones = np.ones(n, dtype=np.int64)
    out = simulate(Deployment((vllm_setup.pool(1),)), ones * 512, ones * 128, ones * 0, np.arange(n) / 32.0)
    summary = summarise(out, 1.0)
    law = summary["little_law"]
    lam_w = law["arrival_rate_per_s"] * law["mean_latency_s"]
    assert lam_w == pytest.approx(law["mean_in_system"], rel=0.015)
    lo = summary["window_s"][0]
    assert lo > 1.0  # after the fill
    assert law["arrivals_per_s"] == pytest.approx(int((np.arange(n) / 32.0 >= lo).sum()) / (n / 32.0 - 1 / 32.0 - lo))
