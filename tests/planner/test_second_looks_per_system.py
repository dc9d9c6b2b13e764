"""Second looks (serving_shortlist.second_looks) at the other shapes of a chip whose simulated check grew are shared
fairly between chips: up to SECOND_LOOKS a system, each system's cheapest first, SECOND_LOOKS_MAX in all. The cap had
been SECOND_LOOKS over every chip together, so adding a chip to --hardware could answer dearer."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog.loader import load_catalog
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}


def _plan(hardware_ids: list[str]) -> dict[str, Any]:
    """Llama 3.1 70B fp8 at 20 req/s, 1,024 in / 256 out, colocated, MI325X at $3.00 a chip-hour (--set)."""
    cat = load_catalog((), ["mi325x.price=3.0"])
    return plan_serving(
        cat, "llama-3.1-70b", hardware_ids, Load("rate", rate=20.0), 1024, 256, SLO, precision="fp8",
        disaggregated=False,
    )  # fmt: skip


def test_a_chip_added_to_the_hardware_does_not_answer_dearer() -> None:
    """MI300X alone: TP8 b128 x2 grows past 16 chips in its check and its second look finds TP1 b32 x16, 16 chips
    at $41.44/h (16 x $2.59). MI325X's estimate ($39.00/h, 13 chips) ranks first beside it and its checks grow to
    14 chips ($42.00/h; 16, $48.00/h, before the check narrowed what it grew): had its looks taken the slots,
    MI300X's TP1 b32 x16 would never be simulated and the answer would read MI325X at $42.00/h. Each chip has its
    looks. (Until stop 93 the pair was MI300X and Gaudi3 at $4.80, whose check no longer grows.)"""
    alone, both = _plan(["mi300x"]), _plan(["mi300x", "mi325x"])
    assert alone["best"]["hardware"] == "mi300x" and alone["best"]["chips"] == 16
    assert alone["best"]["cost_usd_per_hour"] == pytest.approx(16 * 2.59, rel=1e-3)
    assert both["results"][0]["hardware"] == "mi325x"  # the estimate ranks it first
    best = both["best"]
    assert (best["hardware"], best["plan"]["both"]["tp"], best["plan"]["both"]["max_batch"], best["chips"]) == (
        "mi300x",
        1,
        32,
        16,
    )
    assert best["cost_usd_per_hour"] == pytest.approx(alone["best"]["cost_usd_per_hour"])
    mi325x = [v for v in both["verified"] if v["hardware"] == "mi325x"]
    assert min(v["cost_usd_per_hour"] for v in mi325x if v["slo_met"]) == pytest.approx(42.0)  # 14 x $3.00
    # MI300X's checks are those it has alone: its first, which grew, and its second look
    assert sum(v["hardware"] == "mi300x" for v in both["verified"]) == len(alone["verified"]) == 2


def _look(system: str, cost: float) -> dict[str, Any]:
    return {"system": system, "cost_usd_per_hour": cost, "cost_usd_per_mtok": cost}


def test_each_system_has_its_cheapest_look_before_any_has_a_second() -> None:
    """Three systems' looks: a's at $1, $2 and $3, b's at $5 and $6, c's at $4: each system's cheapest by the
    estimate first ($1, $4, $5), then the second cheapest of each ($2, $6); a's $3 is past SECOND_LOOKS."""
    from chipwise.planner.serving_shortlist import SECOND_LOOKS_MAX, _fair_share

    looks = {"a": [_look("a", 3.0), _look("a", 1.0), _look("a", 2.0)], "b": [_look("b", 6.0), _look("b", 5.0)],
             "c": [_look("c", 4.0)]}  # fmt: skip
    order = _fair_share(looks, Load("rate", rate=1.0))
    assert [(r["system"], r["cost_usd_per_hour"]) for r in order] == [
        ("a", 1.0), ("c", 4.0), ("b", 5.0), ("a", 2.0), ("b", 6.0),
    ]  # fmt: skip
    many = {f"s{i}": [_look(f"s{i}", float(i)), _look(f"s{i}", 10.0 + i)] for i in range(5)}
    assert len(_fair_share(many, Load("rate", rate=1.0))) == SECOND_LOOKS_MAX == 6
