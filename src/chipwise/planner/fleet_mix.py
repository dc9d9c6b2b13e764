"""Fleet-mix optimisation: how many instances of each type serve a multi-bucket workload at the lowest $/hour.

Instance types i (a chip count and serving plan), request buckets j (input/output lengths) arriving at rate
lambda_j. c_ij is the request rate one instance of type i sustains on bucket j alone within the SLO (from the
serving model; 0 when it cannot meet the SLO). Serving y_ij requests/s of bucket j on type i uses y_ij / c_ij of
an instance (time-sharing, as in Melange, Griggs et al. 2024):

    minimise   sum_i price_i x_i
    subject to sum_i y_ij = lambda_j                 (all demand served)
               sum_j y_ij / c_ij <= x_i              (instance capacity)
               0 <= x_i <= limit_i, x_i integer      (availability of each type)
               sum_{i in group g} chips_i x_i <= limit_g (availability of each chip type or system: a type can be
                                                       in several groups, its chip's and its system's)
               y_ij >= 0, and y_ij = 0 where c_ij = 0

solved as a mixed-integer linear program with SciPy's HiGHS.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import Bounds, LinearConstraint, milp

from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.types import Array

#: HiGHS's stopping rule for the instance mix: a relative optimality gap and a time limit (s)
MILP_OPTIONS = {"mip_rel_gap": 1e-3, "time_limit": 60.0}
#: the least share of an instance a bucket with any load is planned to take: HiGHS holds a constraint to within
#: 1e-6, so a bucket needing less of an instance than that (1e-5 req/s where one carries 100) was bought none and
#: priced $0.00/hour; it is planned at this share of the instance that carries it best, and routed at its own rate
MIN_INSTANCE_SHARE = 1e-3


@dataclass(frozen=True)
class FleetProblem:
    types: Sequence[str]
    buckets: Sequence[str]
    price_per_hour: Array  # (I,)
    capacity: Array  # (I, J) requests/s one instance sustains on bucket j alone within the SLO
    demand: Array  # (J,) requests/s
    limits: Array  # (I,) maximum instances (inf = unlimited)
    chips: Array | None = None  # (I,) chips per instance, for group limits
    #: (I,) the group, or the groups, each instance type's chips count against (its chip type, its system)
    groups: Sequence[str | Sequence[str]] | None = None
    group_limits: Mapping[str, float] | None = None  # chips available per group

    def __post_init__(self) -> None:
        i, j = len(self.types), len(self.buckets)
        if self.capacity.shape != (i, j) or self.price_per_hour.shape != (i,) or self.demand.shape != (j,):
            raise ValueError("fleet problem arrays do not match the types and buckets")
        if np.any(self.demand < 0):
            bad = self.buckets[int(np.argmin(self.demand))]
            raise ChipwiseError(f"bucket '{bad}' has a negative request rate. Fix: give rates >= 0.")
        if not np.all(np.isfinite(self.demand)):  # NaN compares false both ways: it had passed the check above
            bad = self.buckets[int(np.argmin(np.isfinite(self.demand)))]
            raise ChipwiseError(f"bucket '{bad}' has a request rate that is not finite. Fix: give finite rates >= 0.")


@dataclass(frozen=True)
class FleetSolution:
    counts: NDArray[np.int64]  # instances per type
    assignment: Array  # (I, J) requests/s of bucket j on type i
    cost_per_hour: float
    utilisation: Array  # (I,) busy share of the chosen instances


def in_group(groups: str | Sequence[str], g: str) -> bool:
    """Whether an instance type whose group entry is `groups` (one name, or several) counts against group `g`."""
    return groups == g if isinstance(groups, str) else g in groups


def _check_servable(p: FleetProblem) -> None:
    for j, name in enumerate(p.buckets):
        if p.demand[j] > 0 and not np.any(p.capacity[:, j] > 0):
            raise InfeasibleError(
                f"no instance type meets the SLO for bucket '{name}'. Fix: relax the SLO for it, add hardware, or "
                "drop the bucket."
            )


@contextmanager
def _quiet_stdout() -> Iterator[None]:
    """HiGHS (the C library) can print debug lines straight to file descriptor 1, which would corrupt --json output."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def planned_demand(p: FleetProblem) -> Array:
    """Each bucket's rate as the MILP plans it: a load below MIN_INSTANCE_SHARE of the instance that carries it best
    raised to that share, so that any load buys capacity; no load stays none."""
    floor = MIN_INSTANCE_SHARE * p.capacity.max(axis=0, initial=0.0)
    return np.where(p.demand > 0, np.maximum(p.demand, floor), 0.0)


