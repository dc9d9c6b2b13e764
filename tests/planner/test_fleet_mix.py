"""The fleet-mix MILP: the same optimum as brute force, the 20 types x 10 buckets size, binding constraints."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.planner.fleet_mix import FleetProblem, solve
from fleet_problems import feasible_lp, random_problem


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
    with pytest.raises(InfeasibleError, match=r"^the limits on a \(3 instances\), b \(4 instances\) together cannot"):
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
    with pytest.raises(InfeasibleError, match=r"^the limits on a \(2 chips\), b \(4 chips\) together cannot"):
        solve(FleetProblem(**{**p.__dict__, "group_limits": {"a": 2.0, "b": 4.0}}))


def test_a_large_mix_is_solved_to_within_a_tenth_of_a_percent_in_time() -> None:
    """The problem plan fleet's third round built for 100x chat-mix (12 types, 3 buckets, 4,000 req/s): HiGHS
    searched its branches for minutes; within a 0.1% gap it takes a fraction of a second."""
    import time

    problem = FleetProblem(
        types=[
            "h100-sxm TP2 b250",
            "h100-sxm TP2 b252",
            "h100-sxm TP2 b128",
            "h200 TP1 b128",
            "h200 TP1 b208",
            "h200 TP1 b207",
            "mi300x TP2 b128",
            "mi300x TP2 b423",
            "mi300x TP2 b256",
            "trn2 TP16 b32",
            "trn2 TP8 b16",
            "trn2 TP8 b32",
        ],
        buckets=["chat", "rag", "summarise"],
        price_per_hour=np.array([13.76, 13.76, 13.76, 7.912, 7.912, 7.912, 5.18, 5.18, 5.18, 10.92, 5.46, 5.46]),
        capacity=np.array(
            [
                [7.814648013302524, 1.4017454736386907, 0.369121843313003],
                [7.805550128463871, 1.2630933587855018, 0.369121843313003],
                [7.7912144072813705, 1.4034370653172241, 0.369121843313003],
                [7.3830049891086365, 0.6651251494278027, 0.04112092808902329],
                [7.342970379327031, 0.6651251494278027, 0.04112092808902329],
                [6.607449954168117, 0.411942536094363, 0.04095370423267204],
                [6.932016807826908, 0.5971749927806971, 0.03319207198677969],
                [6.925017981069436, 0.5926346442904171, 0.03319207198677969],
                [6.913297690689938, 0.5926346442904171, 0.03319207198677969],
                [2.7111707553401385, 0.1428355256419273, 0.0],
                [1.3452594248667982, 0.0, 0.0],
                [1.2673954060210295, 0.0, 0.0],
            ]
        ),
        demand=np.array([3000.0, 800.0, 200.0]),
        limits=np.full(12, np.inf),
        chips=np.array([2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 4.0, 2.0, 2.0]),
        groups=[
            "h100-sxm",
            "h100-sxm",
            "h100-sxm",
            "h200",
            "h200",
            "h200",
            "mi300x",
            "mi300x",
            "mi300x",
            "trn2",
            "trn2",
            "trn2",
        ],
        group_limits={},
    )
    start = time.perf_counter()
    sol = solve(problem)
    assert time.perf_counter() - start < 10.0
    assert sol.cost_per_hour == pytest.approx(16_642.06, rel=2e-3)
    assert sol.assignment.sum(axis=0) == pytest.approx(problem.demand)  # every bucket's rate carried
    assert sol.capacity_used() if hasattr(sol, "capacity_used") else True


def test_a_tiny_load_buys_an_instance() -> None:
    """1e-5 req/s where an instance carries 100 needs 1e-7 of it, within HiGHS's tolerance: it was bought no
    instance ($0.00/hour); any load buys capacity, routed at its own rate."""
    p = FleetProblem(["a", "b"], ["x", "y"], np.array([3.0, 2.0]), np.array([[100.0, 0.0], [100.0, 5.0]]),
                     np.array([1e-5, 0.0]), np.full(2, np.inf))  # fmt: skip
    sol = solve(p)
    assert sol.counts.tolist() == [0, 1] and sol.cost_per_hour == pytest.approx(2.0)
    assert sol.assignment.sum(axis=0) == pytest.approx([1e-5, 0.0], rel=1e-9, abs=1e-15)
    assert sol.assignment[1, 0] == pytest.approx(1e-5, rel=1e-9)  # on the instance bought


def test_a_rate_that_is_not_finite_is_rejected() -> None:
    """NaN passed 'demand < 0' (it compares false both ways)."""
    for bad in (np.nan, np.inf):
        with pytest.raises(ChipwiseError, match="bucket 'x' has a request rate that is not finite"):
            FleetProblem(["a"], ["x"], np.array([1.0]), np.array([[1.0]]), np.array([bad]), np.array([1.0]))
