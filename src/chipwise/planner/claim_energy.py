"""Claim 1's energy-efficiency checks (1d, 1e: a Trn3 UltraServer's tokens per joule over a Trn2 UltraServer's;
planner.claim_hardware) and the power arithmetic under them: a run's IT power at a chip TDP, the TDP at which a
target ratio is reached, and texts saying where each power figure comes from."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from chipwise.catalog.overrides import tdp_moved_power
from chipwise.economics.power import host_follows_tdp, power_model
from chipwise.hardware.build import host_power_fraction
from chipwise.hardware.objects import System
from chipwise.perf.device import power_scale
from chipwise.planner.claim_runs import ClaimRuns
from chipwise.planner.claim_verdicts import ESTIMATED, HOLDS, NOT_ON_WORKLOAD, UNCHECKABLE, Check, leans
from chipwise.planner.claim_wording import (
    at_most,
    figure_is_estimate,
    figure_label,
    holds_from_ratio,
    holds_from_share,
    times,
    times_against,
)

#: '40% better' and '4x' as chipwise reads a claimed figure (claim_wording.holds_from_share, holds_from_ratio): 1d had
#: held from 1.4, where 3a's '50%' holds from 49.5%, and 1e from 4.0, where 1c's '4x' held from 3.9
BETTER_40 = 1 + holds_from_share(0.40)  # 1.395
TIMES_4 = holds_from_ratio(4.0)  # 3.95


def _it_power_w(runs: ClaimRuns, system: System, run: dict[str, Any], tdp_w: float) -> float:
    """IT power of `run` with `system`'s chips at `tdp_w`: the chips the plan keeps busy at the busy load, those it
    leaves idle at idle power (as planner.training prices the run's energy), the system's power moved as
    `--set CHIP.tdp` moves it: a published system power keeps its host, network and fans (tdp_moved_power), a system
    with none takes host_power_fraction of the TDP as its host, which moves with it (economics.power)."""
    chip = system.chip
    moved = replace(
        system, chip=replace(chip, tdp=tdp_w), power=tdp_moved_power(system.power, system.chips, tdp_w - chip.tdp)
    )
    power = power_model(runs.catalog, moved, scaleout=run["chips"] > system.chips)
    chips = int(run["chips"])
    used = min(chips, int(run["chips_used"]))
    return power.busy_w * used + power.idle_w * (chips - used)


def _tdp_for(runs: ClaimRuns, system: System, run: dict[str, Any], ratio: float, target: float) -> tuple[float, float]:
    """The TDP of `system`'s chip at which `run`'s tokens per joule over another run's, now `ratio`, reach `target`,
    and the ratio a 0 W chip would give; the TDP is below 0 where no TDP reaches it.

    Tokens per joule go as 1 / IT power (the PUE and the plan stay; a chip with no reference TDP keeps its speed,
    perf.device.power_scale), and IT power is affine in the TDP, the host held or moving with it as --set CHIP.tdp
    holds or moves it (_it_power_w), so from the power at today's TDP (W_now) and at 0 W (W_0):

        TDP = TDP_now x (W_now x ratio / target - W_0) / (W_now - W_0)

    The host had been taken as 0.3 of the TDP, scaling with it, while --set CHIP.tdp held it: 646 W was printed
    for 1.4x, and set, gave 1.24x. A system with no published power (the Trn3 UltraServer) now has a host of
    host_power_fraction x TDP, which --set CHIP.tdp moves: W_0 is then 0 (the network aside), and the TDP is
    TDP_now x ratio / target, any target within reach (1d's text had still said the host was held).
    """
    tdp = system.chip.tdp
    now, floor = _it_power_w(runs, system, run, tdp), _it_power_w(runs, system, run, 0.0)
    # a system power that the chips' TDPs alone take leaves 0 W at a 0 W chip: any ratio then
    at_zero = ratio * now / floor if floor > 0 else math.inf
    return tdp * (now * ratio / target - floor) / (now - floor), at_zero


def _tdp_text(runs: ClaimRuns, system: System, found: tuple[float, float] | None, label: str) -> str:
    """'Trn3 would need <= 538 W per chip for 40% (1.395x as it rounds) ...', or why no TDP would do (`found`:
    _tdp_for's answer, None where there is no run to ask; `label`: the claim's figure as the text names it). The TDP is
    cut down to a whole watt, so that the figure printed, set, reaches the target (629.88 W had printed '<= 630 W',
    and --set trn3.tdp=630 gave 1.3997x)."""
    if found is None:
        return ""
    exact, at_zero = found
    watts = at_most(exact, 0) if exact > 0 else exact
    power = power_model(runs.catalog, system, scaleout=False)
    follows = host_follows_tdp(runs.catalog, system)
    if watts <= 0:
        return f"no Trn3 TDP gives {label}: at 0 W it gets {times(at_zero)}, " + (
            "its scale-out network drawing the rest"  # the host and idle chips go to 0 W with the TDP
            if follows
            else f"its host and network ({power.host_w:,.0f} W a chip) and idle chips drawing the rest"
        )
    share = power.host_w / system.chip.tdp
    host = (
        # a system with no published power: its host is a share of the TDP and moves with it
        f"its host and network moving with it at {share:.2f} of the TDP, {watts * share:,.0f} W a chip, as "
        "--set trn3.tdp moves them"
        if follows
        else f"its host and network held at {power.host_w:,.0f} W a chip, as --set trn3.tdp holds them"
    )
    return f"Trn3 would need <= {watts:,.0f} W per chip for {label}, {host}{_speed_text(system, watts)}"


def _speed_text(system: System, watts: float) -> str:
    """What a chip held to `watts` does to its speed: its matrix units slow (perf.device.power_scale) where its
    efficiency family gives the power its fractions were measured at; where it gives none (reference_tdp 0 W: no
    derating), the rate is kept, and the text says so rather than imply it (1e had read 'Trn3 would need <= 292 W per
    chip for 4x' with no word that a 1,000 W part at 29% of its TDP is taken at full speed)."""
    chip = system.chip
    ref = chip.efficiency.reference_tdp_w
    if power_scale(watts, ref) < 1.0:
        return f", where its matrix units would also slow to {power_scale(watts, ref):.0%} (rated at {ref:,.0f} W)"
    if ref > 0 or watts >= chip.tdp:
        return ""
    family = chip.efficiency.family
    return (
        f", at today's speed: chipwise knows no power at which {family}'s efficiencies were measured "
        f"(efficiency.{family}.reference_tdp is {ref:,.0f} W), so it does not slow the chip, though a real part held "
        f"to {watts / chip.tdp:.0%} of its {chip.tdp:,.0f} W TDP would likely run slower"
    )


def host_range(runs: ClaimRuns, system: System, run: dict[str, Any], eff: float) -> str:
    """'; at the catalog's other host shares for Trn3 (0.389, 0.615 of the TDP): 1.24x to 0.98x' where `system`'s host
    share lists alternatives, or '': tokens per joule go as 1 / IT power, and the host moves it by the share's change x
    the TDP on every chip of the run (busy or idle, the host draws the same)."""
    entry = runs.catalog.systems.get(system.id)
    fig = entry.host_power_fraction if entry is not None else None
    alternatives = [a.value for a in fig.alternatives if isinstance(a.value, int | float)] if fig is not None else []
    if not alternatives or not math.isfinite(eff) or not host_follows_tdp(runs.catalog, system):
        return ""
    tdp, share = system.chip.tdp, host_power_fraction(runs.catalog, system.id).value
    now = _it_power_w(runs, system, run, tdp)
    ratios = [eff * now / (now + (alt - share) * tdp * run["chips"]) for alt in alternatives]
    shares = ", ".join(f"{a:g}" for a in alternatives)
    return f"; at the catalog's other host shares for Trn3 ({shares} of the TDP, against {share:g}): " + ", ".join(
        times(r) for r in ratios
    )


def host_ref(runs: ClaimRuns, system: System) -> Any:
    """Where `system`'s host share comes from: its power figure, or for a system with none its host_power_fraction of
    the TDP (the power the loader fills in read as an estimate even where that fraction was set on the command
    line)."""
    return (
        host_power_fraction(runs.catalog, system.id)
        if host_follows_tdp(runs.catalog, system)
        else system.provenance.get("power")
    )


def _power_text(runs: ClaimRuns, name: str, system: System) -> str:
    """'Trn3 1,000 W [estimate] + 389 W host and network [estimate]': a chip's TDP and its share of the rest of
    its system, each with where it came from."""
    host = power_model(runs.catalog, system, scaleout=False).host_w
    return (
        f"{name} {system.chip.tdp:,.0f} W [{figure_label(system.chip.provenance.get('tdp'))}] + {host:,.0f} W host and "
        f"network [{figure_label(host_ref(runs, system))}]"
    )


def energy_checks(
    runs: ClaimRuns,
    trn2: System,
    trn3: System,
    r3: dict[str, Any] | str,
    eff: float,
    fp8_missing: str,
    run: str = "Llama-3.1-70B FP8",
) -> list[Check]:
    """Checks 1d ('40% better energy efficiency') and 1e ('4x'): `eff`, the Trn3 UltraServer's FP8 training tokens
    per joule over the Trn2 UltraServer's (`r3`: the Trn3 run), against each target, with the power figures it turns
    on and the Trn3 TDP that would reach the target; `fp8_missing`: 'FP8 no plan for ... (REASON)' where an FP8 run
    found no plan, or ''; `run`: the workload's model and precision as the texts name them."""
    # the power tokens/J turn on: each chip's TDP and its share of the rest of its system (host, switches), neither
    # published for Trainium; figures set on the command line are taken as given
    refs = (
        trn2.chip.provenance.get("tdp"),
        trn3.chip.provenance.get("tdp"),
        host_ref(runs, trn2),
        host_ref(runs, trn3),
    )
    power_estimated = any(figure_is_estimate(ref) for ref in refs)
    power_note = f"power per chip: {_power_text(runs, 'Trn2', trn2)}; {_power_text(runs, 'Trn3', trn3)}" + (
        " (AWS publishes neither: chipwise estimates)" if power_estimated else ""
    )

    # one figure for 1d and 1e, to the digits that keep it on its side of both targets
    shown = times_against(eff, (BETTER_40, TIMES_4))

    def efficiency(check: str, claim: str, target: float, label: str, computed: str) -> Check:
        """`computed`: the text the ratio follows (shown); `label`: the claimed figure as the texts name it."""
        found = _tdp_for(runs, trn3, r3, eff, target) if isinstance(r3, dict) and math.isfinite(eff) else None
        threshold = _tdp_text(runs, trn3, found, label)
        verdict = (
            UNCHECKABLE
            if fp8_missing
            else ESTIMATED
            if power_estimated
            else HOLDS
            if eff >= target
            else NOT_ON_WORKLOAD
        )
        computed += shown
        lean = f"{leans(eff >= target)} ({shown}); " if verdict == ESTIMATED else ""
        numbers: dict[str, Any] = {"tokens_per_joule_ratio": eff}
        if found is not None:
            watts, numbers["ratio_at_0_w"] = found
            numbers["trn3_tdp_for_target_w"] = watts if watts > 0 else math.nan  # none reaches the target
        return Check(
            check,
            claim,
            computed if not fp8_missing else f"{run} training tokens per joule: no plan",
            verdict,
            (f"{fp8_missing}; " if fp8_missing else lean)
            + power_note
            + (host_range(runs, trn3, r3, eff) if isinstance(r3, dict) else "")
            + (f"; {threshold}" if threshold else ""),
            numbers,
        )

    return [
        efficiency(
            "1d",
            "40% better energy efficiency",
            BETTER_40,
            "40% (1.395x as it rounds)",
            f"{run} training tokens per joule, Trn3 / Trn2 UltraServer: ",
        ),
        efficiency(
            "1e", "4x energy efficiency (AWS blog via AIwire)", TIMES_4, "4x (3.95x as it rounds)", "same computation: "
        ),
    ]
