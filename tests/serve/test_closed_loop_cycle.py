"""A closed loop's user cycles through a wait for the iteration in flight, its first token (the prompt) and then
O - 1 tokens a step each (serve.operating.closed_loop): the requests/s its users issue, and so the output the ranking
and the row's $/M count (planner.serving_choice._closed_output)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import topology_of
from chipwise.serve.candidates import enumerate_candidates
from chipwise.serve.engine import engine_profile
from chipwise.serve.estimate import estimate
from chipwise.serve.operating import closed_loop
from chipwise.workload.model import ModelSpec


@pytest.mark.parametrize("out", [2.0, 256.0])
def test_a_users_cycle_counts_the_first_token_once(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, out: float
) -> None:
    """8 users of 1,024-token prompts on one H100 (TP1, b64): rate = 8 / (F + t / 2 + (O - 1) t), F the first token
    alone; O t had counted the first token as a step too (two-token answers: 2 t after F where one runs)."""
    h100 = hw.system("h100-sxm")
    eng = engine_profile(catalog, "trtllm", h100.chip.family)
    cand = enumerate_candidates(model=llama8b, topo=topology_of(h100), fixed={"tp": 1}, batches=(64,))
    est = estimate(llama8b, h100, eng, cand, "fp8", "fp8", 1024.0, out, 8192)
    op = closed_loop(llama8b, h100, eng, est, "fp8", "fp8", 1024.0, out, np.asarray([8.0]))
    t, first = float(op.tpot[0]), float(est.prefill_s[0]) + eng.host_request_s
    rate = 8.0 / (first + t / 2.0 + (out - 1.0) * t)
    assert float(op.rho[0]) * float(est.throughput[0]) == pytest.approx(rate * out, rel=1e-9)
