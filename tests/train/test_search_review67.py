"""Review 67, D2: the 'use more chips (at least N)' hint of a fleet that cannot hold the model is a true floor. Its
states are every parameter once at ZeRO-3's 16 B spread over every rank; the leanest plan had been tp over every
rank, whose copied K/V projections grew with the fleet (405B on 80 Trn2 asked for at least 91 chips, 88 fit). And
PlanSearch.ranked_by, which orders a fleet's plans by an objective's figure, keeps the faster of equal ones first."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware
from chipwise.planner.training import make_job
from chipwise.train.search import PlanSearch, search_plans
from chipwise.workload import load_model


def _search(catalog: Catalog, hw: Hardware, model: str, chips: int) -> PlanSearch:
    """plan train's search: the default batch for the fleet, as make_job sets it."""
    spec = load_model(catalog, model)
    job = make_job(spec, None, None, None, "bf16", None, chips=chips)
    return search_plans(spec, job, hw.system("trn2"), chips)


def _refusal(catalog: Catalog, hw: Hardware, model: str, chips: int) -> str:
    with pytest.raises(InfeasibleError) as exc:
        _search(catalog, hw, model, chips)
    return str(exc.value)


def test_405b_on_32_trn2_asks_for_a_floor_below_a_fleet_that_fits(catalog: Catalog, hw: Hardware) -> None:
    """16 B x 405,853,388,800 parameters = 6,047.7 GiB over 128 ranks = 47.2 GiB a rank (under the leanest plan's
    49.3 in all); a core holds 24.0 - 0.5 reserved = 23.5 GiB: 6,047.7 / 23.5 / 4 cores = 64.3, at least 65 chips. It
    had read 'at least 75' and 54.7 GiB, more than the leanest plan's whole 49.3."""
    assert _refusal(catalog, hw, "llama-3.1-405b", 32).endswith(
        "the leanest of the 36,081 plans priced needs 49.3 GiB per device, the device has 24.0 GiB. Fix: use more "
        "chips (at least 65, before activations) or a chip with more memory: the weights, gradients and optimizer "
        "state alone need 47.2 GiB per device spread evenly over all 128 ranks."
    )
    assert _search(catalog, hw, "llama-3.1-405b", 88).feasible > 0  # the floor, 65, is below a fleet that fits


def test_405b_on_80_trn2_is_not_sent_past_a_fleet_that_fits(catalog: Catalog, hw: Hardware) -> None:
    """6,047.7 GiB over 320 ranks is 18.9 GiB, which a 23.5 GiB core holds: the states fit, no plan's activations
    do, and the hint is the general one. It had asked for 'at least 91' chips (26.6 GiB) where 88 fit."""
    assert _refusal(catalog, hw, "llama-3.1-405b", 80).endswith(
        "the leanest of the 49,224 plans priced needs 24.9 GiB per device, the device has 24.0 GiB. Fix: use more "
        "chips, a chip with more memory, or a smaller batch or sequence."
    )


def test_70b_on_8_trn2_states_stay_under_the_leanest_plan(catalog: Catalog, hw: Hardware) -> None:
    """16 B x 70.55e9 over 32 ranks = 32.9 GiB, under the leanest plan's 34.3 (it had read 34.8); 16 chips fit."""
    assert _refusal(catalog, hw, "llama-3.1-70b", 8).endswith(
        "the leanest of the 16,815 plans priced needs 34.3 GiB per device, the device has 24.0 GiB. Fix: use more "
        "chips (at least 12, before activations) or a chip with more memory: the weights, gradients and optimizer "
        "state alone need 32.9 GiB per device spread evenly over all 32 ranks."
    )


def test_ranked_by_orders_by_the_figure_and_keeps_the_faster_of_equal_ones(catalog: Catalog, hw: Hardware) -> None:
    search = _search(catalog, hw, "llama-3.2-1b", 8)
    same = search.ranked_by(np.ones(len(search.result.step_time)))
    assert np.array_equal(same.order, search.order)  # all equal: fastest first, as the search ranked them
    slowest_first = search.ranked_by(-search.result.step_time)
    assert slowest_first.best == int(search.order[np.argmax(search.result.step_time[search.order])])
    assert sorted(slowest_first.order) == sorted(search.order)  # the same feasible plans, reordered
