"""What the out-of-memory error tells a plan that fixes knobs: the fixed knobs that would free memory, more chips
with a larger dp (the rank product must hold), not 'a smaller batch' (at pp 1 a rank's activations do not depend on
it); and, when the fleet cannot hold the model's states however they are split, more chips first, at a true floor:
every parameter's states once at ZeRO-3's 16 B spread over every rank (the leanest plan had been tp over every rank,
whose copied K/V projections grew with the fleet: 405B on 80 Trn2 asked for at least 91 chips where 88 fit)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware, hardware
from chipwise.planner.training import make_job
from chipwise.train.search import PlanSearch, search_plans
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _error(catalog: Catalog, chips: int, plan: dict[str, Any] | None, model: str = "llama-3.1-70b") -> str:
    spec = load_model(catalog, model)
    job = TrainingJob(spec, 8192, 512)
    with pytest.raises(InfeasibleError) as exc:
        search_plans(spec, job, hardware(catalog).system("h100-sxm"), chips, fixed=plan)
    return str(exc.value)


def _feasible(catalog: Catalog, chips: int, model: str = "llama-3.1-70b") -> int:
    """Plans that fit on `chips` H100, at _error's job."""
    spec = load_model(catalog, model)
    return search_plans(spec, TrainingJob(spec, 8192, 512), hardware(catalog).system("h100-sxm"), chips).feasible


def test_a_given_plan_names_the_knobs_it_fixes(catalog: Catalog) -> None:
    """TP1 DP64 Z0 without recompute on 64 H100: 1,183 GiB of weights, gradients and Adam state (18 B x 70.6B) and
    167.5 GiB of activations. It had read 'the leanest of 1 plans ... use more chips ... or a smaller batch'."""
    plan = {"tp": 1, "pp": 1, "dp": 64, "cp": 1, "microbatch": 1, "zero": 0, "recompute": "none"}
    assert _error(catalog, 64, plan) == (
        "llama-3.1-70b does not fit on 64 x h100-sxm: the plan needs 1360.1 GiB per chip, the chip has 79.6 GiB. "
        "Fix: free memory with the knobs the plan fixes: zero 3, recompute full, a larger tp, pp or cp with a "
        "smaller dp (tp x pp x dp x cp may not exceed the 64 ranks); or use more chips (with a larger dp), a chip with "
        "more memory or a shorter sequence."
    )


def test_sequence_parallelism_turned_off_is_named(catalog: Catalog) -> None:
    plan = {"tp": 8, "pp": 1, "dp": 128, "microbatch": 1, "zero": 1, "recompute": "none", "sp": False}
    assert "Fix: free memory with the knobs the plan fixes: zero 3, recompute full, sp true, a larger tp or pp" in (
        _error(catalog, 1024, plan)
    )


def test_with_a_pipeline_zero_1_is_the_lean_stage(catalog: Catalog) -> None:
    """With pp > 1 ZeRO-3 keeps each stage's weights and gradients whole (memory.py): ZeRO-1 frees the most of the
    stages a framework runs with a pipeline (it had named zero 2, which pipelines refuse)."""
    plan = {"tp": 1, "pp": 2, "microbatch": 4, "zero": 3, "recompute": "selective", "hsdp": True}
    message = _error(catalog, 64, plan)
    assert message.startswith("llama-3.1-70b does not fit on 64 x h100-sxm: the leanest of the ")
    assert message.endswith(
        "Fix: free memory with the knobs the plan fixes: zero 1, recompute full, hsdp false, microbatch 1, a larger "
        "tp or pp; or use more chips, a chip with more memory or a shorter sequence."
    )


def test_a_search_with_nothing_fixed_keeps_the_general_fix(catalog: Catalog) -> None:
    """70B's states (16 B a parameter at the leanest) fit 15 H100 spread evenly; no plan of the search does, and 16
    chips are the fewest where one does (it had named no count)."""
    assert _error(catalog, 15, None).endswith(
        "plans priced needs 105.1 GiB per chip, the chip has 79.6 GiB. Fix: use more chips (16 fit a plan), a chip "
        "with more memory, or a smaller batch or sequence."
    )
    assert _feasible(catalog, 16) > 0


