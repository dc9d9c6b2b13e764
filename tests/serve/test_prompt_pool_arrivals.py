"""A prompt pool changes which prompts hit the prefix cache, never the requests themselves: one seed draws the same
lengths and arrivals whatever the pool (the cache draw had come before the arrivals, from the same generator)."""

from __future__ import annotations

import numpy as np

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob

N = 400


def _requests(setup: ReplicaSetup, model: ModelSpec, pool: int) -> dict[str, np.ndarray]:
    lengths = (LengthDist("lognormal", 512.0, 256.0, 1, 4096), LengthDist.fixed(64))
    job = ServingJob(model, *lengths, Load("rate", rate=10.0), N, prompt_pool=pool)
    _, out = run_job(job, ServingSetup((Pool(setup, 1),)), seed=3)
    return out.requests


def test_a_pool_leaves_the_arrivals_and_lengths_of_a_seed_alone(h100_setup: ReplicaSetup, llama8b: ModelSpec) -> None:
    """400 requests at 10 req/s with prompt_pool: 399 (one repeat at most) had arrived otherwise than without a
    pool, and every request's latency moved (2,000 requests: e2e mean 1.5315 s read 1.5219)."""
    alone = _requests(h100_setup, llama8b, 0)
    pooled = _requests(h100_setup, llama8b, N - 1)
    for key in ("arrival", "input", "output"):
        assert np.array_equal(alone[key], pooled[key]), key
    # the one repeat (the last request's prompt, the first's) is all that changes: its prefill, and so the run's
    # timeline from its arrival on; every request before it finishes as without the pool
    last = float(alone["arrival"][-1])
    before = alone["finish"] < last
    assert before.sum() > 300
    assert np.array_equal(alone["finish"][before], pooled["finish"][before])
