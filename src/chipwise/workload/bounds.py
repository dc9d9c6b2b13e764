"""The largest counts a user may give (chips, tokens, requests/s, users, requests simulated), each a Bound that
says why and what to give instead, and the pydantic types of counts within them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from chipwise.errors import ChipwiseError
from chipwise.workload.counts import IntCount, parse_count

PositiveFloat = Annotated[float, BeforeValidator(parse_count), Field(gt=0, allow_inf_nan=False)]

#: The most requests a scenario simulates (as `plan serve --requests`): a million take about a minute.
MAX_SIMULATED = 1_000_000
#: The most requests/s (or concurrent users) a load may name: a million chips at a thousand each, far past any
#: fleet; 1e308 req/s overflowed the chip count into an internal error.
MAX_LOAD = 1e9
#: The most chips a serving deployment may have: the million-chip fleet MAX_LOAD is sized by, the largest DESIGN.md
#: plans for ("from one chip to a million"); a billion ran the simulator for minutes and took gigabytes.
MAX_CHIPS = 1_000_000
#: The longest request length (tokens) read from a scenario or a trace: a billion, a hundred times the longest
#: context any model states (10M); past it lengths would overflow the simulator's integers.
MAX_TOKENS = 1_000_000_000
#: The largest coefficient of variation of the gaps between arrivals (gamma shape 1/cv^2). At 100 the gaps already
#: underflow: 93% of 2,000 are exactly 0 and one holds 99.8% of the span (an offline batch in a burst or two); at
#: 1,000 every gap is 0 and the times were NaN, and 1e308 overflowed cv^2.
MAX_BURSTINESS = 100.0


def shown(value: float) -> str:
    """A number as an error message shows it: 1,024, 1e+12, or 'a 401-digit number' (past a float's range)."""
    if isinstance(value, int) and abs(value) < 10**15:
        return f"{value:,}"
    try:
        return f"{float(value):g}"
    except OverflowError:
        return f"a {len(str(abs(int(value))))}-digit number"


@dataclass(frozen=True)
class Bound:
    """The largest count of one kind (chips, tokens, requests/s, users) a user may give, and why."""

    limit: float
    unit: str
    beyond: str  # what a larger count would be
    fix: str

    def problem(self, value: float) -> str | None:
        """What is wrong with `value` ('1e+12 requests/s is more than ...'), or None when it is within the bound."""
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value:g} {self.unit} is not a finite number"
        if value <= self.limit:
            return None
        return f"{shown(value)} {self.unit} is {self.beyond} (at most {self.limit:,.0f})"

    def require(self, value: float, name: str) -> None:
        """One line when `name`'s count (an option, a bucket's key) is past the bound."""
        problem = self.problem(value)
        if problem is not None:
            raise ChipwiseError(f"{name} {problem}. Fix: {self.fix}.")

    def check(self, value: Any) -> Any:
        """A pydantic after-validator: the value within the bound, or ValueError saying why and what to give."""
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(f"{problem}: {self.fix}")
        return value


BURSTINESS = Bound(
    MAX_BURSTINESS,
    "(the gaps' coefficient of variation)",
    "past where the gamma gaps between arrivals underflow to 0, all requests in a burst or two",
    f"give at most {MAX_BURSTINESS:g} (1 is Poisson; offline: true sends every request at once)",
)

FLEET_LOAD = "more than a fleet of a million chips serves"
CHIPS = Bound(MAX_CHIPS, "chips", "past the largest fleet planned", "give the chips of one deployment")
TOKENS = Bound(MAX_TOKENS, "tokens", "past any model's context", "give a realistic length")
RATE = Bound(MAX_LOAD, "requests/s", FLEET_LOAD, "give the load of one deployment")
USERS = Bound(MAX_LOAD, "users", FLEET_LOAD, "give the users of one deployment")
BATCH = Bound(MAX_LOAD, "requests", FLEET_LOAD, "give the batch of one replica")
#: counts a scenario gives, within their bounds
ChipCount = Annotated[IntCount, AfterValidator(CHIPS.check)]
TokenCount = Annotated[IntCount, AfterValidator(TOKENS.check)]
TokenFloat = Annotated[PositiveFloat, AfterValidator(TOKENS.check)]
Rate = Annotated[PositiveFloat, AfterValidator(RATE.check)]
UserCount = Annotated[IntCount, AfterValidator(USERS.check)]
BatchCount = Annotated[IntCount, AfterValidator(BATCH.check)]
