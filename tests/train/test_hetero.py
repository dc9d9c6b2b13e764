"""Heterogeneous pipelines: the layer split follows speed, the link is charged, infeasible splits are dropped."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.train.hetero import HeteroPlans, Part, enumerate_hetero, hetero_step
from chipwise.types import IntArray
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _one(tp_a: int, pp_a: int, tp_b: int, pp_b: int, dp: int) -> HeteroPlans:
    def a(v: int) -> IntArray:
        return np.array([v], dtype=np.int64)

    return HeteroPlans(a(tp_a), a(pp_a), a(tp_b), a(pp_b), a(dp), a(1), a(1))


def test_layer_split_balances_stage_times(catalog: Catalog, hw: Hardware) -> None:
    model = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(model, 4096, 64, "bf16")
    fast, slow = Part(hw.system("gb200"), 64), Part(hw.system("a100-80gb"), 64)
    res = hetero_step(model, job, slow, fast, _one(8, 1, 8, 1, 8), (50e9, 50e9), 10e-6)
    la = int(res.layers_a[0])
    # the slow part gets few layers; the two stage times come out close (within one layer of the slower part)
    assert 0 < la < model.layers // 2
    assert abs(float(res.stage_a[0]) - float(res.stage_b[0])) <= float(res.layer_a[0]) + 1e-9


def test_slower_link_makes_the_step_longer(catalog: Catalog, hw: Hardware) -> None:
    model = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(model, 4096, 64, "bf16")
    a, b = Part(hw.system("h100-sxm"), 32), Part(hw.system("trn2"), 32)
    hp = _one(4, 1, 4, 1, 8)
    fast = hetero_step(model, job, a, b, hp, (400e9, 400e9), 1e-6)
    slow = hetero_step(model, job, a, b, hp, (5e9, 5e9), 20e-6)
    assert float(slow.step_time[0]) > float(fast.step_time[0])
    tokens = 4096
    # TP4 on trn2 is one chip (four logical cores a chip), the narrower end against the H100 stage's four
    expected = 2 * (tokens * model.hidden * 2 / 5e9 + 20e-6)
    assert float(slow.hand_off[0]) == pytest.approx(expected)


def test_enumeration_uses_both_parts(catalog: Catalog, hw: Hardware) -> None:
    model = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(model, 8192, 256, "bf16")
    a, b = Part(hw.system("h100-sxm"), 256), Part(hw.system("trn2"), 256)
    hp = enumerate_hetero(model, job, a, b)
    assert len(hp) > 100
    assert np.all(hp.dp * hp.tp_a * hp.pp_a <= a.ranks) and np.all(hp.dp * hp.tp_b * hp.pp_b <= b.ranks)
    assert np.all(hp.dp * hp.tp_a * hp.pp_a >= a.ranks / 2)


def test_each_part_hides_its_gradients_behind_its_whole_stage(
    catalog: Catalog, hw: Hardware, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Part B's data-parallel traffic overlapped one layer's compute where part A's overlapped its stage's layers:
    a 3-6% penalty that followed the stage order. Both now pass their stage's layers, and part A's gradients and
    memory include the input embedding it holds."""
    from chipwise.train import data_parallel, hetero

    seen: list[tuple[float, float]] = []
    real = data_parallel.dp_time  # what hetero calls

    def spy(dense: object, moe: object, plans: object, topo: object, dev: object, m: object, fwd: object,
            bwd: object, *rest: object, **kw: object) -> object:  # fmt: skip
        seen.append((float(np.asarray(dense)[0]), float(np.asarray(fwd)[0])))
        return real(dense, moe, plans, topo, dev, m, fwd, bwd, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(hetero, "dp_time", spy)
    model = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(model, 4096, 64, "bf16")
    part = Part(hw.system("h100-sxm"), 16)
    res = hetero_step(model, job, part, part, _one(8, 1, 8, 1, 2), (400e9, 400e9), 1e-6)
    la = int(res.layers_a[0])
    (dense_a, fwd_a), (dense_b, fwd_b) = seen
    layers_b = model.layers - la
    assert fwd_a / la == pytest.approx(fwd_b / layers_b)  # the same chip: the same compute a layer
    per_layer = (model.dense_params - model.embedding_params - model.lm_head_params) / model.layers
    assert dense_a == pytest.approx((per_layer * la + model.embedding_params) / 8)
    assert dense_b == pytest.approx((per_layer * layers_b + model.lm_head_params) / 8)


def test_the_hand_off_runs_at_the_end_that_carries_less(catalog: Catalog, hw: Hardware) -> None:
    """Each tensor-parallel rank at the boundary sends its share of the activation over its own chip's links: a GB200
    TP4 stage (4 chips at 47 GB/s, 188 GB/s) handing to a Trainium1 TP16 stage (8 chips, two cores each, at 5 GB/s:
    40 GB/s) runs at 40 GB/s. The narrower end's chip count at the slower chip's rate had given 20 GB/s."""
    model = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(model, 4096, 64, "bf16")
    a, b = Part(hw.system("gb200"), 64), Part(hw.system("trn1"), 128)
    res = hetero_step(model, job, a, b, _one(4, 1, 16, 1, 4), (47e9, 5e9), 20e-6)
    assert float(res.hand_off[0]) == pytest.approx(2 * (4096 * model.hidden * 2 / 40e9 + 20e-6))
    # a TP4 Trainium1 stage is two chips: 10 GB/s, now the narrower end
    res = hetero_step(model, job, a, b, _one(4, 1, 4, 1, 4), (47e9, 5e9), 20e-6)
    assert float(res.hand_off[0]) == pytest.approx(2 * (4096 * model.hidden * 2 / 10e9 + 20e-6))
