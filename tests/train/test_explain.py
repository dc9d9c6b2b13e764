"""What plan_result reports beside the figures: the cores a rank is, and where ZeRO-3 with a pipeline holds more
memory than ZeRO-1 would."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.train.explain import plan_result
from chipwise.train.search import search_plans
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _result(catalog: Catalog, chip: str, chips: int, plan: dict[str, Any]) -> dict[str, Any]:
    spec = load_model(catalog, "llama-3.1-70b")
    search = search_plans(spec, TrainingJob(spec, 8192, 512), hardware(catalog).system(chip), chips, fixed=plan)
    return plan_result(search, search.best)


PLAN = {"tp": 8, "pp": 4, "dp": 32, "cp": 1, "vpp": 1, "microbatch": 1, "recompute": "full"}


def test_zero3_with_a_pipeline_says_what_zero1_would_hold(catalog: Catalog) -> None:
    """Llama-3.1-70B, TP8 PP4 DP32 on 1,024 H100: ZeRO-3 19.24 GiB a chip against ZeRO-1's 18.98 at the same step
    time; the output had still called it 'FSDP' and said nothing. ZeRO-2 (10.78), which no framework runs with a
    pipeline, is no longer offered."""
    r = {z: _result(catalog, "h100-sxm", 1024, {**PLAN, "zero": z}) for z in (1, 3)}
    assert [round(r[z]["memory_per_chip_gib"], 2) for z in (1, 3)] == [18.98, 19.24]
    assert r[3]["memory_note"] == (
        "zero 3 with pp > 1 holds 19.2 GiB per chip, more than zero 1 (19.0) would: with a pipeline, "
        "FSDP keeps each stage's gathered weights and unsharded gradients through the step (torchtitan's FSDP + PP; "
        "resharding after forward is not modelled)"
    )
    assert "memory_note" not in r[1]
    assert "memory_note" not in _result(catalog, "h100-sxm", 1024, {**PLAN, "pp": 1, "dp": 128, "zero": 3})


@pytest.mark.parametrize(("chip", "cores"), [("h100-sxm", 1), ("trn1", 2), ("trn2", 4)])
def test_a_rank_is_a_core(catalog: Catalog, chip: str, cores: int) -> None:
    r = _result(catalog, chip, 256, {})
    p = r["plan"]
    assert r["cores_per_chip"] == cores
    assert p["tp"] * p["pp"] * p["dp"] * p["cp"] == r["chips_used"] * cores
