"""`chipwise plan lifecycle`: a model's whole life - train it on one fleet, serve it on another for N months -
and the best (train on X, serve on Y) pair against the best single-vendor choice, in cost, energy and carbon.

    total(X, Y) = expected training cost on X  +  serving $/hour on Y x hours of service
    energy and carbon likewise (training: the prediction's expected figures; serving: chips x busy IT power x
    PUE x hours, times the grid intensity of the serving region)

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
from chipwise.economics.energy import carbon_kg, energy_j, site_for
from chipwise.economics.power import power_model
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.planner.serving_plan import plan_serving
from chipwise.planner.training import plan_training
from chipwise.workload.serving import Load

OBJECTIVES = ("cost", "energy", "carbon")


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


def _serving_options(catalog: Catalog, report: dict[str, Any], seconds: float) -> list[dict[str, Any]]:
    hw = hardware(catalog)
    out = []
    for r in report["results"]:
        if r.get("disaggregated") or not math.isfinite(r.get("cost_usd_per_hour", math.inf)):
            continue
        system = hw.system(r["system"])
        site = site_for(catalog, system)
        joules = energy_j(power_model(catalog, system).busy_w, r["chips"], seconds, site.pue.value)
        out.append(
            {
                "hardware": r["hardware"],
                "projected": r.get("projected", False),
                "plan": r["plan"],
                "chips": r["chips"],
                "billed_chips": r.get("billed_chips", r["chips"]),
                "usd_per_hour": r["cost_usd_per_hour"],
                "price_estimated": bool(r.get("price_estimated")),
                "cost": r["cost_usd_per_hour"] * seconds / SECONDS_PER_HOUR,
                "energy": joules,
                "carbon": carbon_kg(joules, site),
            }
        )
    return out


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
    for name, value in (
        ("--serve-rate", serve_rate),
        ("--serve-months", serve_months),
        ("--train-tokens", train_tokens),
    ):
        if not value > 0 or not math.isfinite(value):  # inf months priced every pair at inf: '- less cost'
            raise ChipwiseError(f"{name} must be positive and finite, got {value:g}. Fix: give a positive number.")
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
        Load("rate", rate=serve_rate),
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
        raise InfeasibleError("no priced fleet can both train and serve this model. Fix: add hardware or chips.")
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
