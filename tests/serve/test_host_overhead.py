"""Host CPU: the serving engine's host-side costs scale with the system's host (Grace is slower per thread)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.serve.build import setup_replica
from chipwise.serve.candidates import Candidates
from chipwise.serve.engine import engine_profile
from chipwise.serve.estimate import estimate
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.model import ModelSpec


def test_grace_hosts_carry_their_measured_cpu_overhead(hw: Hardware) -> None:
    gb200 = hw.system("gb200-nvl72")
    assert gb200.host_overhead == pytest.approx(37.08 / 13.48, rel=1e-3)
    assert "TE_GRACE_CPU" in gb200.provenance["host_overhead"].sources
    assert hw.system("gh200-1x").host_overhead == pytest.approx(33.17 / 13.48, rel=1e-3)
    assert hw.system("p6-b200.48xlarge").host_overhead == 1.0  # x86 hosts are the reference


def test_on_host_is_idempotent_and_scales_only_host_costs(catalog: Catalog) -> None:
    eng = engine_profile(catalog, "trtllm", "blackwell")
    grace = eng.on_host(2.75).on_host(2.75)
    assert grace.host_step_s == eng.step_overhead_s  # overlapped with the GPU's work: not the host's to lengthen
    assert grace.host_sequence_s == pytest.approx(2.75 * eng.sequence_overhead_s)
    assert grace.host_prefill_s == pytest.approx(2.75 * eng.prefill_overhead_s)
    assert grace.layer_overhead_s == eng.layer_overhead_s  # a per-layer gap inside a CUDA graph is GPU time
    assert grace.on_host(1.0).host_step_s == pytest.approx(eng.step_overhead_s)


def test_only_the_host_share_of_an_eager_launch_takes_the_grace_factor(catalog: Catalog, hw: Hardware) -> None:
    """69 us a kernel on x86; on Grace its host share (0.36) takes 2.75 times as long and the rest as long:
    69 (1 + 0.36 x 1.75) = 112.5 us, where the whole launch scaled would be 190 us."""
    eng = engine_profile(catalog, "sglang", "blackwell")
    assert eng.eager_launch_s == pytest.approx(69e-6) and eng.eager_host_share == pytest.approx(0.36)
    assert eng.on_host(1.0).host_eager_launch_s == pytest.approx(69e-6)
    grace = eng.on_host(hw.system("gb200-nvl72").host_overhead)
    assert grace.host_eager_launch_s == pytest.approx(69e-6 * (1.0 + 0.36 * (37.08 / 13.48 - 1.0)), rel=1e-3)
    assert grace.host_eager_launch_s == pytest.approx(112.5e-6, rel=2e-3)
    assert "eager_host_share" in eng.provenance


def test_a_grace_hosts_prompt_floor_is_the_launches_at_its_share(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """The floor under an eager prompt iteration (StepModel.eager_floor): the model's launches at the host's time
    per launch; Llama 3.1 8B in fp8 at TP1 launches 448 kernels (14 a layer: 320 in bf16, and each layer's four
    GEMMs quantise their activations)."""
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
    x86 = setup_replica(catalog, llama8b, hw.system("p6-b200.48xlarge"), "sglang", plan, 512.0, 128.0)
    grace = setup_replica(catalog, llama8b, hw.system("gb200-nvl72"), "sglang", plan, 512.0, 128.0)
    ratio = 1.0 + 0.36 * (hw.system("gb200-nvl72").host_overhead - 1.0)
    assert x86.steps.eager_floor == pytest.approx(448 * 69e-6, rel=1e-9)
    assert grace.steps.eager_floor == pytest.approx(ratio * x86.steps.eager_floor, rel=1e-9)


def test_the_same_gpu_behind_a_grace_host_pays_its_host_work_again(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """B200 behind an x86 host and GB200 behind Grace (one Blackwell family, the same engine figures): each
    sequence's host time grows by the host factor, an iteration's fixed time does not (the overlap schedulers hide
    it behind the GPU); the GPU work per sequence (the LM head) differs only by the GB200's higher power limit."""
    plan = ReplicaPlan(tp=1, max_batch=512, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
    x86 = setup_replica(catalog, llama8b, hw.system("p6-b200.48xlarge"), "trtllm", plan, 512.0, 128.0)
    grace = setup_replica(catalog, llama8b, hw.system("gb200-nvl72"), "trtllm", plan, 512.0, 128.0)
    eng, f = x86.engine, hw.system("gb200-nvl72").host_overhead
    assert grace.steps.fixed == pytest.approx(x86.steps.fixed)
    n = 256
    per_seq_x86 = x86.steps.seq_time(n) - x86.steps.seq_time(0)
    per_seq_grace = grace.steps.seq_time(n) - grace.steps.seq_time(0)
    host = n * eng.sequence_overhead_s
    assert per_seq_grace - per_seq_x86 == pytest.approx((f - 1.0) * host, rel=0.02)


def test_the_estimator_prices_the_host_as_the_simulator_does(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    eng = engine_profile(catalog, "trtllm", "blackwell")
    one = np.ones(1, dtype=np.int64)
    cand = Candidates(one, one, one, 0 * one, 256 * one, one)
    on_grace = estimate(llama8b, hw.system("gb200-nvl72"), eng, cand, "fp8", "fp8", 512.0, 128.0, 4096)
    on_x86 = estimate(llama8b, hw.system("p6-b200.48xlarge"), eng, cand, "fp8", "fp8", 512.0, 128.0, 4096)
    assert float(on_grace.step[0]) > float(on_x86.step[0])


def test_a_plan_on_grace_cites_the_launch_share_it_used(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    from chipwise.planner.serving_figures import figures_used

    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
    grace = setup_replica(catalog, llama8b, hw.system("gb200-nvl72"), "sglang", plan, 512.0, 128.0)
    x86 = setup_replica(catalog, llama8b, hw.system("p6-b200.48xlarge"), "sglang", plan, 512.0, 128.0)
    assert figures_used(grace)["engines.sglang.eager_host_share"]["value"] == pytest.approx(0.36)
    assert "engines.sglang.eager_launch" in figures_used(x86)
    assert "engines.sglang.eager_host_share" not in figures_used(x86)
