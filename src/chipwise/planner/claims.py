"""Check public claims about Trainium3 and Trainium4 (re:Invent, December 2025) against chipwise's models.

Each claim is split into checks. A check states what was claimed, what chipwise computes for it (on a named
workload where the claim is about speed, cost or energy), and a verdict:

- holds: chipwise's numbers support it, on published figures (or figures given on the command line);
- holds only at peak specs: the spec-sheet ratio supports it, the workload does not;
- does not hold on this workload: the workload does not support it (nor, for speed claims, the spec);
- does not hold: a claim about a spec or a price that chipwise's sourced figure does not support (no workload in it);
- rests on estimates: the verdict turns on a figure that is not published and that chipwise estimated (a Trainium
  price or unit price, Trainium power); `why` names it, says which way chipwise's estimates lean and, where it can,
  the value of it that would decide the claim. Such a check is not called holding or failing on an estimate;
- cannot be checked: nothing chipwise has can test it (the figures are the claim itself, as Trainium4's are, or no
  run of the kind has been published), with the numbers chipwise gets where it has them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.overrides import SET_ON_COMMAND_LINE, set_on_command_line, tdp_moved_power
from chipwise.economics.power import host_follows_tdp, power_model
from chipwise.economics.pricing import USER_PROVIDER, PriceQuote, latest_quotes, price_per_chip_hour
from chipwise.economics.tco import owned_tco
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.build import host_power_fraction
from chipwise.hardware.objects import System
from chipwise.perf.device import power_scale
from chipwise.planner.serving import predict_serving
from chipwise.planner.training import attach_economics, make_job
from chipwise.reliability.goodput import reliability_inputs
from chipwise.reliability.rates import interruption_rate
from chipwise.train.explain import plan_result
from chipwise.train.search import search_plans
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serving import ServeScenario

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

SEQ = 8192


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


class _Runs:
    """Training predictions used by the claims, computed once each."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.hw = hardware(catalog)
        self._cache: dict[tuple[Any, ...], dict[str, Any] | str] = {}

    def system(self, name: str) -> System:
        return self.hw.system(name)

    def train(
        self,
        model: str,
        system: str,
        chips: int,
        precision: str,
        tokens: float | None = None,
        pricing: str = "on-demand",
    ) -> dict[str, Any] | str:
        """The best plan's prediction with economics, or the reason there is none."""
        key = (model, system, chips, precision, tokens, pricing)
        if key not in self._cache:
            spec = load_model(self.catalog, model)
            sys_ = self.system(system)
            job = make_job(spec, SEQ, None, None, precision, tokens, chips=chips)
            try:
                search = search_plans(spec, job, sys_, chips)
            except InfeasibleError as exc:
                self._cache[key] = str(exc)
            else:
                row = plan_result(search, search.best)
                self._cache[key] = attach_economics(row, self.catalog, sys_, chips, pricing, model=spec)
        return self._cache[key]

    def best(
        self, model: str, system: str, chips: int, tokens: float | None, pricing: str, key: str
    ) -> dict[str, Any] | str:
        """The cheaper (by `key`) of the bf16 and fp8 predictions: each chip runs in the precision that suits it."""
        runs = [self.train(model, system, chips, p, tokens, pricing) for p in ("bf16", "fp8")]
        ok = [r for r in runs if isinstance(r, dict) and _finite(r.get(key))]
        if not ok:
            return runs[0]
        return min(ok, key=lambda r: float(r[key]))


def _finite(v: Any) -> bool:
    return v is not None and isinstance(v, int | float) and math.isfinite(v)


def _achieved_flops(run: dict[str, Any] | str) -> float:
    """A training run's model FLOP/s per chip (SI: tokens/s x FLOPs per token), NaN where no plan fits; not the
    TFLOP/s display field converted back."""
    return run["tokens_per_s_per_chip"] * run["model_flops_per_token"] if isinstance(run, dict) else math.nan


def _x(v: float) -> str:
    return f"{v:.2f}x" if math.isfinite(v) else "-"


def _x_against(v: float, targets: Sequence[float]) -> str:
    """`v` as _x shows it, with as many more decimals as keep it on its side of each target: claim 1d's 1.3986x had
    printed '1.40x' beside 'it would not hold' for 1.4x (a ratio holds at a target or above)."""
    if not math.isfinite(v):
        return "-"
    for digits in range(2, 7):
        text = f"{v:.{digits}f}"
        if all((float(text) >= t) == (v >= t) for t in targets):
            return f"{text}x"
    # within 5e-7 below a target: cut, not rounded, so that it reads below
    return f"{math.floor(v * 1e6) / 1e6:.6f}x"


def _pct(v: float) -> str:
    if not math.isfinite(v):
        return "-"
    return "<0.1%" if 0 <= v < 1e-3 else f"{100 * v:.0f}%"


def _saving(v: float) -> str:
    return f"saves {_pct(v)}" if v >= 0 else f"costs {_pct(-v)} more"


#: 'up to 50%' holds at a saving that rounds to it; the price it names is that saving's, so a verdict and its price
#: agree (3b had read 'would hold' at a 49.6% saving beside '50% needs Trn3 at <= $12,085' for a $12,500 chip)
HALF = 0.495
HALF_TEXT = "50% (49.5% as it rounds)"


def _leans(holds: bool) -> str:
    """Which way a verdict that rests on estimates leans."""
    return "on chipwise's estimates it would hold" if holds else "on chipwise's estimates it would not hold"


def _estimated(record: Any) -> bool:
    """Whether a price (a quote's record) is an estimate of chipwise's or the catalog's: not published, and not set on
    the command line (a price the user gives is taken as given)."""
    if not isinstance(record, dict):
        return True
    return record.get("provider") != USER_PROVIDER and record.get("status") in ("estimate", "projected")


def _figure_estimated(ref: Any) -> bool:
    """Whether a catalog figure (a provenance record) is an estimate or projection and not set on the command line."""
    if ref is None:
        return True
    return ref.status in ("estimate", "projected") and not set_on_command_line(ref.derivation)


def _price(runs: _Runs, system: str, mode: str) -> PriceQuote | None:
    """The price per chip-hour a run of `system` in `mode` is charged (the figure the ratios and the texts share)."""
    return price_per_chip_hour(runs.catalog, runs.system(system), mode)


def _price_text(q: PriceQuote | None) -> str:
    """'$2.24 [spec]', '$2.73 [estimate]', '$4.80 [set on the command line]', or '-'."""
    if q is None:
        return "-"
    status = SET_ON_COMMAND_LINE if q.provider == USER_PROVIDER else q.status
    return f"${q.usd_per_chip_hour:.2f} [{status}]"


# ----------------------------------------------------------------------------------------------------- claim 1
def _plan_reason(run: dict[str, Any] | str) -> str:
    """The planner's reason a run has no plan, without its fix (the claims' own texts say what to change)."""
    return run.split(". Fix")[0] if isinstance(run, str) else ""


def _no_plan(runs: Sequence[tuple[str, dict[str, Any] | str]]) -> str:
    """'no plan for Trn3 (REASON)' for each of the runs that found none, or ''."""
    return "; ".join(f"no plan for {name} ({_plan_reason(r)})" for name, r in runs if isinstance(r, str))


def _label(ref: Any, default: str = "estimate") -> str:
    """A catalog figure's status, or 'set on the command line' for one given by --set (whose status is the catalog
    figure's it replaced)."""
    if ref is None:
        return default
    return SET_ON_COMMAND_LINE if set_on_command_line(ref.derivation) else str(ref.status)


