"""Unit conversion at the edges: catalog figures are converted to SI when loaded, and back for display.

Inside chipwise every quantity is SI: FLOP/s, bytes, bytes/s, W, s, USD, USD/s, kg CO2e/J, events/s.
"""

from __future__ import annotations

import math
import re
from typing import Final

from chipwise.errors import ChipwiseError

_K = 1e3
_G = 1e9
_T = 1e12
_KI = 1024.0
_GI = 1024.0**3
_HOUR = 3600.0
_YEAR = 365.25 * 24 * _HOUR
_MONTH = _YEAR / 12

# unit -> (quantity, factor to SI)
UNITS: Final[dict[str, tuple[str, float]]] = {
    "FLOP/s": ("flops", 1.0),
    "GFLOP/s": ("flops", _G),
    "TFLOP/s": ("flops", _T),
    "PFLOP/s": ("flops", 1e15),
    "TOP/s": ("flops", _T),
    "B": ("bytes", 1.0),
    "KB": ("bytes", _K),
    "MB": ("bytes", 1e6),
    "GB": ("bytes", _G),
    "TB": ("bytes", _T),
    "KiB": ("bytes", _KI),
    "MiB": ("bytes", _KI**2),
    "GiB": ("bytes", _GI),
    "TiB": ("bytes", _KI**4),
    "B/s": ("bandwidth", 1.0),
    "MB/s": ("bandwidth", 1e6),
    "GB/s": ("bandwidth", _G),
    "TB/s": ("bandwidth", _T),
    "GiB/s": ("bandwidth", _GI),
    "TiB/s": ("bandwidth", _KI**4),
    "Gb/s": ("bandwidth", _G / 8),
    "Tb/s": ("bandwidth", _T / 8),
    "W": ("power", 1.0),
    "kW": ("power", _K),
    "MW": ("power", 1e6),
    "s": ("time", 1.0),
    "ms": ("time", 1e-3),
    "us": ("time", 1e-6),
    "ns": ("time", 1e-9),
    "min": ("time", 60.0),
    "h": ("time", _HOUR),
    "day": ("time", 24 * _HOUR),
    "year": ("time", _YEAR),
    "USD": ("money", 1.0),
    "USD/s": ("money_rate", 1.0),
    "USD/h": ("money_rate", 1.0 / _HOUR),
    "USD/month": ("money_rate", 1.0 / _MONTH),
    "USD/year": ("money_rate", 1.0 / _YEAR),
    "USD/J": ("energy_price", 1.0),
    "USD/kWh": ("energy_price", 1.0 / 3.6e6),
    "USD/W/s": ("power_price", 1.0),
    "USD/kW/month": ("power_price", 1.0 / (_K * _MONTH)),
    "USD/B/s": ("storage_price", 1.0),
    "USD/TB/month": ("storage_price", 1.0 / (_T * _MONTH)),
    # what a facility costs to build per W of critical IT load it holds (USD/kW, as the surveys quote it)
    "USD/W": ("capacity_price", 1.0),
    "USD/kW": ("capacity_price", 1.0 / _K),
    "USD/MW": ("capacity_price", 1.0 / 1e6),
    "kgCO2e/J": ("carbon_intensity", 1.0),
    "gCO2e/kWh": ("carbon_intensity", 1e-3 / 3.6e6),
    # kg per kWh (= t per MWh), as grid factors are often quoted (CCF's SERC 0.000379069 t/kWh is 0.379 kgCO2e/kWh)
    "kgCO2e/kWh": ("carbon_intensity", 1.0 / 3.6e6),
    # a CO2-only grid factor (combustion, no other gases: the EIA's US rate), filed as one and counted as CO2e
    "gCO2/kWh": ("carbon_intensity", 1e-3 / 3.6e6),
    # events per unit time (failures per chip-hour): written '/h', not '1/h', so that '2e-5/h' reads as the number
    # and its unit (the number runs as long as it can: '2e-51/h' is 2e-51 per hour)
    "/s": ("rate", 1.0),
    "/h": ("rate", 1.0 / _HOUR),
    "1": ("ratio", 1.0),
    "%": ("ratio", 0.01),
    "": ("text", 1.0),
}

SI_UNIT: Final[dict[str, str]] = {
    "flops": "FLOP/s",
    "bytes": "B",
    "bandwidth": "B/s",
    "power": "W",
    "time": "s",
    "money": "USD",
    "money_rate": "USD/s",
    "energy_price": "USD/J",
    "power_price": "USD/W/s",
    "storage_price": "USD/B/s",
    "capacity_price": "USD/W",
    "rate": "/s",
    "carbon_intensity": "kgCO2e/J",
    "ratio": "1",
    "text": "",
}

SECONDS_PER_HOUR: Final = _HOUR
SECONDS_PER_DAY: Final = 24 * _HOUR
SECONDS_PER_YEAR: Final = _YEAR
SECONDS_PER_MONTH: Final = _MONTH
JOULES_PER_KWH: Final = 3.6e6
BYTES_PER_GIB: Final = _GI


