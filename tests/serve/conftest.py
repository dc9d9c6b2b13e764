"""Shared serving fixtures: a small replica priced once per session."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model


@pytest.fixture(scope="session")
def llama8b(catalog: Catalog) -> ModelSpec:
    return load_model(catalog, "llama-3.1-8b")


@pytest.fixture(scope="session")
def llama70b(catalog: Catalog) -> ModelSpec:
    return load_model(catalog, "llama-3.1-70b")


@pytest.fixture(scope="session")
def h100_setup(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> ReplicaSetup:
    """Llama 3.1 8B in fp8 on one H100 with TensorRT-LLM defaults (reserve admission, mixed batching), its prompt
    iterations in piecewise CUDA graphs, so that an iteration's time is its device work and fixed costs (the eager
    launch floor has tests of its own)."""
    plan = ReplicaPlan(
        tp=1, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8", piecewise_graphs=True
    )
    return setup_replica(catalog, llama8b, hw.system("h100-sxm"), "trtllm", plan, 512.0, 128.0)


@pytest.fixture(scope="session")
def vllm_setup(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> ReplicaSetup:
    """The same model with vLLM (on-demand admission with preemption)."""
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=4096, weight_precision="bf16", kv_precision="bf16")
    return setup_replica(catalog, llama8b, hw.system("h100-sxm"), "vllm", plan, 512.0, 128.0)