def _it_power_w(runs: _Runs, system: System, run: dict[str, Any], tdp_w: float) -> float:
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


def _tdp_for(runs: _Runs, system: System, run: dict[str, Any], ratio: float, target: float) -> tuple[float, float]:
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


def _tdp_text(runs: _Runs, system: System, found: tuple[float, float] | None, target: float) -> str:
    """'Trn3 would need <= 538 W per chip for 1.4x ...', or why no TDP would do (`found`: _tdp_for's answer, None
    where there is no run to ask)."""
    if found is None:
        return ""
    watts, at_zero = found
    power = power_model(runs.catalog, system, scaleout=False)
    follows = host_follows_tdp(runs.catalog, system)
    if watts <= 0:
        return f"no Trn3 TDP gives {target:g}x: at 0 W it gets {_x(at_zero)}, " + (
            "its scale-out network drawing the rest"  # the host and idle chips go to 0 W with the TDP
            if follows
            else f"its host and switches ({power.host_w:,.0f} W a chip) and idle chips drawing the rest"
        )
    ref = system.chip.efficiency.reference_tdp_w
    slower = (
        f", where its matrix units would also slow to {power_scale(watts, ref):.0%} (rated at {ref:,.0f} W)"
        if power_scale(watts, ref) < 1.0
        else ""
    )
    share = power.host_w / system.chip.tdp
    host = (
        # a system with no published power: its host is a share of the TDP and moves with it
        f"its host and switches moving with it at {share:.2f} of the TDP, {watts * share:,.0f} W a chip, as "
        "--set trn3.tdp moves them"
        if follows
        else f"its host and switches held at {power.host_w:,.0f} W a chip, as --set trn3.tdp holds them"
    )
    return f"Trn3 would need <= {watts:,.0f} W per chip for {target:g}x ({host}){slower}"


def _host_ref(runs: _Runs, system: System) -> Any:
    """Where `system`'s host share comes from: its power figure, or for a system with none its host_power_fraction of
    the TDP (the power the loader fills in read as an estimate even where that fraction was set on the command
    line)."""
    return (
        host_power_fraction(runs.catalog, system.id)
        if host_follows_tdp(runs.catalog, system)
        else system.provenance.get("power")
    )


def _power_text(runs: _Runs, name: str, system: System) -> str:
    """'Trn3 1,000 W [estimate] + 389 W host and switches [estimate]': a chip's TDP and its share of the rest of
    its system, each with where it came from."""
    host = power_model(runs.catalog, system, scaleout=False).host_w
    return (
        f"{name} {system.chip.tdp:,.0f} W [{_label(system.chip.provenance.get('tdp'))}] + {host:,.0f} W host and "
        f"switches [{_label(_host_ref(runs, system))}]"
    )


