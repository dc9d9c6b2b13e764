"""A training scenario's `recovery` (checkpoint, in-memory or best, as plan train's --recovery): predict had refused
the key ('recovery: unknown key. Fix: use 'provider'') and always took the better of the two."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.scenario import predict_scenario
from chipwise.planner.training import plan_training
from chipwise.workload.scenario import load_scenario

#: 64 H100s, eight hosts: in-memory recovery has a peer host to copy from
SCENARIO = "{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 64, tokens: 1e11, plan: {tp: 1, dp: 64}"


def _predict(catalog: Catalog, extra: str = "") -> dict[str, Any]:
    return predict_scenario(catalog, load_scenario(SCENARIO + extra + "}", catalog))


def test_checkpoint_recovery_prices_the_expected_run(catalog: Catalog) -> None:
    """The expected time is the ideal over checkpoint-restart's goodput, not over the better in-memory one's."""
    best, ckpt = _predict(catalog), _predict(catalog, ", recovery: checkpoint")
    g_ckpt, g_mem = ckpt["reliability"]["goodput_checkpoint"], ckpt["reliability"]["goodput_in_memory"]
    assert g_ckpt < g_mem  # at 64 chips in memory keeps more, so 'best' had always priced it
    assert (ckpt["reliability"]["recovery"], ckpt["goodput"]) == ("checkpoint", g_ckpt)
    assert ckpt["expected_time_to_train_s"] == pytest.approx(ckpt["time_to_train_s"] / g_ckpt)
    assert (best["reliability"]["recovery"], best["goodput"]) == ("in-memory", g_mem)
    assert ckpt["expected_cost_usd"] > best["expected_cost_usd"]
    assert ckpt["time_to_train_s"] == best["time_to_train_s"]  # the ideal run is the same


def test_in_memory_recovery_is_the_default_best_here(catalog: Catalog) -> None:
    best, mem = _predict(catalog), _predict(catalog, ", recovery: in-memory")
    assert mem["goodput"] == best["goodput"] == mem["reliability"]["goodput_in_memory"]
    assert mem["expected_cost_usd"] == best["expected_cost_usd"]


def test_a_recovery_not_named_is_one_line(catalog: Catalog) -> None:
    with pytest.raises(ChipwiseError) as info:
        load_scenario(SCENARIO + ", recovery: fast}", catalog)
    message = str(info.value)
    assert "recovery: Input should be 'checkpoint', 'in-memory' or 'best'" in message and "\n" not in message


def test_a_mistyped_recovery_key_names_recovery(catalog: Catalog) -> None:
    """'recovry' is offered 'recovery', now a key ('recovery' itself had been offered 'provider')."""
    with pytest.raises(ChipwiseError, match=r"recovry: unknown key\. Fix: use 'recovery'"):
        load_scenario(SCENARIO + ", recovry: checkpoint}", catalog)


def test_the_plan_is_the_one_that_trains_soonest_under_the_recovery(catalog: Catalog) -> None:
    """Predict searches as plan train --recovery does: on 1,000,000 Trainium3 checkpoint-restart keeps a plan on
    fewer chips (131,072 where in memory 524,288 train sooner), the row plan train --recovery checkpoint ranks."""
    text = "{kind: train, model: llama-3.1-405b, hardware: trn3, chips: 1M, tokens: 15T, precision: fp8"
    rows = {}
    for recovery in ("best", "checkpoint"):
        r = predict_scenario(catalog, load_scenario(f"{text}, recovery: {recovery}}}", catalog))
        (row,) = plan_training(
            catalog, "llama-3.1-405b", 1_000_000, ["trn3"], tokens=15e12, precision="fp8", recovery=recovery
        )["results"]
        assert (r["plan"], r["goodput"], r["chips_used"]) == (row["plan"], row["goodput"], row["chips_used"])
        rows[recovery] = r
    assert rows["checkpoint"]["chips_used"] < rows["best"]["chips_used"]
    assert rows["checkpoint"]["reliability"]["recovery"] == "checkpoint"
