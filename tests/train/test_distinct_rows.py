"""Pricing once per distinct row gives every plan the figures it gets priced on its own: a search of more than
FACTORIZE_MIN_ROWS plans (whose groups, hand-offs, LM head and layer costs are priced per distinct combination of
the knobs they depend on and read back per plan) against the same plans priced in slices small enough to take the
direct path, figure for figure; and the helpers that path stands on (perf.vector.per_value, perf.collectives.PerRow)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.vector import FACTORIZE_MIN_ROWS, per_value
from chipwise.train.plans import enumerate_plans
from chipwise.train.step import train_step
from chipwise.types import IntArray
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


@pytest.mark.parametrize(
    ("model_name", "chip", "chips"),
    [
        ("deepseek-v3", "gb200", 2048),  # experts, hybrid FSDP (past a rack), context parallelism
        ("llama-3.1-405b", "h100-sxm", 1000),  # dense; a count that leaves chips idle in some plans
    ],
)
def test_step_priced_per_distinct_row_equals_each_plan_priced_alone(
    catalog: Catalog, hw: Hardware, model_name: str, chip: str, chips: int
) -> None:
    model = load_model(catalog, model_name)
    job = TrainingJob(model, 4096, 2048, "fp8")
    system = hw.system(chip)
    dev, topo = device_of(system), topology_of(system)
    plans = enumerate_plans(model, job, chips, topo.domain_ranks)
    rows = np.random.default_rng(7).permutation(len(plans))[: 3 * FACTORIZE_MIN_ROWS]
    plans = plans.take(np.sort(rows))
    assert len(plans) > FACTORIZE_MIN_ROWS
    assert plans.hsdp.any() or model_name != "deepseek-v3"
    whole = train_step(model, job, dev, topo, plans, chips)
    step = FACTORIZE_MIN_ROWS // 2  # each slice below the threshold: priced row by row
    parts = [
        train_step(model, job, dev, topo, plans.take(np.arange(i, min(i + step, len(plans)))), chips)
        for i in range(0, len(plans), step)
    ]
    np.testing.assert_array_equal(whole.step_time, np.concatenate([p.step_time for p in parts]))
    np.testing.assert_array_equal(whole.memory.total, np.concatenate([p.memory.total for p in parts]))
    for key, value in whole.breakdown.items():
        np.testing.assert_array_equal(value, np.concatenate([p.breakdown[key] for p in parts]), err_msg=key)


def test_per_value_is_the_function_itself() -> None:
    rng = np.random.default_rng(3)
    small = rng.integers(0, 64, 10_000)  # looked up: values small against the column
    fns: list[Callable[[IntArray], IntArray]] = [lambda v: np.lcm(v, 72), lambda v: np.gcd(v, 8)]
    for fn in fns:
        np.testing.assert_array_equal(per_value(fn, small), fn(small))
    large = rng.integers(0, 10**9, 100)  # values far past the column's length: applied directly
    np.testing.assert_array_equal(per_value(lambda v: np.lcm(v, 72), large), np.lcm(large, 72))
    np.testing.assert_array_equal(per_value(lambda v: v * 2, np.array([], dtype=np.int64)), np.array([]))


def test_a_group_placed_per_distinct_row_reads_as_one_placed_per_row(hw: Hardware) -> None:
    topo = topology_of(hw.system("h100-sxm"))
    rng = np.random.default_rng(5)
    n = 2 * FACTORIZE_MIN_ROWS
    size = 2 ** rng.integers(0, 8, n)
    stride = 2 ** rng.integers(0, 4, n)
    ranks = size * stride * rng.integers(1, 4, n)
    big = coll.group(size, stride, topo, ranks)
    assert isinstance(big, coll.PerRow)
    assert "slope_rs" not in vars(big)  # nothing gathered before it is read
    each = [coll.group(size[i : i + 1000], stride[i : i + 1000], topo, ranks[i : i + 1000]) for i in range(0, n, 1000)]
    for name in (f.name for f in fields(coll.Group)):
        np.testing.assert_array_equal(getattr(big, name), np.concatenate([getattr(g, name) for g in each]))
    assert "slope_rs" in vars(big)  # kept once read
    with pytest.raises(AttributeError):
        _ = big.no_such_field


def test_distinct_plans_read_back_every_plans_knobs_and_ranks(catalog: Catalog, hw: Hardware) -> None:
    """PlanArrays.distinct, which the groups, hand-offs and layers above are priced through: rows distinct in the
    named knobs and the ranks, each plan's read back with [inverse]; too few plans come back as they are."""
    model = load_model(catalog, "llama-3.1-405b")
    job = TrainingJob(model, 4096, 2048, "fp8")
    plans = enumerate_plans(model, job, 1000, topology_of(hw.system("h100-sxm")).domain_ranks)
    assert len(plans) > FACTORIZE_MIN_ROWS
    ranks = plans.ranks
    sub, sub_ranks, inverse = plans.distinct("tp", "pp", "mb", ranks=ranks)
    assert inverse is not None and len(sub) < len(plans) // 10
    for knob in ("tp", "pp", "mb"):
        np.testing.assert_array_equal(getattr(sub, knob)[inverse], getattr(plans, knob))
    np.testing.assert_array_equal(sub_ranks[inverse], ranks)
    assert np.unique(np.stack([sub.tp, sub.pp, sub.mb, sub_ranks]), axis=1).shape[1] == len(sub)  # each row once
    few = plans.take(np.arange(10))
    same, none, no_inverse = few.distinct("tp")
    assert same is few and none is None and no_inverse is None