def _per_working_chip(a: dict[str, Any] | str, b: dict[str, Any] | str) -> float:
    """Tokens/s per chip the plan keeps busy, `a` over `b` (a plan can leave some of the fleet's chips idle: its data
    parallelism must divide the batch)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return math.nan
    return float((a["tokens_per_s"] / a["chips_used"]) / (b["tokens_per_s"] / b["chips_used"]))


def _busy(runs: list[tuple[str, dict[str, Any] | str]]) -> str:
    """'the plans keep 128 of 144 Trn3 chips busy (...)' for the runs whose plan leaves chips idle, or ''."""
    idle = [(n, r) for n, r in runs if isinstance(r, dict) and r["chips_used"] < r["chips"]]
    if not idle:
        return ""
    kept = ", ".join(f"{r['chips_used']:,} of {r['chips']:,} {n}" for n, r in idle)
    batch = idle[0][1]["global_batch"]
    return (
        f"the plans keep {kept} chips busy (data parallelism divides the {batch:,}-sequence batch; the rest are "
        "paid for and idle)"
    )


def _claim1(runs: _Runs) -> Claim:
    trn3, trn2 = runs.system("trn3-ultraserver"), runs.system("trn2-ultraserver")
    n3, n2 = trn3.chips, trn2.chips
    chip_fp8 = trn3.chip.flops["fp8"] / trn2.chip.flops["fp8"]
    chip_bf16 = trn3.chip.flops["bf16"] / trn2.chip.flops["bf16"]
    chip_bw = trn3.chip.hbm_bandwidth / trn2.chip.hbm_bandwidth
    peak3 = n3 * trn3.chip.flops["fp8"]
    peak2 = n2 * trn2.chip.flops["fp8"]
    peak_ratio = peak3 / peak2
    model = "llama-3.1-70b"
    r3 = runs.train(model, trn3.id, n3, "fp8")
    r2 = runs.train(model, trn2.id, n2, "fp8")
    b3 = runs.train(model, trn3.id, n3, "bf16")
    b2 = runs.train(model, trn2.id, n2, "bf16")
    checks: list[Check] = []
    if isinstance(r3, dict) and isinstance(r2, dict):
        speed = r3["tokens_per_s"] / r2["tokens_per_s"]
        per_chip = r3["tokens_per_s_per_chip"] / r2["tokens_per_s_per_chip"]
        eff = r3["tokens_per_joule"] / r2["tokens_per_joule"]
    else:
        speed = per_chip = eff = math.nan
    if isinstance(b3, dict) and isinstance(b2, dict):
        bf_speed = b3["tokens_per_s"] / b2["tokens_per_s"]
        bf_per_chip = b3["tokens_per_s_per_chip"] / b2["tokens_per_s_per_chip"]
    else:
        bf_speed = bf_per_chip = math.nan
    working, bf_working = _per_working_chip(r3, r2), _per_working_chip(b3, b2)
    busy = _busy([("Trn3", r3), ("Trn2", r2)])
    # a check the workload decides cannot be checked where a run has no plan: the planner's reason says why
    missing = _no_plan([("the Trn3 UltraServer", r3), ("the Trn2 UltraServer", r2)])
    bf_missing = _no_plan([("the Trn3 UltraServer", b3), ("the Trn2 UltraServer", b2)])
    fp8_run = f"FP8 {missing}" if missing else ""
    checks.append(
        Check(
            "1a",
            "4.4x the compute of a Trn2 UltraServer",
            f"peak dense FP8: {n3} x {trn3.chip.flops['fp8'] / 1e15:.3f} PF = {peak3 / 1e15:.1f} PF vs "
            f"{n2} x {trn2.chip.flops['fp8'] / 1e15:.3f} PF = {peak2 / 1e15:.1f} PF: {_x(peak_ratio)}; "
            f"Llama-3.1-70B FP8 training throughput, one UltraServer each: {'no plan' if missing else _x(speed)} "
            f"(BF16: {'no plan' if bf_missing else _x(bf_speed)})",
            (NOT_SO if peak_ratio < 4.35 else UNCHECKABLE)
            if missing
            else HOLDS
            if peak_ratio >= 4.35 and speed >= 4.0
            else (PEAK_ONLY if peak_ratio >= 4.35 else NOT_ON_WORKLOAD),
            f"the FP8 peak ratio is {_x(peak_ratio)} ({trn3.chip.flops['fp8'] / 1e12:,.0f} vs "
            f"{trn2.chip.flops['fp8'] / 1e12:,.0f} TFLOP/s dense per chip, {n3} vs {n2} chips)"
            + (", the 4.4x claimed" if peak_ratio >= 4.35 else ", short of the 4.4x claimed")
            + f"; BF16 peak per UltraServer is {_x(n3 * trn3.chip.flops['bf16'] / (n2 * trn2.chip.flops['bf16']))}"
            + (f"; the workload cannot be checked: {fp8_run}" if missing else "")
            + (f"; BF16 {bf_missing}" if bf_missing and bf_missing != missing else ""),
            {"peak_fp8_ratio": peak_ratio, "fp8_throughput_ratio": speed, "bf16_throughput_ratio": bf_speed},
        )
    )
    checks.append(
        Check(
            "1b",
            "more than 4x faster than a Trn2 UltraServer",
            "Llama-3.1-70B FP8 training on one UltraServer each: "
            + ("no plan" if missing else f"{_x(speed)} the tokens/s"),
            # a speed claim the workload does not bear out holds only at peak specs where the peak ratio bears it out
            UNCHECKABLE if missing else HOLDS if speed > 4.0 else (PEAK_ONLY if peak_ratio > 4.0 else NOT_ON_WORKLOAD),
            (
                f"{fp8_run}; the FP8 peak ratio is {_x(peak_ratio)}"
                if missing
                else f"{_x(speed)} = {_x(n3 / n2)} the chips ({n3} vs {n2}) x {_x(per_chip)} the tokens/s per chip"
                + (f"; {busy}: {_x(working)} per working chip" if busy else "")
                + f"; the FP8 peak ratio is {_x(peak_ratio)}"
            ),
            {"throughput_ratio": speed, "per_chip_ratio": per_chip, "per_working_chip_ratio": working},
        )
    )
    cap = n3 * trn3.chip.hbm_capacity / (n2 * trn2.chip.hbm_capacity)
    bw = n3 * trn3.chip.hbm_bandwidth / (n2 * trn2.chip.hbm_bandwidth)
    checks.append(
        Check(
            "1c",
            "4x the memory",
            f"HBM per UltraServer {n3 * trn3.chip.hbm_capacity / 2**30:,.0f} vs "
            f"{n2 * trn2.chip.hbm_capacity / 2**30:,.0f} GiB = {_x(cap)}; "
            f"bandwidth {n3 * trn3.chip.hbm_bandwidth / 1e12:.1f} vs "
            f"{n2 * trn2.chip.hbm_bandwidth / 1e12:.1f} TB/s = {_x(bw)}",
            HOLDS if cap >= 3.9 else NOT_SO,
            f"capacity is {_x(cap)} (spec), not 4x; 'nearly 4x memory bandwidth' ({_x(bw)}) is the version that holds; "
            f"per chip {trn3.chip.hbm_capacity / trn2.chip.hbm_capacity:.2f}x capacity, {chip_bw:.2f}x bandwidth",
            {"capacity_ratio": cap, "bandwidth_ratio": bw},
        )
    )
    # the power tokens/J turn on: each chip's TDP and its share of the rest of its system (host, switches), neither
    # published for Trainium; figures set on the command line are taken as given
    refs = (
        trn2.chip.provenance.get("tdp"),
        trn3.chip.provenance.get("tdp"),
        _host_ref(runs, trn2),
        _host_ref(runs, trn3),
    )
    power_estimated = any(_figure_estimated(ref) for ref in refs)
    power_note = f"power per chip: {_power_text(runs, 'Trn2', trn2)}; {_power_text(runs, 'Trn3', trn3)}" + (
        " (AWS publishes neither: chipwise estimates)" if power_estimated else ""
    )

    # one figure for 1d and 1e, to the digits that keep it on its side of both targets
    shown = _x_against(eff, (1.4, 4.0))

    def efficiency(check: str, claim: str, target: float, computed: str, tail: str = "") -> Check:
        """`computed`: the text the ratio follows (shown)."""
        found = _tdp_for(runs, trn3, r3, eff, target) if isinstance(r3, dict) and math.isfinite(eff) else None
        threshold = _tdp_text(runs, trn3, found, target)
        verdict = (
            UNCHECKABLE if missing else ESTIMATED if power_estimated else HOLDS if eff >= target else NOT_ON_WORKLOAD
        )
        computed += shown
        lean = f"{_leans(eff >= target)} ({shown}); " if verdict == ESTIMATED else ""
        numbers: dict[str, Any] = {"tokens_per_joule_ratio": eff}
        if found is not None:
            watts, numbers["ratio_at_0_w"] = found
            numbers["trn3_tdp_for_target_w"] = watts if watts > 0 else math.nan  # none reaches the target
        return Check(
            check,
            claim,
            computed if not missing else "Llama-3.1-70B FP8 training tokens per joule: no plan",
            verdict,
            (f"{fp8_run}; " if missing else lean) + power_note + (f"; {threshold}" if threshold else "") + tail,
            numbers,
        )

    checks.append(
        efficiency(
            "1d",
            "40% better energy efficiency",
            1.4,
            "Llama-3.1-70B FP8 training tokens per joule, Trn3 / Trn2 UltraServer: ",
        )
    )
    checks.append(efficiency("1e", "4x energy efficiency (AWS blog via AIwire)", 4.0, "same computation: "))
    # AWS's own per-chip claim (NAND_TRN4, LETTERTWO): measured serving GPT-OSS, which this check does not run; the
    # '40% higher performance' it replaces had no source
    checks.append(
        Check(
            "1f",
            "3x the throughput per chip (AWS, serving GPT-OSS)",
            "per chip of each UltraServer, Llama-3.1-70B training: "
            + (
                "no plan"
                if missing
                else f"FP8 {_x(per_chip)}, BF16 {_x(bf_per_chip)}; per working chip: FP8 {_x(working)}, BF16 "
                f"{_x(bf_working)}"
            ),
            UNCHECKABLE
            if missing
            else HOLDS
            if per_chip >= 3.0
            else (PEAK_ONLY if max(chip_fp8, chip_bw) >= 3.0 else NOT_ON_WORKLOAD),
            (f"{fp8_run}; " if missing else "")
            + "AWS measured it serving OpenAI's GPT-OSS (with 4x faster responses), which chipwise does not run here; "
            "decided on the training workload per chip of each UltraServer (a chip the plan leaves idle is paid for "
            "all the same)"
            + (f"; {busy}" if busy and not missing else "")
            + f"; per-chip peak FP8 is {_x(chip_fp8)} and BF16 {_x(chip_bf16)}, HBM bandwidth {_x(chip_bw)}"
            + (": 3x per chip is past both" if max(chip_fp8, chip_bw) < 3.0 else ""),
            {"per_chip_fp8_ratio": per_chip, "per_working_chip_fp8_ratio": working},
        )
    )
    return Claim(
        1,
        "A Trn3 UltraServer is more than 4x faster (4.4x the compute) than a Trn2 UltraServer, with 4x the "
        "memory and 40% better energy efficiency (also reported: '4x' efficiency; AWS: 3x the throughput per chip "
        "serving GPT-OSS).",
        ["TC_TRN3", "AIWIRE_TRN3", "LETTERTWO", "NAND_TRN4"],
        "Llama-3.1-70B training, seq 8,192, one Trn3 UltraServer (144 chips) vs one Trn2 UltraServer (64 chips)",
        checks,
    )


# ----------------------------------------------------------------------------------------------------- claim 2
def _claim2(runs: _Runs) -> Claim:
    trn3 = runs.system("trn3-ultraserver")
    chip = trn3.chip
    fp8 = chip.flops["fp8"]
    r = runs.train("llama-3.1-70b", trn3.id, trn3.chips, "fp8")
    achieved = _achieved_flops(r)
    fp8_ref = chip.provenance.get("flops.fp8")
    checks = [
        Check(
            "2a",
            "2.52 PFLOP/s FP8 per chip",
            f"catalog: {fp8 / 1e15:.3f} PF dense MXFP8 [{_label(fp8_ref, 'spec')}]; achieved on Llama-3.1-70B FP8 "
            "training: "
            + (
                f"{achieved / 1e15:.2f} PF ({_pct(achieved / fp8)} of peak)"
                if isinstance(r, dict)
                else _no_plan([("one UltraServer", r)])
            ),
            HOLDS if abs(fp8 / 2.52e15 - 1) < 0.01 else NOT_SO,
            "a dense peak (Neuron docs: 2,517 MXFP8/MXFP4 TFLOPS); MXFP4 runs at the MXFP8 rate",
            {"fp8_peak": fp8, "achieved": achieved},
        ),
        Check(
            "2b",
            "144 GB HBM3e per chip",
            f"catalog: {chip.hbm_capacity / 2**30:.0f} GiB = {chip.hbm_capacity / 1e9:.1f} GB, "
            f"{chip.hbm_bandwidth / 1e12:.1f} TB/s",
            HOLDS if chip.hbm_capacity >= 144e9 else NOT_SO,
            "the Neuron docs give 144 GiB, slightly more than 144 GB",
            {"hbm_bytes": chip.hbm_capacity},
        ),
        Check(
            "2c",
            "144 chips per UltraServer",
            f"catalog {trn3.id}: {trn3.chips} chips in one {trn3.scaleup.kind} scale-up domain",
            HOLDS if trn3.chips == 144 else NOT_SO,
            "Gen2 UltraServer (36 servers x 4); the Gen1 UltraServer has 64",
            {"chips": trn3.chips},
        ),
        _million_chips(runs),
    ]
    return Claim(
        2,
        "Trainium3: 2.52 PFLOP/s FP8 per chip, 144 GB HBM3e; 144 chips per UltraServer; UltraClusters of up to "
        "1M chips, 10x the previous generation.",
        ["AIWIRE_TRN3", "TC_TRN3", "NRN_TRN3"],
        "catalog specs; Llama-3.1-70B FP8 on one UltraServer; Llama-3.1-405B on 15T tokens at 1,000,000 chips",
        checks,
    )


def _parallelism(plan: dict[str, Any], system: System) -> str:
    """'TP8 x PP14 x DP2048 x CP16 (4 ranks a chip)': every dimension the plan uses, so that the product
    is the ranks it runs on."""
    dims = " x ".join(
        f"{k.upper()}{plan[k]}" for k in ("tp", "pp", "dp", "cp", "ep") if k in ("tp", "dp") or plan[k] != 1
    )
    cores = system.chip.cores_per_chip
    return dims + (f" ({cores} ranks a chip)" if cores > 1 else "")


def _million_chips(runs: _Runs) -> Check:
    chips = 1_000_000
    system = runs.system("trn3-ultraserver")
    inputs = reliability_inputs(runs.catalog, system)
    lam = float(interruption_rate(inputs.rates, chips, inputs.chips_per_host.value))
    per_day = lam * 86400.0
    r = runs.train("llama-3.1-405b", system.id, chips, "fp8", 15e12)
    numbers: dict[str, Any] = {"failures_per_day": per_day, "mtbf_s": 1 / lam, "ratio_to_trn2_ultracluster": 10.0}
    if isinstance(r, dict):
        rel = r["reliability"]
        numbers.update(
            job_failures_per_day=rel["failures_per_day"],
            job_mtbf_s=rel["mtbf_s"],
            goodput_checkpoint=rel["goodput_checkpoint"],
            goodput_in_memory=rel["goodput_in_memory"],
            time_to_train_s=r["time_to_train_s"],
        )
        # the goodputs are the job's, on the chips its plan uses, whose rate is said beside them: the whole
        # million's 533 a day had stood next to goodputs for 524,288 chips failing 280 times a day
        run = (
            f"Llama-3.1-405B FP8 on 15T tokens: plan {_parallelism(r['plan'], system)} on {r['chips_used']:,} of "
            f"the {chips:,} chips, a {r['global_batch_tokens'] / 1e9:,.2f}B-token batch ({r['global_batch']:,} "
            f"sequences) a step, ideal {r['time_to_train_s'] / 3600:,.1f} h; the job's {r['chips_used']:,} chips "
            f"fail {rel['failures_per_day']:,.0f} times a day (every {rel['mtbf_s'] / 60:.1f} min), for goodput "
            f"{_pct(rel['goodput_checkpoint'])} with checkpoint-restart, {_pct(rel['goodput_in_memory'])} with "
            "in-memory recovery"
        )
    else:
        run = f"no plan for Llama-3.1-405B at this size ({_plan_reason(r)})"
    return Check(
        "2d",
        "UltraClusters of up to 1,000,000 Trainium3, 10x the previous generation",
        f"1M chips fail {per_day:,.0f} times a day (every {60 / (lam * 3600):.1f} min, a job on all of them would "
        f"stop) on Llama 3 failure rates; {run}",
        UNCHECKABLE,
        "a statement about deployable cluster size (Trn2 UltraClusters were announced at 100k, so 10x is "
        "arithmetic); no 1M-chip job has been published to compare with",
        numbers,
    )


# ----------------------------------------------------------------------------------------------------- claim 3
GPUS_VS_TRN3: tuple[str, ...] = ("h100-sxm", "h200", "b200", "gb200")
#: the claim 5c checks: "an H100 rents for $2.10-5.00 per GPU-hour"
H100_RENT_USD_PER_HOUR = (2.10, 5.00)
#: the claim 5a checks, "4 PFLOP/s of FP8", to its rounding (the 2:4-sparse 3.96 PF reads as 4)
H100_FP8_CLAIM = 3.95e15


def _price_origin(catalog: Catalog, quote: Any, price: Any) -> str:
    """Where Trn3's price came from, from the quote's own provenance: set on the command line, an estimate with the
    catalog's derivation, or a listed price with its source (a user's file can give one)."""
    if not isinstance(quote, dict):
        return "Trn3 has no price"
    if quote.get("provider") == USER_PROVIDER:
        return f"Trn3's price is the one set on the command line (${price:,.3f} a chip-hour)"
    # a listed price names its seller, region and date where it has them (a user's file may give neither of the last)
    seller = " ".join(str(quote[k]) for k in ("provider", "region") if quote.get(k))
    dated = f" of {quote['date']}" if quote.get("date") else ""
    return _cited(
        catalog,
        f"Trn3's price (${price:,.2f} a chip-hour) is",
        _estimated(quote),
        str(quote.get("status")),
        str(quote.get("derivation") or ""),
        quote.get("source", []),
        f"{seller}'s{dated} ",
    )


def _cited(
    catalog: Catalog,
    head: str,
    estimated: bool,
    status: str,
    derivation: str,
    sources: Sequence[str],
    listed: str = "",
) -> str:
    """'HEAD a chipwise estimate [status]: its derivation' or 'HEAD LISTED[status] (its sources)': where a price the
    claims rest on comes from (3a's rental price, 3b's unit price)."""
    if estimated:
        return f"{head} a chipwise estimate [{status}]: {(derivation or 'no derivation given').rstrip('.')}"
    cited = "; ".join(catalog.source_text(k) for k in sources) or "no source given"
    return f"{head} {listed}[{status}] ({cited})"


def _savings(
    runs: _Runs, model: str, chips: int, tokens: float, pricing: str
) -> tuple[dict[str, Any] | str, dict[str, float], list[str], dict[str, Any]]:
    """Trn3's run, its saving against each GPU of GPUS_VS_TRN3 (1 - its cost / the GPU's), a text for each GPU,
    and the GPUs' price records, at `pricing` (3a on demand, 3b owned: the same GPUs on both)."""
    key = "expected_cost_usd"
    t = runs.best(model, "trn3-ultraserver", chips, tokens, pricing, key)
    rows: dict[str, float] = {}
    detail: list[str] = []
    quotes: dict[str, Any] = {}
    if isinstance(t, dict):
        for g in GPUS_VS_TRN3:
            r = runs.best(model, g, chips, tokens, pricing, key)
            if isinstance(r, dict):
                rows[g] = 1 - t[key] / r[key]  # a GPU's cost is above 0: _require_gpu_prices
                quotes[g] = r.get("price_source")
                detail.append(f"vs {g} ${r[key] / 1e6:,.0f}M ({r['precision']}) {_saving(rows[g])}")
            else:
                detail.append(f"vs {g}: no plan ({_plan_reason(r)})")
    return t, rows, detail, quotes


