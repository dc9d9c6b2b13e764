"""Human-readable numbers at the edge: SI values in, short strings with units out."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chipwise.catalog import units
from chipwise.catalog.units import JOULES_PER_KWH, SECONDS_PER_DAY, SECONDS_PER_HOUR
from chipwise.serve.plan import chip_count, count_text, plan_label


def _scaled(value: float, steps: list[tuple[float, str]], digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    a = abs(value)
    for factor, suffix in steps:
        if a >= factor:
            scaled = value / factor  # past a million of the largest unit, in powers of ten (1.2e+16 GWh)
            return f"{_sig(scaled, digits) if abs(scaled) < 1e6 else f'{scaled:.3g}'} {suffix}".strip()
    factor, suffix = steps[-1]
    return f"{_sig(value / factor, digits)} {suffix}".strip()


def _sig(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - mag)
    return f"{x:,.{decimals}f}"


def significant(value: float, digits: int = 3) -> str:
    """A bare number to `digits` significant figures, with thousands separators: '0.312', '4.50', '1,979'."""
    return _sig(value, digits)


def flops(value: float) -> str:
    return _scaled(value, [(1e18, "EFLOP/s"), (1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1.0, "FLOP/s")])


def flop(value: float) -> str:
    """An amount of work: '140 GFLOP' for a 70B model's token, '1.10 MFLOP' for a toy's (not '0.00 GFLOP')."""
    return _scaled(value, [(1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP"), (1.0, "FLOP")])


def count(value: float) -> str:
    if value is not None and abs(value) >= 1e15:
        return f"{value:.3g}"  # past a thousand T: 1e+18, not 1,000,000 T
    return _scaled(value, [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"), (1.0, "")])


def bytes_(value: float) -> str:
    return _scaled(value, [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")])


def gib(value: float) -> str:
    return f"{value / 2**30:,.1f} GiB"


def bandwidth(value: float) -> str:
    return _scaled(value, [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1.0, "B/s")])


def power(value: float) -> str:
    return _scaled(value, [(1e9, "GW"), (1e6, "MW"), (1e3, "kW"), (1.0, "W")])


def energy(value_j: float) -> str:
    kwh = value_j / JOULES_PER_KWH
    return _scaled(kwh, [(1e9, "TWh"), (1e6, "GWh"), (1e3, "MWh"), (1.0, "kWh"), (1e-3, "Wh")])


def duration(seconds: float) -> str:
    if seconds is None or math.isnan(seconds) or math.isinf(seconds):
        return "-"
    if seconds >= 365.25 * SECONDS_PER_DAY:
        years = seconds / (365.25 * SECONDS_PER_DAY)
        return f"{years:.2f} y" if years < 1e3 else f"{years:,.0f} y" if years < 1e6 else f"{years:.2e} y"
    if seconds >= 2 * SECONDS_PER_DAY:
        return f"{seconds / SECONDS_PER_DAY:.1f} d"
    if seconds >= 2 * SECONDS_PER_HOUR:
        return f"{seconds / SECONDS_PER_HOUR:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


_LATENCY_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"))


def latency(seconds: float | None) -> str:
    """A latency to three significant figures: '850 us', '26.7 ms', '1.37 s'."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    return _scaled(seconds, list(_LATENCY_UNITS))


def unit_for(values: Sequence[float | None], units: Sequence[tuple[float, str]]) -> tuple[float, str]:
    """The largest of `units` ((size, name), largest first) that the largest finite value reaches, so that it shows
    with at least one whole digit; the smallest where none does."""
    top = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    return next((u for u in units if top >= u[0]), units[-1])


def latency_unit(values: Sequence[float | None]) -> tuple[float, str]:
    """The unit that shows the largest of several latencies with at least one whole digit: (1e-3, 'ms')."""
    return unit_for(values, _LATENCY_UNITS)


def latencies(values: Sequence[float | None], unit: tuple[float, str] | None = None, sep: str = " / ") -> str:
    """Several latencies (p50 / p90 / p99) in one unit, the largest's unless given: '118 / 318 / 950 ms',
    '0.118 / 0.318 / 1.37 s'; with a given unit the figures come bare (the unit goes in a column header)."""
    if all(v is None or not math.isfinite(v) for v in values):
        return "-"
    factor, name = unit or latency_unit(values)
    text = sep.join("-" if v is None or not math.isfinite(v) else _sig(v / factor, 3) for v in values)
    return text if unit else f"{text} {name}"


