"""A load that cycles through a fixed set of prompts: repeats are served from the prefix cache."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.simulate import Pool, ServingSetup, cached_tokens, run_job
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.serving_job import ServingJob, serving_job

I, O = 512, 128  # noqa: E741 - prompt and output tokens


def _job(model: ModelSpec, pool: int, users: int = 4, n: int = 40, hit_rate: float = 0.0) -> ServingJob:
    lengths = (LengthDist.fixed(I), LengthDist.fixed(O))
    return ServingJob(model, *lengths, Load("closed", concurrency=users), n, prefix_hit_rate=hit_rate, prompt_pool=pool)


def _cached(job: ServingJob, setup: ReplicaSetup, replicas: int = 1) -> np.ndarray:
    ones = np.ones(job.requests, dtype=np.int64)
    return cached_tokens(job, ServingSetup((Pool(setup, replicas),)), ones * I, ones * O, np.random.default_rng(0))


def test_the_first_cycle_is_new_and_every_repeat_is_a_whole_prompt_hit(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    """10 prompts, 40 requests, one replica whose KV cache holds them all: requests 0-9 encode their prompts,
    30 repeats come from the cache (the simulator still encodes one token of each)."""
    cached = _cached(_job(llama8b, pool=10), h100_setup)
    assert cached[:10].tolist() == [0] * 10
    assert cached[10:].tolist() == [I] * 30


def test_without_a_pool_only_the_shared_prefix_share_hits(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    cached = _cached(_job(llama8b, pool=0, hit_rate=0.5), h100_setup)
    assert cached.tolist() == [I // 2] * 40
    # a pool no longer than the run repeats nothing
    assert _cached(_job(llama8b, pool=40), h100_setup).tolist() == [0] * 40


def test_behind_two_replicas_a_repeat_hits_where_its_prompt_went_before(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    """Each earlier use went to the same replica with probability 1/2: a repeat in cycle k hits with 1 - 2^-k."""
    pool = 400
    cached = _cached(_job(llama8b, pool=pool, n=6 * pool), h100_setup, replicas=2)
    share = [(cached[k * pool : (k + 1) * pool] == I).mean() for k in range(6)]
    assert share[0] == 0.0
    for k in range(1, 6):
        assert share[k] == pytest.approx(1.0 - 0.5**k, abs=0.06)


def test_a_pool_the_kv_cache_cannot_hold_hits_in_proportion(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """4 users hold 4 x 640 tokens; the rest of the KV cache holds `spare / 640` of the prompts and answers of the
    pool's requests done between two uses of a prompt (all but the 4 in flight), and that share of the repeats
    hits."""
    spare = h100_setup.kv_tokens - 4 * (I + O)
    pool = round(spare / (0.3 * (I + O)))
    cached = _cached(_job(llama8b, pool=pool, n=3 * pool), h100_setup)
    held = spare / ((pool - 4) * (I + O))
    assert held == pytest.approx(0.3, abs=0.01)
    assert (cached[pool:] == I).mean() == pytest.approx(held, abs=0.02)


def test_repeated_prompts_shorten_the_first_token_and_raise_throughput(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    setup = ServingSetup((Pool(h100_setup, 1),))
    new, _ = run_job(_job(llama8b, pool=0, users=32, n=1600), setup)
    repeated, _ = run_job(_job(llama8b, pool=100, users=32, n=1600), setup)
    assert repeated["ttft_s"]["mean"] < 0.5 * new["ttft_s"]["mean"]
    assert repeated["output_tokens_per_s"] > new["output_tokens_per_s"]


def test_a_scenario_states_its_prompt_pool(llama8b: ModelSpec) -> None:
    sc = load_scenario(
        "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\ninput_tokens: 512\noutput_tokens: 128\n"
        "concurrency: 8\nprompt_pool: 100\n"
    )
    assert isinstance(sc, ServeScenario) and sc.prompt_pool == 100
    assert serving_job(llama8b, sc).prompt_pool == 100


def test_an_open_load_leaves_the_cache_what_a_full_batch_does_not_hold(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    """Offline, every batch slot is busy: the pool shares what the max batch's requests leave of the KV cache."""
    spare = h100_setup.kv_tokens - h100_setup.plan.max_batch * (I + O)
    pool = round(spare / (0.5 * (I + O)))
    lengths = (LengthDist.fixed(I), LengthDist.fixed(O))
    job = ServingJob(llama8b, *lengths, Load("offline"), 3 * pool, prompt_pool=pool)
    assert (_cached(job, h100_setup)[pool:] == I).mean() == pytest.approx(spare / (pool * (I + O)), abs=0.02)


def test_an_open_loop_holds_its_rate_times_a_latency_not_a_full_batch(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    """2 req/s of 512-token prompts on one H100 hold a request or two (2/s x well under a second), so a pool of
    prompts that fills all but four requests' share of the KV cache hits every repeat; the cap of 64 slots had left
    it 91%, as if every slot were busy."""
    pool = h100_setup.kv_tokens // (I + O) - 4
    lengths = (LengthDist.fixed(I), LengthDist.fixed(O))
    job = ServingJob(llama8b, *lengths, Load("rate", rate=2.0), 3 * pool, prompt_pool=pool)
    assert (_cached(job, h100_setup)[pool:] == I).mean() == 1.0


def test_a_pool_no_larger_than_the_requests_in_flight_is_held_by_them(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    """An offline run fills the batch: its requests in flight hold the KV cache, and 10 prompts cycled are each in
    use by one of them whenever it repeats, so every repeat after the first batch hits (that batch is admitted at
    once, its repeats encoded beside their originals). Set against the free blocks alone, none had (an offline run
    of 10 prompts read 669 output tok/s where 24 req/s of them ran at 2,383)."""
    lengths = (LengthDist.fixed(I), LengthDist.fixed(O))
    full = h100_setup.kv_tokens // (I + O)  # a batch that fills the cache leaves no free blocks
    setup = replace(h100_setup, plan=replace(h100_setup.plan, max_batch=full))
    job = ServingJob(llama8b, *lengths, Load("offline"), 3 * full, prompt_pool=10)
    ones = np.ones(job.requests, dtype=np.int64)
    cached = cached_tokens(job, ServingSetup((Pool(setup, 1),)), ones * I, ones * O, np.random.default_rng(0))
    assert cached[:full].tolist() == [0] * full and cached[full:].tolist() == [I] * (2 * full)


def test_behind_replicas_a_replica_keeps_what_its_share_of_the_pool_leaves(
    h100_setup: ReplicaSetup, llama8b: ModelSpec
) -> None:
    """Between two uses of a prompt on one of 4 replicas, a quarter of the pool's other requests land there: its
    free blocks need hold only those, less its 4 users' requests in flight (the whole pool had been set against one
    replica's cache, four times the eviction)."""
    spare = h100_setup.kv_tokens - 4 * (I + O)
    pool = round(4 * (4 + spare / (0.5 * (I + O))))  # a replica's share leaves it half of what it holds
    job = _job(llama8b, pool=pool, users=16, n=40 * pool)
    cached = _cached(job, h100_setup, replicas=4)
    cycles = (np.arange(job.requests) // pool)[pool:]
    went = 1.0 - 0.75**cycles
    assert (cached[pool:] == I).mean() == pytest.approx(0.5 * went.mean(), abs=0.02)