def _claim3(runs: _Runs) -> Claim:
    model, chips, tokens = "llama-3.1-405b", 16384, 15e12
    key = "expected_cost_usd"
    t, rows, detail, quotes = _savings(runs, model, chips, tokens, "on-demand")
    best_gpu = max(rows, key=lambda g: rows[g]) if rows else ""
    best = rows.get(best_gpu, math.nan)
    owned = _owned_saving(runs, model, chips, tokens)
    quote = t.get("price_source") if isinstance(t, dict) else None
    price = t.get("price_usd_per_chip_hour") if isinstance(t, dict) else None
    computed = (
        f"expected on-demand cost, Trn3 ${t[key] / 1e6:,.0f}M ({t['precision']}); saving " + "; ".join(detail)
        if isinstance(t, dict)
        else f"no Trn3 plan ({_plan_reason(t)})"
    )
    holds = best >= HALF
    # the saving turns on Trn3's price (and the GPU's where that is an estimate too): cost scales with the price,
    # so the Trn3 price that gives 50% against the best GPU is today's x (1 - HALF) / (1 - saving)
    estimated = _estimated(quote) or _estimated(quotes.get(best_gpu))
    needed = (
        f"; {HALF_TEXT} against {best_gpu} needs Trn3 at <= ${price * (1 - HALF) / (1 - best):,.2f} a chip-hour"
        if isinstance(price, int | float) and math.isfinite(best) and best < 1
        else ""
    )
    if not isinstance(t, dict):  # no Trn3 plan: nothing to price, whatever Trn3's price
        verdict, why = UNCHECKABLE, f"no Trn3 plan for Llama-3.1-405B on {chips:,} chips ({_plan_reason(t)})"
    elif not rows:
        verdict, why = UNCHECKABLE, "no GPU plan to compare with: " + "; ".join(detail)
    else:
        verdict = ESTIMATED if estimated else (HOLDS if holds else NOT_ON_WORKLOAD)
        why = (
            (f"{_leans(holds)}: " if estimated else "")
            + f"largest saving vs {best_gpu} ({_pct(best)}){needed}; "
            + _price_origin(runs.catalog, quote, price)
        )
    return Claim(
        3,
        "Trainium3 cuts training cost by up to 50% against GPU systems for LLMs above 100B parameters.",
        ["CTMANGA_TRN4", CLOUDEXPAT],
        "Llama-3.1-405B on 15T tokens, 16,384 chips, each chip in its cheaper precision (bf16 or fp8), "
        "goodput-adjusted cost at on-demand prices",
        [
            Check(
                "3a",
                "up to 50% lower training cost than GPU systems (>100B parameters)",
                computed,
                verdict,
                why,
                {"saving_vs": rows},
            ),
            owned,
        ],
    )


