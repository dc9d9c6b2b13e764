"""`chipwise plan lifecycle`: a model's whole life - train it on one fleet, serve it on another for N months -
and the best (train on X, serve on Y) pair against the best single-vendor choice, in cost, energy and carbon.

    total(X, Y) = expected training cost on X  +  serving $/hour on Y x hours of service
    energy and carbon likewise (training: the prediction's expected figures; serving: the energy and CO2e an hour
    of plan serve's economics - chips x busy IT power x PUE at the site of the serving price, x its grid - x hours)

The two terms are independent, so the best pair joins the best training fleet to the best serving fleet; the best
single-vendor plan is the best pair whose two chips share a vendor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.units import SECONDS_PER_HOUR, SECONDS_PER_MONTH
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.serving_economics import chip_hour_price, energy_per_hour, priced_system
from chipwise.planner.serving_plan import plan_serving
from chipwise.planner.training import plan_training
from chipwise.serve.plan import chip_count
from chipwise.workload.presets import load_model
from chipwise.workload.serving import LengthDist, Load, check_context, load_of

OBJECTIVES = ("cost", "energy", "carbon")
#: The longest service priced (months): 50 years, past any model's service life; 1e30 months had priced the serving
#: side at $5e+33 without a word. The serving rate's bound is plan serve's own (workload.serving.RATE).
MAX_SERVE_MONTHS = 600
#: the chips' reasons a side with no priced fleet names before counting the others
REASONS_SHOWN = 3
#: the reason of a chip that runs a side but has no price to rank it by
UNPRICED = "{chip} has no on-demand price in the catalog. Fix: add one in a --catalog file"


def _training_options(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in report["results"]:
        out.append(
            {
                "hardware": r["hardware"],
                "vendor": r.get("vendor", ""),
                "projected": r.get("projected", False),
                "plan": r["plan"],
                "price_estimated": (r.get("price_source") or {}).get("status") == "estimate",
                "time_s": r.get("expected_time_to_train_s", r.get("time_to_train_s")),
                "cost": r.get("expected_cost_usd", r.get("cost_usd")),
                "energy": r.get("expected_energy_j", r.get("energy_j")),
                "carbon": r.get("expected_co2e_kg", r.get("co2e_kg")),
            }
        )
    return [o for o in out if o["cost"] is not None and math.isfinite(o["cost"])]


def serving_energy_per_hour(
    catalog: Catalog, system: System, chips: float, pricing: str = "on-demand"
) -> tuple[float, float]:
    """(facility joules, kg CO2e) an hour of one pool of `chips` chips of `system` serving, as plan serve and predict
    price a one-pool deployment (serving_economics.energy_per_hour): the scale-out network only past one system, the
    PUE and grid of the site the system's rental quote names (3 trn2 chips at us-east-2's 411 g/kWh, where trn2 is
    priced), not the system's default site."""
    quote = chip_hour_price(catalog, system, pricing, None, None)[2]
    return energy_per_hour(catalog, system, chips, pricing, quote, scaleout=chips > system.chips)


def _serving_options(catalog: Catalog, report: dict[str, Any], seconds: float) -> list[dict[str, Any]]:
    hw = hardware(catalog)
    pricing = report.get("pricing", "on-demand")
    hours = seconds / SECONDS_PER_HOUR
    out = []
    for r in report["results"]:
        if r.get("disaggregated") or not math.isfinite(r.get("cost_usd_per_hour", math.inf)):
            continue
        system = priced_system(hw.system(r["system"]), pricing)
        joules_h, co2_h = serving_energy_per_hour(catalog, system, r["chips"], pricing)
        out.append(
            {
                "hardware": r["hardware"],
                "projected": r.get("projected", False),
                "plan": r["plan"],
                "chips": r["chips"],
                "billed_chips": r.get("billed_chips", r["chips"]),
                "usd_per_hour": r["cost_usd_per_hour"],
                "price_estimated": bool(r.get("price_estimated")),
                "cost": r["cost_usd_per_hour"] * hours,
                "energy_j_per_hour": joules_h,
                "co2e_kg_per_hour": co2_h,
                "energy": joules_h * hours,
                "carbon": co2_h * hours,
            }
        )
    return out


