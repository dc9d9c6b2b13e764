"""Latency targets (SLOs): the one reader of a target in seconds, wherever it is given (a scenario's slo, `--slo`,
the Python API, the web page), and the scenario's SLO mapping."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationInfo, field_validator

from chipwise.errors import ChipwiseError, one_of
from chipwise.workload.strict_model import StrictModel

#: Units a latency target may carry (any case: 2S and 50MS read as 2s and 50ms)
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_TIME = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*$")


def slo_seconds(value: Any) -> float:
    """A latency target in seconds: a number (seconds), or text with a unit, '2s', '50ms', '2S', '800us' (text
    without one, which slo_target refuses first, reads as seconds). ValueError names what is wrong."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        number, unit, text = float(value), "s", f"{value:g}"
    else:
        # true and null as a YAML or JSON scenario writes them, not Python's True and None
        text = json.dumps(value) if isinstance(value, bool) or value is None else str(value).strip()
        m = _TIME.match(text)
        if m is None:
            raise ValueError(f"{text}: not a time such as 2s or 50ms")
        number, unit = float(m.group(1)), m.group(2) or "s"
    scale = TIME_UNITS.get(unit.lower())
    if scale is None:
        raise ValueError(f"{text}: unit '{unit}' unknown; use s, ms or us")
    if not math.isfinite(number):  # 1e400 reads as infinity: it had been told to be positive
        raise ValueError(f"{text}: not a finite time")
    if not number > 0:
        raise ValueError(f"{text}: an SLO must be positive")
    return number * scale


