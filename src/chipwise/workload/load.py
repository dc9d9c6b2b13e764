"""The load a serving deployment is under: an open-loop arrival rate (Poisson, or bursty gamma arrivals with
`burstiness` = coefficient of variation of the gaps), a closed loop of `concurrency` users, all requests at once
(`offline: true`), or a trace's own arrival times; and the one reader of the load a request names."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from chipwise.errors import ChipwiseError
from chipwise.workload.bounds import RATE, USERS, shown
from chipwise.workload.counts import count_value, is_count

LoadKind = Literal["rate", "closed", "offline", "trace"]


@dataclass(frozen=True)
class Load:
    """How requests arrive: 'rate' (open loop, Poisson or gamma), 'closed' (concurrency users with no think
    time), 'offline' (all at t=0) or 'trace' (the trace's arrival times)."""

    kind: LoadKind
    rate: float = 0.0
    concurrency: int = 0
    burstiness: float = 1.0

    def label(self) -> str:
        if self.kind == "rate":
            rate = f"{self.rate:,.10g} req/s"  # 10,000 req/s, 0.5 req/s; never 1e+06
            return rate + (f" (burstiness {self.burstiness:g})" if self.burstiness != 1.0 else "")
        if self.kind == "closed":
            return f"{self.concurrency:,} concurrent user" + ("s" if self.concurrency != 1 else "")
        return "offline (all requests at once)" if self.kind == "offline" else "trace arrivals"


def load_of(rate: float | None, concurrency: int | None, offline: bool, flag: str = "--") -> Load:
    """The one load a request names: an arrival rate, a number of concurrent users, or offline (`flag` prefixes
    the option names in the error, '--' on the command line). A number may come as text ('20', '2k'), as a
    scenario and the web page take it."""
    if [rate is not None, concurrency is not None, offline].count(True) != 1:
        raise ChipwiseError(
            f"give exactly one load: {flag}rate (requests/s), {flag}concurrency (users) or {flag}offline. "
            "Fix: pick one."
        )
    rate, concurrency = count_value(rate), count_value(concurrency)
    if rate is not None:
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate < math.inf:
            given = repr(rate) if isinstance(rate, bool) or not isinstance(rate, int | float) else shown(rate)
            raise ChipwiseError(f"{flag}rate {given} is not a positive number of requests/s. Fix: give e.g. 20.")
        RATE.require(rate, f"{flag}rate")
        return Load("rate", rate=float(rate))
    if concurrency is not None:
        if not is_count(concurrency):
            raise ChipwiseError(
                f"{flag}concurrency {concurrency!r} is not a positive whole number of users. Fix: give e.g. 64."
            )
        USERS.require(concurrency, f"{flag}concurrency")
        return Load("closed", concurrency=int(concurrency))
    return Load("offline")
