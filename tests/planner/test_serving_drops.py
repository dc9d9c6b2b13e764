"""A serving prediction says how many requests the simulated engine dropped and why, and refuses a run that
finished none (it had priced 0 finished requests at 146 output tok/s)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from chipwise.errors import InfeasibleError
from chipwise.planner.serving_predict import _slo_caveat, dropped


def _run(dropped_rows: list[int], finished: int) -> tuple[dict[str, Any], Any, Any]:
    n = 4
    flags = np.zeros(n)
    flags[dropped_rows] = 1.0
    sim = SimpleNamespace(
        requests={
            "input": np.array([1000.0, 12112.0, 12000.0, 900.0]),
            "output": np.array([128.0, 128.0, 128.0, 128.0]),
            "dropped": flags,
        }
    )
    summary = {"requests": {"issued": n, "finished": finished, "dropped": len(dropped_rows)}}
    pool = SimpleNamespace(setup=SimpleNamespace(kv_tokens=12_240))
    return summary, sim, SimpleNamespace(pools=(pool,))


def test_dropped_requests_are_counted_with_their_reason() -> None:
    summary, sim, setup = _run([1, 2], finished=2)
    lost = dropped(summary, sim, setup)
    assert lost == {
        "requests": 2,
        "kv_cache_tokens": 12_240,
        "longest": {"input": 12_112, "output": 128},
        "reason": "2 of 4 requests outgrew a replica's KV cache of 12,240 tokens alone (the longest: 12,112 input + "
        "128 output tokens, with the positions each decode step adds) and were dropped unserved",
    }
    # an SLO met by the requests served says the others were not
    result = {"slo": {"ttft_p99": 1.0}, "slo_met": True, "dropped": lost, "load": {}}
    assert _slo_caveat(result) == "2 requests were dropped unserved (see dropped)"


def test_no_drops_no_entry() -> None:
    assert dropped(*_run([], finished=4)) is None


def test_a_run_that_finished_no_request_is_refused() -> None:
    with pytest.raises(InfeasibleError) as err:
        dropped(*_run([0, 1, 2, 3], finished=0))
    assert str(err.value) == (
        "no request finished: 4 of 4 requests outgrew a replica's KV cache of 12,240 tokens alone (the longest: "
        "12,112 input + 128 output tokens, with the positions each decode step adds) and were dropped unserved. "
        "Fix: raise plan.memory_fraction or tp, quantise the KV cache, or shorten the requests."
    )
