"""The fleet-mix MILP: the same optimum as brute force, the 20 types x 10 buckets size, binding constraints."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.planner.fleet_mix import FleetProblem, feasible_lp, random_problem, solve


def _brute_force(p: FleetProblem, limit: int) -> float:
    best = np.inf
    for counts in itertools.product(range(limit + 1), repeat=len(p.types)):
        x = np.array(counts, dtype=np.int64)
        cost = float(np.dot(p.price_per_hour, x))
        if cost < best - 1e-9 and feasible_lp(p, x):
            best = cost
    return best


@pytest.mark.parametrize("seed", range(24))
def test_milp_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = random_problem(rng, 3, 3, limit=4)
    brute = _brute_force(p, 4)
    if not np.isfinite(brute):
        with pytest.raises(InfeasibleError):
            solve(p)
        return
    sol = solve(p)
    assert sol.cost_per_hour == pytest.approx(brute, abs=1e-6)
    assert feasible_lp(p, sol.counts)
    assert np.allclose(sol.assignment.sum(axis=0), p.demand)


def test_twenty_types_ten_buckets() -> None:
    """The issue's size (its speed is measured by benchmarks/fleet_speed.py)."""
    p = random_problem(np.random.default_rng(7), 20, 10, limit=1000)
    sol = solve(p)
    assert np.allclose(sol.assignment.sum(axis=0), p.demand)
    assert feasible_lp(p, sol.counts)


def test_bucket_no_type_can_serve() -> None:
    p = FleetProblem(["a", "b"], ["short", "long"], np.array([1.0, 2.0]), np.array([[1.0, 0.0], [2.0, 0.0]]),
                     np.array([1.0, 1.0]), np.array([np.inf, np.inf]))  # fmt: skip
    with pytest.raises(InfeasibleError, match="bucket 'long'"):
        solve(p)


def test_binding_limit_is_named() -> None:
    p = FleetProblem(["a", "b"], ["x"], np.array([1.0, 5.0]), np.array([[1.0], [1.0]]), np.array([10.0]),
                     np.array([3.0, 4.0]))  # fmt: skip
    with pytest.raises(InfeasibleError, match=r"limits bind: a \(needs 10, limit 3\)"):
        solve(p)


def test_negative_rate_is_rejected() -> None:
    with pytest.raises(ChipwiseError, match="negative request rate"):
        FleetProblem(["a"], ["x"], np.array([1.0]), np.array([[1.0]]), np.array([-1.0]), np.array([1.0]))


def test_group_limit_caps_chips_across_the_types_of_one_chip() -> None:
    # two instance types on the same chip (1 and 2 chips each) and one dearer type on another chip
    p = FleetProblem(
        types=["a-small", "a-big", "b"],
        buckets=["x"],
        price_per_hour=np.array([1.0, 2.0, 5.0]),
        capacity=np.array([[1.0], [2.0], [4.0]]),
        demand=np.array([10.0]),
        limits=np.full(3, np.inf),
        chips=np.array([1.0, 2.0, 4.0]),
        groups=["a", "a", "b"],
        group_limits={"a": 6.0},
    )
    sol = solve(p)
    a_chips = sol.counts[0] * 1 + sol.counts[1] * 2
    assert a_chips <= 6
    # 6 chips of 'a' carry 6 req/s at $6; the other 4 req/s need one 'b' at $5
    assert sol.cost_per_hour == pytest.approx(11.0)
    assert sol.counts[2] == 1
    with pytest.raises(InfeasibleError, match="a chips"):
        solve(FleetProblem(**{**p.__dict__, "group_limits": {"a": 2.0, "b": 4.0}}))