def _routed_on_bought(x: NDArray[np.int64], y: Array, demand: Array) -> Array:
    """The routing at each bucket's own rate, on the instances bought only: the MILP's planned rates scaled back,
    and the sliver its tolerance let ride on an instance type it bought none of moved to those it bought."""
    y = np.where(x[:, None] > 0, y, 0.0)
    total = y.sum(axis=0)
    return np.where(total > 0, y * (demand / np.where(total > 0, total, 1.0)), 0.0)


def _program(p: FleetProblem) -> tuple[Array, list[Array], list[float], list[float], NDArray[np.intp], Array]:
    """The MILP's objective and rows over x_i (n_i), then y_ij for the usable pairs; the pairs; the planned demand."""
    n_i, n_j = p.capacity.shape
    usable = p.capacity > 0
    demand = planned_demand(p)
    pairs = np.argwhere(usable)
    n_y = len(pairs)
    c = np.concatenate([p.price_per_hour, np.zeros(n_y)])
    rows: list[Array] = []
    lo: list[float] = []
    hi: list[float] = []
    for j in range(n_j):  # demand rows
        row = np.zeros(n_i + n_y)
        for k, (_, jj) in enumerate(pairs):
            if jj == j:
                row[n_i + k] = 1.0
        rows.append(row)
        lo.append(demand[j])
        hi.append(demand[j])
    for i in range(n_i):  # capacity rows: sum_j y_ij / c_ij - x_i <= 0
        row = np.zeros(n_i + n_y)
        row[i] = -1.0
        for k, (ii, jj) in enumerate(pairs):
            if ii == i:
                row[n_i + k] = 1.0 / p.capacity[ii, jj]
        rows.append(row)
        lo.append(-np.inf)
        hi.append(0.0)
    for g, cap in (p.group_limits or {}).items():  # chips of one type shared by its instance types
        assert p.chips is not None and p.groups is not None
        row = np.zeros(n_i + n_y)
        for i, gi in enumerate(p.groups):
            if in_group(gi, g):
                row[i] = p.chips[i]
        rows.append(row)
        lo.append(-np.inf)
        hi.append(float(cap))
    return c, rows, lo, hi, pairs, demand


def _milp(
    c: Array, rows: list[Array], lo: list[float], hi: list[float], integrality: Array, upper: Array, gap: float = 0.0
) -> Any:
    with _quiet_stdout():
        return milp(
            c,
            constraints=LinearConstraint(np.array(rows), np.array(lo), np.array(hi)),
            integrality=integrality,
            bounds=Bounds(np.zeros(c.size), upper),
            # within 0.1% of the optimum, and at most a minute: a 12-type, 3-bucket mix at 4,000 req/s searched its
            # branches for minutes (with the gap, 0.02 s and 0.015% dearer); at the time limit the best fleet found
            options={**MILP_OPTIONS, "mip_rel_gap": max(gap, MILP_OPTIONS["mip_rel_gap"])},
        )


def _found(res: Any) -> bool:
    return res.x is not None and res.status in (0, 1)  # 1: the time limit, with a fleet found


def _solution(p: FleetProblem, x_all: Array, pairs: NDArray[np.intp], demand: Array) -> FleetSolution:
    n_i, n_j = p.capacity.shape
    usable = p.capacity > 0
    x = np.round(x_all[:n_i]).astype(np.int64)
    y = np.zeros((n_i, n_j))
    for k, (i, j) in enumerate(pairs):
        y[i, j] = max(0.0, x_all[n_i + k])  # a solver's -1e-12 is no traffic (it printed as -0.0)
    raised = demand > p.demand  # the buckets planned above their rate; the others' routing is the solver's own
    y[:, raised] = _routed_on_bought(x, y[:, raised], p.demand[raised])
    # a sliver within the solver's tolerance (1e-12 req/s of chat on a type bought for RAG) is no traffic
    sliver = (y > 0) & (y < 1e-9 * p.demand[None, :])
    if sliver.any():
        y = np.where(sliver, 0.0, y)
        total = y.sum(axis=0)
        y = np.where(total > 0, y * (p.demand / np.where(total > 0, total, 1.0)), 0.0)
    busy = np.array([sum(y[i, j] / p.capacity[i, j] for j in range(n_j) if usable[i, j]) for i in range(n_i)])
    util = np.where(x > 0, busy / np.maximum(x, 1), 0.0)
    return FleetSolution(x, y, float(np.dot(p.price_per_hour, x)), util)