#: dollars in the unit that suits them ('$6.88M', '$35k', '$412'): catalog.units.usd, which the claims' texts share
usd = units.usd


def price(value: float | None) -> str:
    """A small price with its cents, or three significant figures below a dollar: '$2.16', '$0.0654'; from a
    million as `usd` writes it ('$6.88M', not '$6,880,000.00': a million-chip fleet's hour)."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 1e6:
        return usd(value)
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.3g}"


def per_mtok(value: float) -> str:
    """Dollars per million tokens, bare: cents from a dime up ('2.61'), three significant figures below ('0.000357'
    for a toy, not '0.00') and from a billion up."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 1e9:  # a run failures never let finish: '2.08e+29', not thirty digits
        return f"{value:.3g}"
    return f"{value:,.2f}" if abs(value) >= 0.1 else f"{value:.3g}"


def percent(value: float) -> str:
    """'72.0%'; past ten times the whole, whole percents with separators ('23,008%', not '23008.0%')."""
    if value is None or math.isnan(value):
        return "-"
    return f"{100 * value:,.0f}%" if abs(value) >= 10 else f"{100 * value:.1f}%"


def share(value: float) -> str:
    """A part of a whole that stays readable when small: '25.0%', '0.04%', '0.0001%' (never '0.0%' for a part)."""
    if value <= 0 or value >= 0.001:
        return percent(value)
    return f"{100 * value:.2g}%"


def carbon(kg: float) -> str:
    return _scaled(kg / 1000.0, [(1e6, "Mt"), (1e3, "kt"), (1.0, "t"), (1e-3, "kg")]) + " CO2e" if kg else "0 t CO2e"


def plan(p: dict[str, object]) -> str:
    """A training plan in one short string: 'TP4 PP8v6 DP16 CP2 mb2 Z1 sel-AC'."""
    parts = [f"TP{p['tp']}"]
    if p.get("pp", 1) != 1:
        parts.append(f"PP{p['pp']}" + (f"v{p['vpp']}" if p.get("vpp", 1) != 1 else ""))
    parts.append(f"DP{p['dp']}")
    for key in ("cp", "ep"):
        if p.get(key, 1) != 1:
            parts.append(f"{key.upper()}{p[key]}")
    parts.append(f"mb{p.get('microbatch', 1)}")
    zero = int(str(p.get("zero", 0)))
    parts.append(("HSDP" if p.get("hsdp") else "FSDP") if zero == 3 else f"Z{zero}")
    rec = str(p.get("recompute", "none"))
    if rec != "none":
        parts.append({"selective": "sel-AC", "full": "full-AC"}.get(rec, rec))
    return " ".join(parts)


def serving_fleet(r: Mapping[str, Any]) -> str:
    """The chips of a serving prediction: '8 x h200', or per pool, '4 x b200 (prefill) + 12 x h200 (decode)'."""
    pools = r.get("plan") or {}
    if pools.get("disaggregated"):
        return " + ".join(
            f"{count_text(pools[role]['chips'])} x {pools[role]['hardware']} ({role})" for role in ("prefill", "decode")
        )
    return f"{count_text(r.get('chips', 0))} x {r.get('hardware', '?')}"


def load_share(load: Mapping[str, Any]) -> str:
    """An open-loop load against the deployment's capacity: '72.0% of the 20 req/s the deployment sustains'."""
    capacity = float(load["capacity_requests_per_s"])
    rate = f"{capacity:,.0f}" if capacity >= 1000 else f"{capacity:.3g}"  # 35,795, not 3.58e+04
    return f"{percent(float(load['utilisation']))} of the {rate} req/s the deployment sustains"


def _speculative(label: str) -> str:
    """'+EAGLE k3' from a Speculation.label(), with a stated acceptance ('+EAGLE k3@0.99'), so that options that
    differ only in it read apart (a method's prior or a measured profile is the method's own)."""
    head = "+" + label.split(",", maxsplit=1)[0].replace(" k=", " k")
    stated = re.search(r"acceptance ([\d.]+) \(", label)
    return head + (f"@{stated.group(1)}" if stated else "")


