"""A split's prompts queued for the decode pool: their wait for a decode slot is reported apart from the wait to
start (`ttft_decode_wait_s`, the KV transfer `ttft_transfer_s` apart), and their caches stay held by the prefill
replica until a decode replica admits them and pulls the cache (vLLM's NIXL connector), so that a full prefill cache
stalls the prefill pool."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.metrics import per_request, summarise
from chipwise.serve.sim.run import Deployment, PoolSim, SimOutput, simulate

I, O = 1000, 1000  # noqa: E741 - prompt and output tokens
PER_TOKEN, LATENCY = 1e-6, 5e-4  # the KV transfer: 1 us a token and 0.5 ms, 1.5 ms a 1,000-token prompt


def _one_slot_split(
    setup: ReplicaSetup,
    n: int,
    prefill_kv: int | None = None,
    per_token: float = 0.0,
    latency: float = 0.0,
    pull: bool = True,
) -> SimOutput:
    """n requests of I + O tokens at once on one prefill replica and one decode replica of one batch slot, the
    decode replica pulling each cache when it admits the request (vLLM's NIXL flow) or, `pull` false, sent it as
    soon as it is encoded."""
    pre = setup.pool(1, "prefill")
    if prefill_kv is not None:
        pre = replace(pre, kv_tokens=prefill_kv)
    dec = setup.pool(1, "decode")
    dec = PoolSim(dec.steps, replace(dec.policy, max_batch=1), dec.kv_tokens, 1, "decode")
    ones = np.ones(n, dtype=np.int64)
    return simulate(
        Deployment((pre, dec), transfer_latency_s=latency, transfer_s_per_token=per_token, kv_pull=pull),
        ones * I,
        ones * O,
        ones * 0,
        np.zeros(n),
    )


def test_the_wait_for_a_decode_slot_is_reported(vllm_setup: ReplicaSetup) -> None:
    """Two prompts at once, one decode slot: the first is taken as its cache arrives (its decode wait 0, its KV
    transfer 1.5 ms), the second waits from its prefill until the first finishes. The wait to start misses it (both
    prompts start in the first iteration: 0), and it had not been reported at all."""
    out = _one_slot_split(vllm_setup, 2, per_token=PER_TOKEN, latency=LATENCY)
    r = out.requests
    lat = per_request(out)
    assert lat["transfer"].tolist() == pytest.approx([I * PER_TOKEN + LATENCY] * 2, rel=1e-12)
    assert lat["wait"].tolist() == [0.0, 0.0]
    assert lat["decode_wait"][0] == pytest.approx(0.0, abs=1e-12)
    # the second is admitted when the first finishes, then pulls its cache over the free link
    assert r["first"][1] == pytest.approx(r["finish"][0] + I * PER_TOKEN + LATENCY, rel=1e-12)
    assert lat["decode_wait"][1] == pytest.approx(r["finish"][0] - r["prefilled"][1], rel=1e-12)
    assert lat["decode_wait"][1] > 0.9 * (r["first"][1] - r["arrival"][1])  # nearly all of its TTFT
    summary = summarise(out, 2.0)
    assert summary["ttft_decode_wait_s"]["mean"] == pytest.approx(lat["decode_wait"][1] / 2, rel=1e-12)
    assert summary["ttft_transfer_s"]["p50"] == pytest.approx(I * PER_TOKEN + LATENCY, rel=1e-12)


def test_one_pool_reports_no_decode_wait(vllm_setup: ReplicaSetup) -> None:
    ones = np.ones(2, dtype=np.int64)
    out = simulate(Deployment((vllm_setup.pool(1),)), ones * I, ones * O, ones * 0, np.zeros(2))
    summary = summarise(out, 1.0)
    assert "ttft_decode_wait_s" not in summary and "ttft_transfer_s" not in summary


def test_prompts_queued_for_the_decode_pool_hold_the_prefill_cache(vllm_setup: ReplicaSetup) -> None:
    """A prefill cache of 2,500 tokens holds two 1,000-token prompts (63 blocks of 16 each); one decode slot. The
    first goes on at once; the second and third (encoded as the first leaves) wait for the decode slot, held by the
    prefill replica, so the fourth cannot start until the second is taken, when the first finishes. Handed on at
    once (until 2026-12), the decode pool's queue held them nowhere and the fourth started ~0.1 s in."""
    out = _one_slot_split(vllm_setup, 4, prefill_kv=2500)
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    assert r["started"][3] == pytest.approx(r["finish"][0], rel=1e-12)
    assert r["started"][3] > 1.0  # the first's 1,000 decode steps
    prefill = next(rep for rep in out.replicas if rep["role"] == "prefill")
    # two prompts of 1,008 tokens' blocks and half a block each held while they wait: 2,032 / 2,500
    assert float(prefill["util_v"].max()) == pytest.approx(2 * (1008 + 8) / 2500, rel=1e-12)


def test_a_pushed_cache_leaves_the_prefill_replica_once_sent(vllm_setup: ReplicaSetup) -> None:
    """Where the engine pushes each cache as soon as the prompt is encoded (SGLang, TensorRT-LLM: kv_pull false),
    the prefill replica frees it once sent, so the four prompts are encoded one after another at once and wait at
    the decode replica; the wait for its slot is still reported, and the transfer (1.5 ms) overlaps it."""
    out = _one_slot_split(vllm_setup, 4, prefill_kv=2500, per_token=PER_TOKEN, latency=LATENCY, pull=False)
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    assert r["started"][3] < 0.1  # encoded before the first has finished decoding
    assert r["transfer"][3] == pytest.approx(I * PER_TOKEN + LATENCY)
    assert out.requests["first"][1] == pytest.approx(r["finish"][0], rel=1e-6)


def test_the_simulated_setup_pulls_where_the_decode_engine_does(vllm_setup: ReplicaSetup) -> None:
    """ServingSetup.deployment: a split pulls where its decode pool's engine does (engines.ENGINE.kv_pull: vLLM's,
    sourced; the others push, and a what-if turns SGLang's on); one pool never does."""
    from chipwise.catalog import load_catalog
    from chipwise.serve.engine import engine_profile
    from chipwise.serve.simulate import Pool, ServingSetup

    def split(engine_pulls: bool) -> ServingSetup:
        s = replace(vllm_setup, engine=replace(vllm_setup.engine, kv_pull=engine_pulls))
        return ServingSetup((Pool(s, 1, "prefill"), Pool(s, 1, "decode")))

    assert split(True).deployment().kv_pull
    assert not split(False).deployment().kv_pull
    assert not ServingSetup((Pool(vllm_setup, 1),)).deployment().kv_pull
    catalog = load_catalog()
    assert vllm_setup.engine.kv_pull and engine_profile(catalog, "vllm", "hopper").provenance["kv_pull"].sources
    for engine, family in (("sglang", "hopper"), ("trtllm", "blackwell"), ("vllm-neuron", "trainium2")):
        assert not engine_profile(catalog, engine, family).kv_pull, engine
    assert engine_profile(load_catalog(sets=["sglang.kv_pull=1"]), "sglang", "hopper").kv_pull
