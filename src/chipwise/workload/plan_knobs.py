"""The knobs of a parallel plan as a user gives them (a scenario's plan, --plan, a sweep's plan axes): their names
(PLAN_KEYS, with the ALIASES other tools use) and given_knobs, the one reader that checks each value. A degree is
read as a top-level count is (workload.counts.count_value): 2, 2.0 and '2' are tp 2, as chips: '8' is 8 chips."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.workload.counts import count_value
from chipwise.workload.training import RECOMPUTE_MODES

PLAN_KEYS: tuple[str, ...] = (
    "tp",
    "pp",
    "dp",
    "cp",
    "ep",
    "vpp",
    "microbatch",
    "zero",
    "recompute",
    "sp",
    "hsdp",
)

#: other names a plan may give a knob by (Megatron's and the DESIGN.md contract's): mb is microbatch, vp vpp and
#: sequence_parallel sp. They had been accepted and then ignored by the search ({tp: 8, pp: 4, mb: 1} ran mb2).
ALIASES: dict[str, str] = {"mb": "microbatch", "vp": "vpp", "sequence_parallel": "sp"}
_FLAGS: tuple[str, ...] = ("sp", "hsdp")


def _whole(key: str, value: Any) -> int:
    """A plan degree as an int, or one line: a whole, finite number at least 1 (zero: at least 0), read as a
    top-level count is (count_value: '2' is 2, as chips: '8' is 8 chips; tp: '2' had been refused)."""
    number = count_value(value)
    if (
        isinstance(number, bool)
        or not isinstance(number, int | float)
        or not math.isfinite(number)  # .nan and .inf had reached int(): ValueError, OverflowError
        or int(number) != number
    ):
        raise ChipwiseError(f"plan.{key} must be a whole number, got {value!r}. Fix: give an integer.")
    low = 0 if key == "zero" else 1
    if number < low:
        raise ChipwiseError(f"plan.{key} must be at least {low}, got {value}. Fix: correct it.")
    return int(number)


def _flag(key: str, value: Any) -> bool:
    """A plan flag: true or false (or 0 or 1, as normalise and PlanArrays hold it), not text: 'no' had read as
    true."""
    if isinstance(value, bool | np.bool_) or (isinstance(value, int | np.integer) and value in (0, 1)):
        return bool(value)
    raise ChipwiseError(f"plan.{key}: {value!r} is not true or false. Fix: give true or false.")


def given_knobs(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs a (partial) plan gives, by their PLAN_KEYS names (ALIASES resolved), each value checked: degrees
    as ints, recompute as one of RECOMPUTE_MODES, sp and hsdp as bools. None is a knob not given. One line names
    an unknown key, a knob given twice (mb and microbatch) or a bad value."""
    unknown = sorted(str(k) for k in set(plan) - set(PLAN_KEYS) - set(ALIASES))
    if "offload" in unknown:
        # a knob other tools have, named as such: it had been told only the keys chipwise takes
        raise ChipwiseError(
            "plan.offload: chipwise does not model offloading optimizer state or activations to host memory, so "
            "it cannot price such a plan. Fix: drop offload; for a plan that does not fit, raise zero (3 shards "
            "the optimizer state), recompute, tp or pp."
        )
    if unknown:
        # with the near match, as a scenario's own keys have it (plan.tpp: 'tp')
        raise UnknownNameError("plan key", unknown[0], PLAN_KEYS, hint=f"use {', '.join(PLAN_KEYS)}")
    given: dict[str, Any] = {}
    named: dict[str, str] = {}
    for key, value in plan.items():
        if value is None:
            continue
        name = ALIASES.get(key, key)
        if name in given:
            raise ChipwiseError(f"plan gives {name} twice, as {named[name]} and {key}. Fix: keep one of them.")
        named[name] = key
        if name == "recompute":
            mode = str(value).lower()
            if mode not in RECOMPUTE_MODES:
                raise ChipwiseError(
                    f"plan.recompute: unknown recompute mode '{mode}'. Fix: use one of {', '.join(RECOMPUTE_MODES)}."
                )
            given[name] = mode
        elif name in _FLAGS:
            given[name] = _flag(key, value)
        else:
            given[name] = _whole(key, value)
    if given.get("zero", 0) > 3:
        raise ChipwiseError(f"plan.zero must be 0, 1, 2 or 3, got {given['zero']}. Fix: correct it.")
    return given