def test_at_dp_1_neither_zero_nor_a_smaller_dp_is_offered(catalog: Catalog) -> None:
    """ZeRO shards over dp: at dp 1 it has nothing to shard, and there is no smaller dp to trade for a larger tp."""
    plan = {"tp": 8, "pp": 2, "dp": 1, "zero": 1, "recompute": "none", "microbatch": 1}
    assert _error(catalog, 16, plan).endswith(
        "needs 98.9 GiB per chip, the chip has 79.6 GiB. Fix: free memory with the knobs the plan fixes: recompute "
        "full; or use more chips (with a larger dp), a chip with more memory or a shorter sequence."
    )


FLEET_TOO_SMALL = (
    "the chip has 79.6 GiB. Fix: use more chips (at least 80, before activations{fits}) or a chip with more memory: "
    "the weights, gradients and optimizer state alone need 756.0 GiB per chip spread evenly over all 8 chips."
)


@pytest.mark.parametrize(
    ("plan", "need", "fits"),
    [
        (
            {"tp": 1, "pp": 1, "dp": 8, "zero": 3, "recompute": "full"},
            "the leanest of the 5 plans priced needs 813.1",
            "; 128 fit a plan",
        ),
        ({"tp": 8, "pp": 1, "dp": 1, "zero": 3}, "the leanest of the 15 plans priced needs 766.6", "; 128 fit a plan"),
        ({"tp": 8, "pp": 1, "dp": 1, "zero": 1}, "the leanest of the 15 plans priced needs 859.6", ""),
        (None, "the leanest of the 3,510 plans priced needs 766.6", "; 112 fit a plan"),
    ],
)
def test_a_fleet_that_cannot_hold_the_model_asks_for_more_chips_first(
    catalog: Catalog, plan: dict[str, Any] | None, need: str, fits: str
) -> None:
    """The reviewer's 405B on 8 H100 (oom5, oom6, oom1): ~6,000 GiB of weights, gradients and Adam state against
    the fleet's 637. It had offered a re-split of the 8 ranks, zero 3 or 'a smaller dp' at dp 1, and no more chips.
    Beside the floor from the states alone (80 chips, which fit no plan) comes the fewest chips that fit a plan with
    the knobs it fixes but dp: 112 H100 with none fixed, 128 at TP8 PP1 ZeRO-3 (ZeRO-1 at TP8 PP1 keeps 6 B of each
    of 405B / 8 parameters, 283 GiB, on every rank: no count fits, and none is named)."""
    assert _error(catalog, 8, plan, "llama-3.1-405b") == (
        f"llama-3.1-405b does not fit on 8 x h100-sxm: {need} GiB per chip, {FLEET_TOO_SMALL.format(fits=fits)}"
    )


@pytest.mark.parametrize(("chips", "floor", "fits"), [(64, 80, 112), (8, 14, 16)])
def test_the_more_chips_hint_names_a_count_that_fits(catalog: Catalog, chips: int, floor: int, fits: int) -> None:
    """The tester's 405B on 64 H100 read 'at least 80, before activations' (80 and 96 fit no plan, 112 do) and
    70B on 8 'at least 14' (14 fits none, 16 do): the hint now names the fewest that fit, found by the search."""
    model = "llama-3.1-405b" if floor == 80 else "llama-3.1-70b"
    assert f"(at least {floor}, before activations; {fits} fit a plan)" in _error(catalog, chips, None, model)
    assert _feasible(catalog, fits, model) > 0
    assert f"use more chips ({fits} fit a plan)" in _error(catalog, fits - 1, None, model)


def _trn2_search(catalog: Catalog, hw: Hardware, model: str, chips: int) -> PlanSearch:
    """plan train's search on Trn2: the default batch for the fleet, as make_job sets it."""
    spec = load_model(catalog, model)
    job = make_job(spec, None, None, None, "bf16", None, chips=chips)
    return search_plans(spec, job, hw.system("trn2"), chips)


