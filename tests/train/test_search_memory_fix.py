"""What the out-of-memory error tells a plan that fixes knobs: the fixed knobs that would free memory, not 'more
chips' (the rank product must hold) or 'a smaller batch' (at pp 1 a rank's activations do not depend on it)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import hardware
from chipwise.train.search import search_plans
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _error(catalog: Catalog, chips: int, plan: dict[str, Any] | None) -> str:
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512)
    with pytest.raises(InfeasibleError) as exc:
        search_plans(spec, job, hardware(catalog).system("h100-sxm"), chips, fixed=plan)
    return str(exc.value)


def test_a_given_plan_names_the_knobs_it_fixes(catalog: Catalog) -> None:
    """TP1 DP64 Z0 without recompute on 64 H100: 1,183 GiB of weights, gradients and Adam state (18 B x 70.6B) and
    167.5 GiB of activations. It had read 'the leanest of 1 plans ... use more chips ... or a smaller batch'."""
    plan = {"tp": 1, "pp": 1, "dp": 64, "cp": 1, "microbatch": 1, "zero": 0, "recompute": "none"}
    assert _error(catalog, 64, plan) == (
        "llama-3.1-70b does not fit on 64 x h100-sxm: the plan needs 1360.1 GiB per device, the device has 79.6 GiB. "
        "Fix: free memory with the knobs the plan fixes: zero 3, recompute full, a larger tp, pp or cp with a "
        "smaller dp (tp x pp x dp x cp must equal the 64 ranks); or use a chip with more memory or a shorter "
        "sequence."
    )


def test_sequence_parallelism_turned_off_is_named(catalog: Catalog) -> None:
    plan = {"tp": 8, "pp": 1, "dp": 128, "microbatch": 1, "zero": 1, "recompute": "none", "sp": False}
    assert "Fix: free memory with the knobs the plan fixes: zero 3, recompute full, sp true, a larger tp or pp" in (
        _error(catalog, 1024, plan)
    )


def test_with_a_pipeline_zero_2_is_the_lean_stage(catalog: Catalog) -> None:
    """With pp > 1 ZeRO-3 keeps each stage's weights and gradients whole (memory.py): ZeRO-2 frees the most."""
    plan = {"tp": 1, "pp": 2, "microbatch": 4, "zero": 3, "recompute": "selective", "hsdp": True}
    message = _error(catalog, 64, plan)
    assert message.startswith("llama-3.1-70b does not fit on 64 x h100-sxm: the leanest of the ")
    assert message.endswith(
        "Fix: free memory with the knobs the plan fixes: zero 2, recompute full, hsdp false, microbatch 1, a larger "
        "tp or pp; or use more chips, a chip with more memory or a shorter sequence."
    )


def test_a_search_with_nothing_fixed_keeps_the_general_fix(catalog: Catalog) -> None:
    assert _error(catalog, 1, None).endswith(
        "plans priced needs 1076.5 GiB per device, the device has 79.6 GiB. Fix: use more chips, a chip with more "
        "memory, or a smaller batch or sequence."
    )
