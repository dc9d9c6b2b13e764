"""`plan serve`'s ranking rows: a colocated option's row and the plan each row shows, what a row was priced from
(the typed values under its private keys), the deployment a row describes, and the orders the options rank in, by
the estimate and once simulated."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.hardware.objects import System
from chipwise.planner.serving_choice import Choice
from chipwise.planner.serving_deployment import kv_path
from chipwise.planner.serving_economics import RankingPrice, per_mtok
from chipwise.planner.serving_figures import engine_carried, engine_fitted_on
from chipwise.planner.serving_report import whole_count
from chipwise.serve.build import cached_prefix, setup_replica
from chipwise.serve.engine import EngineProfile
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.simulate import Pool, ServingSetup
from chipwise.serve.speculation import Drafting
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob

# A ranking row carries what it was priced from under private keys ('_choice', '_split', '_search'), which
# plan_serving drops (every key that starts with '_') before its answer.


@dataclass(frozen=True)
class ColocatedOption:
    """A colocated row's option (its '_choice'): the system, the engine family it runs and the search's choice of
    replica shape and count."""

    system: System
    engine: str
    choice: Choice


@dataclass(frozen=True)
class PrefillOption:
    """A chip's prefill pool for a split (serving_split.prefill_option's): the replica shape with the most prompt
    tokens/s per chip."""

    system: System  # the system the prefill replicas run on
    engine: str  # the engine family they run
    plan: ReplicaPlan  # its shape, batch cap (the prompts its KV cache holds, at most PREFILL_POOL_BATCH), precisions
    chips: float  # chips a replica takes (a fraction where it takes a core or two of one)
    prefill_s: float  # seconds a replica takes to prefill one prompt alone (Estimate.prefill_s)
    price: RankingPrice  # USD per chip-hour, with the network's where the split uses it (usd NaN: no price)


@dataclass(frozen=True)
class DecodeOption:
    """A chip's decode pool for a split (serving_split.decode_option's): the search's choice of replica shape and
    count that carries the load with no prompt in its iterations."""

    system: System  # the system the decode replicas run on
    engine: str  # the engine family they run
    choice: Choice  # the replica shape and count (Choice: chips, TPOT and TTFT in seconds)
    price: RankingPrice  # USD per chip-hour, with the network's where the split uses it (usd NaN: no price)


@dataclass(frozen=True)
class SplitPools:
    """A split row's pools (its '_split'): the prefill option and its replicas, the decode option and its
    replicas."""

    prefill: PrefillOption
    prefill_replicas: int
    decode: DecodeOption
    decode_replicas: int


@dataclass(frozen=True)
class ChipSearch:
    """How a colocated row's chip was searched (its '_search'), for second looks at its other shapes: the engine's
    profile, the weight and KV-cache precisions, the drafting, the chip-hour price and the distinct tensor-parallel
    sizes of the candidates priced."""

    eng: EngineProfile
    weight: str
    kv: str
    drafting: Drafting | None
    price: RankingPrice
    tps: tuple[int, ...]


def colocated_row(
    catalog: Catalog, system: System, name: str, choice: Choice, price: RankingPrice, load: Load, output_tokens: float
) -> dict[str, Any]:
    """The ranking row of a colocated fleet of `choice`'s replicas at `price` a chip-hour, with the scale-out
    network's where a replica spans systems, as its check charges it (serving_economics.uses_network; with its option
    under '_choice'). Owned, Llama 3.1 405B bf16 as one TP8 PP2 replica on two p5.48xlarge had ranked at 16 x $1.465
    = $23.44/h beside a check of $26.92/h, the network's $3.48 charged there alone; it now ranks at $26.94/h."""
    chips, billed = choice.replicas * choice.chips, choice.billed
    per_chip = price.per_chip_hour(choice.chips > system.chips)
    out_tps = choice.replicas * min(
        choice.throughput, (load.rate or 0.0) * output_tokens / choice.replicas or choice.throughput
    )
    if load.kind == "closed" and math.isfinite(choice.closed_output):
        # the closed loop's users cycle through a first token and their answers' steps, as the ranking has it
        # (serving_choice._closed_output); users / TPOT alone had left the first token out, and A100 TP2 x4 had read
        # $0.378 per M beside TP1 x7's $0.377 where the check finds $0.371 against $0.377
        out_tps = choice.closed_output
    return {
        "hardware": system.chip.id,
        "system": system.id,
        "engine": name,
        "projected": system.projected,
        "projected_chips": [system.chip.id] if system.projected else [],
        "engine_defaults": [] if engine_fitted_on(catalog, name, system) else [system.chip.id],
        "engine_carried": engine_carried(catalog, [(name, system)]),
        "plan": plan_brief(choice.plan, choice.replicas),
        "disaggregated": False,
        "chips": whole_count(chips),
        "billed_chips": whole_count(billed),
        "cost_usd_per_hour": per_chip * billed,
        "cost_usd_per_mtok": per_mtok(per_chip * billed, out_tps),
        "estimate": {
            "tpot_s": choice.tpot,
            # an offline request's first token waits for the batch ahead of it: the simulation's to say
            "ttft_p99_s": None if load.kind == "offline" else choice.ttft_p99,
            "output_tokens_per_s": out_tps,
        },
        "_choice": ColocatedOption(system, name, choice),
    }