def _trn2_refusal(catalog: Catalog, hw: Hardware, model: str, chips: int) -> str:
    with pytest.raises(InfeasibleError) as exc:
        _trn2_search(catalog, hw, model, chips)
    return str(exc.value)


def test_405b_on_32_trn2_asks_for_a_floor_below_a_fleet_that_fits(catalog: Catalog, hw: Hardware) -> None:
    """16 B x 405,853,388,800 parameters = 6,047.7 GiB over 128 ranks = 47.2 GiB a rank (under the leanest plan's
    49.3 in all); a core holds 24.0 - 0.5 reserved = 23.5 GiB: 6,047.7 / 23.5 / 4 cores = 64.3, at least 65 chips. It
    had read 'at least 75' and 54.7 GiB, more than the leanest plan's whole 49.3."""
    assert _trn2_refusal(catalog, hw, "llama-3.1-405b", 32).endswith(
        "the leanest of the 24,765 plans priced needs 197.3 GiB per chip (49.3 on each of its 4 NeuronCores), the chip "
        "has 96.0 GiB. Fix: use more chips (at least 65, before activations; 88 fit a plan) or a chip with more "
        "memory: the weights, gradients and optimizer state alone need 189.0 GiB per chip spread evenly over all 32 "
        "chips."
    )
    assert _trn2_search(catalog, hw, "llama-3.1-405b", 88).feasible > 0  # the floor, 65, is below a fleet that fits


def test_405b_on_80_trn2_is_not_sent_past_a_fleet_that_fits(catalog: Catalog, hw: Hardware) -> None:
    """6,047.7 GiB over 320 ranks is 18.9 GiB, which a 23.5 GiB core holds: the states fit, no plan's activations
    do, and the hint is the general one. It had asked for 'at least 91' chips (26.6 GiB) where 88 fit."""
    assert _trn2_refusal(catalog, hw, "llama-3.1-405b", 80).endswith(
        "the leanest of the 33,597 plans priced needs 99.7 GiB per chip (24.9 on each of its 4 NeuronCores), the chip "
        "has 96.0 GiB. Fix: use more chips (88 fit a plan), a chip with more memory, or a smaller batch or sequence."
    )


def test_70b_on_8_trn2_states_stay_under_the_leanest_plan(catalog: Catalog, hw: Hardware) -> None:
    """16 B x 70.55e9 over 32 ranks = 32.9 GiB, under the leanest plan's 34.3 (it had read 34.8); 16 chips fit."""
    assert _trn2_refusal(catalog, hw, "llama-3.1-70b", 8).endswith(
        "the leanest of the 11,610 plans priced needs 137.3 GiB per chip (34.3 on each of its 4 NeuronCores), the chip "
        "has 96.0 GiB. Fix: use more chips (at least 12, before activations; 16 fit a plan) or a chip with more "
        "memory: the weights, gradients and optimizer state alone need 131.4 GiB per chip spread evenly over all 8 "
        "chips."
    )


def test_a_lora_fleet_too_small_blames_the_frozen_base(catalog: Catalog) -> None:
    """405B LoRA on 8 H100 keeps only its frozen base: 405,853,388,800 x 2 B / 8 chips = 94.5 GiB a chip. The fix had
    blamed 'the weights, gradients and optimizer state', which LoRA does not keep for the base."""
    spec = load_model(catalog, "llama-3.1-405b")
    job = TrainingJob(spec, 8192, 512, lora=True)
    with pytest.raises(InfeasibleError) as exc:
        search_plans(spec, job, hardware(catalog).system("h100-sxm"), 8)
    assert str(exc.value).endswith(
        "or a chip with more memory: the frozen base weights alone need 94.5 GiB per chip spread evenly over all 8 "
        "chips."
    )
    assert "optimizer state" not in str(exc.value)
