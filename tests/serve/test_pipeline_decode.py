"""Pipeline-parallel decode of a batch too small to fill the stages (serve.iteration.micro_batches)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.iteration import Shapes, lm_head_cost, lm_heads, micro_batches
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.model import ModelSpec

CONTEXT = 100_000.0  # one sequence's cached tokens


def _setup(catalog: Catalog, hw: Hardware, model: ModelSpec, pp: int) -> ReplicaSetup:
    plan = ReplicaPlan(tp=1, pp=pp, max_batch=8, max_tokens=4096, weight_precision="bf16", kv_precision="bf16")
    return setup_replica(catalog, model, hw.system("h100-sxm"), "vllm", plan, CONTEXT, 512.0)


def test_micro_batches_fill_the_stages_only_with_as_many_sequences() -> None:
    assert micro_batches(4.0, np.asarray([0.0, 1.0, 3.0, 4.0, 64.0])).tolist() == [1.0, 1.0, 3.0, 4.0, 4.0]


@pytest.mark.parametrize("pp", [2, 4])
def test_a_lone_sequence_gains_no_speed_from_pipeline_stages(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, pp: int
) -> None:
    """Llama 3.1 8B on H100s, one sequence over a 100,000-token cache: it passes every stage in turn, reading
    every layer's 13.1 GB of cache (128 KiB a token) and the 16 GB of weights, so PP2 and PP4 decode no faster than
    one GPU (the cache read had been divided by the stages, 10.1 -> 8.0 ms a token at PP4)."""
    one = _setup(catalog, hw, llama8b, 1).steps
    staged = _setup(catalog, hw, llama8b, pp).steps
    assert staged.a_decode(1) == pytest.approx(one.a_decode(1), rel=1e-9)
    assert staged.decode_base(1) + staged.a_decode(1) * CONTEXT >= 0.99 * (
        one.decode_base(1) + one.a_decode(1) * CONTEXT
    )
    # a full pipeline reads each stage's cache at once: pp sequences cost a / pp a cached token
    assert staged.a_decode(pp) == pytest.approx(one.a_decode(1) / pp, rel=1e-9)


def test_the_lm_head_runs_once_a_micro_batch(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """The LM head sits on the last stage and runs once for each micro-batch: a lone sequence's once at PP8 (it was
    charged 8 times, 0.33 -> 2.7 ms a token), eight micro-batches of 8 sequences at 64."""
    dev = _setup(catalog, hw, llama8b, 8).dev
    shapes = Shapes.of(1, 8)
    assert float(lm_heads(llama8b, dev, shapes, 1.0, 1.0)) == pytest.approx(
        float(lm_head_cost(llama8b, dev, shapes, 1.0))
    )
    eight = 8 * lm_head_cost(llama8b, dev, shapes, 8.0)
    assert float(lm_heads(llama8b, dev, shapes, 64.0, 64.0)) == pytest.approx(float(eight))
