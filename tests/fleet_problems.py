"""Random fleet-mix problems and an LP feasibility check, for the brute-force tests of planner.fleet_mix and for
benchmarks/fleet_speed.py (which puts tests/ on its path): test helpers, not part of the planner."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from chipwise.planner.fleet_mix import FleetProblem
from chipwise.types import IntArray


def feasible_lp(p: FleetProblem, counts: IntArray) -> bool:
    """Whether a given fleet can carry the demand (an LP on the assignment alone); for checks and brute force."""
    n_i, n_j = p.capacity.shape
    usable = p.capacity > 0
    pairs = np.argwhere(usable)
    if any(p.demand[j] > 0 and not usable[:, j].any() for j in range(n_j)):
        return False
    a_eq = np.zeros((n_j, len(pairs)))
    a_ub = np.zeros((n_i, len(pairs)))
    for k, (i, j) in enumerate(pairs):
        a_eq[j, k] = 1.0
        a_ub[i, k] = 1.0 / p.capacity[i, j]
    res = linprog(np.zeros(len(pairs)), A_ub=a_ub, b_ub=counts.astype(np.float64) + 1e-9, A_eq=a_eq, b_eq=p.demand,
                  bounds=(0, None), method="highs")  # fmt: skip
    return bool(res.status == 0)


def random_problem(rng: np.random.Generator, n_types: int, n_buckets: int, limit: int) -> FleetProblem:
    """A random instance in which every bucket is servable (for the brute-force tests and the speed benchmark):
    a quarter of the (type, bucket) capacities are zero, prices $1-20/hour, demands 0.5-4 requests/s."""
    capacity = rng.uniform(0.5, 5.0, size=(n_types, n_buckets)) * (rng.uniform(size=(n_types, n_buckets)) > 0.25)
    capacity[rng.integers(n_types), :] = np.maximum(capacity[rng.integers(n_types), :], 0.5)
    return FleetProblem(
        types=[f"t{i}" for i in range(n_types)],
        buckets=[f"b{j}" for j in range(n_buckets)],
        price_per_hour=rng.uniform(1.0, 20.0, size=n_types).round(2),
        capacity=capacity,
        demand=rng.uniform(0.5, 4.0, size=n_buckets),
        limits=np.full(n_types, float(limit)),
    )