def serving_plan(p: Mapping[str, Any]) -> str:
    """A serving pool's plan in one short string: 'TP4 EP4 ADP b256 +mtp k3 x2' (with a scheduler's polling interval or
    batch waiting where set: 'recv30', 'wait40@0.8'; serve.plan.plan_label)."""
    speculative = _speculative(str(p["speculative"])) if p.get("speculative") else ""
    label = plan_label(
        p["tp"], p.get("pp", 1), p.get("ep", 1), bool(p.get("attention_dp")), p["max_batch"], speculative,
        p.get("recv_interval", 1), p.get("batch_wait_iters", 0), p.get("batch_wait_ratio", 0.0),
        p.get("piecewise_graphs"), bool(p.get("adp_balance", True)),
    )  # fmt: skip
    return f"{label} x{count_text(p['replicas'])}"


def any_plan(value: Any) -> str:
    """A training plan ('TP4 DP512 CP2 mb1 FSDP'), a serving pool's ('TP2 b256 x4') or a disaggregated deployment's
    ('P: TP1 b8 x2 | D: TP4 b256 x1'), given as a mapping or its JSON text (a store's column); '-' for none."""
    p = json.loads(value) if isinstance(value, str) else value
    if isinstance(p, dict) and {"tp", "dp"} <= set(p):
        return plan(p)
    if isinstance(p, dict) and {"tp", "max_batch", "replicas"} <= set(p):  # a serving pool: 'TP2 b256 x4'
        return serving_plan(p)
    if isinstance(p, dict) and p.get("disaggregated") and isinstance(p.get("prefill"), dict):
        return " | ".join(f"{role[0].upper()}: {serving_plan(p[role])}" for role in ("prefill", "decode"))
    return json.dumps(p, separators=(",", ":")) if p else "-"


def check_status(v: Mapping[str, Any]) -> str:
    """A simulated plan-serve option against its targets: 'met', 'NOT met', '-' (no SLO), with ', overloaded'
    where it fell behind an open-loop load."""
    text = "-" if v["slo_met"] is None else ("met" if v["slo_met"] else "NOT met")
    if not v.get("keeps_up", True):
        text = "overloaded" if v["slo_met"] is None else f"{text}, overloaded"
    return text


#: A first token this late (p50) under a closed loop with no TTFT target means users queue for a batch slot.
QUEUED_FIRST_TOKEN_S = 10.0


def _passed(v: Mapping[str, Any]) -> bool:
    """A simulated option that kept up with its load and did not miss its SLO."""
    return bool(v["keeps_up"]) and v["slo_met"] is not False


def _option(row: Mapping[str, Any]) -> str:
    """'b200 -> h200, P: TP1 b64 x1 | D: TP2 b128 x1': an option's chips and plan (a ranking row's one plan, or a
    check's pools)."""
    pools = {"": row["plan"]} if "tp" in row["plan"] else row["plan"]
    plan = " | ".join((f"{role[0].upper()}: " if len(pools) > 1 else "") + serving_plan(p) for role, p in pools.items())
    return f"{row['hardware'].replace('>', ' -> ')}, {plan}"


#: The footnote to a chip count with its rented chips in brackets.
RENTED_NOTE = (
    "n [m]: the fleet uses n chips and rents m, its provider's units that hold them (a Cloud TPU slice, an EC2 "
    "instance size; catalog show SYSTEM --sources); $/h and $/M pay for m"
)


def elasticity(v: float) -> str:
    """An elasticity to two decimals, three under 0.01; one that rounds to nothing unsigned (never '-0.000'): the
    sensitivity table's and its plot's."""
    if abs(v) < 0.0005:
        return "0"
    return f"{v:+.2f}" if abs(v) >= 0.01 else f"{v:+.3f}"


def carried_efficiency_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """The footnote to the ‡ mark (the ranking table's and its plot's alike): chips no training run of whose family
    is in the fit run at a predecessor's fitted fractions of peak; '' where no row has it."""
    carried = {str(r.get("hardware")): r["efficiency_carried_from"] for r in rows if r.get("efficiency_carried_from")}
    if not carried:
        return ""
    which = "; ".join(f"{chip} from {family}" for chip, family in carried.items())
    return (
        "‡ no training run of these chips' families is in the fit: their efficiencies are a predecessor's "
        f"({which}; 'chipwise catalog show ID --sources')"
    )


