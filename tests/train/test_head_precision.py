"""The LM head and the MoE router in fp32 and tf32 training multiply at the run's precision: bf16 had priced them in
every run, so Llama-3.2-1B's head on 8 A100-80GB read 0.48 s a step in fp32, tf32 and bf16 alike."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.compute import gemm_time
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.serving import streamed_gemm_time
from chipwise.train.plans import from_dicts
from chipwise.train.step import head_precision, stage_costs, train_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

PLAN = {"tp": 1, "pp": 1, "dp": 8, "microbatch": 1, "zero": 1, "recompute": "none"}


def _step(catalog: Catalog, hw: Hardware, precision: str) -> float:
    """Llama-3.2-1B on 8 A100-80GB, 4,096-token sequences, 128 of them (524,288 tokens), DP8."""
    model = load_model(catalog, "llama-3.2-1b")
    system = hw.system("a100-80gb")
    job = TrainingJob(model, 4096, 128, precision)
    r = train_step(model, job, device_of(system), topology_of(system), from_dicts([PLAN]), 8)
    return float(r.step_time[0])


def test_the_head_runs_at_the_16_bit_rate_only_in_16_bit_and_narrower_runs() -> None:
    assert [head_precision(p) for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")] == [
        "fp32",
        "tf32",
        "bf16",
        "bf16",
        "bf16",
        "bf16",
    ]


@pytest.mark.parametrize("precision", ["fp32", "tf32", "bf16"])
def test_the_head_is_three_of_its_gemms_at_the_runs_precision(catalog: Catalog, hw: Hardware, precision: str) -> None:
    """A stage with the head less one without is the head's forward GEMM (4,096 tokens x 128,256 vocab x 2,048) and
    its two backward ones, priced at head_precision, plus its logits' memory traffic (unchanged)."""
    model = load_model(catalog, "llama-3.2-1b")
    system = hw.system("a100-80gb")
    dev, topo = device_of(system), topology_of(system)
    job = TrainingJob(model, 4096, 128, precision)
    plans = from_dicts([PLAN])
    with_head = stage_costs(model, job, dev, topo, plans, np.array([float(model.layers)]), head=1.0).per_mb["compute"]
    without = stage_costs(model, job, dev, topo, plans, np.array([float(model.layers)]), head=0.0).per_mb["compute"]
    gemm = float(gemm_time(4096.0, model.vocab, model.embed_width, dev, head_precision(precision)))
    assert float(with_head[0] - without[0]) == pytest.approx(3.0 * gemm, rel=1e-9)


def test_fp32_and_tf32_steps_price_the_head_at_their_own_rate(catalog: Catalog, hw: Hardware) -> None:
    """Per step (32 micro-batches a rank) the head's three GEMMs take 6.458 s in fp32 and 0.960 s in tf32, where
    bf16's 0.481 s had stood for both: the steps read 34.254 s and 6.049 s, and now 40.231 s and 6.528 s; bf16's stays
    3.404 s."""
    assert _step(catalog, hw, "fp32") == pytest.approx(40.231, abs=2e-3)
    assert _step(catalog, hw, "tf32") == pytest.approx(6.528, abs=2e-3)
    assert _step(catalog, hw, "bf16") == pytest.approx(3.404, abs=2e-3)


def test_the_router_runs_at_the_runs_precision_in_fp32(
    catalog: Catalog, hw: Hardware, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen3-30B-A3B's router (128 experts x 2,048) at fp32 on 4-byte elements in an fp32 run, at bf16 on 2-byte
    ones in a bf16 run."""
    seen: list[tuple[Any, ...]] = []

    def spy(m: Any, n: Any, k: Any, dev: Any, precision: str, weight_bytes: float, *a: Any, **kw: Any) -> Any:
        seen.append((n, k, precision, weight_bytes))
        return streamed_gemm_time(m, n, k, dev, precision, weight_bytes, *a, **kw)

    monkeypatch.setattr("chipwise.train.step.streamed_gemm_time", spy)
    model = load_model(catalog, "qwen3-30b-a3b")
    system = hw.system("h100-sxm")
    plans = from_dicts([{**PLAN, "ep": 8}])
    for precision, expected in (("fp32", ("fp32", 4.0)), ("bf16", ("bf16", 2.0))):
        seen.clear()
        job = TrainingJob(model, 4096, 128, precision)
        stage_costs(model, job, device_of(system), topology_of(system), plans, np.array([float(model.layers)]))
        assert {s[2:] for s in seen} == {expected}
        assert {s[:2] for s in seen} == {(128, 2048)}