def _unit_price_for(runs: _Runs, system: System, usd_per_chip_hour: float, wanted: float) -> float:
    """The chip unit price at which `system`'s owned price a chip-hour, now `usd_per_chip_hour`, is `wanted`: the
    owned price is affine in the chip's price (depreciation and operations scale with capex; space and energy do
    not), so it is solved from today's price and a free chip's (below 0: no price gets there)."""
    free = owned_tco(runs.catalog, system, overrides={"chip_price_usd": 0.0}).usd_per_chip_hour
    unit = system.chip.unit_price or 0.0
    return unit * (wanted - free) / (usd_per_chip_hour - free) if usd_per_chip_hour > free else math.nan


def _owned_saving(runs: _Runs, model: str, chips: int, tokens: float) -> Check:
    system = runs.system("trn3-ultraserver")
    chip = system.chip
    t, rows, detail, _ = _savings(runs, model, chips, tokens, "owned")
    best_gpu = max(rows, key=lambda g: rows[g]) if rows else ""
    best = rows.get(best_gpu, math.nan)
    holds = best >= HALF
    ref = chip.provenance.get("unit_price")
    estimated = _figure_estimated(ref)
    if ref is None or chip.unit_price is None:
        origin = "Trn3 has no unit price"
    else:
        head = f"Trn3's unit price (${chip.unit_price:,.0f}) is"
        origin = (
            f"{head} the one set on the command line"
            if set_on_command_line(ref.derivation)
            else _cited(runs.catalog, head, estimated, ref.status, ref.derivation, ref.sources)
        )
    power = "; Trn3's power is estimated" if _figure_estimated(chip.provenance.get("tdp")) else ""
    price = t.get("price_usd_per_chip_hour") if isinstance(t, dict) else None
    needed = ""
    if isinstance(price, int | float) and math.isfinite(best) and best < 1 and chip.unit_price is not None:
        # the run's cost scales with its price a chip-hour, as in 3a; the unit price that gives that price
        unit = _unit_price_for(runs, system, price, price * (1 - HALF) / (1 - best))
        needed = (
            f"; {HALF_TEXT} against {best_gpu} needs Trn3 at <= ${unit:,.0f} a chip"
            if unit >= 0
            else f"; no Trn3 unit price gives 50% against {best_gpu}: its power, space and the rest of its system "
            "alone cost more"
            if math.isfinite(unit)
            else ""
        )
    if not isinstance(t, dict):
        computed = f"no Trn3 plan ({_plan_reason(t)})"
        verdict, why = UNCHECKABLE, f"no Trn3 plan for Llama-3.1-405B on {chips:,} chips ({_plan_reason(t)})"
    else:
        computed = (
            "owned-fleet TCO (5-year life, colocation, US power), expected cost: Trn3 "
            f"${t['expected_cost_usd'] / 1e6:,.0f}M ({t['precision']}); saving " + "; ".join(detail)
        )
        if not rows:
            verdict, why = UNCHECKABLE, "no GPU plan to compare with"
        else:
            verdict = ESTIMATED if estimated else (HOLDS if holds else NOT_ON_WORKLOAD)
            why = (
                (f"{_leans(holds)}: " if estimated else "")
                + f"largest saving vs {best_gpu} ({_pct(best)}){needed}; "
                + origin
                + power
            )
    return Check(
        "3b", "the same, on an owned fleet (AWS's own cost basis)", computed, verdict, why, {"saving_vs": rows}
    )