def plan_brief(plan: ReplicaPlan, replicas: int) -> dict[str, Any]:
    """A pool's plan as a ranking row or a check shows it: `replicas` replicas of `plan`'s shape (tp, pp, ep,
    attention DP and its balancing), batch limit, precisions and drafting."""
    return {
        "tp": plan.tp,
        "pp": plan.pp,
        "ep": plan.ep,
        "attention_dp": plan.attention_dp,
        "adp_balance": plan.adp_balance if plan.attention_dp else None,
        "max_batch": plan.max_batch,
        "replicas": replicas,
        "weight_precision": plan.weight_precision,
        "kv_precision": plan.kv_precision,
        "speculative": plan.speculation.label() if plan.speculation else None,
        "speculation": plan.speculation.record() if plan.speculation else None,
    }


def row_setup(
    catalog: Catalog, model: ModelSpec, job: ServingJob, row: dict[str, Any], pricing: str = "on-demand"
) -> ServingSetup:
    """The deployment a ranking row describes, set up for `job` (each replica for its longest request): a split's
    prefill and decode pools (its '_split') with the KV path between them, else its colocated pool ('_choice')."""
    longest = job.max_input + job.max_output
    if "_split" in row:
        split: SplitPools = row["_split"]
        pf, n_pre, dc, n_dec = split.prefill, split.prefill_replicas, split.decode, split.decode_replicas
        # the prefill pool holds the decode pool's drafter, as predict sets it up (serving_pool.build_pool): it encodes
        # each prompt and hands its cache over (its option is sized once per chip, without one)
        drafted = replace(pf.plan, speculation=dc.choice.plan.speculation)
        hits = cached_prefix(job.mean_input, job.prefix_hit_rate)
        pre = setup_replica(
            catalog, model, pf.system, pf.engine, drafted, job.mean_input, 1.0, longest, typical_cached=hits
        )
        dec = setup_replica(
            catalog, model, dc.system, dc.engine, dc.choice.plan, job.mean_input, job.mean_output, longest
        )
        return ServingSetup(
            (Pool(pre, n_pre, "prefill"), Pool(dec, n_dec, "decode")),
            job.router,
            kv_path(catalog, model, pre, n_pre, dec, n_dec, pricing),
        )
    option: ColocatedOption = row["_choice"]
    system, engine, choice = option.system, option.engine, option.choice
    hits = cached_prefix(job.mean_input, job.prefix_hit_rate)
    setup = setup_replica(
        catalog, model, system, engine, choice.plan, job.mean_input, job.mean_output, longest, typical_cached=hits
    )
    return ServingSetup((Pool(setup, choice.replicas),), job.router)


def ranking_cost(row: Mapping[str, Any], load: Load) -> float:
    """What the ranking minimises: the fleet's $/h under an open-loop rate (every option is sized to deliver the
    same tokens), its $/M output tokens under a fixed concurrency or an offline batch, where the options deliver
    different throughputs (the cheapest fleet per hour would be the slowest)."""
    value = float(row["cost_usd_per_hour"] if load.kind == "rate" else row["cost_usd_per_mtok"])
    return value if math.isfinite(value) else math.inf


def rank_order(row: Mapping[str, Any], load: Load) -> tuple[bool, float]:
    """How the options rank by the estimate: priced ones first, the cheapest first (unpriced: the fewest chips)."""
    priced = math.isfinite(row["cost_usd_per_hour"])
    return (not priced, ranking_cost(row, load) if priced else float(row["chips"]))


def check_order(checked: Mapping[str, Any], load: Load) -> tuple[bool, bool, float, int]:
    """How simulated checks rank: those that keep up, then meet the SLO, then the cheapest, then the estimate's."""
    met = checked["slo_met"]
    return (
        not checked["keeps_up"],
        not met if met is not None else False,
        ranking_cost(checked, load),
        checked["rank"],
    )
