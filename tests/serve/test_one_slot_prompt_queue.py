"""A replica of one batch slot takes a prompt only with that slot free: the prompt ahead of a request is its wait
for a slot, counted once (serve.operating.at_rate), and a split's prefill pool waits for a replica as an M/D/c
queue (planner.serving_split.prefill_p99)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import topology_of
from chipwise.planner.serving_split import prefill_p99
from chipwise.serve.candidates import enumerate_candidates
from chipwise.serve.engine import engine_profile
from chipwise.serve.estimate import estimate
from chipwise.serve.operating import at_rate
from chipwise.workload.model import ModelSpec

INP, OUT = 8192.0, 2.0  # prompts that hold the slot most of the time, as a long prompt for a short answer does


def _two_slot_erlang_c(a: float) -> float:
    """Erlang C of two servers at load A, by hand: (A^2 / 2) (2 / (2 - A)) over 1 + A + the same."""
    tail = a * a / (2.0 - a)
    return tail / (1.0 + a + tail)


def test_two_replicas_of_one_slot_wait_for_a_slot_once(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """Two one-slot replicas behind a least-loaded router at 60% load each: p99 TTFT = the prompt alone P,
    the front end, a whole step, and the p99 wait for one of the two slots (Erlang C at A = 2 lambda H, H = P +
    (O - 1) TPOT, then exponential at 2 (2 - A) / H). The prompt queue had been added on top of it: the same
    queue twice (Llama 4 Scout's 10.4M-token prompts on GB200 had read 9,867 s where 4,324 s are simulated)."""
    h100 = hw.system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(1,))
    est = estimate(llama8b, h100, eng, cand, "fp8", "fp8", INP, OUT, 8192)
    p = float(est.prefill_s[0])
    lam = 0.6 / (p + float(est.step[0]))  # A = 1.2 of the two slots
    op = at_rate(llama8b, h100, eng, est, "fp8", "fp8", INP, OUT, np.asarray([lam]), None, 2.0 * lam)
    tpot = float(op.tpot[0])
    hold = p + (OUT - 1.0) * tpot
    a = 2.0 * lam * hold
    waits = _two_slot_erlang_c(a)
    slot99 = math.log(100.0 * waits) / (2.0 * (2.0 - a) / hold)
    assert waits > 0.01 and slot99 > p  # a tail worth counting, longer than the prompt itself
    assert float(op.ttft_p99[0]) == pytest.approx(p + eng.host_request_s + tpot + slot99, rel=1e-9)


def test_a_split_prefill_pool_waits_for_a_replica() -> None:
    """Two prefill replicas of a 1,310 s prompt at 0.001 req/s: A = 1.31, C = 0.5185, the p99 wait ln(100 C) /
    (2 (2 - A) / S) = 3,748 s, so the first token leaves the pool at 5,058 s (simulated: 4,294 s; it had read 2 S =
    2,620 s at any load). With no load the wait vanishes: the prompt alone."""
    c = _two_slot_erlang_c(1.31)
    assert c == pytest.approx(0.51846, abs=1e-5)
    wait = math.log(100.0 * c) / (2.0 * (2.0 - 1.31) / 1310.0)
    assert prefill_p99(1310.0, 2, 0.001) == pytest.approx(1310.0 + wait, rel=1e-9)
    assert prefill_p99(1310.0, 2, 0.001) == pytest.approx(5058.0, abs=1.0)
    assert prefill_p99(0.25, 7, 0.0) == 0.25
