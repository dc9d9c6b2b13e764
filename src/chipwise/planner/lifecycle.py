"""`chipwise plan lifecycle`: a model's whole life - train it on one fleet, serve it on another for N months -
and the best (train on X, serve on Y) pair against the best single-vendor choice, in cost, energy and carbon.

    total(X, Y) = expected training cost on X  +  serving $/hour on Y x hours of service
    energy and carbon likewise (training: the prediction's expected figures; serving: the energy and CO2e an hour
    of plan serve's economics - chips x [P_it(busy) b + P_it(idle) (1 - b)] x PUE at the site of the serving price,
    x its grid, with b each pool's busy share in plan serve's simulated check - x hours)

The serving fleets are plan serve's answers (its planner call: the steady-state ranking with prefill/decode splits,
the cheapest options simulated and resized until they meet the SLO) for all the hardware, and for each vendor's own
where none of that vendor's options passed in the first, so that the best single-vendor pair serves on a fleet plan
serve checked too; only options whose simulated check
kept up and met the SLO are priced (the steady-state estimate alone had priced fleets the check rejects: 84 TPU v6e
for Llama 3.1 70B at 100 req/s, where the check needs 104).

The two terms are independent, so the best pair joins the best training fleet to the best serving fleet; the best
single-vendor plan is the best pair whose chips all share a vendor.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.units import SECONDS_PER_HOUR, SECONDS_PER_MONTH
from chipwise.economics.pricing import catalog_estimate
from chipwise.economics.tco import COMMITMENT_TERM_S, COMMITMENTS
from chipwise.errors import ChipwiseError, InfeasibleError, one_of
from chipwise.hardware import hardware
from chipwise.planner.serving_economics import priced_system
from chipwise.planner.serving_outcome import stat_value
from chipwise.planner.serving_plan import plan_serving
from chipwise.planner.serving_split import handover_note
from chipwise.planner.training import check_economics_options, plan_training
from chipwise.serve.plan import chip_count
from chipwise.serve.quant import KV_PRECISIONS, check_precision
from chipwise.workload.lengths import LengthDist, check_context
from chipwise.workload.load import Load, load_of
from chipwise.workload.presets import load_model

OBJECTIVES = ("cost", "energy", "carbon")
#: The longest service priced (months): 50 years, past any model's service life; 1e30 months had priced the serving
#: side at $5e+33 without a word. The serving rate's bound is plan serve's own (workload.bounds.RATE).
MAX_SERVE_MONTHS = 600
#: the chips' reasons a side with no priced fleet names before counting the others
REASONS_SHOWN = 3
#: plan serve's precision options as its reasons name them (--precision, --kv-precision), lifecycle's --serve-...
SERVE_OPTION = re.compile(r"(?<![\w-])--(kv-)?precision\b")
#: the reason of a chip that runs a side but has no price to rank it by, in the mode asked for (it had read
#: 'on-demand' whatever the mode)
UNPRICED = "{chip} has no {pricing} price in the catalog. Fix: add one in a --catalog file"
#: what lifecycle says in place of plan serve's fix for engines that hand no KV cache over (an engine by --engine,
#: planner.serving_split.handover_note): it had passed 'Fix: --engine vllm-neuron to price such splits' on, and
#: 'plan lifecycle --engine' reads 'No such option: --engine'
DEFAULT_ENGINES = "; plan lifecycle serves each chip on its default engine"


def _training_options(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in report["results"]:
        out.append(
            {
                "hardware": r["hardware"],
                "system": r.get("system", r["hardware"]),
                "vendor": r.get("vendor", ""),
                "projected": r.get("projected", False),
                "plan": r["plan"],
                # the precision asked for and the one the chip computes in, as plan train gives them: fp4 asked of an
                # H100 had read fp4 with no word that it runs no faster than fp8
                "precision": r.get("precision"),
                "compute_precision": r.get("compute_precision"),
                "precision_listed": r.get("precision_listed", False),
                "price_estimated": catalog_estimate(r.get("price_source")),
                "time_s": r.get("expected_time_to_train_s", r.get("time_to_train_s")),
                "cost": r.get("expected_cost_usd", r.get("cost_usd")),
                "energy": r.get("expected_energy_j", r.get("energy_j")),
                "carbon": r.get("expected_co2e_kg", r.get("co2e_kg")),
            }
        )
    return [o for o in out if o["cost"] is not None and math.isfinite(o["cost"])]


def _passed(checked: Mapping[str, Any]) -> bool:
    """Whether plan serve's simulated check of an option kept up with the load and met the SLO."""
    return bool(checked["keeps_up"]) and checked["slo_met"] is not False


