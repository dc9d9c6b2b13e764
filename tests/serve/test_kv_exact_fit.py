"""A request that fills the KV cache exactly: the setup accepts any request with input + output <= kv_tokens, so
the simulator admits it, lets it grow to its last token and never drops it; one token more is dropped before it
runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.run import Deployment, SimOutput, simulate

CAP = 31_728  # 1,983 vLLM blocks of 16 tokens (Llama 3.1 8B on an H100 at memory_fraction 0.3)


def _run(setup: ReplicaSetup, inp: int, out: int) -> SimOutput:
    assert setup.policy().block == 16 and CAP % 16 == 0
    pool = replace(setup.pool(1), kv_tokens=CAP)
    ones = np.ones(3, dtype=np.int64)
    return simulate(Deployment((pool,)), ones * inp, ones * out, ones * 0, np.array([0.0, 1.0, 2.0]))


@pytest.mark.parametrize(
    ("inp", "out"),
    [
        (31_720, 8),  # the prompt's blocks are the whole cache: it had stayed queued forever ("should not happen")
        (31_600, 128),  # the prompt fits with room to grow: dropped at its last steps as outgrowing the cache
    ],
)
def test_a_request_that_fills_the_cache_exactly_runs(vllm_setup: ReplicaSetup, inp: int, out: int) -> None:
    r = _run(vllm_setup, inp, out).requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    assert r["preempted"].sum() == 0
    assert np.all(r["first"][1:] >= r["finish"][:-1])  # one at a time: two never fit together


def test_one_token_more_is_dropped_alone(vllm_setup: ReplicaSetup) -> None:
    """31,601 + 128 tokens would outgrow 1,983 blocks at the last step: dropped before it runs, though its prompt
    fits (it had been encoded and made 127 tokens first, counted as output)."""
    out = _run(vllm_setup, 31_601, 128)
    r = out.requests
    assert r["dropped"].all()
    assert np.all(np.isnan(r["first"]))
    assert float(out.replicas[0]["emit_v"][-1]) == 0.0
