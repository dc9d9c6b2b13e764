"""The vocabulary of `chipwise claims` (planner.claims): the verdicts a check can get, the Check and Claim records
a report is made of, and where the claims were made.

Each claim is split into checks. A check states what was claimed, what chipwise computes for it (on a named
workload where the claim is about speed, cost or energy), and a verdict:

- holds: chipwise's numbers support it, on published figures (or figures given on the command line);
- holds only at peak specs: the spec-sheet ratio supports it, the workload does not;
- does not hold on this workload: the workload does not support it (nor, for speed claims, the spec);
- does not hold: a claim about a spec or a price that chipwise's sourced figure does not support (no workload in it);
- rests on estimates: the verdict turns on a figure that is not published and that chipwise estimated (a Trainium
  price, a Trainium or GPU unit price, Trainium power, a GPU server's host share); `why` names it, says which way
  chipwise's estimates lean and, where it can, the value of it that would decide the claim. Such a check is not
  called holding or failing on an estimate;
- cannot be checked: nothing chipwise has can test it (the figures are the claim itself, as Trainium4's are, or no
  run of the kind has been published), with the numbers chipwise gets where it has them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chipwise.catalog.loader import Catalog

HOLDS = "holds"
PEAK_ONLY = "holds only at peak specs"
NOT_ON_WORKLOAD = "does not hold on this workload"
NOT_SO = "does not hold"  # a spec or price claim: no workload in it
ESTIMATED = "rests on estimates"  # turns on an unpublished figure chipwise estimated: which way it leans is in `why`
UNCHECKABLE = "cannot be checked"
VERDICTS: tuple[str, ...] = (HOLDS, PEAK_ONLY, NOT_ON_WORKLOAD, NOT_SO, ESTIMATED, UNCHECKABLE)

#: Where the claims were made. Keys of the catalog's sources are expanded to their citation.
LAUNCH_COVERAGE = "re:Invent 2025 launch coverage as collected in chipwise issue 5 (original article not located)"
CLOUDEXPAT = "http://www.cloudexpat.com/blog/aws-trainium-vs-nvidia-h100 ('AWS claims up to 50% lower training costs')"


@dataclass
class Check:
    """One checkable part of a claim."""

    id: str
    claim: str
    computed: str
    verdict: str
    why: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "claim": self.claim,
            "computed": self.computed,
            "verdict": self.verdict,
            "why": self.why,
            "numbers": self.numbers,
        }


@dataclass
class Claim:
    number: int
    text: str
    made: list[str]
    workload: str
    checks: list[Check]

    @property
    def verdict(self) -> str:
        """The headline check's verdict (the first check carries the claim's main number)."""
        return self.checks[0].verdict

    def record(self, catalog: Catalog) -> dict[str, Any]:
        return {
            "claim": self.number,
            "text": self.text,
            "made": [catalog.source_text(s) for s in self.made],
            "made_keys": self.made,
            "workload": self.workload,
            "verdict": self.verdict,
            "checks": [c.record() for c in self.checks],
        }


def leans(holds: bool) -> str:
    """Which way a verdict that rests on estimates leans."""
    return "on chipwise's estimates it would hold" if holds else "on chipwise's estimates it would not hold"
