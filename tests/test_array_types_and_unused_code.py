"""One definition of the NumPy array types (chipwise.types), scenario, reliability and energy functions typed with
them, and no production code that only tests used (collectives.all_to_all and the fields it read, the fleet-mix
test problems, Young's interval, iteration_time)."""

from __future__ import annotations

import re
import typing
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from chipwise import types
from chipwise.economics import energy
from chipwise.perf import collectives as coll
from chipwise.planner import fleet_mix
from chipwise.reliability import checkpoint, rates
from chipwise.reliability.goodput import goodput, wall_time_factor
from chipwise.serve import iteration
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.train_scenario import TrainScenario

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "chipwise"
ALIAS = re.compile(r"^\w+(?:\s*:\s*TypeAlias)?\s*=\s*NDArray\[", re.MULTILINE)
#: modules still allowed an alias of their own (none: types.py holds the only definitions)
NOT_YET: set[str] = set()


def test_the_array_aliases_are_defined_once() -> None:
    """18 modules had defined NDArray[np.float64] (as Array or FloatArray) or NDArray[np.int64] themselves."""
    defining = {
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if ALIAS.search(p.read_text(encoding="utf-8"))
    }
    assert defining - NOT_YET == {"types.py"}
    assert types.Array == NDArray[np.float64] and types.IntArray == NDArray[np.int64]


def test_load_scenario_says_what_it_returns() -> None:
    # ServeScenario is imported for type checking alone there (workload.serve_scenario builds on the scenario module)
    hints = typing.get_type_hints(load_scenario, globalns={**load_scenario.__globals__, "ServeScenario": ServeScenario})
    assert hints["return"] == TrainScenario | ServeScenario


@pytest.mark.parametrize(
    "func",
    [
        checkpoint.checkpoint_bytes,
        checkpoint.transfer_time,
        checkpoint.daly_interval,
        rates.hosts_of,
        rates.interruption_rate,
        wall_time_factor,
        goodput,
        energy.energy_j,
        energy.carbon_kg,
    ],
)
def test_reliability_and_energy_take_array_likes_and_return_arrays(func: typing.Callable[..., object]) -> None:
    hints = typing.get_type_hints(func)
    assert hints["return"] == types.Array
    assert typing.Any not in hints.values()


def test_scalars_in_give_the_same_figures_as_float64_arrays() -> None:
    """Llama 3.1 405B's checkpoint, 14 B a parameter: 5.67 TB, at 2 TB/s 2.835 s; the same figures they had been as
    Python floats."""
    size = checkpoint.checkpoint_bytes(405e9)
    assert size.dtype == np.float64 and float(size) == 405e9 * 14.0
    assert float(checkpoint.transfer_time(size, 2e12)) == pytest.approx(2.835)
    assert float(energy.energy_j(700.0, 8, 3600.0, 1.2)) == 700.0 * 8 * 3600.0 * 1.2  # 24.192 MJ


def test_code_only_tests_used_is_gone() -> None:
    assert {f.name for f in fields(coll.Group)} == {
        "size",
        "n_in",
        "n_out",
        "bw_in",
        "bw_out",
        "slope_rs",
        "intercept_rs",
        "intercept_ar",
        "steps_in",
        "a2a_hops",
    }
    gone = [
        (coll, "all_to_all"),
        (energy, "JOULES_PER_KWH"),  # catalog.units has the one copy
        (fleet_mix, "feasible_lp"),
        (fleet_mix, "random_problem"),
        (checkpoint, "young_interval"),
        (rates, "expected_interruptions"),
        (iteration, "iteration_time"),
        (iteration, "moe_dispatch"),  # now experts_read_and_rows: perf.collectives.moe_dispatch is the seconds
    ]
    assert [f"{m.__name__}.{name}" for m, name in gone if hasattr(m, name)] == []
    assert callable(iteration.experts_read_and_rows)
