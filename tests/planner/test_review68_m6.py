"""Review 68 E (mend M6): the rental price, the chip TDP and the system power are figures the prediction lists and a
sensitivity moves; a side a cap absorbs, a change of pricing basis and a tile size no longer read as a figure's move."""

from __future__ import annotations

import math
from typing import Any

import pytest
from tests.planner.test_sensitivity import TRAIN

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.planner.sensitivity import (
    MAX_WORKERS,
    _capped,
    _elasticity,
    _rebase,
    check_metric,
    default_workers,
)


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return cw.predict(TRAIN)


@pytest.fixture(scope="module")
def moved() -> dict[str, Any]:
    return cw.sensitivity(TRAIN, metric="cost", only=["price", ".tdp", ".power", "tile_m"])


def test_the_price_tdp_and_system_power_are_listed_with_their_sources(base: dict[str, Any]) -> None:
    """E2: the $/chip-hour, the TDP and the system power the cost and energy rest on had no row in --sources."""
    figures = base["economics_figures"]
    price = next(f for k, f in figures.items() if ".price." in k)
    system = base["system"]
    assert f"{system}.price.on-demand" in figures  # a system's own price: per system-hour, as --set takes it
    chips = 8  # an H100 system
    assert price["value"] == pytest.approx(base["price_usd_per_chip_hour"] * chips, rel=1e-9)
    assert price["unit"] == "USD/h" and price["status"] and price["source"]
    tdp, power = figures["h100-sxm.tdp"], figures[f"{system}.power"]
    assert tdp["value"] == 700 and tdp["unit"] == "W" and tdp["source"]
    assert power["si"] > 8 * 700 and power["source"]


def test_the_rental_price_moves_cost_one_for_one(moved: dict[str, Any]) -> None:
    """E1 (high): no move of the price had been made, though cost is the chip-hours x the price: -10% and +10%
    exactly, elasticity ln(1.1/0.9)/ln(1.1/0.9) = +1, ranked first for cost; it moves no step or energy."""
    row = moved["figures"][0]
    assert ".price.on-demand" in row["figure"]
    assert row["change"]["minus"]["cost"] == pytest.approx(-0.10, abs=1e-9)
    assert row["change"]["plus"]["cost"] == pytest.approx(0.10, abs=1e-9)
    assert row["elasticity"]["cost"] == pytest.approx(1.0, abs=1e-9)
    assert row["elasticity"]["step_time"] == pytest.approx(0.0, abs=1e-12)
    assert {r["figure"] for r in moved["figures"]} >= {"h100-sxm.tdp", f"{moved['system']}.power"}


def test_a_tile_size_is_listed_not_moved(moved: dict[str, Any]) -> None:
    """E7: x0.9 of a 128-row tile (115.2) is no tile; it had been ranked as if it mattered."""
    tiles = [r for r in moved["not_priced"] if r["figure"].endswith("tile_m")]
    assert tiles and all(r["kind"] == "discrete" for r in tiles)
    assert not any(r["figure"].endswith("tile_m") for r in moved["figures"])


def test_a_side_a_cap_absorbs_is_named_and_the_other_side_stands() -> None:
    """E4: the engine's HBM fraction 0.87 x 1.1323 is past its 0.95 cap: +10% moves nothing, -10% gives +4.53% TPOT.
    The central difference had read -0.22; the moving side's slope is ln(1.0453)/ln(0.9) = -0.42."""
    change = {"minus": {"tpot_p50": 0.0453, "cost": 0.0}, "plus": {"tpot_p50": 0.0, "cost": 0.0}}
    assert _capped(change) == {"tpot_p50": "plus"}  # cost moves on neither side: no cap
    assert _capped({"minus": {"a": -0.01}, "plus": {"a": 0.01}}) == {}
    # per metric: a TDP past the reference power leaves the step still at +10% and moves energy both ways
    tdp = {"minus": {"step_time": 0.05, "energy": -0.04}, "plus": {"step_time": 0.0, "energy": 0.05}}
    assert _capped(tdp) == {"step_time": "plus"}
    minus = {"tpot_p50": 1.0453}
    assert _elasticity(1.0, minus, {}, "tpot_p50", 0.1) == pytest.approx(math.log(1.0453) / math.log(0.9))
    assert _elasticity(1.0, minus, {}, "tpot_p50", 0.1) == pytest.approx(-0.421, abs=1e-3)


def test_a_serving_move_is_priced_on_the_baselines_basis() -> None:
    """E6: the baseline kept up, priced at the offered 20,480 tok/s while it delivered 19,031; 10% less FLOP/s
    fell behind, priced at the 16,719 it delivered: +22.5% cost where the delivered tokens moved 19,031 / 16,719 =
    +13.8%. On the baseline's basis the move is the throughput's."""
    basis = 20480 / 19031
    side = {"cost": 1e6 / 16719, "energy": 2e6 / 16719, "throughput": 16719.0, "basis": 1.0}
    rebased = _rebase(side, basis)
    base_cost = 1e6 / 20480  # the side read on its own basis had been +22.5%
    assert rebased["cost"] / base_cost - 1 == pytest.approx(19031 / 16719 - 1, rel=1e-9)  # +13.8%
    assert rebased["throughput"] == 16719.0  # not a per-token figure
    assert _rebase(side, None) is side  # a training run: no basis


def test_metric_names_a_near_match_and_workers_cap_is_named() -> None:
    """E9 and E10."""
    with pytest.raises(ChipwiseError, match="Did you mean 'cost'"):
        check_metric("train", "costs", None)
    assert default_workers("train") == 1 and 1 <= default_workers("serve") <= MAX_WORKERS