def unfitted_efficiency_note(
    rows: Sequence[Mapping[str, Any]], reason_at: str = "--json efficiency_unfitted_reason"
) -> str:
    """The footnote to the † mark: chips whose families' training efficiencies are unfitted priors
    (train.explain.unfitted_reason); '' where no row has it. `reason_at`: where each row's reason is given (the web
    page's answer has no --json)."""
    chips = list(dict.fromkeys(str(r.get("hardware")) for r in rows if r.get("efficiency_unfitted")))
    if not chips:
        return ""
    return (
        "† no published training run of these chips' families (nor of one they take figures from) is in the fit: "
        "they run on the catalog's prior efficiencies, and where those charge no framework overhead their times lean "
        f"optimistic ({', '.join(chips)}; {reason_at}, 'chipwise catalog show ID --sources')"
    )


#: a fix that names the command line's --set ('give one: --set trn4.unit_price=USD'), which a web page's user cannot
#: give: the server's starter can ('chipwise web --set ...')
_CLI_SET = re.compile(r"(?<!chipwise web )--set (\S+=[^\s)']+)")


def server_set(text: str) -> str:
    """`text` with each '--set ID.FIELD=VALUE' fix worded for the web page: the server is started with it
    ('chipwise web --set trn4.unit_price=USD' when starting the server). A page user had been told a --set they
    cannot give."""
    return _CLI_SET.sub(r"'chipwise web --set \1' when starting the server", text)


