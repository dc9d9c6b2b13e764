"""A request that fills the KV cache exactly: the setup accepts any request with input + output <= kv_tokens, so
the simulator admits it, lets it grow to its last token and never drops it; one token more is dropped before it
runs. The fit is of whole blocks, one rule for the setup and the scheduler's admission: a request whose prompt and
answer can never fit one replica's cache is dropped before it runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.replica import cache_fits
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


def _run_requests(setup: ReplicaSetup, inputs: list[int], outputs: list[int], kv_tokens: int) -> SimOutput:
    pool = replace(setup.pool(1), kv_tokens=kv_tokens)
    n = len(inputs)
    ins, outs = np.asarray(inputs, dtype=np.int64), np.asarray(outputs, dtype=np.int64)
    return simulate(Deployment((pool,)), ins, outs, np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.float64))


def test_a_request_that_can_never_fit_is_dropped_before_it_runs(vllm_setup: ReplicaSetup) -> None:
    """A 3,000-token cache holds 187 whole blocks of 16, 2,992 tokens: a 2,497-token prompt fits, its 588-token
    answer never does (3,085 tokens). On demand it had been admitted, made most of its answer, counted as output,
    and been dropped at its last steps; now it makes no token, and the output counted is the 100 tokens of the
    request that fits (1,000 + 100)."""
    out = _run_requests(vllm_setup, [2497, 1000], [588, 100], 3000)
    r = out.requests
    assert r["dropped"].tolist() == [1.0, 0.0]
    assert np.isnan(r["started"][0]) and np.isnan(r["first"][0])
    assert np.isfinite(r["finish"][1])
    assert float(out.replicas[0]["emit_v"][-1]) == 100.0


def test_a_request_that_fills_the_whole_blocks_runs(vllm_setup: ReplicaSetup) -> None:
    """2,400 + 592 tokens fill the 2,992 tokens of whole blocks exactly: admitted and finished, its 592 tokens made."""
    out = _run_requests(vllm_setup, [2400], [592], 3000)
    assert not out.requests["dropped"].any() and np.isfinite(out.requests["finish"][0])
    assert float(out.replicas[0]["emit_v"][-1]) == 592.0


def test_setup_and_admission_share_one_fit_rule() -> None:
    """A request fits a cache alone when its whole blocks fit the cache's whole blocks: 2,992 tokens of a 3,000-token
    cache of 16-token blocks, not 3,000 (the setup check had read kv_tokens itself)."""
    assert cache_fits(2992, 3000, 16)
    assert not cache_fits(2993, 3000, 16)
    assert cache_fits(1, 16, 16) and not cache_fits(1, 15, 16)