# ----------------------------------------------------------------------------------------------------- claim 4
def _claim4(runs: _Runs) -> Claim:
    t3, t4 = runs.system("trn3-ultraserver"), runs.system("trn4-ultraserver")
    fp4 = t4.chip.flops["fp4"] / t3.chip.flops["fp4"]
    fp8 = t4.chip.flops["fp8"] / t3.chip.flops["fp8"]
    bw = t4.chip.hbm_bandwidth / t3.chip.hbm_bandwidth
    a = runs.train("llama-3.1-70b", t3.id, 1152, "fp8")
    b = runs.train("llama-3.1-70b", t4.id, 1152, "fp8")
    speed = b["tokens_per_s"] / a["tokens_per_s"] if isinstance(a, dict) and isinstance(b, dict) else math.nan
    ref = t4.chip.provenance.get("flops.fp8")
    return Claim(
        4,
        "Trainium4 will bring 6x the FP4, 3x the FP8 and 4x the memory bandwidth of Trainium3.",
        ["NAND_TRN4", "CTMANGA_TRN4", "TC_TRN3"],
        "catalog ratios; Llama-3.1-70B FP8 training on 1,152 chips (Trn4 projected)",
        [
            Check(
                "4a",
                "6x FP4, 3x FP8, 4x memory bandwidth vs Trainium3",
                f"catalog trn4 / trn3: FP4 {_x(fp4)}, FP8 {_x(fp8)}, HBM bandwidth {_x(bw)}; if true, Llama-3.1-70B "
                + (
                    f"FP8 training would run {_x(speed)} faster per chip"
                    if math.isfinite(speed)
                    else f"FP8 training on 1,152 chips: {_no_plan([('Trn3', a), ('Trn4', b)])}"
                ),
                UNCHECKABLE,
                f"Trainium4 is announced, not shipping: chipwise's trn4 figures are these ratios applied to Trn3 "
                f"[{ref.status if ref else 'projected'}], so they cannot test them. Trn3 runs MXFP4 at the MXFP8 "
                "rate, so 6x FP4 with 3x FP8 means native FP4 at twice the FP8 rate",
                {"fp4_ratio": fp4, "fp8_ratio": fp8, "bandwidth_ratio": bw, "projected_speedup": speed},
            )
        ],
    )


# ----------------------------------------------------------------------------------------------------- claim 5
def _latest_quotes(runs: _Runs, chip: str, mode: str = "on-demand") -> list[Any]:
    return list(latest_quotes(runs.catalog, chip, mode))


def _claim5(runs: _Runs) -> Claim:
    h100 = runs.system("h100-sxm")
    dense = h100.chip.flops["fp8"]
    r = runs.train("llama-3.1-405b", h100.id, 16384, "fp8", 15e12)
    achieved = _achieved_flops(r)
    price = h100.chip.unit_price or math.nan
    price_ref = h100.chip.provenance.get("unit_price")
    quotes = [q for q in _latest_quotes(runs, "h100-sxm") if q.provider != USER_PROVIDER]
    low, high = H100_RENT_USD_PER_HOUR
    inside = [q for q in quotes if low <= q[2] <= high]
    # the prices the runs below are charged (price_per_chip_hour: a price set on the command line, and the modes that
    # follow it, included), so that the texts and the ratios are the same figures
    trn2_cb, trn2_od = _price(runs, "trn2", "capacity-block"), _price(runs, "trn2", "on-demand")
    h100_cb, h100_od = _price(runs, "h100-sxm", "capacity-block"), _price(runs, "h100-sxm", "on-demand")

    def ratio(a: PriceQuote | None, b: PriceQuote | None) -> float:
        return a.usd_per_chip_hour / b.usd_per_chip_hour if a and b and b.usd_per_chip_hour > 0 else math.nan

    ratio_cb, ratio_od = ratio(trn2_cb, h100_cb), ratio(trn2_od, h100_od)
    trn2_price = trn2_cb.usd_per_chip_hour if trn2_cb else math.nan
    key = "expected_usd_per_million_tokens"

    unrun: list[str] = []

    def per_token(mode: str) -> float:
        w_t = runs.best("llama-3.1-70b", "trn2", 1024, 15e12, mode, key)
        w_h = runs.best("llama-3.1-70b", "h100-sxm", 1024, 15e12, mode, key)
        if isinstance(w_t, dict) and isinstance(w_h, dict):
            return float(w_t[key] / w_h[key])  # an H100's cost is above 0: _require_gpu_prices
        unrun.append(f"{mode}: " + _no_plan([("1,024 Trn2", w_t), ("1,024 H100", w_h)]))
        return math.nan

    # AWS sells both as capacity blocks, at published prices: the like-for-like comparison; trn2 has no on-demand SKU
    # (its on-demand rate is the catalog's estimate), so the on-demand ratio is shown beside it, not decided on
    work_ratio, work_od = per_token("capacity-block"), per_token("on-demand")
    cb_estimated = _estimated(trn2_cb.record() if trn2_cb else None) or _estimated(
        h100_cb.record() if h100_cb else None
    )
    half = 0.4 <= work_ratio <= 0.6
    # on the price list about half, per token trained not: as a spec-sheet ratio that the workload does not bear out
    verdict_5e = HOLDS if half else (PEAK_ONLY if 0.4 <= ratio_cb <= 0.6 else NOT_ON_WORKLOAD)
    # 'AWS publishes' only where neither capacity-block price is an estimate or the user's (a Trn2 on-demand price
    # given with --set moves its capacity-block price with it)
    users = [n for n, q in (("Trn2", trn2_cb), ("H100", h100_cb)) if q is not None and q.provider == USER_PROVIDER]
    basis = (
        f" ({' and '.join(users)}'s set on the command line)"
        if users
        else ("" if cb_estimated else ", which AWS publishes for both")
    )
    slower = ": Trn2 trains slower per chip" if work_ratio > ratio_cb else ""
    # a Trainium2 price near $4.80: a published or given price decides, an estimate only leans
    near = [(label, q) for label, q in (("capacity block", trn2_cb), ("on-demand", trn2_od)) if q is not None]
    in_range = [(label, q) for label, q in near if 4.3 <= q.usd_per_chip_hour <= 5.3]
    decided = [(label, q) for label, q in in_range if not _estimated(q.record())]
    verdict_5d = HOLDS if decided else (ESTIMATED if in_range else NOT_SO)
    return Claim(
        5,
        "An H100 offers 4 PFLOP/s of FP8, costs $25,000-40,000 and rents for $2.10-5.00 per GPU-hour; a "
        "Trainium2 rents for about $4.80/hour, about half an H100's cost.",
        [LAUNCH_COVERAGE],
        "catalog specs and prices; Llama-3.1-405B FP8 on 16,384 H100; Llama-3.1-70B on 1,024 chips for $/Mtok",
        [
            Check(
                "5a",
                "H100: 4 PFLOP/s FP8",
                f"dense FP8 {dense / 1e15:.2f} PF; with 2:4 sparsity {2 * dense / 1e15:.2f} PF; achieved on "
                "Llama-3.1-405B FP8 training "
                + (f"{achieved / 1e15:.2f} PF" if isinstance(r, dict) else _no_plan([("16,384 H100", r)])),
                HOLDS if dense >= H100_FP8_CLAIM else (PEAK_ONLY if 2 * dense >= H100_FP8_CLAIM else NOT_SO),
                f"the 2:4-sparse peak is {2 * dense / 1e15:.2f} PF, twice the dense {dense / 1e15:.2f} PF that dense "
                "LLM training can use",
                {"dense": dense, "sparse": 2 * dense, "achieved": achieved},
            ),
            Check(
                "5b",
                "H100 costs $25,000-40,000",
                (
                    f"unit price ${price:,.0f} [set on the command line]"
                    if price_ref is not None and set_on_command_line(price_ref.derivation)
                    else f"catalog unit price ${price:,.0f} [{_label(price_ref)}]"
                    + (
                        f": {price_ref.derivation.rstrip('.')}"
                        if price_ref is not None and price_ref.derivation
                        else ""
                    )
                ),
                HOLDS if 25e3 <= price <= 40e3 else NOT_SO,
                "no list price exists; all figures are analyst or reseller estimates"
                + (
                    f" ({'; '.join(runs.catalog.source_text(k) for k in price_ref.sources)})"
                    if price_ref is not None and price_ref.sources and not set_on_command_line(price_ref.derivation)
                    else ""
                ),
                {"unit_price": price},
            ),
            Check(
                "5c",
                "H100 rents for $2.10-5.00 per GPU-hour",
                "catalog on-demand per GPU-hour: "
                + ", ".join(f"{q[0]} ${q[2]:.2f}" for q in quotes)
                + f"; {len(inside)} of {len(quotes)} inside the range",
                HOLDS if inside else NOT_SO,
                "; ".join(
                    f"{', '.join(q[0] for q in qs)} list ${min(q[2] for q in qs):.2f}-{max(q[2] for q in qs):.2f} "
                    f"({where})"
                    for where, qs in (
                        ("below", [q for q in quotes if q[2] < low]),
                        ("inside", inside),
                        ("above", [q for q in quotes if q[2] > high]),
                    )
                    if qs
                ),
                {"quotes": [q[2] for q in quotes], "inside": len(inside)},
            ),
            Check(
                "5d",
                "a Trainium2 rents for about $4.80/hour",
                f"per Trainium2 chip-hour: capacity block {_price_text(trn2_cb)} (trn2.48xlarge "
                f"${trn2_price * 16:.2f} per instance-hour); on-demand {_price_text(trn2_od)}",
                verdict_5d,
                (
                    f"{' and '.join(f'the {label} price' for label, _ in decided)} is near $4.80"
                    if decided
                    else f"{_leans(True)}: only the {in_range[0][0]} price, an estimate, is near $4.80"
                    if in_range
                    else "no Trainium2 price near $4.80 per chip-hour"
                )
                + "; trn2 has no on-demand SKU (its on-demand rate is the catalog's estimate unless set)",
                {
                    "trn2_capacity_block_per_chip": trn2_price,
                    "trn2_on_demand_per_chip": trn2_od.usd_per_chip_hour if trn2_od else math.nan,
                },
            ),
            Check(
                "5e",
                "Trainium2 costs about half an H100",
                f"AWS price per chip-hour Trn2 / H100: capacity blocks {_price_text(trn2_cb)} / "
                f"{_price_text(h100_cb)} = {_x(ratio_cb)}, on-demand {_price_text(trn2_od)} / {_price_text(h100_od)} "
                f"= {_x(ratio_od)}; per million tokens trained (Llama-3.1-70B, 1,024 chips): {_x(work_ratio)} at "
                f"capacity-block prices, {_x(work_od)} on demand",
                UNCHECKABLE if not math.isfinite(work_ratio) else ESTIMATED if cb_estimated else verdict_5e,
                (
                    f"decided per token trained at capacity-block prices, and no plan: {'; '.join(unrun)}"
                    if not math.isfinite(work_ratio)
                    else (f"{_leans(half)}; " if cb_estimated else "")
                    + f"decided per token trained at capacity-block prices{basis}: {_x(work_ratio)} the H100's cost"
                    + (", about half (0.4-0.6x)" if half else f", not about half (0.4-0.6x){slower}")
                )
                + f"; the price a chip-hour is {_x(ratio_cb)}"
                + "; the on-demand ratio rests on Trn2's on-demand rate"
                + (" set on the command line" if trn2_od and trn2_od.provider == USER_PROVIDER else ", an estimate"),
                {
                    "price_ratio_cb": ratio_cb,
                    "price_ratio_od": ratio_od,
                    "per_token_ratio": work_ratio,
                    "per_token_ratio_on_demand": work_od,
                },
            ),
        ],
    )


