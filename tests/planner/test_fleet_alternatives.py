"""plan fleet's search does not depend on which of the programme's equal-cost fleets it replays first: where the
fleet it settles on costs more than the steady-state optimum, the next-cheapest fleets are replayed too."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.planner import fleet_replay
from chipwise.planner.fleet import plan_fleet
from chipwise.planner.fleet_mix import FleetProblem, solve, solve_excluding
from chipwise.planner.fleet_workload import Bucket
from chipwise.serve.quant import RELEASED
from fleet_problems import feasible_lp, random_problem

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat-mix.yaml"
SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}


def _feasible_costs(p: FleetProblem, limit: int, cap: float) -> list[tuple[float, tuple[int, ...]]]:
    out = []
    for counts in itertools.product(range(limit + 1), repeat=len(p.types)):
        x = np.array(counts, dtype=np.int64)
        cost = float(np.dot(p.price_per_hour, x))
        if cost <= cap and feasible_lp(p, x):
            out.append((cost, counts))
    return sorted(out)


@pytest.mark.parametrize("seed", range(12))
def test_excluding_walks_the_fleets_in_cost_order(seed: int) -> None:
    """Each answer barred in turn: the costs are brute force's, in order, to within the MILP's gap; no fleet comes
    twice, none past the cap, and each carries the demand."""
    p = random_problem(np.random.default_rng(seed), 3, 2, limit=4)
    try:
        first = solve(p)
    except InfeasibleError:
        return
    cap = first.cost_per_hour * 1.6
    brute = _feasible_costs(p, 4, cap)
    seen = [first.counts]
    for k in range(1, min(6, len(brute))):
        sol = solve_excluding(p, seen, cap)
        assert sol.cost_per_hour == pytest.approx(brute[k][0], rel=2e-3)
        assert sol.cost_per_hour <= cap + 1e-9
        assert not any(np.array_equal(sol.counts, s) for s in seen)
        assert feasible_lp(p, sol.counts) and np.allclose(sol.assignment.sum(axis=0), p.demand)
        seen.append(sol.counts)
    if len(brute) <= 6:
        with pytest.raises(InfeasibleError):
            solve_excluding(p, [np.array(c, dtype=np.int64) for _, c in brute], cap)


def test_among_equal_costs_the_fewest_types_come_first() -> None:
    """Five twin instances carry the load in many ways at the same cost; the one running a single type comes first
    (its instances share the traffic as one pool), whichever fleet was barred."""
    p = FleetProblem(["a", "b", "c"], ["x"], np.array([1.0, 1.0, 1.0]), np.array([[1.0], [1.0], [1.0]]),
                     np.array([4.5]), np.full(3, np.inf))  # fmt: skip
    barred = [np.array([2, 2, 1]), np.array([1, 1, 3])]
    sol = solve_excluding(p, barred, 5.0)
    assert sol.cost_per_hour == pytest.approx(5.0)
    assert np.count_nonzero(sol.counts) == 1
    again = solve_excluding(p, [*barred, sol.counts], 5.0)
    assert np.count_nonzero(again.counts) == 1 and not np.array_equal(again.counts, sol.counts)


def _twins(catalog: Catalog, n: int) -> tuple[list[Any], FleetProblem, list[Bucket]]:
    from chipwise.hardware import hardware

    system = hardware(catalog).system("mi300x")
    buckets = [Bucket("x", 512, 256, 4.5)]
    types = [
        fleet_replay.InstanceType(f"twin{i}", system, "e", None, 1, 1.0, np.array([1.0]), np.array([2.0]))
        for i in range(n)
    ]
    problem = FleetProblem([t.name for t in types], ["x"], np.ones(n), np.ones((n, 1)), np.array([4.5]),
                           np.full(n, np.inf), np.ones(n), ["mi300x"] * n, {})  # fmt: skip
    return types, problem, buckets


def test_a_fleet_as_cheap_as_the_first_is_found_where_derating_would_add_capacity(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three twin types, $1 an instance, 4.5 req/s at 1 req/s an instance: five instances at $5 in 21 ways. The
    simulator (here a stand-in) holds the SLO only for a pool of five instances of one type, and the programme's
    first pick (here fixed) splits them 2 + 2 + 1 and misses. Derating only adds capacity: it ended at $6 (MI300X
    alone had answered $15.54/hour for Llama 3.1 8B where five instances of one shape meet the SLO at $12.95).
    The answer is five of one type, at $5."""

    def stand_in(catalog: Any, model: Any, t: Any, count: int, share: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        ok = count >= 5
        stats = {"ttft_p99_s": 1.0 if ok else 3.0, "tpot_p99_s": 0.04, "slo_met": ok}
        return {"worst_ratio": 0.5 if ok else 1.5, "buckets": {"x": stats}, "slo_met": ok}

    calls = []

    def first_pick_split(p: FleetProblem) -> Any:  # HiGHS's pick among equal costs, made the split one
        calls.append(p)
        return solve(replace(p, limits=np.array([2.0, 2.0, 1.0])) if len(calls) == 1 else p)

    monkeypatch.setattr(fleet_replay, "_replay", stand_in)
    monkeypatch.setattr(fleet_replay, "solve", first_pick_split)
    types, problem, buckets = _twins(catalog, 3)
    got = fleet_replay.settle_fleet(catalog, None, types, problem, buckets, SLO, True)  # type: ignore[arg-type]
    assert got.met and got.steady_cost == pytest.approx(5.0)
    assert got.sol.cost_per_hour == pytest.approx(5.0)
    assert np.count_nonzero(got.sol.counts) == 1
    calls.clear()
    monkeypatch.setattr(fleet_replay, "ALTERNATIVES", 0)  # the derate path alone pays more
    alone = fleet_replay.settle_fleet(catalog, None, types, problem, buckets, SLO, True)  # type: ignore[arg-type]
    assert alone.met and alone.sol.cost_per_hour > 5.0 + 1e-9


def test_adding_hardware_never_makes_one_chips_answer_cheaper(catalog: Catalog) -> None:
    """Llama 3.1 8B on chat-mix: MI300X alone answered four b512 and two b128 instances at $15.54/hour (its first
    $12.95 fleet missed in replay, and derating only adds capacity), while MI300X with B200 answered five MI300X
    b512 at $12.95, met. One chip's answer is no dearer than the fleet of that chip a wider search finds. Five
    MI300X (b661) read a TPOT p99 of 48.0 ms on 5,218 replayed requests and 54.7 and 52.6 ms on 20,000 on two
    seeds against 50 ms: the answer is six, $15.54 (6 x $2.59), and since stop 94 (the TPOT tail of
    serve.decode_tail) the steady-state optimum is six too, where it had read five at $12.95."""
    alone = plan_fleet(catalog, "llama-3.1-8b", str(EXAMPLE), SLO, ["mi300x"], precision=RELEASED)
    wider = plan_fleet(catalog, "llama-3.1-8b", str(EXAMPLE), SLO, ["mi300x", "b200"], precision=RELEASED)
    assert alone["slo_met_in_replay"] is True and wider["slo_met_in_replay"] is True
    assert wider["cost_usd_per_hour"] <= alone["cost_usd_per_hour"] + 1e-9
    if all(f["hardware"] == "mi300x" for f in wider["fleet"]):
        assert alone["cost_usd_per_hour"] <= wider["cost_usd_per_hour"] + 1e-9
    assert alone["steady_state_cost_usd_per_hour"] == pytest.approx(6 * 2.59)
    assert alone["cost_usd_per_hour"] == pytest.approx(6 * 2.59)
    again = plan_fleet(catalog, "llama-3.1-8b", str(EXAMPLE), SLO, ["mi300x"], precision=RELEASED)
    assert again["fleet"] == alone["fleet"]  # the same answer every time
