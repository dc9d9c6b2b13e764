"""Training predictions and the fleet comparison: search each system's plan space, attach dollars, energy and
carbon, and rank the fleets by the objective asked for."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.economics.energy import carbon_kg, energy_j, site_for
from chipwise.economics.pricing import check_mode, price_per_chip_hour
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.train.explain import plan_result, search_summary
from chipwise.train.search import search_plans
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import TrainScenario
from chipwise.workload.training import TrainingJob, default_global_batch_tokens

OBJECTIVES: tuple[str, ...] = ("time", "cost", "energy", "carbon")


def make_job(
    model: ModelSpec,
    seq_len: int | None,
    global_batch_tokens: float | None,
    global_batch: int | None,
    precision: str,
    tokens: float | None,
    lora: bool = False,
    chips: int = 0,
) -> TrainingJob:
    seq = int(seq_len or min(model.max_seq_len or 4096, 8192))
    if global_batch is not None:
        return TrainingJob(model, seq, int(global_batch), precision, tokens, lora)
    if global_batch_tokens:
        return TrainingJob.from_tokens(model, seq, global_batch_tokens, precision, tokens, lora)
    # default: a power-of-two number of sequences, so that data parallelism divides it on power-of-two fleets
    seqs = 2 ** max(0, math.ceil(math.log2(default_global_batch_tokens(model, chips) / seq)))
    return TrainingJob(model, seq, seqs, precision, tokens, lora)


def attach_economics(
    result: dict[str, Any],
    catalog: Catalog,
    system: System,
    chips: int,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
) -> dict[str, Any]:
    """Add price, cost, energy and carbon of the run (or of one hour when no token count is given)."""
    seconds = result.get("time_to_train_s")
    basis_s = seconds if seconds is not None else 3600.0
    quote = price_per_chip_hour(catalog, system, pricing, region if pricing != "owned" else None, provider)
    site = site_for(catalog, system, region)
    joules = energy_j(system, chips, basis_s, site)
    out: dict[str, Any] = {
        "pricing": pricing,
        "price_usd_per_chip_hour": quote.usd_per_chip_hour if quote else None,
        "price_source": (
            {
                "provider": quote.provider,
                "region": quote.region,
                "date": quote.date,
                "status": quote.status,
                "entry": quote.entry,
                "source": list(quote.source),
                **({"derivation": quote.derivation} if quote.derivation else {}),
            }
            if quote
            else None
        ),
        "energy_j": joules,
        "co2e_kg": carbon_kg(joules, site),
        "pue": site.pue,
        "region": site.region,
        "grid_kg_co2e_per_kwh": site.kg_co2e_per_j * 3.6e6,
        "economics_basis": "whole run" if seconds is not None else "one hour",
    }
    cost = quote.usd_per_chip_hour * chips * basis_s / 3600.0 if quote else float("nan")
    out["cost_usd"] = cost
    tokens = result.get("tokens") or result["tokens_per_s"] * basis_s
    out["usd_per_million_tokens"] = cost / tokens * 1e6 if quote else float("nan")
    out["tokens_per_kwh"] = tokens / (joules / 3.6e6)
    out["flop_per_joule"] = result["model_flops_per_token"] * tokens / joules
    result.update(out)
    return result


def predict_training(catalog: Catalog, sc: TrainScenario) -> dict[str, Any]:
    """DESIGN.md's `chipwise predict` for a training scenario (a missing or partial plan is searched)."""
    check_mode(sc.pricing)
    model = load_model(catalog, sc.model)
    system = hardware(catalog).system(sc.hardware)
    job = make_job(
        model, sc.seq_len, sc.global_batch_tokens, sc.global_batch, sc.precision, sc.tokens, sc.lora, sc.chips
    )
    search = search_plans(model, job, system, sc.chips, fixed=sc.plan or {})
    result = plan_result(search, search.best)
    result["search"] = search_summary(search)
    result["plan_source"] = "given" if sc.plan and len(sc.plan) >= 4 else ("partial" if sc.plan else "searched")
    return attach_economics(result, catalog, system, sc.chips, sc.pricing, sc.region, sc.provider)


def _rank_key(objective: str) -> str:
    return {"time": "time_to_train_s", "cost": "cost_usd", "energy": "energy_j", "carbon": "co2e_kg"}[objective]


def plan_training(
    catalog: Catalog,
    model_name: str,
    chips: int,
    hardware_ids: Sequence[str],
    tokens: float | None = None,
    seq_len: int | None = None,
    global_batch_tokens: float | None = None,
    precision: str = "bf16",
    objective: str = "time",
    pricing: str = "on-demand",
    region: str | None = None,
    top_plans: int = 1,
) -> dict[str, Any]:
    """Search every listed system and rank them; each row is that system's best plan (and runners-up)."""
    if objective not in OBJECTIVES:
        raise ChipwiseError(f"unknown objective '{objective}'. Fix: use one of {', '.join(OBJECTIVES)}.")
    check_mode(pricing)
    start = time.perf_counter()
    model = load_model(catalog, model_name)
    hw = hardware(catalog)
    systems = [hw.system(h) for h in hardware_ids]
    if region is not None:
        site_for(catalog, systems[0], region)  # validate the region once, before the long work
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    evaluated = feasible = 0
    for system in systems:
        job = make_job(model, seq_len, global_batch_tokens, None, precision, tokens, chips=chips)
        try:
            search = search_plans(model, job, system, chips)
        except InfeasibleError as exc:
            skipped.append({"hardware": system.chip.id, "system": system.id, "reason": str(exc)})
            continue
        evaluated += search.evaluated
        feasible += search.feasible
        for rank, i in enumerate(search.top(top_plans)):
            row = plan_result(search, i)
            row["plan_rank"] = rank + 1
            attach_economics(
                row,
                catalog,
                system,
                chips,
                pricing,
                region if region and system.provider in ("aws", "gcp", "azure") else None,
            )
            rows.append(row)
    key = _rank_key(objective)

    def sort_value(r: dict[str, Any]) -> float:
        v = r.get(key)
        if key == "time_to_train_s" and v is None:
            v = r["step_time_s"] / r["global_batch_tokens"]
        return float(v) if v is not None and not math.isnan(float(v)) else math.inf

    rows.sort(key=sort_value)
    return {
        "kind": "plan-train",
        "model": model.name,
        "chips": chips,
        "tokens": tokens,
        "precision": precision,
        "objective": objective,
        "pricing": pricing,
        "results": rows,
        "skipped": skipped,
        "search": {"evaluated": evaluated, "feasible": feasible, "seconds": time.perf_counter() - start},
    }