def web_worded(obj: Any) -> Any:
    """An answer of the web page's with every text's --set fix worded for it (server_set), the rest as it is."""
    if isinstance(obj, str):
        return server_set(obj)
    if isinstance(obj, Mapping):
        return {k: web_worded(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [web_worded(v) for v in obj]
    return obj


def estimate_note(chips: Sequence[str], key: str, pricing: str = "") -> str:
    """The footnote to the § mark: these chips' price is an estimate (`key` of --json says how) standing in for a
    published price of their system's provider in the mode (`pricing`, '' for any rental mode): a catalog estimate
    (Trn2 has no on-demand SKU), on-demand x the mode's ratio (the catalog lists GCP's H100 spot price, not AWS's
    for p5: it had read 'no rental offer in the catalog'), a commitment carried to today's rate, a `--set` price.
    For an owned fleet, a cost built on estimated inputs (a chip price or datacenter figures no source publishes)."""
    names = ", ".join(dict.fromkeys(chips))
    if pricing == "owned":
        return f"§ the owned cost of {names} rests on estimated inputs ('chipwise tco CHIP' lists each with its source)"
    return (
        f"§ {names}: priced by an estimate, not a published {pricing or 'rental'} price of the system's provider "
        f"(--json: {key} gives its derivation)"
    )


def _fitted_alternative(report: Mapping[str, Any]) -> str:
    """Where the winner runs on an engine's defaults (no serving run of its family fitted), the cheapest option on
    fitted figures: the simulated checks' first that passes, else the ranking's first (an estimate)."""
    best = report["best"]
    if not best.get("engine_defaults"):
        return ""
    passed = [v for v in report.get("verified") or () if _passed(v) and not v.get("engine_defaults")]
    ranked = [r for r in report.get("results") or () if not r.get("engine_defaults")]
    if passed:
        alt, how = passed[0], "simulated"
    elif ranked:
        alt, how = ranked[0], "estimated"
    else:
        return ""
    cost = price(alt["cost_usd_per_mtok"])
    return f"; cheapest on fitted figures ({how}): {_option(alt)}, {_chips_rented(alt)}, {cost} per M"


def _chips_rented(row: Mapping[str, Any]) -> str:
    """'16 chips', or '16 chips in 24 rented' where the provider's units hold more than the fleet uses."""
    rented = row.get("billed_chips") or row["chips"]
    return chip_count(row["chips"]) + (f" in {count_text(rented)} rented" if rented > row["chips"] + 1e-9 else "")


#: how a prediction names each metric of its track record (catalog.track_record)
RECORD_LABELS = {
    "output_tokens_per_s_per_chip": "output tok/s per chip",
    "tokens_per_s_per_chip": "tokens/s per chip",
    "tpot_s": "TPOT",
    "ttft_s": "TTFT",
}


#: the median signed error (%) from which the one-line track record says which way a metric's runs lean: a spread
#: alone reads as symmetric ('TTFT within 84%' of vllm on cdna3, whose median is -84%: predicted low in most); 10%:
#: above the training record's median |error| (7%), below which a lean is within the model's usual spread
LEAN_PCT = 10.0


def track_record_text(record: Mapping[str, Any]) -> str:
    """How close the model has come on published runs like this one, a clause per metric: half of them within
    +-x%, with how many runs of which scope, and the median signed error where it reaches LEAN_PCT ('' without a
    record)."""
    if not record:
        return ""
    parts = []
    for m, r in record.items():
        lean = r["median_error_pct"]
        side = f"; median {lean:+.0f}%: predicted {'high' if lean > 0 else 'low'}" if abs(lean) >= LEAN_PCT else ""
        parts.append(
            f"{RECORD_LABELS[m]} within {r['median_ape_pct']:.0f}% ({count_text(r['n'])} runs, {r['scope']}{side})"
        )
    return "Track record: half of the published runs like it read " + "; ".join(parts) + " (docs/accuracy.md)"


def plan_serve_why(report: Mapping[str, Any]) -> str:
    """Why the answer wins, from its simulated check: what its chips cost an hour, where its steady iteration goes
    (the three largest components), and the next option that also passed, with its cost ('' with no answer)."""
    from chipwise.serve.iteration import COMPONENT_LABELS  # the serving model, scipy with it: here, not at start-up

    best = report.get("best")
    if not best or not _passed(best) or not best.get("breakdown"):
        return ""
    parts = best["breakdown"]
    total = sum(parts.values())
    top = sorted(parts, key=lambda k: -parts[k])[:3]
    shares = ", ".join(f"{COMPONENT_LABELS.get(k, k)} {100 * parts[k] / total:.0f}%" for k in top if parts[k] > 0)
    chips = best["chips"]
    rented = best.get("billed_chips") or chips
    hourly = f"{price(best['cost_usd_per_hour'])}/h"
    if ">" not in best["hardware"] and rented:  # one chip kind: its hourly price
        hourly += f" ({price(best['cost_usd_per_hour'] / rented)} per chip-hour"
        hourly += ", an estimate)" if best.get("price_estimated") else ")"
    # the shares are of the iteration the breakdown prices, and its length is theirs: the mean TPOT beside them had
    # paired Llama-3.1-8B's 4.32 ms with the shares of a 19.4 ms iteration that carries 120,000-token prompts' chunks
    # ('its steady decode iteration (4.32 ms a token) goes to attention ... 61%'; it now reads 'its steady iteration
    # (19.4 ms, a decode step with its share of the prompts) goes to ...'); a split's decode pool runs no prompts
    if best.get("disaggregated"):
        iteration = f"its decode pool's steady iteration ({latency(total)})"
    else:
        iteration = f"its steady iteration ({latency(total)}, a decode step with its share of the prompts)"
    text = (
        f"Why {best['hardware'].replace('>', ' -> ')}: {_chips_rented(best)} at {hourly} "
        f"{'carry' if chips != 1 else 'carries'} the load; {iteration} goes to {shares}"
    )
    cost_key = "cost_usd_per_hour" if report.get("load", {}).get("kind") == "rate" else "cost_usd_per_mtok"
    others = [
        v for v in report.get("verified") or () if v is not best and _passed(v) and v["hardware"] != best["hardware"]
    ]
    if others:
        nxt = others[0]
        unit = "/h" if cost_key == "cost_usd_per_hour" else " per M output tokens"
        text += (
            f". Next that passed: {nxt['hardware'].replace('>', ' -> ')}, {_chips_rented(nxt)} at "
            f"{price(nxt[cost_key])}{unit}"
        )
    return text


def first_rows(report: dict[str, Any], top: int | None) -> dict[str, Any]:
    """The report with its first `top` results (all for None), as --top shows them, and as many more as its
    simulated checks refer to: a check's `rank` (and the best one's) indexes `results` (results[rank - 1]), and a
    check of the fifth row kept none to join under --top 2."""
    if top is not None:
        ranks = [int(v["rank"]) for v in report.get("verified") or () if v.get("rank")]
        report["results"] = report["results"][: max([top, *ranks])]
    return report


def explain_plan_serve(report: dict[str, Any]) -> dict[str, Any]:
    """The report with its verdict and why the answer wins, as every interface gives them."""
    report["verdict"] = plan_serve_verdict(report)[0]
    report["why"] = plan_serve_why(report)
    report["track_record_text"] = track_record_text((report.get("best") or {}).get("track_record") or {})
    return report


def plan_serve_verdict(report: Mapping[str, Any]) -> tuple[str, bool]:
    """The line that answers a plan-serve search, and whether it found an option: the cheapest simulated one that
    keeps up and meets the SLO, or the closest and what to relax."""
    best = report.get("best")
    if not best and not report.get("results"):
        goal = "meets the SLO at this load" if report.get("slo") else "serves this load"
        return f"No option {goal} on the hardware searched (each chip's reason below)", False
    if not best:
        return "No option could be simulated: add hardware or lower the load", False
    what = _option(best)
    cost = f"{_chips_rented(best)}, {price(best['cost_usd_per_mtok'])} per M output tokens"
    if best.get("engine_defaults"):  # no serving measurement of its family fitted: say so where the answer is
        cost += f"; {', '.join(best['engine_defaults'])} on engine defaults, not fitted"
    for chip, source in (best.get("engine_carried") or {}).items():
        cost += f"; {chip}'s engine figures carried from {source}"
    if best.get("price_estimated"):
        cost += f"; {', '.join(best['price_estimated'])} priced by a catalog estimate"
    if _passed(best):
        cost += _fitted_alternative(report)
        if best["slo_met"]:
            lead = "Cheapest that meets the SLO"
        else:
            lead = "Cheapest that keeps up with the load" if report["load"]["kind"] == "rate" else "Cheapest per token"
        wait = (best.get("ttft_s") or {}).get("p50") or 0.0
        unbounded = not any(k.startswith(("ttft", "e2e")) for k in report.get("slo") or {})
        if report["load"]["kind"] == "closed" and unbounded and wait > QUEUED_FIRST_TOKEN_S:
            # users beyond the batch slots queue for one: no target said how long a first token may take
            cost += f"; its users wait {duration(wait)} for a first token (p50): give a TTFT target to size for it"
        return f"{lead} in simulation: {what} ({cost})", True
    return (
        f"No simulated option meets the SLO; the closest is {what} ({cost}, {check_status(best)}): relax the SLO, "
        "lower the load or add hardware" + _ttft_miss(best, report.get("slo") or {}) + _splits_untried(report),
        False,
    )


def waiting_share(r: Mapping[str, Any]) -> float:
    """The share of a serving run's mean TTFT spent waiting: to start, and in a split for the decode pool after the
    prefill (ttft_decode_wait_s; at 95.7% of a split's capacity the wait to start alone read 0.0% of a TTFT that was
    nearly all the decode wait). NaN where the run has no mean TTFT or wait."""
    ttft = (r.get("ttft_s") or {}).get("mean")
    waited = (r.get("ttft_wait_s") or {}).get("mean")
    if not ttft or waited is None or not math.isfinite(waited):
        return math.nan
    return float((waited + (r.get("ttft_decode_wait_s") or {}).get("mean", 0.0)) / ttft)


def waits_named(r: Mapping[str, Any]) -> str:
    """What waiting_share counts, in words: the wait to start, and a split's wait for the decode pool."""
    return "the waits to start and for the decode pool" if "ttft_decode_wait_s" in r else "the wait to start"


def _splits_untried(report: Mapping[str, Any]) -> str:
    """The verdict's note that a closed loop's prefill/decode splits, tried only where asked for, were not ('' where
    they were, or the load is not a closed loop): DeepSeek-R1's 64 users of 16,000-token prompts on TPU v7 meet a
    TTFT p99 of 10 s and a TPOT p99 of 30 ms on no count of colocated replicas, and on a split."""
    if report["load"]["kind"] != "closed" or report.get("splits", True):
        return ""
    return "; prefill/decode pool splits, which a closed loop tries only where asked for, were not tried"


def _ttft_miss(best: Mapping[str, Any], slo: Mapping[str, float]) -> str:
    """Where a missed TTFT target's time went: waiting (waiting_share: to start, and in a split for the decode pool;
    more replicas help, decode replicas where the decode wait is the larger) or the prompts' own iterations (a faster
    prefill helps), from the mean waits' share of the mean TTFT ('' when no TTFT target was missed or the check has
    no wait)."""
    ttft = best.get("ttft_s") or {}
    missed = [k for k, v in slo.items() if k.startswith("ttft_") and ttft.get(k.split("_")[1], 0.0) > v]
    share = waiting_share(best)
    if not missed or not math.isfinite(share):
        return ""
    what = waits_named(best)
    if share >= 0.5:
        decode = (best.get("ttft_decode_wait_s") or {}).get("mean", 0.0) > best["ttft_wait_s"]["mean"]
        return f"; its TTFT is mostly {what} ({percent(share)} of the mean): more {'decode ' * decode}replicas help"
    return (
        f"; its TTFT is mostly its prompts' own iterations ({what} {percent(share)} of the mean): a faster "
        "prefill helps (more tensor parallelism, a prefill pool, a faster chip)"
    )


def number_text(value: float) -> str:
    """A catalog figure's number as a table shows it: whole without its '.0' (144, not 144.0), else to 10
    significant digits, which a float's own text had carried past the figure's (x1.1 of 4.9 TB/s read
    5.390000000000001)."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.10g}"


def value_text(value: float | str, unit: str) -> str:
    """A figure's value with its unit, a ratio's bare ('0.9', not '0.9 1'); a number as number_text writes it, a
    text figure as given. The one writer of a figure for `catalog show`, the WHAT-IF lines and --sources, which
    had each kept their own (--sources had read 21.560000000000002 TB/s beside the banner's 21.56)."""
    text = value if isinstance(value, str) else number_text(value)
    return text if unit in ("", "1") else f"{text} {unit}"


def figure_value(f: Mapping[str, Any]) -> str:
    """A catalog figure, as a result's JSON carries it ({'value', 'unit'}), as value_text writes it."""
    return value_text(f["value"], str(f.get("unit") or ""))


def bytes_binary(value: float) -> str:
    """A size in powers of 1,024, scaled to its unit: '128 KiB' of KV cache a token, '3.81 GiB', '1.50 TiB'."""
    units = [(2.0**50, "PiB"), (2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B")]
    return _scaled(value, units)


#: counts past a thousand T, named (a thousand T is a quadrillion): '8.19 quintillion', not '8.19e+18'
_LARGE_COUNTS = [(1e30, "nonillion"), (1e27, "octillion"), (1e24, "septillion"), (1e21, "sextillion"),
                 (1e18, "quintillion"), (1e15, "quadrillion")]  # fmt: skip


def parameters(value: float) -> str:
    """A parameter count: '70.6 B', '1.03 T'; past a thousand T in words ('8.19 quintillion'), never a bare
    '8.19e+18' that reads as no unit."""
    if value is not None and math.isfinite(value) and abs(value) >= 1e15:
        return _scaled(value, _LARGE_COUNTS)
    return count(value)


def yes_no(value: object) -> str:
    """A flag as a table shows it: 'yes' or 'no' (a catalog's 1.0 and 0.0 included)."""
    return "yes" if value not in (False, 0, 0.0, "false", "no", "") else "no"


#: where a long identifier may break across lines: after its separators ('Qwen2.5-14B-' / 'Instruct')
_BREAKS = re.compile(r"(?<=[-/_,])")


def break_at_separators(text: str, width: int) -> str:
    """`text` in lines of at most `width` characters, broken only after a separator ('-', '/', '_', ','), never
    inside a word or a number: 'Mistral-7B-Instruct-v0.3' at 12 is 'Mistral-7B-', 'Instruct-' and 'v0.3'. A piece
    longer than `width` keeps its own line whole (the table folds it where it must)."""
    if width <= 0 or len(text) <= width:
        return text
    lines = [""]
    for piece in _BREAKS.split(text):
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return "\n".join(lines)


def jsonable(obj: Any) -> Any:
    """Plain JSON values, as --json, the web page and the Python API give them: NaN and infinities become null,
    NumPy scalars and arrays numbers and lists, tuples lists, paths text."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating | float):
        value = float(obj)
        return value if math.isfinite(value) else None
    if isinstance(obj, Path):
        return str(obj)
    return obj


def model_label(report: Mapping[str, Any]) -> str:
    """A report's model as a title names it: its id, after the name the user gave where that is another
    ('deepseek-r1 = deepseek-v3'); the JSON keeps the id in `model` and the name given in `model_alias`."""
    alias = report.get("model_alias")
    return f"{alias} = {report['model']}" if alias else str(report["model"])
