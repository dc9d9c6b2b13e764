"""A split's decode replica that runs out of KV cache preempts as a replica of both roles does (vLLM's RECOMPUTE):
the victim's context, its prompt and the tokens generated so far, is encoded again on the decode replica."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.run import Deployment, simulate

I, O = 1000, 1000  # noqa: E741 - prompt and output tokens


def test_a_preempted_request_is_recomputed_on_the_decode_replica(vllm_setup: ReplicaSetup) -> None:
    """40 requests of 1,000 + 1,000 tokens at once on a decode replica of 20,000 tokens (ten answers at most): every
    re-admission encodes at least the 1,000-token prompt plus the token it had been given, at most its whole
    context. They had been taken back free: 24 preemptions and no prompt iteration on the decode replica."""
    n = 40
    pools = (vllm_setup.pool(1, "prefill"), replace(vllm_setup.pool(1, "decode"), kv_tokens=20_000))
    ones = np.ones(n, dtype=np.int64)
    out = simulate(Deployment(pools), ones * I, ones * O, ones * 0, np.zeros(n))
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    decode = next(rep for rep in out.replicas if rep["role"] == "decode")
    preempted = decode["preemptions"]
    assert preempted > 0 and preempted == int(r["preempted"].sum())
    _, prompt_iters, prompt_tokens, decode_iters = decode["iterations"][-1]
    assert prompt_iters > 0
    assert (I + 1) * preempted <= prompt_tokens <= (I + O) * preempted
    # and the answers' tokens are counted once: the prefill replica's first tokens, the decode replica's rest and
    # the tokens each recompute samples
    assert sum(float(rep["emit_v"][-1]) for rep in out.replicas) == pytest.approx(n * O, rel=1e-12)
    assert decode_iters > 0
