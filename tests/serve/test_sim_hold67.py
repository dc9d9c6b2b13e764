"""What a replica's KV cache holds: a split's prefill replica holds each prompt's cache until it is sent to the
decode pool, and a request whose prompt and answer can never fit one replica's cache is dropped before it runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.replica import cache_fits
from chipwise.serve.sim.run import Deployment, SimOutput, book_transfer, simulate

PROMPT, SEND_S = 2000, 1.0  # 2,000-token prompts, each sent in 1 s: the link, not the encoding, sets the pace


def _link_limited(setup: ReplicaSetup) -> SimOutput:
    """Six prompts at once on a prefill replica whose cache holds two (4,096 tokens) behind a link that sends one a
    second."""
    pools = (replace(setup.pool(1, "prefill"), kv_tokens=4096), setup.pool(1, "decode"))
    n = 6
    ones = np.ones(n, dtype=np.int64)
    deployment = Deployment(pools, transfer_s_per_token=SEND_S / PROMPT)
    return simulate(deployment, ones * PROMPT, ones * 2, ones * 0, np.zeros(n))


@pytest.mark.parametrize("engine", ["vllm_setup", "h100_setup"])  # on-demand and reserve admission
def test_a_prefill_replica_holds_a_prompt_until_it_is_sent(engine: str, request: pytest.FixtureRequest) -> None:
    """Prompts 0 and 1 are encoded together by e; their sends take [e, e + 1] and [e + 1, e + 2], and each frees its
    blocks when it ends, letting the next prompt in: prompt k >= 2 starts at e + k - 1 (each is encoded in well
    under the second its predecessor's send takes, so the link stays busy). Freed when encoded, prompts 2-5 had
    started by 2e, two an iteration, with their caches queued on the link and none of them counted as held."""
    out = _link_limited(request.getfixturevalue(engine))
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    pre = next(rep for rep in out.replicas if rep["role"] == "prefill")
    e = float(pre["iterations"][0, 0])  # the end of the first prompt iteration, which encoded prompts 0 and 1
    assert 0.0 < e < 0.5 * SEND_S
    assert r["started"][:2] == pytest.approx([0.0, 0.0])
    assert r["started"][2:] == pytest.approx(e + np.arange(2, 6) - 1, rel=1e-12)
    # between e and the first send's end both prompts' caches are held: 4,000 tokens and half a block each
    at = np.searchsorted(pre["util_t"], e + 0.5 * SEND_S, side="right") - 1
    block = request.getfixturevalue(engine).policy().block
    assert pre["util_v"][at] * 4096 == pytest.approx(2 * PROMPT + block)
    # the last send ends at e + 6: the prefill replica holds nothing after it
    assert pre["util_t"][-1] == pytest.approx(e + 6 * SEND_S, rel=1e-12)
    assert pre["util_v"][-1] == 0.0


def _run(setup: ReplicaSetup, inputs: list[int], outputs: list[int], kv_tokens: int) -> SimOutput:
    pool = replace(setup.pool(1), kv_tokens=kv_tokens)
    n = len(inputs)
    ins, outs = np.asarray(inputs, dtype=np.int64), np.asarray(outputs, dtype=np.int64)
    return simulate(Deployment((pool,)), ins, outs, np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.float64))


def test_a_request_that_can_never_fit_is_dropped_before_it_runs(vllm_setup: ReplicaSetup) -> None:
    """A 3,000-token cache holds 187 whole blocks of 16, 2,992 tokens: a 2,497-token prompt fits, its 588-token
    answer never does (3,085 tokens). On demand it had been admitted, made most of its answer, counted as output,
    and been dropped at its last steps; now it makes no token, and the output counted is the 100 tokens of the
    request that fits (1,000 + 100)."""
    out = _run(vllm_setup, [2497, 1000], [588, 100], 3000)
    r = out.requests
    assert r["dropped"].tolist() == [1.0, 0.0]
    assert np.isnan(r["started"][0]) and np.isnan(r["first"][0])
    assert np.isfinite(r["finish"][1])
    assert float(out.replicas[0]["emit_v"][-1]) == 100.0


def test_a_request_that_fills_the_whole_blocks_runs(vllm_setup: ReplicaSetup) -> None:
    """2,400 + 592 tokens fill the 2,992 tokens of whole blocks exactly: admitted and finished, its 592 tokens made."""
    out = _run(vllm_setup, [2400], [592], 3000)
    assert not out.requests["dropped"].any() and np.isfinite(out.requests["finish"][0])
    assert float(out.replicas[0]["emit_v"][-1]) == 592.0


def test_setup_and_admission_share_one_fit_rule() -> None:
    """A request fits a cache alone when its whole blocks fit the cache's whole blocks: 2,992 tokens of a 3,000-token
    cache of 16-token blocks, not 3,000 (the setup check had read kv_tokens itself)."""
    assert cache_fits(2992, 3000, 16)
    assert not cache_fits(2993, 3000, 16)
    assert cache_fits(1, 16, 16) and not cache_fits(1, 15, 16)


def test_a_transfer_fits_a_links_idle_window_before_a_later_booking() -> None:
    """Receiver X is busy for 10 s with sender B's prompt; sender A's prompt for X waits for it, [10, 20), and A's
    next prompt, for a free receiver Y, goes at once, [0, 5): A's link is idle until its booking for X (one booked
    behind a busy receiver had held its sender idle for every other receiver, starting at 20 s). A third, for Y,
    waits for both links' first common free window: Y's [0, 5) and A's [10, 20) leave [5, 10) for 5 s."""
    a: list[tuple[float, float]] = []
    b: list[tuple[float, float]] = []
    x: list[tuple[float, float]] = []
    y: list[tuple[float, float]] = []
    assert book_transfer(b, x, 0.0, 10.0) == 0.0
    assert book_transfer(a, x, 0.0, 10.0) == 10.0
    assert book_transfer(a, y, 0.0, 5.0) == 0.0
    assert book_transfer(a, y, 0.0, 5.0) == 5.0
    assert book_transfer(a, y, 0.0, 5.0) == 20.0  # no window of 5 s left on A before its [10, 20)
    assert a == [(0.0, 5.0), (5.0, 10.0), (10.0, 20.0), (20.0, 25.0)]
    # at 12 s the windows over by then are dropped from both lists a booking reads
    assert book_transfer(a, x, 12.0, 1.0) == 25.0 and a[0] == (10.0, 20.0) and x == [(10.0, 20.0), (25.0, 26.0)]
