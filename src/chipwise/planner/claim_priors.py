"""Where a claim's verdict turns on a chip family's unfitted efficiencies (planner.claims): the catalog's priors for a
family no published training run is in the fit of (hardware.objects.Efficiency.unfitted: Trainium2, Trainium3 and
Trainium4 today), whose ratio to a claimed figure sits within PRIOR_BAND of it, rests on those estimates as a TDP does
(claim_verdicts.ESTIMATED), with its lean and the efficiency that would decide it.

The band is one for every such check: chipwise's track record for AWS chips has half of its predictions within 9%
and four in five within 25%, so a ratio within 10% of its threshold on unfitted priors is no verdict (1b's 3.967x
against 'more than 4x' had read 'holds only at peak specs', and 4.00x with Trainium3's FP8 matmul at 0.66).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from chipwise.hardware.objects import System
from chipwise.planner.claim_verdicts import leans
from chipwise.planner.claim_wording import times

#: a ratio this close to its threshold (as a share of it), on a family's unfitted efficiencies, rests on them
PRIOR_BAND = 0.10
#: how far the secant of deciding_matmul steps the efficiency to see how the ratio moves with it
STEP = 0.05


def unfitted(systems: tuple[System, ...]) -> list[System]:
    """The systems whose chip family's efficiencies are unfitted priors, one per family."""
    seen: dict[str, System] = {}
    for s in systems:
        if s.chip.efficiency.unfitted:
            seen.setdefault(s.chip.efficiency.family, s)
    return list(seen.values())


def near(ratio: float, target: float) -> bool:
    """Whether `ratio` is within PRIOR_BAND of `target` (as a share of the target)."""
    return math.isfinite(ratio) and abs(ratio / target - 1.0) <= PRIOR_BAND


def with_matmul(system: System, precision: str, value: float) -> System:
    """`system` with its chip's large-GEMM fraction of `precision` peak at `value` (a what-if of the prior)."""
    eff = system.chip.efficiency
    return replace(system, chip=replace(system.chip, efficiency=replace(eff, matmul={**eff.matmul, precision: value})))


def deciding_matmul(
    system: System, precision: str, ratio: float, target: float, ratio_at: Callable[[System], float]
) -> float:
    """The GEMM fraction of `system`'s `precision` at which the ratio, now `ratio`, reaches `target`, by a secant
    through today's fraction and one STEP below it (`ratio_at`: the ratio with the system so changed); NaN where the
    ratio does not move with it."""
    now = system.chip.efficiency.matmul_fraction(precision)
    lower = now - STEP
    moved = ratio_at(with_matmul(system, precision, lower))
    if not (math.isfinite(moved) and moved != ratio):
        return math.nan
    return now + (target - ratio) * (now - lower) / (ratio - moved)


def prior_text(systems: list[System], precision: str) -> str:
    """'Trainium3's and Trainium2's training efficiencies are unfitted priors (a large FP8 GEMM at 0.65 and 0.60 of
    peak; no published run of either family is in the fit)'."""
    names = " and ".join(f"{s.chip.efficiency.family}'s" for s in systems)
    values = " and ".join(f"{s.chip.efficiency.matmul_fraction(precision):.2f}" for s in systems)
    return (
        f"{names} training efficiencies are unfitted priors (a large {precision.upper()} GEMM at {values} of peak; no "
        f"published run of {'either family' if len(systems) > 1 else 'the family'} is in the fit)"
    )


def band_text(target: float, unit: str = "x", claimed: str = "claimed") -> str:
    """'within 10% of the 4x claimed, inside chipwise's track record for AWS chips (half within 9%, four in five within
    25%)' (`claimed`: what the target is to the claim)."""
    return (
        f"within {PRIOR_BAND:.0%} of the {target:g}{unit} {claimed}, inside chipwise's track record for AWS chips "
        "(half within 9%, four in five within 25%)"
    )


def prior_why(
    priors: list[System],
    deciding: tuple[str, System, str],
    ratio: float,
    shown: str,
    target: float,
    holds: bool,
    ratio_at: Callable[[System], float],
    claimed: str = "claimed",
) -> str:
    """The why of a check whose ratio (`ratio`, as the check shows it: `shown`), within PRIOR_BAND of `target`, rests on
    `priors`' unfitted efficiencies: which way it leans (`holds`), the priors, and the GEMM fraction of the deciding
    system (`deciding`: its name in the texts, the system and the precision its run is in) at which the ratio reaches
    the target (deciding_matmul through `ratio_at`), with the --set that gives it, cut up to the hundredth it is
    printed to (1b, 5e)."""
    name, system, precision = deciding
    needed = deciding_matmul(system, precision, ratio, target, ratio_at)
    family = system.chip.efficiency.family
    decide = (
        f"; {name} at {needed:.3f} of its {precision.upper()} peak (--set efficiency.{family}.matmul.{precision}="
        f"{math.ceil(needed * 100) / 100:.2f}) would make it {times(target)}"
        if math.isfinite(needed)
        else ""
    )
    return (
        f"{leans(holds)} ({shown}); {prior_text(priors, precision)}, and {shown} is "
        f"{band_text(target, claimed=claimed)}{decide}; "
    )