def quantity(unit: str) -> str:
    """The physical quantity a unit measures ('bandwidth', 'bytes', ...)."""
    try:
        return UNITS[unit][0]
    except KeyError:
        known = ", ".join(u for u in UNITS if u)
        raise ChipwiseError(f"unknown unit '{unit}'. Fix: use one of {known}.") from None


def to_si(value: float, unit: str) -> float:
    """Convert a value in `unit` to SI (e.g. 3.35 TB/s -> 3.35e12 B/s)."""
    quantity(unit)
    return float(value) * UNITS[unit][1]


def from_si(value: float, unit: str) -> float:
    """Convert an SI value to `unit` (e.g. 3.35e12 B/s -> 3.35 TB/s)."""
    quantity(unit)
    return float(value) / UNITS[unit][1]


def usd(value: float) -> str:
    """US dollars for display, in the unit that suits them: '$1.20T', '$6.88M', '$35k', '$412', '$2.16'; '-' for
    none (interfaces.format and the claims' texts share it: 3b had printed a small fleet's cost as '$0M')."""
    if value is None or math.isnan(value):
        return "-"
    a = abs(value)
    if a >= 1e15:
        return f"${value:.2e}"
    if a >= 1e12:
        return f"${value / 1e12:,.2f}T"
    if a >= 1e9:
        return f"${value / 1e9:,.2f}B"
    if a >= 1e6:
        return f"${value / 1e6:,.2f}M"
    if a >= 1e4:
        return f"${value / 1e3:,.0f}k"
    if a >= 100:
        return f"${value:,.0f}"
    return f"${value:,.2f}"


#: other spellings of a unit that --set accepts (vendors write TFLOPS and TOPS; networks Gbps; a rate 1/h), to their
#: unit
UNIT_SPELLINGS: Final[dict[str, str]] = {
    "FLOPS": "FLOP/s",
    "GFLOPS": "GFLOP/s",
    "TFLOPS": "TFLOP/s",
    "PFLOPS": "PFLOP/s",
    "TOPS": "TOP/s",
    "Gbps": "Gb/s",
    "Tbps": "Tb/s",
    "GBps": "GB/s",
    "TBps": "TB/s",
    "1/s": "/s",
    "1/h": "/h",
}

#: letters whose case carries meaning in a unit (B byte, b bit; M mega, m milli): never read the other way
_CASE_MATTERS = frozenset("bBmM")

#: a number at the start of a quantity: decimal or exponent notation, or Python's inf and nan (refused later as not
#: finite, with their own message); what follows it is the unit
_NUMBER = re.compile(r"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE)


def units_of(qty: str) -> list[str]:
    """The units that measure `qty` ('power': W, kW, MW)."""
    return [u for u, (q, _) in UNITS.items() if q == qty and u]


def resolve_unit(text: str) -> str:
    """The catalog unit `text` names: itself, a vendor's spelling of it (TFLOPS, Gbps) or another case of the one
    unit it can be (w, tflop/s, KW), where no letter whose case means something (B byte / b bit, M mega / m milli)
    differs. Raises ChipwiseError naming the accepted units otherwise ('tb/s' is TB/s or Tb/s: refused)."""
    t = text.strip()
    if t in UNITS:
        return t
    if t in UNIT_SPELLINGS:
        return UNIT_SPELLINGS[t]
    spellings = {**{u: u for u in UNITS if u}, **UNIT_SPELLINGS}
    matches = {spelling: unit for spelling, unit in spellings.items() if spelling.lower() == t.lower()}
    units = sorted(set(matches.values()))
    if len(units) > 1:
        raise ChipwiseError(f"unit '{t}' is ambiguous: {' or '.join(units)}. Fix: write the one meant as shown.")
    if units:
        spelling = next(iter(matches))
        if all(a == b or a not in _CASE_MATTERS for a, b in zip(t, spelling, strict=True)):
            return units[0]
        raise ChipwiseError(
            f"unit '{t}' is not '{spelling}' (the case of B/b and M/m changes the unit). Fix: write '{spelling}' "
            "if that is meant."
        )
    known = ", ".join(u for u in UNITS if u)
    raise ChipwiseError(f"unknown unit '{t}'. Fix: use one of {known} (TFLOPS, TOPS and Gbps are read too).")


def parse_quantity(text: str) -> tuple[float, str]:
    """Parse '6TB/s', '6 TB/s', '6e12', '900 TFLOPS' or '2s' into (value, unit); unit '' when none is given.

    The number is read first, as long as it runs, and the rest is the unit: a unit never takes a number's digits
    (the ratio unit '1' had read '1.1' as 1.0 and '6e11' as 60)."""
    s = text.strip()
    m = _NUMBER.match(s)
    if m is None:
        raise ChipwiseError(f"'{text}' is not a number. Fix: give a number, optionally with a unit (6e12, 6TB/s).")
    rest = s[m.end() :].strip()
    if rest[:1] in (",", "_") and rest[1:2].isdigit():
        plain = s.replace(",", "").replace("_", "")
        raise ChipwiseError(f"'{text}' has a digit separator. Fix: write the number without separators ({plain}).")
    value = float(m.group(1))
    if not rest:
        return value, ""
    try:
        return value, resolve_unit(rest)
    except ChipwiseError as exc:
        raise ChipwiseError(f"'{text}': {exc}") from None