def solve(p: FleetProblem) -> FleetSolution:
    """The cheapest fleet (exact MILP). Raises InfeasibleError naming the binding constraint."""
    _check_servable(p)
    n_i = len(p.types)
    c, rows, lo, hi, pairs, demand = _program(p)
    n_y = len(pairs)
    limits = np.where(np.isfinite(p.limits), p.limits, np.inf)
    res = _milp(c, rows, lo, hi, np.concatenate([np.ones(n_i), np.zeros(n_y)]),
                np.concatenate([limits, np.full(n_y, np.inf)]))  # fmt: skip
    if not _found(res):
        raise InfeasibleError(_binding(p))
    return _solution(p, res.x, pairs, demand)


def solve_excluding(p: FleetProblem, excluded: Sequence[NDArray[np.int64]], max_cost: float) -> FleetSolution:
    """The cheapest fleet at most `max_cost` $/hour whose instance counts are none of `excluded`, and of the fleets
    that cheap (to within the MILP's gap) one that runs the fewest instance types: a type's instances share its
    traffic as one pool, and a larger pool queues less. Calling it again with each answer added to `excluded` walks
    the fleets in cost order. An excluded fleet is barred by a no-good cut (some type runs at least one instance
    fewer or more) once the solver proposes it, so the fleets dearer than the answer cost nothing. Raises
    InfeasibleError when no such fleet exists."""
    _check_servable(p)
    if not math.isfinite(max_cost):
        raise ValueError("solve_excluding needs a finite cost cap (it bounds each type's instance count)")
    n_i = len(p.types)
    price = p.price_per_hour
    # an instance count no fleet within max_cost exceeds (or, for a free type, no cheapest fleet needs): each
    # type's big-M for the cuts and for its used/unused indicator
    demand = planned_demand(p)
    served = np.where(p.capacity > 0, demand / np.where(p.capacity > 0, p.capacity, 1.0), 0.0).sum(axis=1)
    need = np.where(price > 0, np.floor(max_cost / np.where(price > 0, price, 1.0) + 1e-9), np.ceil(served))
    bound = np.minimum(np.where(np.isfinite(p.limits), p.limits, np.inf), need).astype(np.float64)
    pending = {
        tuple(int(k) for k in v): v
        for v in (np.asarray(f, dtype=np.int64) for f in excluded)
        if v.shape == (n_i,) and not np.any(v > bound) and float(np.dot(price, v)) <= max_cost
    }  # a fleet beyond the bounds or the cap is no answer anyway
    cuts: list[NDArray[np.int64]] = []
    for _ in range(len(pending) + 1):  # each round bars one more excluded fleet the solver proposed
        cheapest = _solve_cut(p, bound, cuts, max_cost, None)
        if cheapest is None:
            raise InfeasibleError("no other fleet within the cost cap carries the demand")
        x_all, pairs, plan = cheapest
        if (key := tuple(int(k) for k in np.round(x_all[:n_i]))) in pending:
            cuts.append(pending.pop(key))
            continue
        cost = float(np.dot(price, np.round(x_all[:n_i])))
        # at that cost (each excluded fleet as cheap barred, and the counts bounded by it): the fewest types first,
        # then the cost (a tenth of a type at most)
        at = min(max_cost, cost * (1.0 + 1e-9) + 1e-9)
        cuts.extend(pending.pop(key) for key in [k for k, v in pending.items() if float(np.dot(price, v)) <= at])
        tight = np.minimum(bound, np.where(price > 0, np.floor(at / np.where(price > 0, price, 1.0) + 1e-9), bound))
        fewest = _solve_cut(p, tight, [v for v in cuts if not np.any(v > tight)], at, cost)
        return _solution(p, x_all if fewest is None else fewest[0], pairs, plan)
    raise AssertionError("unreachable: every excluded fleet is barred by now")