# ----------------------------------------------------------------------------------------------------- claim 6
def _claim6(runs: _Runs) -> Claim:
    cat = runs.catalog
    dgx = runs.system("dgx-h100")
    parts = {"h100-sxm (dgx-h100)": dgx, "trn2": runs.system("trn2"), "trn3": runs.system("trn3-ultraserver")}
    tco = {k: owned_tco(cat, s).usd_per_chip_hour for k, s in parts.items()}
    key = "expected_usd_per_million_tokens"
    per_tok = {}
    unrun: list[tuple[str, dict[str, Any] | str]] = []
    for k, s in parts.items():
        r = runs.best("llama-3.1-70b", s.id, 4096, 15e12, "owned", key)
        per_tok[k] = float(r[key]) if isinstance(r, dict) else math.nan
        if isinstance(r, str):
            unrun.append((k, r))
    h = per_tok["h100-sxm (dgx-h100)"]
    # the H100 and at least one Trainium must have run for a comparison
    checkable = math.isfinite(h) and any(math.isfinite(per_tok[k]) for k in ("trn2", "trn3"))
    lower = [k for k in ("trn2", "trn3") if per_tok[k] < h]
    estimated = [
        k for k in ("trn2", "trn3") if _figure_estimated(parts[k].chip.provenance.get("unit_price"))
    ]  # Trainium is not sold: a unit price is an equivalent-cost estimate unless given
    below = ", ".join(lower) or "neither"
    lean = f"{_leans(bool(lower))} ({below} below the H100 per Mtok); " if estimated else ""
    return Claim(
        6,
        "For 8-GPU H100 systems, Trainium's price-performance lowers TCO including power, cooling and networking.",
        [LAUNCH_COVERAGE],
        "owned-fleet TCO (chipwise tco); Llama-3.1-70B on 15T tokens, 4,096 chips, each in its cheaper precision",
        [
            Check(
                "6a",
                "lower TCO than 8-GPU H100 systems, per unit of work",
                "owned $/chip-hour: "
                + ", ".join(f"{k} ${v:.2f}" for k, v in tco.items())
                + "; owned $/Mtok trained: "
                + ", ".join(f"{k} {v:.3f}" if math.isfinite(v) else f"{k} no plan" for k, v in per_tok.items()),
                UNCHECKABLE if not checkable else ESTIMATED if estimated else (HOLDS if lower else NOT_ON_WORKLOAD),
                (_no_plan(unrun) + "; " if unrun else "")
                + (lean if checkable else "")
                + "Trainium is not sold: its capex is an equivalent-cost estimate, and its power (TDP, host share) "
                "is estimated; TCO includes depreciation, operations, colocation (power and cooling capacity), "
                "scale-out network and storage capex, and energy x PUE",
                {"usd_per_chip_hour": tco, "usd_per_mtok": per_tok},
            )
        ],
    )


