"""A training scenario's plan keys read as its top-level keys do: a degree given as numeric text is a number (tp: '2'
is 2, as chips: '8' is 8 chips), and a plan key's refusal is framed as every scenario refusal is (where, the line,
and where the scenario keys are told)."""

from __future__ import annotations

import pytest

from chipwise.train.plans import normalise
from chipwise.workload.scenario import load_scenario
from chipwise.workload.train_scenario import TrainScenario
from cli_run import scenario_error

TRAIN = "{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: '8', plan: %s}"
KEYS = " (scenario keys: docs/guide.md#scenario-keys)."


def test_plan_degrees_in_text_are_numbers_as_chips_are() -> None:
    sc = load_scenario(TRAIN % "{tp: '2', pp: 1, mb: '4', zero: '0'}")
    assert isinstance(sc, TrainScenario) and sc.chips == 8
    plan = normalise(sc.plan or {})
    assert (plan["tp"], plan["pp"], plan["microbatch"], plan["zero"]) == (2, 1, 4, 0)


@pytest.mark.parametrize(
    ("plan", "line"),
    [
        ("{zero: 4}", "plan.zero must be 0, 1, 2 or 3, got 4. Fix: correct it"),
        ("{tp: 'two'}", "plan.tp must be a whole number, got 'two'. Fix: give an integer"),
        ("{tp: '2.5'}", "plan.tp must be a whole number, got '2.5'. Fix: give an integer"),
        (
            "{recompute: partial}",
            "plan.recompute: unknown recompute mode 'partial'. Fix: use one of none, selective, full",
        ),
    ],
)
def test_a_plan_refusal_is_framed_as_the_scenario_others(plan: str, line: str) -> None:
    assert scenario_error(TRAIN % plan) == f"inline scenario: {line}{KEYS}"