def _solve_cut(
    p: FleetProblem, bound: Array, cuts: Sequence[NDArray[np.int64]], max_cost: float, fewest_at: float | None
) -> tuple[Array, NDArray[np.intp], Array] | None:
    """The fleet MILP with each type's count bounded, a cost cap and a no-good cut per fleet in `cuts`: minimum cost,
    or, given `fewest_at` (a cost), the fewest types used. The solution's variables, the pairs and the planned
    demand; None where there is none."""
    n_i = len(p.types)
    price = p.price_per_hour
    c, rows, lo, hi, pairs, demand = _program(p)
    n_base = c.size
    barred = [[(i, -1) for i in range(n_i) if v[i] >= 1] + [(i, +1) for i in range(n_i) if v[i] + 1 <= bound[i]]
              for v in cuts]  # fmt: skip
    if any(not cut for cut in barred):
        return None  # the barred fleet is the only one within the bounds
    n_d = sum(len(cut) for cut in barred)
    n = n_base + n_i + n_d  # then u_i (type i runs), then the cuts' indicators
    rows = [np.concatenate([r, np.zeros(n_i + n_d)]) for r in rows]

    def add(row: Array, low: float, high: float) -> None:
        rows.append(row)
        lo.append(low)
        hi.append(high)

    for i in range(n_i):  # x_i <= bound_i u_i
        row = np.zeros(n)
        row[i], row[n_base + i] = 1.0, -bound[i]
        add(row, -np.inf, 0.0)
    for k, (i, j) in enumerate(pairs):  # y_ij <= demand_j u_i: no traffic on a type not run (a tighter relaxation)
        row = np.zeros(n)
        row[n_i + k], row[n_base + i] = 1.0, -demand[j]
        add(row, -np.inf, 0.0)
    row = np.zeros(n)
    row[:n_i] = price
    add(row, -np.inf, max_cost)
    k = n_base + n_i
    for v, cut in zip(cuts, barred, strict=True):
        one = np.zeros(n)
        for i, direction in cut:
            row = np.zeros(n)
            row[i] = 1.0
            if direction < 0:  # d = 1 -> x_i <= v_i - 1
                row[k] = bound[i] - v[i] + 1.0
                add(row, -np.inf, float(bound[i]))
            else:  # d = 1 -> x_i >= v_i + 1
                row[k] = -(v[i] + 1.0)
                add(row, 0.0, np.inf)
            one[k] = 1.0
            k += 1
        add(one, 1.0, np.inf)
    objective = np.zeros(n)
    if fewest_at is None:
        objective[:n_i] = price
    else:
        objective[n_base : n_base + n_i] = 1.0
        objective[:n_i] = 0.1 * price / max(fewest_at, 1e-9)
    integrality = np.concatenate([np.ones(n_i), np.zeros(len(pairs)), np.ones(n_i + n_d)])
    upper = np.concatenate([bound, np.full(len(pairs), np.inf), np.ones(n_i + n_d)])
    # the fewest types, k, at an objective of k + at most 0.1: a relative gap under 1 / (k + 0.1) proves k the least
    gap = 0.0 if fewest_at is None else 0.5 / (n_i + 1)
    res = _milp(objective, rows, lo, hi, integrality, upper, gap)
    return (res.x, pairs, demand) if _found(res) else None


def _binding(p: FleetProblem) -> str:
    """Which availability limits make the demand unservable: every limit on a type with capacity for the demand,
    together, where the demand is servable without them. No limit is blamed alone with a count of chips it 'needs'
    (the unlimited optimum's, which had read 'mi300x chips (needs 2, limit 0)' where one MI300X carried it, or
    more H100s instead), as it is not what relaxing that one limit would take."""
    relaxed = FleetProblem(p.types, p.buckets, p.price_per_hour, p.capacity, p.demand, np.full(len(p.types), np.inf))
    try:
        solve(relaxed)
    except InfeasibleError:
        return "the demand cannot be served by any fleet. Fix: relax the SLO or add hardware."
    carries: list[bool] = np.any(p.capacity[:, p.demand > 0] > 0, axis=1).tolist()
    named = [
        f"{t} ({lim:g} instance{'s' * (lim != 1)})"
        for t, lim, c in zip(p.types, p.limits.tolist(), carries, strict=True)
        if c and math.isfinite(lim)
    ]
    if p.group_limits and p.groups is not None:
        named += [
            f"{g} ({cap:g} chip{'s' * (cap != 1)})"
            for g, cap in p.group_limits.items()
            if any(c and in_group(gi, g) for c, gi in zip(carries, p.groups, strict=True))
        ]
    if not named:  # a programme the solver gave up on within its time limit
        return "the availability limits cannot carry the demand. Fix: raise them, or lower the demand."
    limits = f"limits on {', '.join(named)} together" if len(named) > 1 else f"limit on {named[0]}"
    return f"the {limits} cannot carry the demand. Fix: raise a limit, add instance types, or lower the demand."
