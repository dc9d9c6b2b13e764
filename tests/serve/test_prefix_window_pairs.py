"""Prefill attention after a prefix-cache hit in sliding-window layers: the step tables' b is the share of the
pairs the uncached rest runs, by hand (Mistral 7B: 32 layers, a 4,096-token window)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.serving_breakdown import prefill_breakdown
from chipwise.serve.build import ReplicaSetup, cached_prefix, setup_replica
from chipwise.serve.iteration import IterationInputs, Shapes, iteration_breakdown
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.presets import load_model

PROMPT = 32_000.0
CACHED = 28_800.0  # 90% hits
# per layer: 3,200 new tokens after 28,800 cached each attend to 4,096 keys, of 3,200 x 28,800 + 3,200 x 3,201 / 2
AFTER_WINDOW, AFTER_CAUSAL = 3200 * 4096, 92_160_000 + 5_121_600
# the whole prompt: 4,096 x 4,097 / 2 + 27,904 x 4,096 of 32,000 x 32,001 / 2
WHOLE_WINDOW, WHOLE_CAUSAL = 8_390_656 + 114_294_784, 512_016_000


def _setup(catalog: Catalog, hw: Hardware, model: str, cached: float) -> ReplicaSetup:
    plan = ReplicaPlan(tp=1, max_batch=8, max_tokens=8192, weight_precision="bf16", kv_precision="bf16")
    m = load_model(catalog, model)
    return setup_replica(catalog, m, hw.system("h100-sxm"), "trtllm", plan, PROMPT, 100.0, typical_cached=cached)


def test_cached_prefix_by_hand() -> None:
    """The hit rate's share of the prompt, its last token always encoded (as prompt_chunks serves it)."""
    assert cached_prefix(PROMPT, 0.9) == CACHED
    assert cached_prefix(100.0, 1.0) == 99.0
    assert cached_prefix(100.0, 0.0) == 0.0


def test_step_tables_price_the_pairs_after_the_hit(catalog: Catalog, hw: Hardware) -> None:
    """b per causal pair of the uncached rest: 32 x 13.11 M / 97.28 M = 4.312 layers' worth, where the whole prompt's
    share, 32 x 122.7 M / 512.0 M = 7.668, had been applied to them (37.3 ms of attention where 21.0 ms run)."""
    whole = _setup(catalog, hw, "mistral-7b", 0.0).steps.b
    hit = _setup(catalog, hw, "mistral-7b", CACHED).steps.b
    after = 32.0 * AFTER_WINDOW / AFTER_CAUSAL
    share = 32.0 * WHOLE_WINDOW / WHOLE_CAUSAL
    assert after == pytest.approx(4.3115, abs=1e-4) and share == pytest.approx(7.6676, abs=1e-4)
    assert hit == pytest.approx(whole * after / share, rel=1e-12)


def test_prefill_breakdown_attention_after_the_hit(catalog: Catalog, hw: Hardware) -> None:
    """One 32,000-token prompt at 90% hits: its attention row is b x the 97.28 M causal pairs after the hit, at the
    share those run (0.562 of what the whole prompt's share read), and iteration_breakdown prices them alike."""
    setup = _setup(catalog, hw, "mistral-7b", CACHED)
    mistral = load_model(catalog, "mistral-7b")
    parts = prefill_breakdown(setup, mistral, PROMPT, 0.9)
    assert parts["attention"] == pytest.approx(setup.steps.b * AFTER_CAUSAL, rel=1e-9)
    old = _setup(catalog, hw, "mistral-7b", 0.0).steps.b * AFTER_CAUSAL
    assert parts["attention"] / old == pytest.approx(0.5623, abs=1e-4)
    p = setup.plan
    work = IterationInputs(np.asarray(3200.0), np.asarray(1.0), np.asarray(0.0), np.asarray(float(AFTER_CAUSAL)))
    found = iteration_breakdown(
        mistral, setup.dev, setup.topo, setup.engine, p.weight_precision, p.kv_precision,
        Shapes.of(1), work, PROMPT + 100.0, PROMPT, typical_cached=CACHED,
    )  # fmt: skip
    assert float(found["attention"]) == pytest.approx(setup.steps.b * AFTER_CAUSAL, rel=1e-12)


def test_full_attention_does_not_move(catalog: Catalog, hw: Hardware) -> None:
    """Llama 3.1 8B attends fully in every layer: its b is the same with or without a hit."""
    assert _setup(catalog, hw, "llama-3.1-8b", CACHED).steps.b == _setup(catalog, hw, "llama-3.1-8b", 0.0).steps.b
