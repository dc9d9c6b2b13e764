"""The check narrows a fleet between the largest it saw miss and the smallest it saw pass: growing and shrinking by a
fifth had left the answer anywhere in that fifth."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.planner import serving_check
from chipwise.planner.serving_check import _between, _within
from chipwise.planner.serving_plan import plan_serving
from chipwise.serve.simulate import Pool, ServingSetup
from chipwise.workload.load import Load
from forced_checks import start_checks_at


def _fleet(shape: SimpleNamespace, *replicas: int) -> ServingSetup:
    roles = ("prefill", "decode") if len(replicas) == 2 else ("both",)
    return ServingSetup(tuple(Pool(shape, n, role) for n, role in zip(replicas, roles, strict=True)))  # type: ignore[arg-type]


def _replicas(setup: ServingSetup | None) -> list[int] | None:
    return None if setup is None else [p.replicas for p in setup.pools]


def test_the_fleet_between_halves_the_gap_in_what_its_rental_hosts() -> None:
    gpu = SimpleNamespace(chips=1.0, system=SimpleNamespace(rental_chips=()))
    assert _replicas(_between(_fleet(gpu, 54), _fleet(gpu, 66))) == [60]
    assert _replicas(_between(_fleet(gpu, 54), _fleet(gpu, 57))) == [56]  # rounded up: 55.5 -> 56
    assert _between(_fleet(gpu, 55), _fleet(gpu, 57)) is None  # 2 of 57 chips: within NARROW_GAP
    assert _between(None, _fleet(gpu, 57)) is None  # nothing seen to miss
    # a split halves the pool that differs: 4 and 6 decode replicas beside 10 prefill ones
    assert _replicas(_between(_fleet(gpu, 10, 4), _fleet(gpu, 10, 6))) == [10, 5]
    # TP2 replicas in 8-chip instances host four: between four and eight nothing bills less than eight
    node = SimpleNamespace(chips=2.0, system=SimpleNamespace(rental_chips=(8,)))
    assert _between(_fleet(node, 4), _fleet(node, 8)) is None
    assert _replicas(_between(_fleet(node, 4), _fleet(node, 12))) == [8]
    # a shrink no larger in any pool than a fleet that missed is not run
    assert _within(_fleet(gpu, 53), _fleet(gpu, 54))
    assert not _within(_fleet(gpu, 10, 5), _fleet(gpu, 12, 4))
    assert not _within(_fleet(gpu, 53), None)


def test_a_check_that_grew_settles_between_the_fleet_that_missed_and_the_one_that_passed(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mixtral 8x7B at 20 req/s on inf2 (4,096/1,024 tokens, 10 s / 120 ms p99) from 60 TP8 replicas (240 chips):
    they miss the TPOT target (123 ms); a fifth more (72, 288 chips) pass, and the check had stopped there. Halving
    the gap, 66 would run past MAX_CHECK_LOAD of what they sustain (refused without a run) and 69 (276 chips, the
    estimate's own count) meet the SLO and keep up."""
    start_checks_at(monkeypatch, 60)

    def checked() -> dict[str, Any]:
        r = plan_serving(
            catalog, "mixtral-8x7b", ["inf2"], Load("rate", rate=20.0), 4096, 1024,
            {"ttft_p99": 10.0, "tpot_p99": 0.12}, disaggregated=False, verify=1,
        )  # fmt: skip
        verified: dict[str, Any] = r["verified"][0]
        return verified

    narrowed = checked()
    assert narrowed["chips"] == 276 and narrowed["slo_met"] and narrowed["keeps_up"]
    monkeypatch.setattr(serving_check, "NARROW_TRIES", 0)
    assert checked()["chips"] == 288


def test_the_search_sizes_replicas_no_further_than_the_check_passes_them(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Llama-3.1-70B at 60 req/s on H200 (1,024/1,024 tokens, 3 s / 60 ms p99): the SLO allows a TP2 replica some
    90% of its saturated rate, where the check passes no fleet past MAX_CHECK_LOAD (85%) of what it sustains. Sized
    at the SLO's rate the search took 54 chips and its check 58; sized at MAX_CHECK_LOAD it takes the 58."""
    from chipwise.planner import serving_choice

    def estimated() -> float:
        r = plan_serving(
            catalog, "llama-3.1-70b", ["h200"], Load("rate", rate=60.0), 1024, 1024,
            {"ttft_p99": 3.0, "tpot_p99": 0.06}, disaggregated=False, verify=0,
        )  # fmt: skip
        return float(r["results"][0]["chips"])

    assert estimated() == 58
    monkeypatch.setattr(serving_choice, "MAX_CHECK_LOAD", 0.95)
    assert estimated() == 54
