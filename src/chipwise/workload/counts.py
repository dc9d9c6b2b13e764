"""Counts as a user gives them (64, 15e12, '15T', '4M'): the one reader of a count (count_value; parse_count for a
pydantic model, read_count outside a scenario, is_count for a Python caller's whole number), the pydantic count
types, and the most tokens a training run may train on. A NumPy integer or floating scalar (np.int64(64) chips from
an array) reads as the Python number it holds, wherever a count is read."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

import numpy as np
from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from chipwise.errors import ChipwiseError

_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}
_NUMBER = re.compile(r"^\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*([kKMBGTP]?)\s*$")


def plain_number(value: Any) -> Any:
    """A NumPy integer or floating scalar as the Python int or float it holds (np.int64(64) -> 64,
    np.float32(0.5) -> 0.5); anything else as it is. np.int64(64) chips had been refused as 'not a positive finite
    whole number', np.float32(2) requests/s as 'not a positive number': neither is an int or a float to isinstance."""
    if isinstance(value, np.integer | np.floating):
        return value.item()
    return value


def count_value(value: Any) -> Any:
    """'15T' -> 1.5e13, '4M' -> 4e6, '15e12' -> 1.5e13, np.int64(64) -> 64 (plain_number); numbers and anything else
    pass through as they are (for a caller that checks the value itself: NaN included)."""
    value = plain_number(value)
    if isinstance(value, str):
        m = _NUMBER.match(value)
        if m:
            return float(m.group(1)) * _SUFFIX.get(m.group(2), 1.0)
    return value


def parse_count(value: Any) -> Any:
    """A pydantic before-validator: count_value, with NaN refused as not finite (else read as 'should be greater
    than 0'). Outside a model's validation call count_value: this error is pydantic's, and had reached the
    command line as an internal error (plan serve --rate nan)."""
    if isinstance(value, float) and math.isnan(value):
        raise PydanticCustomError("finite_number", "Input should be a finite number")
    return count_value(value)


Count = Annotated[float, BeforeValidator(parse_count), Field(gt=0, allow_inf_nan=False)]
IntCount = Annotated[int, BeforeValidator(parse_count), Field(gt=0)]
_WHOLE, _AMOUNT = TypeAdapter(IntCount), TypeAdapter(Count)

#: The most tokens a training run may train on: 1e18, what a million chips (the largest fleet planned) would train
#: in a year at some 30,000 tokens/s each, and over 20,000 times the largest published pretraining corpora (Qwen3's
#: 36T tokens); 1e40 had priced a run at $2.55e+33 over 2.3e+25 years.
MAX_TRAIN_TOKENS = 1e18
#: the names read_count reads the tokens a run trains on under (plan train/hetero --tokens, plan lifecycle
#: --train-tokens, and the API's tokens and train_tokens)
TRAIN_TOKEN_NAMES = ("--tokens", "--train-tokens", "tokens", "train_tokens")


def training_tokens_problem(value: float) -> str | None:
    """Why `value` tokens to train on is past MAX_TRAIN_TOKENS, or None when it is not."""
    if value <= MAX_TRAIN_TOKENS:
        return None
    return (
        f"{value:g} tokens is more than a million chips train on in a year (at most {MAX_TRAIN_TOKENS:g}; the "
        "largest published runs train on tens of trillions)"
    )


def read_count(value: Any, name: str, whole: bool = False, example: str = "") -> Any:
    """A positive finite count given outside a scenario (a command-line option, an API argument) as a scenario
    reads one: 64, 15e12, '15T', '4M' (a whole number where `whole`); None kept; anything else one line, whose fix
    gives `example` (default a chip or token count: months of service had been told 'e.g. 15e12 or '15T''). A NumPy
    scalar reads as its number (plain_number); a value of another type is refused for its type (chips=[64] had read
    'is not a positive finite whole number', as if 64 were the problem)."""
    value = plain_number(value)
    if value is None:
        return None
    kind, default = ("whole number", "64") if whole else ("number", "15e12 or '15T'")
    example = example or default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ChipwiseError(
            f"{name} {value!r} is a {type(value).__name__}, not an int, a float or numeric text. Fix: give e.g. "
            f"{example}."
        )
    try:
        count = (_WHOLE if whole else _AMOUNT).validate_python(value)
    except ValidationError:
        raise ChipwiseError(f"{name} {value!r} is not a positive finite {kind}. Fix: give e.g. {example}.") from None
    return _within(count, name)


def _within(count: Any, name: str) -> Any:
    """The count read under `name`, or one line where it is tokens to train on past MAX_TRAIN_TOKENS."""
    problem = training_tokens_problem(count) if name in TRAIN_TOKEN_NAMES else None
    if problem is not None:
        raise ChipwiseError(f"{name} {problem}. Fix: give the tokens of one training run, e.g. 15T.")
    return count


def is_count(value: Any) -> bool:
    """A whole number of at least 1 (users, tokens), as a Python caller might pass it: 64, 64.0 or np.int64(64), not
    2.5, True, infinity or '64'."""
    value = plain_number(value)
    number = not isinstance(value, bool) and isinstance(value, int | float)
    return number and 1 <= value < math.inf and value == int(value)