def _checked_load(serve_rate: float, serve_months: float, train_tokens: float) -> Load:
    """The serving load; one line for a count that is not positive and finite, or past its bound: the serving
    rate plan serve's own (a million chips' load), the months MAX_SERVE_MONTHS."""
    for name, value in (
        ("--serve-rate", serve_rate),
        ("--serve-months", serve_months),
        ("--train-tokens", train_tokens),
    ):
        if not value > 0 or not math.isfinite(value):  # inf months priced every pair at inf: '- less cost'
            raise ChipwiseError(f"{name} must be positive and finite, got {value:g}. Fix: give a positive number.")
    load = load_of(serve_rate, None, False, "--serve-")
    if serve_months > MAX_SERVE_MONTHS:
        raise ChipwiseError(
            f"--serve-months {serve_months:g} is more than {MAX_SERVE_MONTHS} (50 years, past any model's service "
            "life). Fix: give the months the model will serve, e.g. 12."
        )
    return load


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
            lines.setdefault(r["hardware"], UNPRICED.format(chip=r["hardware"]))
    split = [(chip, *_problem_and_fix(reason)) for chip, reason in lines.items()]
    problems = [p if chip in p else f"{chip}: {p}" for chip, p, _ in split]
    shown = "; ".join(problems[:REASONS_SHOWN])
    if len(problems) > REASONS_SHOWN:
        shown += f"; and {len(problems) - REASONS_SHOWN} more chips"
    fix = next((f for _, _, f in split if f), "add hardware")
    return shown or "no hardware was searched", fix


def _no_pair(
    train: Mapping[str, Any],
    serve: Mapping[str, Any],
    t_opts: Sequence[Mapping[str, Any]],
    s_opts: Sequence[Mapping[str, Any]],
) -> InfeasibleError:
    """The one line for a lifecycle with no priced (train, serve) pair: which side has no option, and why."""
    train_why, train_fix = _why_none(train, t_opts)
    serve_why, serve_fix = _why_none(serve, s_opts)
    training = f"no priced fleet can train {train['model']} on {chip_count(train['chips'])} ({train_why})"
    serving = f"no priced fleet can serve {serve['model']} at {serve['load']['label']} ({serve_why})"
    if not t_opts and not s_opts:
        return InfeasibleError(
            f"both sides fail: {training}, and {serving}. Fix: training: {train_fix}; serving: {serve_fix}."
        )
    if not t_opts:
        return InfeasibleError(f"the training side fails: {training}. Fix: {train_fix}.")
    return InfeasibleError(f"the serving side fails: {serving}. Fix: {serve_fix}.")


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
) -> dict[str, Any]:
    if objective not in OBJECTIVES:
        raise ChipwiseError(f"unknown objective '{objective}'. Fix: use one of {', '.join(OBJECTIVES)}.")
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
        catalog, model_name, train_chips, hardware_ids, tokens=train_tokens, precision=train_precision, objective="cost"
    )
    seconds = serve_months * SECONDS_PER_MONTH
    serve = plan_serving(
        catalog,
        model_name,
        hardware_ids,
        load,
        input_tokens,
        output_tokens,
        slo=slo or {},
        precision=serve_precision,
        disaggregated=False,
        verify=0,
    )
    t_opts, s_opts = _training_options(train), _serving_options(catalog, serve, seconds)
    for o in t_opts:
        o["vendor"] = vendor.get(o["hardware"], "")
    for o in s_opts:
        o["vendor"] = vendor.get(o["hardware"], "")
    if not t_opts or not s_opts:
        raise _no_pair(train, serve, t_opts, s_opts)
    key = objective

    def pair(t: dict[str, Any], s: dict[str, Any]) -> dict[str, Any]:
        return {
            "train": t,
            "serve": s,
            "cost_usd": t["cost"] + s["cost"],
            "energy_j": t["energy"] + s["energy"],
            "co2e_kg": t["carbon"] + s["carbon"],
            "cross_vendor": t["vendor"] != s["vendor"],
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
        "objective": objective,
        "training": {"tokens": train_tokens, "chips": train_chips, "precision": train_precision},
        "serving": {
            "rate_per_s": serve_rate,
            "months": serve_months,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "slo": dict(slo or {}),
            "precision": serve_precision,
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
                if (r.get("price_source") or {}).get("status") == "estimate"
            },
            **serve.get("price_estimates", {}),
        },
        "projected": best["projected"],
        "seconds": time.perf_counter() - start,
    }