def _serving_options(catalog: Catalog, reports: Sequence[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    """The options plan serve's simulated checks passed, in any of its reports: the cheapest for each deployment
    (a system, or a split's two), priced for the serving period."""
    hw = hardware(catalog)
    hours = seconds / SECONDS_PER_HOUR
    best: dict[str, dict[str, Any]] = {}
    for report in reports:
        pricing = report.get("pricing", "on-demand")
        for v in report["verified"]:
            if not _passed(v) or not math.isfinite(v.get("cost_usd_per_hour", math.inf)):
                continue
            if v["system"] in best and best[v["system"]]["usd_per_hour"] <= v["cost_usd_per_hour"]:
                continue
            systems = [priced_system(hw.system(sid), pricing) for sid in v["system"].split(">")]
            guessed = v["price_estimated"]  # the pools' chips priced by a catalog estimate, as plan serve marks them
            joules_h, co2_h = v["energy_j_per_hour"], v["co2e_kg_per_hour"]  # its pools at their busy shares
            best[v["system"]] = {
                "hardware": v["hardware"],
                "system": v["system"],
                "vendors": list(dict.fromkeys(s.chip.vendor for s in systems)),
                "projected": v.get("projected", False),
                "disaggregated": bool(v.get("disaggregated")),
                "plan": v["plan"],
                "chips": v["chips"],
                "billed_chips": v.get("billed_chips", v["chips"]),
                "usd_per_hour": v["cost_usd_per_hour"],
                "price_estimated": bool(guessed),
                "price_estimated_chips": list(dict.fromkeys(guessed)),
                # its chips on engine defaults (†) and with carried engine figures (‡), as plan serve marks them
                # (a serving fleet on Gaudi3's defaults had been picked unmarked)
                "engine_defaults": list(v.get("engine_defaults", [])),
                "engine_carried": dict(v.get("engine_carried", {})),
                # the providers its pools are priced at: a split at two is one operator running both, as plan serve
                # says (lifecycle had dropped them, and the note with them)
                "providers": list(v.get("providers") or []),
                "simulated": {"ttft_s": v.get("ttft_s"), "tpot_s": v.get("tpot_s"), "slo_met": v["slo_met"]},
                "cost": v["cost_usd_per_hour"] * hours,
                "energy_j_per_hour": joules_h,
                "co2e_kg_per_hour": co2_h,
                "energy": joules_h * hours,
                "carbon": co2_h * hours,
            }
    return list(best.values())


def _serve_reports(
    catalog: Catalog,
    model_name: str,
    hardware_ids: Sequence[str],
    load: Load,
    input_tokens: int,
    output_tokens: int,
    slo: Mapping[str, float],
    precision: str,
    workers: int,
    kv_precision: str | None = None,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    utilisation: float | None = None,
    disaggregated: bool = True,
    tick: Callable[[], None] | None = None,
) -> list[tuple[list[str], dict[str, Any]]]:
    """plan serve's answers for the load (prefill/decode splits tried where `disaggregated`, as plan serve tries them
    under a rate), priced in `pricing`, `region`, `provider` and `utilisation`, each with the
    hardware it searched: all of it, then each vendor's own for the vendors none of whose options the first search's
    simulated checks passed (the best single-vendor pair needs each vendor's serving fleet; searching every vendor
    again had taken a 9-chip lifecycle from 9 s to 70 s); `tick` hears of their progress."""
    hw = hardware(catalog)
    by_vendor: dict[str, list[str]] = {}
    for h in hardware_ids:
        by_vendor.setdefault(hw.system(h).chip.vendor, []).append(h)

    def serve(ids: Sequence[str]) -> dict[str, Any]:
        return plan_serving(
            catalog,
            model_name,
            ids,
            load,
            input_tokens,
            output_tokens,
            slo=slo,
            precision=precision,
            kv_precision=kv_precision,
            pricing=pricing,
            region=region,
            workers=workers,
            provider=provider,
            utilisation=utilisation,
            disaggregated=disaggregated,
            progress=None if tick is None else lambda what, done, total: tick(),
        )

    reports = [(list(hardware_ids), serve(hardware_ids))]
    if len(by_vendor) > 1:
        served = {
            next(iter(vendors))
            for v in reports[0][1]["verified"]
            if _passed(v) and len(vendors := {hw.system(sid).chip.vendor for sid in v["system"].split(">")}) == 1
        }
        reports += [(ids, serve(ids)) for vendor, ids in by_vendor.items() if vendor not in served]
    return reports


def _reservation_note(pricing: str) -> str:
    """How a reserved pair is charged: each side its own hours at the reservation's rate, as plan train charges a
    run and plan serve an hour served; the term's other hours taken as used by other work."""
    term_h = COMMITMENT_TERM_S[pricing] / SECONDS_PER_HOUR
    return (
        f"a {pricing} reservation is paid every hour of its {term_h:,.0f} h term: each side is charged its own hours "
        "at the reservation's rate (the training run's, the months served), the term's other hours taken as used by "
        "other work"
    )


def _checked_load(serve_rate: float, serve_months: float, train_tokens: float) -> Load:
    """The serving load; one line for a count that is not positive and finite, or past its bound: the serving
    rate plan serve's own (a million chips' load), the months MAX_SERVE_MONTHS."""
    for name, value in (
        ("--serve-rate", serve_rate),
        ("--serve-months", serve_months),
        ("--train-tokens", train_tokens),
    ):
        if not value > 0 or not math.isfinite(value):  # inf months priced every pair at inf: '- less cost'
            example = ", e.g. 12" if name == "--serve-months" else ""  # a number of months, not of tokens
            raise ChipwiseError(
                f"{name} must be positive and finite, got {value:g}. Fix: give a positive number{example}."
            )
    load = load_of(serve_rate, None, False, "--serve-")
    if serve_months > MAX_SERVE_MONTHS:
        raise ChipwiseError(
            f"--serve-months {serve_months:g} is more than {MAX_SERVE_MONTHS} (50 years, past any model's service "
            "life). Fix: give the months the model will serve, e.g. 12."
        )
    return load


def _without_handover(skipped: Mapping[str, Any], reason: str, unpriced: Collection[str]) -> str | None:
    """plan serve's line on the chips whose engines make no split, as lifecycle can act on it: the chips with no
    serving price left out (None where that is all of them: a split of chips with no price is no option anyway),
    and its fix (--engine, which lifecycle does not take) replaced by the engine lifecycle serves on. Owned, trn1,
    inf2 and h100-sxm had read 'neuron on trn1, neuron on inf2 made no prefill>decode split ... Fix: --engine
    vllm-neuron to price such splits' under neither chip priced; the line is now left out. Any other line is kept
    as it is. The engines come by name beside the line (`no_handover`), not read back out of its words."""
    missing = skipped.get("no_handover")
    if not missing:
        return reason
    kept = [e for e in str(missing).split(", ") if e.rpartition(" on ")[2] not in unpriced]
    return handover_note(kept, DEFAULT_ENGINES) if kept else None


def _serve_skipped(reports: Sequence[Mapping[str, Any]], unpriced: Collection[str] = ()) -> list[dict[str, str]]:
    """What plan serve's searches left unranked and why, each once (the per-vendor searches repeat the first's):
    a cross-engine split whose engines cache KV in different precisions is left out there with its fix
    (--kv-precision), and lifecycle had dropped it unsaid. `unpriced`: the chips with no serving price, whose
    engines' missing KV hand-over is not said (_without_handover)."""
    seen: list[dict[str, str]] = []
    for report in reports:
        for sk in report.get("skipped", []):
            # its fix by lifecycle's names for plan serve's options: '--kv-precision' is --serve-kv-precision here
            reason = _without_handover(sk, SERVE_OPTION.sub(r"--serve-\1precision", str(sk["reason"])), unpriced)
            if reason is None:  # a split of chips with no price
                continue
            entry = {"hardware": str(sk["hardware"]), "reason": reason}
            if entry not in seen:
                seen.append(entry)
    return seen


def _train_unpriced(train: Mapping[str, Any], t_opts: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(chip, why) for each training fleet plan train ran but could not price in the mode: its '-' row's
    price_note, as plan train's 'no price:' line gives it."""
    priced = {o["system"] for o in t_opts}
    fallback = f"no {train.get('pricing', 'on-demand')} price in the catalog"
    return [
        (str(r["hardware"]), str(r.get("price_note") or fallback))
        for r in train["results"]
        if r.get("system", r["hardware"]) not in priced
    ]


def _serve_unpriced(catalog: Catalog, reports: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(chip, why) for each system plan serve's searches could not price in the mode, each once: its 'no price'
    line ('tpu-v6e: capacity-block is sold by aws only, ...'), less the chip it starts with."""
    hw = hardware(catalog)
    found = []
    for report in reports:
        for system, reason in (report.get("unpriced") or {}).items():
            chip = hw.system(system).chip.id
            found.append((chip, str(reason).removeprefix(f"{chip}: ")))
    return list(dict.fromkeys(found))


def _no_price(train: Sequence[tuple[str, str]], serve: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """The chips asked for that a side could not price, each with the sides and why, one entry where both sides
    give the same reason. Capacity Blocks in us-east-1 on h100-sxm, trn2, tpu-v6e and b200 had left tpu-v6e out of
    every row and every note (plan train and plan serve each say 'no price: tpu-v6e: capacity-block is sold by aws
    only, ...'); owned, trn1 and inf2 (no unit price) had vanished before 'One vendor wins'."""
    sides: dict[tuple[str, str], list[str]] = {}
    for side, found in (("train", train), ("serve", serve)):
        for key in found:
            if side not in sides.setdefault(key, []):
                sides[key].append(side)
    return [{"hardware": chip, "sides": named, "reason": reason} for (chip, reason), named in sides.items()]


def _unserved_chips(reports: Sequence[Mapping[str, Any]], unpriced: Sequence[tuple[str, str]]) -> set[str]:
    """The chips none of whose serving systems has a price in the mode (a chip with one priced system still ranks)."""
    priced = {
        r["hardware"]
        for report in reports
        for r in report["results"]
        if math.isfinite(r.get("cost_usd_per_hour", math.nan))
    }
    return {chip for chip, _ in unpriced} - priced


def _train_skipped(train: Mapping[str, Any]) -> list[dict[str, str]]:
    """What plan train left unranked and why (a model that does not fit the chips), each once: lifecycle had named
    it only where no training fleet was left."""
    seen: list[dict[str, str]] = []
    for sk in train["skipped"]:
        entry = {"hardware": str(sk["hardware"]), "reason": str(sk["reason"])}
        if entry not in seen:
            seen.append(entry)
    return seen


class NoPairError(InfeasibleError):
    """No priced (train, serve) pair: a search that ranks nothing, exit code 1 (NO_OPTION_EXIT) as plan train's and
    plan serve's, where 2 is bad input (it had exited 2, which a script could not tell from a typo)."""

    exit_code = 1


def _problem_and_fix(reason: str) -> tuple[str, str]:
    """A planner's one line split into its problem and its fix ('' where it gives none)."""
    problem, _, fix = reason.partition(" Fix: ")
    return problem.rstrip("."), fix.rstrip(".")


def _why_none(report: Mapping[str, Any], priced: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Why a side (a training or serving search) has no priced option: each chip's reason (the search's own line,
    less its fix; 'no price' for a chip that runs it but has none), up to REASONS_SHOWN of them, and the first fix."""
    found = {o["hardware"] for o in priced}
    lines = {s["hardware"]: s["reason"] for s in report["skipped"]}
    for r in report["results"]:
        if r["hardware"] not in found:
            lines.setdefault(
                r["hardware"], UNPRICED.format(chip=r["hardware"], pricing=report.get("pricing", "on-demand"))
            )
    split = [(chip, *_problem_and_fix(reason)) for chip, reason in lines.items()]
    problems = [p if chip in p else f"{chip}: {p}" for chip, p, _ in split]
    shown = "; ".join(problems[:REASONS_SHOWN])
    if len(problems) > REASONS_SHOWN:
        shown += f"; and {len(problems) - REASONS_SHOWN} more chips"
    fix = next((f for _, _, f in split if f), "add hardware")
    return shown or "no hardware was searched", fix


def _why_unserved(serve: Mapping[str, Any]) -> tuple[str, str]:
    """Why plan serve gave no option to price: each chip's reason where none ranked, else its simulated checks,
    none of which met the SLO (the closest named)."""
    closest = serve.get("best")
    if not serve["results"] or closest is None or _passed(closest):  # none ranked, or none priced
        return _why_none(serve, [])
    missed = []
    for key, limit in (serve.get("slo") or {}).items():
        if (stat_value(closest, key) or 0.0) > limit:
            missed.append(key)
    what = f", missing {', '.join(missed)}" if missed else ("" if closest["keeps_up"] else ", falling behind the load")
    return (
        f"none of the options plan serve simulated meets the SLO (the closest, {closest['hardware']} on "
        f"{chip_count(closest['chips'])}{what})",
        "relax the SLO, lower the load or add hardware",
    )


def _no_pair(
    train: Mapping[str, Any],
    serve: Mapping[str, Any],
    t_opts: Sequence[Mapping[str, Any]],
    s_opts: Sequence[Mapping[str, Any]],
) -> NoPairError:
    """The one line for a lifecycle with no priced (train, serve) pair: which side has no option, and why."""
    train_why, train_fix = _why_none(train, t_opts)
    serve_why, serve_fix = _why_unserved(serve) if not s_opts else ("", "")
    training = f"no priced fleet can train {train['model']} on {chip_count(train['chips'])} ({train_why})"
    serving = f"no priced fleet can serve {serve['model']} at {serve['load']['label']} ({serve_why})"
    if not t_opts and not s_opts:
        return NoPairError(
            f"both sides fail: {training}, and {serving}. Fix: training: {train_fix}; serving: {serve_fix}."
        )
    if not t_opts:
        return NoPairError(f"the training side fails: {training}. Fix: {train_fix}.")
    return NoPairError(f"the serving side fails: {serving}. Fix: {serve_fix}.")


def plan_lifecycle(
    catalog: Catalog,
    model_name: str,
    train_tokens: float,
    serve_rate: float,
    serve_months: float,
    hardware_ids: Sequence[str],
    train_chips: int = 4096,
    input_tokens: int = 1024,
    output_tokens: int = 256,
    slo: Mapping[str, float] | None = None,
    train_precision: str = "bf16",
    serve_precision: str = "fp8",
    objective: str = "cost",
    workers: int = 1,
    serve_kv_precision: str | None = None,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    utilisation: float | None = None,
    disaggregated: bool = True,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The best (train, serve) pair by `objective` and the best single-vendor one. `workers` > 1: plan train's and plan
    serve's searches and checks may run side by side in that many processes (plan_training, plan_serving), `tick`
    called meanwhile (a spinner turned where no thread of its own turns it).
    `serve_kv_precision`: the serving KV cache's format, plan serve's --kv-precision (one format pairs a prefill
    pool and a decode pool whose engines default to different ones). `pricing` and `region`: both sides priced, and
    their energy and carbon reckoned, as plan train and plan serve take them (None: each fleet at its offer's
    region; `provider`: only that cloud's prices; `utilisation`: an owned fleet's share of calendar hours in paid
    work, each side's as plan train and plan serve take it). `disaggregated` false: the serving side whole replicas
    only, no prefill/decode splits (plan serve's --no-disaggregated)."""
    one_of(objective, OBJECTIVES, "objective")
    # before the long work, as plan train and plan serve check them
    check_economics_options(catalog, pricing, region, provider, utilisation, None)
    if serve_kv_precision is not None:  # before the long work, as plan serve checks it
        serve_kv_precision = check_precision(serve_kv_precision, KV_PRECISIONS, "KV-cache")
    load = _checked_load(serve_rate, serve_months, train_tokens)
    model = load_model(catalog, model_name)
    try:  # the prompt and answer within the model's context, as plan serve checks them, before the long work
        check_context(model, LengthDist.fixed(input_tokens), LengthDist.fixed(output_tokens))
    except ChipwiseError as exc:
        raise ChipwiseError(f"the serving side fails: {exc}") from None
    start = time.perf_counter()
    hw = hardware(catalog)
    vendor = {hw.system(h).chip.id: hw.system(h).chip.vendor for h in hardware_ids}
    train = plan_training(
        catalog,
        model_name,
        train_chips,
        hardware_ids,
        tokens=train_tokens,
        precision=train_precision,
        objective="cost",
        pricing=pricing,
        region=region,
        provider=provider,
        utilisation=utilisation,
        workers=workers,
        tick=tick,
    )
    seconds = serve_months * SECONDS_PER_MONTH
    searches = _serve_reports(
        catalog,
        model_name,
        hardware_ids,
        load,
        input_tokens,
        output_tokens,
        slo or {},
        serve_precision,
        workers,
        serve_kv_precision,
        pricing,
        region,
        provider,
        utilisation,
        disaggregated,
        tick,
    )
    reports = [report for _, report in searches]
    serve = reports[0]
    t_opts, s_opts = _training_options(train), _serving_options(catalog, reports, seconds)
    for o in t_opts:
        o["vendor"] = vendor.get(o["hardware"], "")
    for o in s_opts:
        o["vendor"] = ">".join(o["vendors"])
    if not t_opts or not s_opts:
        raise _no_pair(train, serve, t_opts, s_opts)
    train_unpriced, serve_unpriced = _train_unpriced(train, t_opts), _serve_unpriced(catalog, reports)
    key = objective

    def pair(t: dict[str, Any], s: dict[str, Any]) -> dict[str, Any]:
        return {
            "train": t,
            "serve": s,
            "cost_usd": t["cost"] + s["cost"],
            "energy_j": t["energy"] + s["energy"],
            "co2e_kg": t["carbon"] + s["carbon"],
            "cross_vendor": set(s["vendors"]) != {t["vendor"]},
            "projected": bool(t["projected"] or s["projected"]),
        }

    total = {"cost": "cost_usd", "energy": "energy_j", "carbon": "co2e_kg"}[key]
    pairs = [pair(t, s) for t in t_opts for s in s_opts]
    pairs.sort(key=lambda p: p[total])
    best = pairs[0]
    same = [p for p in pairs if not p["cross_vendor"]]
    best_single = same[0] if same else None
    saving = (1.0 - best[total] / best_single[total]) if best_single else None
    return {
        "kind": "plan-lifecycle",
        "model": train["model"],
        "model_alias": train.get("model_alias"),
        "objective": objective,
        # the prices both sides are ranked by, and the region their cost, energy and carbon are reckoned at, as plan
        # train's and plan serve's reports name them (None: each fleet at its offer's region, its energy and carbon
        # at that region's grid); it had read on-demand and no region, and taken neither option
        "pricing": pricing,
        "region": region,
        "provider": provider,
        "utilisation": utilisation,
        **({"reservation": _reservation_note(pricing)} if pricing in COMMITMENTS else {}),
        "training": {"tokens": train_tokens, "chips": train_chips, "precision": train_precision},
        "serving": {
            "rate_per_s": serve_rate,
            "months": serve_months,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "slo": dict(slo or {}),
            "precision": serve_precision,
            "kv_precision": serve_kv_precision,
        },
        "best": best,
        "best_single_vendor": best_single,
        "saving_vs_single_vendor": saving,
        "top": pairs[:10],
        # chip -> how a price that is a catalog estimate (no offer found) was derived, training's and serving's
        "price_estimates": {
            **{
                r["hardware"]: (r.get("price_source") or {}).get("derivation", "")
                for r in train["results"]
                if catalog_estimate(r.get("price_source"))
            },
            **{chip: how for report in reports for chip, how in report.get("price_estimates", {}).items()},
        },
        # plan serve's answer for all the hardware (its simulated check's cheapest that met the SLO), and the
        # searches whose checked options were priced: all the hardware, then each vendor's own
        "serve_answer": serve["best"]["system"] if serve["best"] and _passed(serve["best"]) else None,
        "serve_searches": [{"hardware": ids, "checked": len(report["verified"])} for ids, report in searches],
        # the chips asked for that a side could not price, with why (they had been left out unsaid), what plan serve
        # left unranked and why (its 'not ranked' lines; a split of chips with no price not said), and plan train's
        "no_price": _no_price(train_unpriced, serve_unpriced),
        "serve_skipped": _serve_skipped(reports, _unserved_chips(reports, serve_unpriced)),
        "train_skipped": _train_skipped(train),
        "projected": best["projected"],
        "seconds": time.perf_counter() - start,
    }
