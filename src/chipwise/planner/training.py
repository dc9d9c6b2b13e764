"""Training predictions and the fleet comparison: search each system's plan space, attach dollars, energy and
carbon, and rank the fleets by the objective asked for."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from chipwise.catalog.loader import Catalog
from chipwise.catalog.regions import check_region_provider
from chipwise.catalog.schema import DATE
from chipwise.catalog.track_record import track_record
from chipwise.catalog.units import JOULES_PER_KWH, SECONDS_PER_HOUR
from chipwise.economics.energy import EnergySite, check_pue, check_region, site_for
from chipwise.economics.power import PowerModel, power_model
from chipwise.economics.pricing import (
    PriceQuote,
    check_mode,
    check_rental_options,
    markup_term,
    price_gap,
    price_per_chip_hour,
)
from chipwise.economics.rental import job_units
from chipwise.economics.tco import COMMITMENT_TERM_S, COMMITMENTS, Tco, check_utilisation_share, owned_tco
from chipwise.errors import ChipwiseError, InfeasibleError, one_of
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.perf.device import topology_of
from chipwise.planner.serving_economics import priced_system
from chipwise.pools import forked_pool, waited
from chipwise.reliability.goodput import (
    RECOVERIES,
    ReliabilityInputs,
    RunReliability,
    assess_run,
    frozen_base_bytes,
    largest_fleet_for_goodput,
    reliability_inputs,
    run_goodputs,
)
from chipwise.train.batch import divisible_batch
from chipwise.train.explain import plan_result, search_summary
from chipwise.train.lora import lora_adapter_params
from chipwise.train.plans import left_to_search
from chipwise.train.search import PlanSearch, search_plans
from chipwise.workload.bounds import MAX_CHIPS, Bound
from chipwise.workload.counts import is_count
from chipwise.workload.model import ModelSpec
from chipwise.workload.plan_knobs import given_knobs
from chipwise.workload.presets import DEFAULT_SEQ_LEN, load_model
from chipwise.workload.scenario import check_provider
from chipwise.workload.train_scenario import TrainScenario
from chipwise.workload.training import (
    DEFAULT_TRAIN_SEQ_LEN,
    TrainingJob,
    default_global_batch_tokens,
    training_precision,
)

OBJECTIVES: tuple[str, ...] = ("time", "cost", "energy", "carbon")
#: the chips of one training run: a million at most, as a serving deployment's ("from one chip to a million");
#: 1e12 had been planned as DP137438953472 at $inf an hour
FLEET = Bound(MAX_CHIPS, "chips", "past the largest fleet planned", "give the chips of one training run")


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
    if chips:
        FLEET.require(chips, "a fleet of")
    seq = int(seq_len or min(model.max_seq_len or DEFAULT_SEQ_LEN, DEFAULT_TRAIN_SEQ_LEN))
    if model.max_seq_len and seq > model.max_seq_len:
        # a model trains on sequences up to its context (its position encoding's reach): 1,000,000 tokens on
        # Llama-3.1-70B's 131,072 had been priced
        raise ChipwiseError(
            f"seq_len {seq:,} is longer than {model.name}'s context of {model.max_seq_len:,} tokens. Fix: give at "
            f"most {model.max_seq_len:,}, or a model with a longer context."
        )
    if global_batch is not None:
        job = TrainingJob(model, seq, int(global_batch), precision, tokens, lora)
    elif global_batch_tokens:
        job = TrainingJob.from_tokens(model, seq, global_batch_tokens, precision, tokens, lora)  # its checks
        # a batch data parallelism divides: '8M' was 977 sequences of 8,192 tokens, a prime (train.batch)
        job = replace(job, global_batch=divisible_batch(global_batch_tokens, seq))
    else:
        job = TrainingJob(model, seq, default_global_batch(model, seq, chips), precision, tokens, lora)
    return job


def default_global_batch(model: ModelSpec, seq_len: int, chips: int = 0) -> int:
    """The default batch in sequences: the power of two nearest (on a log scale) the documented tokens
    (default_global_batch_tokens) over the sequence length, so that data parallelism divides it on power-of-two
    fleets. Exactly those tokens at a power-of-two sequence length, within a factor sqrt(2) of them at any other:
    rounding up had doubled them (8,000-token sequences took 1,024 of them, 8,192,000 tokens where 4,194,304 are
    documented)."""
    wanted = default_global_batch_tokens(model, chips) / seq_len
    return int(2 ** max(0, round(math.log2(wanted))))


HALF_GOODPUT = 0.5  # below it, failures take more of the run than training does: plan train says where they would not


def _ideal_and_expected(
    result: dict[str, Any],
    chips: int,
    seconds: float,
    usd_per_chip_hour: float,
    power: PowerModel,
    pue: float,
    kg_per_j: float,
    rel: RunReliability,
    billed: float | None = None,
    usd_per_j: float = 0.0,
) -> dict[str, Any]:
    """Ideal (failure-free) and expected (goodput-adjusted, with spares) time, cost, energy and carbon.

    T_wall = T_ideal / goodput. Of T_wall, the downtime D (RunReliability.downtime_s: restarts after failures, on
    Daly's model, and planned stops) is spent at idle power and the rest (training, lost work, checkpoint writes)
    at the busy load; spares (spare_fraction x the chips used) are paid for and idle for the whole T_wall, as are
    the chips a plan leaves out (rel.chips, the chips the job runs on, < chips: the global batch divides no wider
    data parallelism). Cost is for the `billed` chips (default: `chips`), the whole rental units that hold them.
    Chips paid for past the job's, billed extras and left-out ones alike, stand in for its spares, which are paid
    for only past them: max(billed, used + spares) chips are paid over T_wall (1M trn3 on a plan of 917,504 had
    paid 20,000 spares on top of 82,496 idle chips), and all but the used draw idle power over it; the billed ones
    past `chips` draw it over the ideal time too (12 H100s in two p5 had drawn for 12.24, where 16 are paid).
    `usd_per_j`: an owned fleet's electricity (facility joules at the site's tariff), added to the cost, whose
    `usd_per_chip_hour` is then the TCO's other terms (economics.tco.Tco.fixed_and_idle_usd_per_chip_hour).
    """
    g = rel.goodput
    wall = seconds / g if g > 0 else math.inf
    busy_w, idle_w = power.busy_w, power.idle_w
    used = rel.chips
    paid = chips if billed is None else billed
    left_out_w = idle_w * (max(paid, chips) - used)
    ideal_j = (busy_w * used + left_out_w) * seconds * pue
    ideal_cost = usd_per_chip_hour * paid * seconds / SECONDS_PER_HOUR + ideal_j * usd_per_j
    if math.isinf(wall):
        exp_j = exp_cost = math.inf
        down = math.inf
    else:
        down = rel.downtime_s(seconds)
        fleet = _expected_fleet(paid, chips, rel)
        idle = fleet - used  # spares, left-out chips, and billed ones that stand in for spares
        exp_j = pue * (used * (busy_w * (wall - down) + idle_w * down) + idle * idle_w * wall)
        exp_cost = usd_per_chip_hour * fleet * wall / SECONDS_PER_HOUR + exp_j * usd_per_j
    # the tokens the run trains: whole steps, at least its tokens (1,000 tokens take one step of a million, whose
    # cost over the 1,000 had read $268 per million tokens where the steady rate is $0.26)
    tokens = max(result.get("tokens") or 0.0, result["tokens_per_s"] * seconds)
    flops = result["model_flops_per_token"] * tokens
    return {
        "energy_j": ideal_j,
        "co2e_kg": ideal_j * kg_per_j,
        "cost_usd": ideal_cost,
        "usd_per_million_tokens": ideal_cost / tokens * 1e6,
        "expected_time_s": wall,
        "expected_downtime_s": down,
        "expected_energy_j": exp_j,
        "expected_co2e_kg": exp_j * kg_per_j,
        "expected_cost_usd": exp_cost,
        "expected_usd_per_million_tokens": exp_cost / tokens * 1e6,
        "tokens_per_joule": tokens / ideal_j,
        "tokens_per_kwh": tokens / (ideal_j / JOULES_PER_KWH),
        "flop_per_joule": flops / ideal_j,
        "expected_tokens_per_joule": tokens / exp_j if exp_j > 0 else math.nan,
        "power_w_per_chip": busy_w,
        "facility_power_w": (busy_w * used + left_out_w) * pue,
    }


def _expected_fleet(paid: float, chips: float, rel: RunReliability) -> float:
    """The chips the expected run pays for: the job's used chips and their spares, or all those paid for.

    A rented fleet's spares are its share of a pool the provider keeps (an owned fleet's, of the owner's), charged
    pro rata, fractions of a chip included, not whole rental units it rents beside the job: a failed p5 is swapped
    for another of the provider's, and a spare p5 held for one 8-GPU job would double its cost (8 chips pay for
    8.16, 64 for 65.28). The catalog's 2% already allows for hosts swapped 8 at a time (reliability.spares); at
    scale whole units would change little (16,384 H100s: 327.68 spares, 41 p5). `spare_chips` in the JSON says how
    many are paid past the billed chips."""
    return max(paid, chips, rel.chips * (1.0 + rel.spare_fraction))


def _spares_paid(paid: float, chips: float, rel: RunReliability) -> float:
    """The spares the expected run pays for past the chips paid already (_expected_fleet less max(paid, chips)), as
    the spares wanted less the whole chips past the used ones that stand in for them: that difference of whole counts
    is exact, where the fleet less its paid chips had carried float noise (1,024 H100s: 20.480000000000018 beside
    spare_chips_wanted 20.48; it now reads 20.48)."""
    return max(0.0, rel.chips * rel.spare_fraction - (max(paid, chips) - rel.chips))


def owned_idle_record(
    tco: Tco, power: PowerModel, site: EnergySite, chips: tuple[float, float], seconds: tuple[float, float]
) -> dict[str, Any]:
    """The idle hours an owned fleet at utilisation u < 1 is priced with (`owned_idle_hours` in the JSON): for each
    hour of the run (1 - u) / u hours of its chips at idle power, whose electricity the cost carries
    (Tco.fixed_and_idle_usd_per_chip_hour) and energy_j and co2e_kg, the run's own, do not: their energy and carbon
    beside them, so that cost and energy can be read on the same hours (at utilisation 0.5 the price had carried 8
    H100s' idle kWh for as long as the run while its energy figure left them out, with no word). `chips`: the chips
    paid for in the ideal and the expected run; `seconds`: the ideal and the expected time."""
    u = tco.inputs.utilisation.value
    idle_share = (1.0 - u) / u
    idle_w = power.idle_w * site.pue.value  # facility watts a chip
    ideal_j, expected_j = (idle_w * n * t * idle_share for n, t in zip(chips, seconds, strict=True))
    return {
        "utilisation": u,
        "idle_s": seconds[0] * idle_share,
        "energy_j": ideal_j,
        "co2e_kg": ideal_j * site.kg_co2e_per_j,
        "expected_energy_j": expected_j,
        "expected_co2e_kg": expected_j * site.kg_co2e_per_j,
        "note": f"the owned price at utilisation {u:g} carries the electricity of the fleet's idle hours, "
        f"{idle_share:.3g} h at idle power for each hour of the run; energy_j and co2e_kg are the run's own, these "
        "the idle hours' beside them",
    }


def reservation_record(pricing: str, usd_per_hour: float, seconds: float | None) -> dict[str, Any]:
    """What a reserved run's cost rests on (`reservation` in the JSON): the run's own hours at the reservation's rate,
    the term's other hours taken as used by other work, and what the term commits the chips to (`term_cost_usd`, the
    fleet's $/hour x the term). A 43.9 h run of 8 H100s on reserved-1y had been charged its $1,304 with no word of
    the $255k year it commits to; charged the whole year, a ranking by cost took the cheapest hour whatever its
    speed (Trainium1 at 320 days for Llama 3.1 70B's 15T tokens). The note holds no row's figure, so that a ranking
    says it once (it had printed 30 lines differing only in their dollars); the views say `term_cost_usd` beside."""
    term_s = COMMITMENT_TERM_S[pricing]
    term_usd = usd_per_hour * term_s / SECONDS_PER_HOUR
    within = seconds is not None and seconds < term_s
    return {
        "term_s": term_s,
        "term_cost_usd": term_usd,
        "note": f"a {pricing} reservation is paid every hour of its {term_s / SECONDS_PER_HOUR:,.0f} h term: "
        + (
            "the cost is the run's own hours at its rate, the term's others taken as used by other work (the term "
            "commits the fleet to its rate for every hour of it)"
            if within or seconds is None
            else "the run outlasts it, and pays its own hours at the rate"
        ),
    }


class SystemEconomics(NamedTuple):
    """How `chips` of one system are priced, sited and powered: the rental quote or the owned cost (None where the
    mode has none), the site, the power model, the chips billed, and the price per chip-hour (nan: none; owned: the
    TCO's terms but the energy of the hours used, which `usd_per_j` charges as the run's own energy figure)."""

    quote: PriceQuote | None
    tco: Tco | None
    site: EnergySite
    power: PowerModel
    billed: float
    price: float
    usd_per_j: float = 0.0


def system_economics(
    catalog: Catalog,
    system: System,
    chips: int,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    *,
    utilisation: float | None = None,
    pue: float | None = None,
    managed: str | None = None,
    as_of: str | None = None,
) -> SystemEconomics:
    """The price, site, power and billing of `chips` of `system`, as attach_economics uses them (and a mixed
    fleet's parts, each as it would be alone)."""
    check_mode(pricing)
    owned = pricing == "owned"
    quote = None if owned else price_per_chip_hour(catalog, system, pricing, region, provider, managed, as_of)
    tco = None
    if owned and (system.chip.unit_price is not None):
        # the scale-out network (capex, colocation, power) only past one system, as the power model below counts it
        util = utilisation if utilisation is not None else 1.0
        tco = owned_tco(catalog, system, region, util, pue, scaleout=chips > system.chips)
    site = site_for(
        catalog,
        system,
        region,
        pue=pue,
        owned=owned,
        # no price in the mode: the provider asked for still runs the chips (a '-' reserved-1y price from runpod had
        # put them in AWS's us-east-1, the system's own site); a price the user set, where the catalog quote it
        # replaces runs them (PriceQuote.site: GB200 at its own $12.20 had moved from us-tx, PUE 1.15, to
        # country-usa, 1.42, energy +23.5%)
        operator=quote.site[0] if quote else provider,
        hint_region=quote.site[1] if quote else None,
    )
    power = power_model(catalog, system, scaleout=chips > system.chips)
    # rented chips are billed in the provider's units in the mode, as plan serve bills them (economics.rental): 12
    # H100s in Capacity Blocks rent two whole p5 instances, 16 GPUs (billed as 12, 25% under what AWS charges); an
    # owned fleet buys the chips it uses. The job is whole scale-up domains and what is left, and the chips of one
    # domain share one rented unit, as a serving replica's do: the search prices their plan on the domain's fabric.
    # Billed chip by chip, 6 TPU v6e had been three slices (4 + 1 + 1, $16.20/h) run as one 6-chip ICI torus, where
    # the slice that holds them is a v6e-8 ($21.60/h)
    rented = _rented(system, chips, pricing)
    billed = float(sum(n * c for n, c in rented)) if rented else float(chips)
    if tco is not None:
        # an owned fleet pays the electricity of its own energy figure (busy or idle through the run, its network),
        # as an owned serving pool does: the TCO's busy-all-hour energy had charged 8 H100s $1.10/h where the run's
        # figure was $1.00/h
        return SystemEconomics(
            quote, tco, site, power, billed, tco.fixed_and_idle_usd_per_chip_hour, tco.inputs.electricity.value
        )
    price = quote.usd_per_chip_hour if quote is not None else math.nan
    return SystemEconomics(quote, tco, site, power, billed, price)


def _rented(system: System, chips: int, pricing: str) -> list[tuple[int, int]]:
    """(how many, chips each) of the units `chips` of `system` rent in `pricing` (economics.rental.job_units; a TPU
    slice past the largest listed unit is one slice of whole cubes); empty where it is billed per chip."""
    units = priced_system(system, pricing).rental_chips
    return job_units(units, system.scaleup.size, chips, joined=system.kind == "slice")


SPOT_NOTE = (
    "spot interruptions are not in the goodput, which counts failures and planned stops only (the catalog has no "
    "rate at which a provider reclaims spot chips): the expected time and cost are a lower bound for a run that "
    "must restart after reclaims"
)


def billed_per_chip_note(system: System, chips: int, pricing: str, units: list[tuple[int, int]]) -> str | None:
    """What a rented run on fewer chips than its system holds is billed, where the mode has no rental unit for it
    (`units` empty): each chip at the price per chip-hour, with the catalog's rental note where the system has one.
    One H100 on demand had been billed 1 x p5.48xlarge's $6.880 a GPU-hour with no word, where the same rule bills 2
    Trainium2 a whole trn2.48xlarge ('billed for 16 chips'); it now reads 'billed per chip: 1 of the 8 chips a
    p5.48xlarge holds, at the price per chip-hour: Capacity Blocks sell ...' (the price is unchanged). None for an
    owned fleet (it buys the chips it uses), a run billed in units, and one of a system or more."""
    if pricing == "owned" or units or chips >= system.chips:
        return None
    ref = system.provenance.get("rental")
    why = ((ref.note or ref.derivation) if ref is not None else "") or (
        "the catalog lists no rental units of it, so its chips are billed one by one"
    )
    part = f"{chips:,} of the {system.chips:,} chips a {system.id} holds"
    return f"billed per chip: {part}, at the price per chip-hour: {why}"


def attach_economics(
    result: dict[str, Any],
    catalog: Catalog,
    system: System,
    chips: int,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    *,
    model: ModelSpec | None = None,
    utilisation: float | None = None,
    pue: float | None = None,
    managed: str | None = None,
    recovery: str = "best",
    as_of: str | None = None,
    lora: bool = False,
    econ: SystemEconomics | None = None,
) -> dict[str, Any]:
    """Add price, cost, energy, carbon and goodput of the run (or of one hour when no token count is given).

    Ideal figures assume no failures (`time_to_train_s`, `cost_usd`, `energy_j`, `co2e_kg`); expected ones
    (`expected_*`) divide time by the reliability layer's goodput and add spare capacity; `recovery` is
    'checkpoint', 'in-memory' or 'best' (the one with the higher goodput, reported). `pricing='owned'`
    prices chips by economics.tco at `utilisation` (default 1.0); other modes use catalog rental prices. A `lora`
    run checkpoints its adapters and their optimizer state only (train.lora), not the frozen base. `econ`: the
    system's economics where the caller has them already (system_economics of the same arguments).
    """
    if econ is None:
        econ = system_economics(
            catalog,
            system,
            chips,
            pricing,
            region,
            provider,
            utilisation=utilisation,
            pue=pue,
            managed=managed,
            as_of=as_of,
        )
    quote, tco, site, power, billed, price, usd_per_j = econ
    seconds = result.get("time_to_train_s")
    basis_s = seconds if seconds is not None else SECONDS_PER_HOUR
    spec = model or load_model(catalog, result["model"])
    # what a checkpoint saves: the model and its optimizer state, or a LoRA run's adapters and theirs (the frozen
    # base is on storage already; a 70B LoRA checkpoint had been sized as 988 GB of full training state)
    params, frozen = _checkpointed(spec, lora, result["precision"])
    rel_inputs = reliability_inputs(catalog, system, precision=result["precision"])  # fp32 saves no bf16 copy
    # failures stop the job on the chips it runs on: a plan's left-out chips are idle, paid for in the costs (it had
    # counted all 1,000,000 trn3 of a plan on 917,504: 533 failures a day where the job sees 489)
    used = min(chips, int(result.get("chips_used") or chips))
    rel = assess_run(rel_inputs, used, params, result["step_time_s"], recovery, frozen_bytes=frozen)
    figures = {t.key: t.record() for t in (*site.terms(), *power.terms())}
    if quote is not None:  # the rental price, a figure the cost moves with one for one
        figures.update(quote.figure(system))
    if tco is not None:  # an owned price's inputs (chip price, capex, life, operations, space) are sourced too
        figures.update(tco.figures())
    rel_record = rel.record()
    figures.update(rel_record.pop("figures"))
    costs = _ideal_and_expected(
        result, chips, basis_s, price, power, site.pue.value, site.kg_co2e_per_j, rel, billed, usd_per_j
    )
    if tco is not None:  # an owned chip-hour: its TCO terms and its share of the run's own electricity
        price = costs["cost_usd"] / (billed * basis_s / SECONDS_PER_HOUR)
    out: dict[str, Any] = {
        "pricing": pricing,
        "price_usd_per_chip_hour": None if math.isnan(price) else price,
        "price_source": quote.record() if quote else (tco.price_source() if tco else None),
        "pue": site.pue.value,
        "region": site.region,
        "grid_kg_co2e_per_kwh": site.kg_co2e_per_j * JOULES_PER_KWH,
        "economics_basis": "whole run" if seconds is not None else "one hour",
        "billed_chips": billed,
        # the units billed, by size, that the views name ('one 128-chip slice' where 'whole tpu-v5e-256 units' had
        # stood for a 128-chip slice of a 256-chip system)
        "billed_units": [
            {"count": n, "chips": c, "kind": system.kind, "name": system.unit_name(c)}
            for n, c in _rented(system, chips, pricing)
        ],
        # the spares the expected figures pay for past the billed chips (a share of a pool, fractions included:
        # _expected_fleet), and the spares the job wants, which billed or left-out chips stand in for first
        "spare_chips": _spares_paid(billed, chips, rel),
        "spare_chips_wanted": rel.chips * rel.spare_fraction,
        **costs,
        "goodput": rel.goodput,
        "failures_per_day": rel.failures_per_day,
        "mtbf_s": rel.mtbf_s,
        "checkpoint_interval_s": rel.checkpoint_interval_s,
        "reliability": rel_record,
        "economics_figures": figures,
    }
    per_chip = billed_per_chip_note(system, chips, pricing, _rented(system, chips, pricing))
    if per_chip is not None and not math.isnan(price):  # no price: price_note says why, and nothing is billed
        out["billed_per_chip_note"] = per_chip
    if pricing == "spot":  # the goodput has no reclaims in it: say so where spot is priced (docs/economics.md)
        out["spot_note"] = SPOT_NOTE
    if pricing in COMMITMENTS:
        out["reservation"] = reservation_record(pricing, price * billed, costs["expected_time_s"] if seconds else None)
    if tco is not None and tco.inputs.utilisation.value < 1.0:
        out["owned_idle_hours"] = owned_idle_record(
            tco, power, site, (billed, _expected_fleet(billed, chips, rel)), (basis_s, costs["expected_time_s"])
        )
    if rel.goodput < HALF_GOODPUT:  # failures dominate: where would they not?
        out["half_goodput_chips"] = largest_fleet_for_goodput(
            rel_inputs, used, params, result["step_time_s"], HALF_GOODPUT, recovery, frozen
        )
    if tco is None and quote is None:  # a '-' in the table says why: SageMaker on a TPU, no unit price to own
        out["price_note"] = price_gap(catalog, system, pricing, provider, managed, as_of)
    if seconds is not None:
        out["expected_time_to_train_s"] = out.pop("expected_time_s")
    else:
        out["expected_time_per_hour_of_training_s"] = out.pop("expected_time_s")
    result.update(out)
    return result


def predict_training(catalog: Catalog, sc: TrainScenario) -> dict[str, Any]:
    """DESIGN.md's `chipwise predict` for a training scenario (a missing or partial plan is searched)."""
    check_mode(sc.pricing)
    check_utilisation(sc.utilisation, sc.pricing, "utilisation", "pricing: owned")
    check_rental_options(sc.pricing, {"provider": sc.provider})
    model = load_model(catalog, sc.model)
    system = _one_chip_type(hardware(catalog).system(sc.hardware))
    job = make_job(
        model, sc.seq_len, sc.global_batch_tokens, sc.global_batch, sc.precision, sc.tokens, sc.lora, sc.chips
    )
    search = search_plans(model, job, system, sc.chips, fixed=sc.plan or {})
    econ = system_economics(catalog, system, sc.chips, sc.pricing, sc.region, sc.provider, utilisation=sc.utilisation)
    # the plan that trains soonest, as plan train's row for this fleet (its fastest step had run 1M trn3 on 917,504
    # chips for 3.79 days where plan train's 524,288 take 3.33)
    search = by_objective(search, "time", econ, fleet_goodputs(catalog, system, search, job, model, sc.recovery))
    result = plan_result(search, search.best)
    result["search"] = search_summary(search)
    result["plan_source"] = plan_source(sc.plan or {}, model, topology_of(system).domain_ranks)
    # the knobs the user fixed: chips left idle by a given dp are the plan's doing, not the batch's (train_views)
    given = given_knobs(sc.plan or {})
    result["plan_given"] = sorted(given)
    if given.get("sp") and result["plan"]["tp"] == 1:  # normalise keeps sp only beside tp > 1
        result["plan_note"] = (
            "sp (sequence parallelism) is off at tp 1: it splits activations over the tensor-parallel ranks, and tp 1 "
            "is one rank"
        )
    result["track_record"] = track_record("train", (system.chip.family, system.chip.vendor))
    return attach_economics(
        result,
        catalog,
        system,
        sc.chips,
        sc.pricing,
        sc.region,
        sc.provider,
        model=model,
        utilisation=sc.utilisation,
        lora=sc.lora,
        recovery=sc.recovery,
        econ=econ,
    )


def plan_source(plan: dict[str, Any], model: ModelSpec, domain_ranks: int | None = None) -> str:
    """'given' where the plan names every knob the search would choose (train.plans.left_to_search), 'partial'
    where the search completed it, 'searched' without one: four keys had read as given ({tp, pp, mb, vp} left dp,
    cp, zero and recompute to the search). `domain_ranks`, the ranks of the system's scale-up domain, tells where
    the search has no hsdp to choose: TP1 DP8 Z3 on 8 H100 had read 'partial' without an hsdp key; it reads 'given'."""
    if not given_knobs(plan):
        return "searched"
    return "partial" if left_to_search(plan, model, domain_ranks) else "given"


def check_utilisation(utilisation: float | None, pricing: str, name: str, owned: str) -> None:
    """One line where a utilisation is given for rented chips: it prices owned ones only (economics.tco) and had
    been dropped in silence, as other settings that would be ignored are refused."""
    if utilisation is not None and pricing != "owned":
        # a reservation is paid every hour of its term, used or not; the other modes by the hour rented
        paid = (
            "a reservation is paid every hour of its term"
            if pricing in COMMITMENTS
            else "rented chips are paid by the hour used"
        )
        raise ChipwiseError(
            f"{name} {utilisation:g} prices owned chips (their cost per hour of paid work), but pricing is "
            f"{pricing}: {paid}, at the provider's rate. Fix: add {owned}, or drop {name}."
        )


def check_economics_options(
    catalog: Catalog,
    pricing: str,
    region: str | None,
    provider: str | None,
    utilisation: float | None,
    pue: float | None,
    managed: str | None = None,
    as_of: Any = None,
) -> str | None:
    """One line for an economics option (attach_economics's) that cannot apply, before the long work: a utilisation
    out of range or given for rented chips, a provider or managed service in a mode that has none, a PUE under 1, an
    unknown region or provider (a mistyped one matched no price: every cost '-', exit 0). Returns `as_of` checked."""
    check_mode(pricing)
    if utilisation is not None:
        check_utilisation_share(utilisation)
    check_utilisation(utilisation, pricing, "--utilisation", "--pricing owned")
    check_rental_options(pricing, {"--provider": provider, "--managed": managed})
    checked = check_as_of(as_of)
    if pue is not None:
        check_pue(pue)
    if region is not None:
        check_region(catalog, region)
    check_provider(catalog, provider)
    check_region_provider(region, provider, "--provider")
    return checked


def check_as_of(as_of: Any) -> str | None:
    """An as_of date (prices dated after it are ignored) as the catalog dates them, YYYY, YYYY-MM or YYYY-MM-DD,
    or one line: 'garbage' had passed, after every date as text, and ignored nothing."""
    if as_of is None:
        return None
    if not isinstance(as_of, str) or not DATE.match(as_of.strip()):
        raise ChipwiseError(f"as_of {as_of!r} is not a date. Fix: give YYYY-MM (e.g. '2025-06'), YYYY or YYYY-MM-DD.")
    return as_of.strip()


def rank_value(row: dict[str, Any], objective: str) -> float:
    """What `objective` ranks by, lower is better: expected (goodput-adjusted) seconds, dollars, joules or kg
    CO2e per token trained, so that rows with and without a token count rank the same way."""
    tokens = row.get("tokens") or row["tokens_per_s"] * SECONDS_PER_HOUR
    if objective == "time":
        g = row.get("goodput") or 0.0
        v = row["step_time_s"] / row["global_batch_tokens"] / g if g > 0 else math.inf
    else:
        key = {"cost": "expected_cost_usd", "energy": "expected_energy_j", "carbon": "expected_co2e_kg"}[objective]
        raw = row.get(key)
        v = float(raw) / tokens if raw is not None else math.inf
    return v if not math.isnan(v) else math.inf


def plan_goodputs(
    inputs: ReliabilityInputs,
    used: NDArray[np.int64],
    params: float,
    step: NDArray[np.float64],
    recovery: str,
    frozen_bytes: float = 0.0,
) -> NDArray[np.float64]:
    """assess_run's goodput of every plan at once (run_goodputs), each on its own busy chips `used` at its own step
    time, under the recovery asked for ('best': in memory where another host holds a copy and it keeps more)."""
    g = run_goodputs(inputs, used, params, step, frozen_bytes=frozen_bytes)
    if recovery == "checkpoint":
        return np.asarray(g.checkpoint, dtype=np.float64)
    return np.asarray(g.in_memory if recovery == "in-memory" else np.maximum(g.in_memory, g.checkpoint), np.float64)


def fleet_goodputs(
    catalog: Catalog, system: System, search: PlanSearch, job: TrainingJob, model: ModelSpec, recovery: str
) -> NDArray[np.float64]:
    """Every plan's goodput (plan_goodputs): failures stop the job on each plan's own chips (attach_economics), so at
    scale the fastest plan is not the one that trains soonest. A LoRA run checkpoints its adapters and restores its
    frozen base too, as its row says."""
    inputs = reliability_inputs(catalog, system, precision=job.precision)
    params, frozen = _checkpointed(model, job.lora, job.precision)
    return plan_goodputs(inputs, search.chips_used, params, search.result.step_time, recovery, frozen)


def _checkpointed(model: ModelSpec, lora: bool, precision: str) -> tuple[float, float]:
    """The parameters a run's checkpoint saves, and the bytes a restart reads back beside it: the whole model and
    nothing, or a LoRA run's adapters (train.lora) and its frozen base's weights (reliability.frozen_base_bytes),
    which it restores though it never writes them (Llama-3.1-70B on one 8-H100 host: 44.6M adapter parameters, a
    0.62 GB checkpoint, and 141.1 GB of base)."""
    if not lora:
        return float(model.params_total), 0.0
    return float(lora_adapter_params(model)), frozen_base_bytes(model.params_total, precision)


def by_objective(
    search: PlanSearch, objective: str, econ: SystemEconomics, goodputs: NDArray[np.float64]
) -> PlanSearch:
    """A fleet's plans ranked by the objective's expected figure, as rows rank (rank_value): the ideal (failure-free)
    figure a step over each plan's goodput (plan_goodputs, at its own chips). Time by step / goodput: by the ideal
    step, 1M trn3 had run Llama-3.1-405B TP16 PP7 DP4096 CP8 on 917,504 chips, 11.47 s at goodput 0.490, 3.79 days,
    where TP4 DP131072 CP4 on 524,288 steps in 13.64 s at 0.663, 3.33 days and $58M less (the cost objective had
    kept the first: a rented fleet's paid chip-hours a step follow its step). The others by their ideal figure a step
    as _ideal_and_expected prices one: energy (busy_w x used + idle_w x the paid chips left idle) x step, carbon that
    energy at the site's one grid intensity, cost the paid chip-hours (and an owned fleet's electricity). Each row
    had been its fleet's fastest plan whatever the objective: Llama-3.1-70B on 1,000 H100 by energy ran TP2 PP7
    DP16 CP4 on 896 chips, 523 MWh, where DP256 CP2 on 512 takes 446. A fleet without a price ranks by expected
    time for cost."""
    step = search.result.step_time
    used = search.chips_used.astype(np.float64)
    watts = econ.power.busy_w * used + econ.power.idle_w * (max(econ.billed, search.chips) - used)
    joules = np.asarray(watts * step * econ.site.pue.value, dtype=np.float64)
    if objective in ("energy", "carbon"):
        ideal = joules
    elif objective == "cost" and not math.isnan(econ.price):
        ideal = econ.price * econ.billed * step / SECONDS_PER_HOUR + joules * econ.usd_per_j
    else:
        ideal = step
    with np.errstate(divide="ignore"):
        return search.ranked_by(np.where(goodputs > 0, ideal / goodputs, np.inf))


def _one_chip_type(system: System) -> System:
    """The system, or one line where it holds two chip types: a training search runs one chip type (it had run the
    Trainium4 + GB300 rack as 72 Trainium4); stages across both are plan hetero's."""
    return system.one_chip_type("", "train across both with 'chipwise plan hetero --fleet {fleet} --hybrid {id}'")


def _unpriced(note: str, pricing: str, provider: str | None, managed: str | None, as_of: str | None) -> str:
    """The line a ranking by cost where nothing can be priced ends in, in every pricing mode: an owned TPU v5e (no
    unit price) had printed a cost ranking of '-' rows and exited 0 where a capacity-block one was refused, and a
    capacity-block ranking by time was refused where an owned one printed."""
    given = [
        f"--managed {managed}" if managed else "",
        f"--provider {provider}" if provider else "",
        f"--pricing {pricing}" if pricing != "on-demand" else "",
        f"--as-of {as_of}" if as_of else "",
    ]
    options = [g for g in given if g] or ["--pricing on-demand"]
    drops = " or ".join(f"drop {g.split()[0]}" for g in options if g != "--pricing on-demand")
    return (
        f"nothing can be priced with {' '.join(options)}: {note}, so nothing ranks by cost. Fix: choose hardware "
        f"that can be priced so, {drops + ', ' if drops else ''}or rank by another --objective."
    )


def check_workers(workers: object) -> None:
    """Refuse, in one line, a count of worker processes that is not a whole number of at least 1."""
    if not is_count(workers):
        raise ChipwiseError(
            f"workers {workers!r} is not a whole number of processes. Fix: give e.g. 4, or 1 to work in this process."
        )


class _Planned(NamedTuple):
    """One system's search in plan_training: its rows, or why it has none, and the plans it priced and that fit."""

    rows: list[dict[str, Any]]
    skipped: dict[str, str] | None
    evaluated: int
    feasible: int


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
    *,
    provider: str | None = None,
    utilisation: float | None = None,
    pue: float | None = None,
    managed: str | None = None,
    recovery: str = "best",
    as_of: str | None = None,
    workers: int = 1,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Search every listed system and rank them; each row is that system's best plan (and runners-up).

    Rows rank by `objective` on expected (goodput-adjusted) figures; see `rank_value`. The economics options
    (`pricing`, `region`, `provider`, `utilisation` for owned fleets, `pue`, `managed`, `recovery`, `as_of`) are
    those of `attach_economics`. `workers` > 1: the systems searched side by side in that many copies of this process
    where it may fork (pools.fork_safe; else here), the answer the same; `tick` is called every 0.25 s while they
    work (a spinner turned where no thread of its own turns it).
    """
    one_of(objective, OBJECTIVES, "objective")
    check_mode(pricing)
    precision = training_precision(precision)  # 'FP8' as fp8, once, before the long work
    one_of(recovery, RECOVERIES, "recovery")
    as_of = check_economics_options(catalog, pricing, region, provider, utilisation, pue, managed, as_of)
    check_workers(workers)
    start = time.perf_counter()
    model = load_model(catalog, model_name)
    hw = hardware(catalog)
    systems = [_one_chip_type(hw.system(h)) for h in hardware_ids]
    held: list[PlanSearch] = []

    def planned(i: int) -> _Planned:
        """The i-th system searched: its best plans' rows (top_plans of them), priced, or why none fits."""
        system = systems[i]
        job = make_job(model, seq_len, global_batch_tokens, None, precision, tokens, chips=chips)
        try:
            search = search_plans(model, job, system, chips)
        except InfeasibleError as exc:
            # plans priced that fit no device (the footer had read 'searched 0 plans')
            return _Planned([], {"hardware": system.chip.id, "system": system.id, "reason": str(exc)}, exc.searched, 0)
        # priced once per fleet: its plans' ordering by an energy or cost objective and every row of it read them
        econ = system_economics(
            catalog,
            system,
            chips,
            pricing,
            region,
            provider,
            utilisation=utilisation,
            pue=pue,
            managed=managed,
            as_of=as_of,
        )
        # the last system's search is let go only now that this one is built, as a loop over the systems had it: let
        # go first, its memory went back to the system and this search's arrays faulted it in again, page by page
        # (DeepSeek-V3 on 2,048 of each of 30 chips 7.0 -> 11.2 s)
        held[:] = [search]
        found = _Planned([], None, search.evaluated, search.feasible)
        search = by_objective(search, objective, econ, fleet_goodputs(catalog, system, search, job, model, recovery))
        record = track_record("train", (system.chip.family, system.chip.vendor))  # the chip's, for each of its rows
        for rank, j in enumerate(search.top(top_plans)):
            row = plan_result(search, j)
            row["plan_rank"] = rank + 1
            row["track_record"] = record
            attach_economics(
                row,
                catalog,
                system,
                chips,
                pricing,
                region,
                provider,
                model=model,
                utilisation=utilisation,
                pue=pue,
                managed=managed,
                recovery=recovery,
                as_of=as_of,
                econ=econ,
            )
            found.rows.append(row)
        return found

    # side by side in copies of this process where it can fork (pools.forked_pool), each system's rows taken in the
    # order asked for, so the ranking is the same
    with forked_pool(workers, planned) as (submit, _):
        parts = [waited(part, tick) for part in [submit(i) for i in range(len(systems))]]
    rows = [row for part in parts for row in part.rows]
    skipped = [part.skipped for part in parts if part.skipped is not None]
    evaluated, feasible = sum(part.evaluated for part in parts), sum(part.feasible for part in parts)
    rows.sort(key=lambda r: rank_value(r, objective))
    if objective == "cost" and rows and all(r["price_usd_per_chip_hour"] is None for r in rows):
        raise ChipwiseError(_unpriced(rows[0]["price_note"], pricing, provider, managed, as_of))
    return {
        "kind": "plan-train",
        "model": model.name,
        "model_alias": model.alias or None,  # as given, where not the id ("model" had read "alias = id")
        "chips": chips,
        "tokens": tokens,
        "precision": precision,
        "objective": objective,
        "pricing": pricing,
        # the managed service whose markup is in every price: --managed sagemaker had raised each 15% ($260k ->
        # $300k for Llama 3 8B on 64 H100) under a top level of "pricing": "on-demand" alone
        "managed": managed,
        "managed_markup": term.value if (term := markup_term(catalog, managed)) is not None else None,
        "region": region,
        "recovery": recovery,
        "batch": "given" if global_batch_tokens else "default",
        "results": rows,
        "skipped": skipped,
        "search": {"evaluated": evaluated, "feasible": feasible, "seconds": time.perf_counter() - start},
    }