# ----------------------------------------------------------------------------------------------------- claim 7
COST_TIE = 0.10  # $/Mtok ratios this close to 1 are a tie: the model's throughput and some prices are estimates
SERVE_SCENARIO = (
    "kind: serve\nmodel: llama-3.1-70b\nhardware: {hw}\nchips: {chips}\nprecision: bf16\ninput_tokens: 1024\n"
    "output_tokens: 256\nconcurrency: 32\nrequests: 256\n"
)


def _claim7(runs: _Runs) -> Claim:
    fleets = (("h100-sxm", 8), ("trn2", 16), ("trn1", 16))
    head = (
        "Earlier Trainium generations lagged the H100 in latency and cost-effectiveness for serving "
        "(TTFT/TPOT and $/million tokens for a 70B model)."
    )
    workload = (
        "Llama-3.1-70B serving, bf16, 1,024 in / 256 out tokens, 32 concurrent users; 8 x H100 vs one trn2.48xlarge "
        "(16 Trainium2) and one trn1.32xlarge (16 Trainium1)"
    )
    results: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    for hw_id, chips in fleets:
        try:
            scenario = load_scenario(SERVE_SCENARIO.format(hw=hw_id, chips=chips))
            assert isinstance(scenario, ServeScenario)  # kind: serve
            results[hw_id] = predict_serving(runs.catalog, scenario)
        except ChipwiseError as exc:
            errors[hw_id] = _plan_reason(str(exc))
    if "h100-sxm" not in results or not (set(results) - {"h100-sxm"}):
        why = "; ".join(f"{k}: {v}" for k, v in errors.items()) or "no result"
        return Claim(
            7, head, [LAUNCH_COVERAGE], workload, [Check("7a", "lagged H100", "-", UNCHECKABLE, f"serving: {why}")]
        )

    def fig(r: dict[str, Any], key: str) -> float:
        v = r.get(key)
        if isinstance(v, dict):
            v = v.get("p50")
        return float(v) if isinstance(v, int | float) else math.nan

    keys = {"ttft": "ttft_s", "tpot": "tpot_s", "usd": "cost_usd_per_mtok"}
    base = {m: fig(results["h100-sxm"], k) for m, k in keys.items()}
    parts, ratios, ties, prices = [], [], [], []
    lags: dict[str, bool] = {}
    at_published: dict[str, bool] = {}  # the lag with an estimated on-demand price replaced by a published one
    numbers: dict[str, Any] = {}

    def lagging(x: dict[str, float]) -> bool:  # slower on both latencies, and not clearly cheaper (COST_TIE)
        return x["ttft"] > 1.0 and x["tpot"] > 1.0 and x["usd"] > 1.0 - COST_TIE

    for hw_id, r in results.items():
        v = {m: fig(r, k) for m, k in keys.items()}
        numbers[hw_id] = {"ttft_p50_s": v["ttft"], "tpot_p50_s": v["tpot"], "usd_per_mtok": v["usd"]}
        parts.append(f"{hw_id}: TTFT {v['ttft'] * 1e3:,.0f} ms, TPOT {v['tpot'] * 1e3:,.1f} ms, ${v['usd']:.2f}/Mtok")
        source = (r.get("price_sources") or [None])[0]
        entry = source.get("entry", hw_id) if isinstance(source, dict) else hw_id
        if _estimated(source):
            prices.append(f"{hw_id}'s on-demand price ({entry}) is an estimate")
        elif isinstance(source, dict) and source.get("provider") == USER_PROVIDER:
            prices.append(f"{hw_id}'s is set on the command line")
        else:
            prices.append(f"{hw_id}'s is {entry}'s list price")
        if hw_id == "h100-sxm":
            continue
        x = {m: v[m] / base[m] for m in keys}
        ratios.append(f"{hw_id} {_x(x['ttft'])} TTFT, {_x(x['tpot'])} TPOT, {_x(x['usd'])} $/Mtok")
        lags[hw_id] = lagging(x)
        if abs(x["usd"] - 1.0) <= COST_TIE:
            ties.append(hw_id)
        od = r.get("cost_usd_per_hour")
        cb = _price(runs, hw_id, "capacity-block")
        if _estimated(source) and cb is not None and not _estimated(cb.record()) and isinstance(od, int | float):
            # its published capacity-block rate in place of the estimated on-demand one: $/Mtok scales with the price
            quote = _price(runs, hw_id, "on-demand")
            scale = cb.usd_per_chip_hour / quote.usd_per_chip_hour if quote and quote.usd_per_chip_hour > 0 else 1.0
            at_published[hw_id] = lagging({**x, "usd": x["usd"] * scale})
            prices[-1] += (
                f"; at its published capacity-block rate (${cb.usd_per_chip_hour:.3f} a chip-hour) it is "
                f"{_x(x['usd'] * scale)} the H100's $/Mtok"
            )
    verdict = HOLDS if lags and all(lags.values()) else NOT_ON_WORKLOAD
    other = HOLDS if lags and all({**lags, **at_published}.values()) else NOT_ON_WORKLOAD
    if other != verdict:  # an estimated price decides it
        verdict = ESTIMATED
    tie = f"; {', '.join(ties)} within {COST_TIE:.0%} of the H100 per Mtok, a tie on cost-effectiveness" if ties else ""
    why = (
        f"p50 latencies from the serving simulator, on-demand $/Mtok; against the H100: {'; '.join(ratios)}{tie}. "
        f"Prices: {'; '.join(prices)}"
        + ("; not run: " + "; ".join(f"{k}: {v}" for k, v in errors.items()) if errors else "")
    )
    return Claim(
        7,
        head,
        [LAUNCH_COVERAGE],
        workload,
        [Check("7a", "lagged H100 in latency and $/Mtok", "; ".join(parts), verdict, why, numbers)],
    )


#: the GPU prices the claims set Trainium's costs against (3a, 5e, 7a): each divides by one
GPU_PRICES_COMPARED: tuple[tuple[str, str], ...] = (
    *((g, "on-demand") for g in GPUS_VS_TRN3),
    ("h100-sxm", "capacity-block"),
)


def _require_gpu_prices(runs: _Runs) -> None:
    """One line where a GPU the claims compare Trainium with costs nothing: a saving against a free chip, or a
    cost ratio over $0, means nothing (--set h100-sxm.price=0 had ended in a ZeroDivisionError)."""
    for gpu, mode in GPU_PRICES_COMPARED:
        quote = _price(runs, gpu, mode)
        if quote is not None and not quote.usd_per_chip_hour > 0:
            given = SET_ON_COMMAND_LINE if quote.provider == USER_PROVIDER else f"from {quote.provider}'s price"
            raise ChipwiseError(
                f"{gpu}'s {mode} price is ${quote.usd_per_chip_hour:g} a chip-hour ({given}): the claims set "
                f"Trainium's costs against it, and a saving against a free chip means nothing. Fix: give {gpu} a "
                f"price above 0 (e.g. --set {gpu}.price=6.88), or leave it at the catalog's."
            )


def check_claims(catalog: Catalog) -> dict[str, Any]:
    """All seven claims, each with its checks, numbers and verdicts."""
    runs = _Runs(catalog)
    _require_gpu_prices(runs)
    claims = [f(runs) for f in (_claim1, _claim2, _claim3, _claim4, _claim5, _claim6, _claim7)]
    return {
        "kind": "claims",
        "verdicts": list(VERDICTS),
        "claims": [c.record(catalog) for c in claims],
    }