def bare_seconds(value: Any) -> float | None:
    """A target given without a unit, as a number or as text ('50'); None otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    m = _TIME.match(str(value).strip()) if isinstance(value, str) else None
    return float(m.group(1)) if m is not None and not m.group(2) else None


#: The latency targets a serving SLO may set: TTFT, TPOT and end-to-end latency at p50, p90 or p99 (seconds).
SLO_KEYS = tuple(f"{m}_{s}" for m in ("ttft", "tpot", "e2e") for s in ("p50", "p90", "p99"))
#: the SLO text the refusals of --slo give as their example
SLO_EXAMPLE = "ttft_p99=2s,tpot_p99=50ms"


class SLOValueError(ValueError):
    """A latency target that cannot be read: what is wrong with it, and `example`, a time with its unit that fits
    the target (the user's number where it reads as one), for the fix each caller words its own way."""

    def __init__(self, problem: str, key: str, seconds: float | None = None) -> None:
        self.problem = problem
        self.seconds = seconds if seconds is not None else (0.05 if key.startswith("tpot") else 2.0)
        # a token's time in milliseconds, a first token's or an answer's in seconds
        self.example = f"{self.seconds * 1e3:g}ms" if key.startswith("tpot") else f"{self.seconds:g}s"
        super().__init__(f"{problem}; {self.fix()}")

    def fix(self) -> str:
        """The fix where a number can be given (a scenario, the Python API, the web page's JSON)."""
        return f"give seconds as a number ({self.seconds:g}) or a time with a unit ('{self.example}')"


def slo_target(key: str, value: Any) -> float:
    """The one reader of a latency target in seconds, wherever it is given (a scenario's slo, --slo, the Python API,
    the web page): `key` names it ('tpot_p99'). A number is seconds; text needs its unit ('2s', '50ms'): text
    without one is refused (a quoted '2' had been two seconds to a scenario and refused by plan serve). A TPOT of a
    second or more given as a number is a unit slip ('tpot_p99: 50' meant 50 ms), refused rather than read as 50 s;
    with its unit ('1.5s') it stands. SLOValueError names the problem and a time that fits."""
    tpot = key.startswith("tpot")
    bare = bare_seconds(value)
    bare = bare if bare is not None and math.isfinite(bare) and bare > 0 else None  # else slo_seconds says why
    if bare is not None and isinstance(value, str):
        seconds = bare / 1e3 if tpot and bare >= 1 else bare  # a TPOT of '50' meant milliseconds
        raise SLOValueError(f"'{value}' has no unit", key, seconds)
    if bare is not None and tpot and bare >= 1:
        raise SLOValueError(
            f"{bare:g} s per output token is not a plausible target (for {bare:g} seconds, write '{bare:g}s')",
            key,
            bare / 1e3,
        )
    try:
        return slo_seconds(value)
    except ValueError as exc:
        raise SLOValueError(str(exc), key) from None


def slo_key(given: Any) -> str:
    """The SLO_KEYS name of a key as given: the scenario's name for it ('ttft_p99_s', DESIGN.md's contract) is the
    same target, wherever it is given; any other key is one line with the near keys ('ttft_p95': 'ttft_p90',
    'ttft_p99')."""
    name = str(given)
    return one_of(name.removesuffix("_s") if name.removesuffix("_s") in SLO_KEYS else name, SLO_KEYS, "SLO key")


def named_target(given: str, value: Any) -> float:
    """slo_target for a key as given (slo_key): a '_s' name says seconds, so text that is a bare number ('2') reads
    as that many seconds there, as a scenario's slo reads it; under SLO_KEYS' own names it needs its unit."""
    bare = bare_seconds(value) if isinstance(value, str) and given.endswith("_s") else None
    return slo_target(slo_key(given), value if bare is None else bare)


def read_slo(slo: Any) -> dict[str, float]:
    """A mapping of SLO keys to targets (SLO_KEYS; each read by slo_target) in seconds, as the Python API and the
    web page give it ({'ttft_p99': 2.0, 'tpot_p99': '50ms'}), or one line naming the problem and the fix."""
    if not isinstance(slo, Mapping):
        raise ChipwiseError(f"SLO {slo!r} is not a mapping. Fix: give e.g. {{'ttft_p99': 2.0, 'tpot_p99': 0.05}}.")
    out: dict[str, float] = {}
    for given, value in slo.items():
        key = slo_key(given)
        if key in out:
            raise ChipwiseError(f"SLO key '{key}' is given twice (as {key} and {key}_s). Fix: give it once.")
        try:
            out[key] = named_target(str(given), value)
        except SLOValueError as exc:
            raise ChipwiseError(f"SLO {given} = {exc.problem}. Fix: {exc.fix()}.") from None
    return out


def parse_slo(text: str, required: bool = False) -> dict[str, float]:
    """'ttft_p99=2s,tpot_p99=50ms' -> {'ttft_p99': 2.0, 'tpot_p99': 0.05}; every value needs a unit (s, ms or us, in
    any case: slo_target) but under a key's scenario name ('ttft_p99_s=2': named_target), each key at most once.
    Text that names no target ('', ',') is one line: it had meant no SLO to plan serve, dropped plan lifecycle's
    default, and was refused by plan fleet. Where targets are `required` (plan fleet's --slo), the fix offers no
    leaving --slo out, which that command refuses."""
    if not text.replace(",", "").strip():
        leave_out = (
            ""
            if required
            else ", or leave --slo out (plan serve then plans with no SLO, plan lifecycle with its default)"
        )
        raise ChipwiseError(f"--slo '{text}' names no latency target. Fix: give e.g. --slo {SLO_EXAMPLE}{leave_out}.")
    out: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        given, sep, value = (part.strip() for part in item.partition("="))
        given = given.lower()
        if not sep or not given or not value:
            raise ChipwiseError(
                f"SLO item '{item.strip()}' is not KEY=VALUEUNIT. Fix: write e.g. --slo ttft_p99=2s,tpot_p99=50ms."
            )
        key = slo_key(given)
        if key in out:
            raise ChipwiseError(f"SLO key '{key}' is given twice. Fix: give each key once.")
        try:
            out[key] = named_target(given, value)
        except SLOValueError as exc:  # text only: the fix is a time with its unit
            raise ChipwiseError(f"SLO {key}={exc.problem}. Fix: write e.g. {key}={exc.example}.") from None
    return out


class SLO(StrictModel):
    """Latency targets, any subset: each read by slo_target as plan serve, the Python API and the web page read
    theirs (a number is seconds, text needs its unit: '2s', '50ms'), but for quoted numbers, which these keys' _s
    names as seconds ('ttft_p99_s: "2"' is 2 s; 'ttft_p99: "2"' names no unit and is refused)."""

    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p90_s: float | None = None
    tpot_p99_s: float | None = None
    e2e_p50_s: float | None = None
    e2e_p90_s: float | None = None
    e2e_p99_s: float | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: ValidationInfo) -> Any:
        return value if value is None else named_target(str(info.field_name), value)

    def targets(self) -> dict[str, float]:
        """{'ttft_p99': 2.0, ...} for the targets that are set."""
        return {k.removesuffix("_s"): float(v) for k, v in self.model_dump().items() if v is not None}
