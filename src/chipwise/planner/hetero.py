"""Mixed fleets for training: search pipelines whose stages run on two chip types, and say whether the mix beats
using only its fastest part (or each part alone), and why, from the per-stage breakdown."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.catalog.units import JOULES_PER_KWH, SECONDS_PER_HOUR
from chipwise.economics.energy import EnergySite
from chipwise.economics.power import power_model
from chipwise.economics.providers import network_gap
from chipwise.economics.tco import owned_tco
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import Hardware, hardware
from chipwise.hardware.objects import System
from chipwise.planner.serving_economics import network_site, rack_site
from chipwise.planner.training import (
    SystemEconomics,
    _ideal_and_expected,
    attach_economics,
    check_economics_options,
    default_global_batch,
    make_job,
    system_economics,
)
from chipwise.reliability.goodput import assess_run, reliability_inputs
from chipwise.reliability.rates import hosts_of
from chipwise.train.explain import plan_result
from chipwise.train.hetero import Part, enumerate_hetero, hetero_step
from chipwise.train.search import search_plans
from chipwise.workload.counts import read_count
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.training import TrainingJob

#: a throughput difference between the mix and its fastest part alone within which neither is named the winner
#: (smaller than the model's own error; 'alone is better by -1%' had read a 0.7% gain of the mix as a loss)
TIE = 0.02


class Link(NamedTuple):
    """What joins the two parts: each chip type's achievable bytes/s per chip per direction towards the other (its
    own port on a hybrid fabric, its NIC share over the network), the latency of one hand-off, and a hybrid
    fabric's pair link: the bytes/s of one chip-to-chip path between the types (System.cross_bandwidth; none over
    the network)."""

    per_chip: dict[str, float]
    latency_s: float
    per_path: float = math.inf


class Pricing(NamedTuple):
    """How the mix and each part alone are priced: plan train's economics options (attach_economics's), the mix's
    parts each at its own chip's price in the mode (an owned part at its own TCO)."""

    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None
    utilisation: float | None = None
    pue: float | None = None

    def economics(self, catalog: Catalog, system: System, chips: int) -> SystemEconomics:
        """`chips` of `system` priced, sited and powered as plan train prices them alone."""
        return system_economics(
            catalog,
            system,
            chips,
            self.pricing,
            self.region,
            self.provider,
            utilisation=self.utilisation,
            pue=self.pue,
        )


def parse_fleet(spec: str) -> dict[str, int]:
    """'trn4=512,gb300=512' -> {'trn4': 512, 'gb300': 512}."""
    fleet: dict[str, int] = {}
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        name, equals, count = (part.strip() for part in item.partition("="))
        if not (name and equals and count):
            raise ChipwiseError(f"fleet entry '{item}' is not TYPE=COUNT. Fix: write e.g. --fleet trn4=512,gb300=512.")
        # read as --chips reads a count (5k, 1e3): int() had called 'trn4=5k' not TYPE=COUNT
        n = read_count(count, f"--fleet {name}", whole=True, example="512 or 4k")
        if name in fleet:  # the later count had replaced the earlier one without a word
            raise ChipwiseError(
                f"fleet entry '{name}' is given twice ({fleet[name]} and {n}). Fix: give each chip type once, with "
                "its whole count."
            )
        fleet[name] = n
    _two_types(fleet)
    return fleet


def _two_types(fleet: dict[str, int]) -> None:
    if len(fleet) != 2:
        raise ChipwiseError(f"a mixed fleet needs exactly two chip types, got {len(fleet)}. Fix: --fleet A=N,B=M.")


class NoMixError(InfeasibleError):
    """The model fits neither the mixed fleet nor any of its parts: a search that ranks nothing, exit code 1
    (NO_OPTION_EXIT) as plan train's and plan serve's, where 2 is bad input."""

    exit_code = 1


def _hybrid_domain(hw: Hardware, name: str, fleet: dict[str, int]) -> System:
    """The hybrid system `--hybrid` names; one line where it holds one chip type (a p5.48xlarge), listing the
    hybrid systems the catalog holds ('holds , not h100-sxm, trn2' had read its empty list of members)."""
    domain = hw.system(name)
    if domain.hybrid:
        return domain
    hybrids = [sid for sid in hw.system_ids if hw.system(sid).hybrid]
    known = f"the catalog's hybrid systems: {', '.join(hybrids)}" if hybrids else "the catalog holds none"
    fix = "name one that holds both types" if hybrids else "add one in a --catalog file"
    raise ChipwiseError(
        f"'{name}' is not a hybrid system: it holds one chip type, {domain.chip.id} ({known}). Fix: {fix}, "
        f"or drop --hybrid to join {' and '.join(fleet)} over the scale-out network."
    )


def _racks(domain: System, fleet: dict[str, int], ids: list[str]) -> int:
    """How many of the hybrid domain's racks the fleet fills: one where no part exceeds the rack's count of its chip
    type (part of a rack), N where each part is N racks' count of it; one line otherwise (a hand-off between racks
    would leave the rack's fabric)."""
    members = {chip: int(n) for chip, n in domain.members.items()}
    counts = dict(zip(ids, fleet.values(), strict=True))
    racks = max(math.ceil(n / members[chip]) for chip, n in counts.items())
    if racks == 1 or all(n == racks * members[chip] for chip, n in counts.items()):
        return racks
    rack = " and ".join(f"{n} {chip}" for chip, n in members.items())
    whole = ",".join(f"{chip}={racks * members[chip]}" for chip in counts)
    one = ",".join(f"{chip}={members[chip]}" for chip in counts)
    raise ChipwiseError(
        f"--fleet {','.join(f'{c}={n}' for c, n in counts.items())} is not a whole number of {domain.id} racks (each "
        f"holds {rack}), so some pipeline boundary would leave the rack's fabric. Fix: give whole racks (--fleet "
        f"{whole}), at most one rack ({one}), or drop --hybrid to join the types over the scale-out network."
    )


def _parts(
    catalog: Catalog, fleet: dict[str, int], hybrid: str | None, pricing: str = "on-demand"
) -> tuple[list[Part], Link, str, int]:
    """The fleet's two parts, what joins them, its name, and the hybrid racks the fleet fills (0 over the
    network); over the network, the two must be able to share one (network_gap, in the `pricing` mode: an owned
    fleet joins any two chips it can buy on its own network)."""
    _two_types(fleet)
    for name, n in fleet.items():
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ChipwiseError(f"fleet entry {name}={n!r} is not a positive whole chip count. Fix: give e.g. 512.")
    hw = hardware(catalog)
    names = list(fleet)
    for name in names:  # a two-type rack had run as its first member alone
        hw.system(name).one_chip_type(
            ": a part of --fleet is one chip type",
            "give its chip types as the two parts, --fleet {fleet} --hybrid {id}",
        )
    chip_ids = [hw.system(n).chip.id for n in names]
    if chip_ids[0] == chip_ids[1]:
        raise ChipwiseError(
            f"'{names[0]}' and '{names[1]}' are both {chip_ids[0]}: a mixed fleet needs two different chip types. "
            f"Fix: plan one type with 'chipwise plan train --hardware {chip_ids[0]}'."
        )
    if hybrid:
        domain = _hybrid_domain(hw, hybrid, fleet)
        missing = [n for n in names if hw.chip(n).id not in domain.members]
        if missing:
            raise ChipwiseError(
                f"hybrid system '{domain.id}' holds {', '.join(domain.members)}, not {', '.join(missing)}. "
                "Fix: pick a hybrid domain with both types, or drop --hybrid to join them over the scale-out network."
            )
        ids = [hw.chip(n).id for n in names]
        link = domain.link(ids[0], ids[1])
        if link is None:
            raise ChipwiseError(f"hybrid system '{domain.id}' gives no link between {ids[0]} and {ids[1]}.")
        racks = _racks(domain, fleet, ids)
        systems = [hw.member_system(domain, i) for i in ids]
        ports = {ids[0]: domain.port_bandwidth(ids[0], ids[1]), ids[1]: domain.port_bandwidth(ids[1], ids[0])}
        parts = [Part(s, fleet[n]) for s, n in zip(systems, names, strict=True)]
        path = domain.path_bandwidth(ids[0], ids[1])
        return parts, Link(ports, link[1], path), f"{domain.id} scale-up fabric", racks
    systems = [hw.system(n) for n in names]
    gap = network_gap(catalog, systems[0], systems[1], pricing=pricing)
    if gap:
        raise ChipwiseError(gap)
    nics = {s.chip.id: s.scaleout_bandwidth_per_chip * s.scaleout_fabric.bus_efficiency for s in systems}
    lat = max(s.scaleout_fabric.latency_s for s in systems)
    return [Part(s, fleet[n]) for s, n in zip(systems, names, strict=True)], Link(nics, lat), "scale-out network", 0


#: the figures of a part's share of a run that add up over the parts (the rest are ratios of them, or shared)
_ADDITIVE = (
    "cost_usd",
    "expected_cost_usd",
    "usd_per_million_tokens",
    "expected_usd_per_million_tokens",
    "energy_j",
    "expected_energy_j",
    "co2e_kg",
    "expected_co2e_kg",
    "facility_power_w",
)
#: the economics a row carries, as plan train gives them: ideal (no failures) and expected (goodput-adjusted, with
#: spares) cost, energy and carbon, of the run (or of one hour without --tokens; `economics_basis` says which)
ECONOMICS = (
    "economics_basis",
    *_ADDITIVE,
    "tokens_per_joule",
    "expected_tokens_per_joule",
    "goodput",
    "failures_per_day",
    "expected_downtime_s",
    "expected_time_to_train_s",
    "expected_time_per_hour_of_training_s",
)


def _single(
    catalog: Catalog, model: ModelSpec, job: TrainingJob, part: Part, how: Pricing, econ: SystemEconomics
) -> dict[str, Any] | str:
    """A part's best plan alone, priced as plan train prices it (`econ`: how.economics of the part); or why it has
    none (its search's one line)."""
    system, chips = part.system, part.chips
    try:
        search = search_plans(model, job, system, chips)
    except InfeasibleError as exc:
        return str(exc)
    r = plan_result(search, search.best)
    # priced as plan train prices it (in the mode asked for, best recovery): the same plan had read $0.84/M here and
    # $0.86/M there, the ideal cost against the expected one with failure downtime
    attach_economics(
        r,
        catalog,
        system,
        chips,
        how.pricing,
        how.region,
        how.provider,
        model=model,
        utilisation=how.utilisation,
        pue=how.pue,
        econ=econ,
    )
    keep = ("step_time_s", "tokens_per_s", "plan", "dominated_by", "projected", "precision", "compute_precision")
    priced = ("pricing", "region", "pue", "billed_chips", "price_usd_per_chip_hour", "price_source", "price_note")
    return {
        "hardware": system.chip.id,
        "system": system.id,
        "chips": chips,
        **{k: r[k] for k in keep},
        **({"time_to_train_s": r["time_to_train_s"]} if "time_to_train_s" in r else {}),
        **{k: r[k] for k in ECONOMICS if k in r},
        **{k: r[k] for k in priced if k in r},
        "spare_fraction": r["reliability"]["spare_fraction"],
    }


#: why no mixed pipeline came out, in the order a search reaches them (the verdict names the furthest reached)
NO_SPLIT, NO_RACK_SPLIT, NO_FIT = "unequal", "racks", "memory"


def _mixed(
    model: ModelSpec, job: TrainingJob, first: Part, last: Part, link: Link, racks: int = 1
) -> dict[str, Any] | str:
    """The fastest pipeline with its first stages on `first` and its last on `last`; over `racks` hybrid racks,
    those whose data parallelism puts as many whole pipelines in each rack (each boundary inside a rack). Where
    there is none, why: no candidate (NO_SPLIT), none over the racks (NO_RACK_SPLIT), none fits memory (NO_FIT)."""
    hp = enumerate_hetero(model, job, first, last)
    if len(hp) == 0:
        return NO_SPLIT
    if racks > 1:
        hp = hp.take(np.flatnonzero(hp.dp % racks == 0))
        if len(hp) == 0:
            return NO_RACK_SPLIT
    rates = (link.per_chip[first.system.chip.id], link.per_chip[last.system.chip.id])
    res = hetero_step(model, job, first, last, hp, rates, link.latency_s, link.per_path)
    if not res.feasible.any():
        return NO_FIT
    i = int(np.argmin(res.step_time))
    la = int(res.layers_a[i])
    names = (first.system.chip.id, last.system.chip.id)
    s_a, s_b, hand = float(res.stage_a[i]), float(res.stage_b[i]), float(res.hand_off[i])
    bottleneck = names[0] if s_a >= s_b else names[1]
    step = float(res.step_time[i])
    overheads = {names[0]: first.dev.eff.step_overhead_s, names[1]: last.dev.eff.step_overhead_s}
    dp_part = names[0] if res.dp_on_a[i] else names[1]
    return {
        "order": list(names),
        "plan": hp.plan(i, la, model.layers - la, names),
        "step_time_s": step,
        "tokens_per_s": float(res.tokens_per_s[i]),
        "stage_time_s": {names[0]: s_a, names[1]: s_b},
        "layer_time_s": {names[0]: float(res.layer_a[i]), names[1]: float(res.layer_b[i])},
        "hand_off_s": hand,
        "bottleneck": bottleneck,
        "link_share": hand / (hand + max(s_a, s_b)),
        "microbatches": int(res.microbatches[i]),
        "stages": int(hp.pp_a[i] + hp.pp_b[i]),
        # the step's share idle in the pipeline bubble, (P - 1) slowest-stage slots, and spent in the m hand-offs
        "bubble_share": float(res.bubble[i]) / step,
        "hand_off_share": float(res.hand_offs[i]) / step,
        # every term of the step, adding up to it (the bubble and hand-offs alone had left a quarter of a 256 GB200
        # and 512 trn1 step unsaid), and the part each term belongs to where it is one part's
        "step_terms_s": {
            term: float(getattr(res, term)[i])
            for term in ("compute", "bubble", "hand_offs", "dp_comm", "optimizer", "step_overhead")
        },
        "step_term_hardware": {
            "compute": bottleneck,
            "dp_comm": dp_part,
            "optimizer": dp_part,
            "step_overhead": max(overheads, key=lambda n: overheads[n]),
        },
        # each chip type's fixed cost per step (launch of the update, clipping, logging): the mix pays the larger
        "step_overhead_s": overheads,
        # the chips each part's stages run on (ranks over cores a chip); the rest of the part idles
        "chips_used": {
            names[0]: -(-int(hp.tp_a[i] * hp.pp_a[i] * hp.dp[i]) // first.dev.cores_per_chip),
            names[1]: -(-int(hp.tp_b[i] * hp.pp_b[i] * hp.dp[i]) // last.dev.cores_per_chip),
        },
        # per chip, as plan train gives it (a rank is one of a Trainium chip's cores)
        "memory_per_chip_gib": {
            names[0]: float(res.memory_a[i]) * first.dev.cores_per_chip / 2**30,
            names[1]: float(res.memory_b[i]) * last.dev.cores_per_chip / 2**30,
        },
        "evaluated": len(hp),
    }


def plan_hetero_training(
    catalog: Catalog,
    model_name: str,
    fleet: dict[str, int],
    tokens: float | None = None,
    seq_len: int | None = None,
    global_batch_tokens: float | None = None,
    precision: str = "bf16",
    hybrid: str | None = None,
    *,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    utilisation: float | None = None,
    pue: float | None = None,
) -> dict[str, Any]:
    """Best mixed pipeline (both stage orders) against each part alone; with the verdict and its reason. The
    economics options (`pricing`, `region`, `provider`, `utilisation` for owned fleets, `pue`) are plan train's
    (attach_economics's), for the mix's parts and each part alone."""
    start = time.perf_counter()
    check_economics_options(catalog, pricing, region, provider, utilisation, pue)
    how = Pricing(pricing, region, provider, utilisation, pue)
    model = load_model(catalog, model_name)
    parts, link, link_name, racks = _parts(catalog, fleet, hybrid, pricing)
    domain = hardware(catalog).system(hybrid) if hybrid else None
    rack = domain.id if domain else None
    total = sum(fleet.values())
    job = make_job(model, seq_len, global_batch_tokens, None, precision, tokens, chips=total)
    orders = ((parts[0], parts[1]), (parts[1], parts[0]))
    found = [_mixed(model, job, a, b, link, racks) for a, b in orders]
    mixed = [m for m in found if isinstance(m, dict)]
    causes = [c for c in found if isinstance(c, str)]
    # each part priced, sited and powered as plan train prices it alone, for its row and the mix's economics
    priced = {p.system.chip.id: how.economics(catalog, p.system, p.chips) for p in parts}
    singles = [_single(catalog, model, job, p, how, priced[p.system.chip.id]) for p in parts]
    alone = [a for a in singles if isinstance(a, dict)]
    # a part that cannot train alone is named with its reason (it had been left out of the comparison unsaid)
    cannot = [
        {"hardware": p.system.chip.id, "chips": p.chips, "reason": a}
        for p, a in zip(parts, singles, strict=True)
        if isinstance(a, str)
    ]
    if not mixed and not alone:
        raise NoMixError(f"{model.display} fits neither the mixed fleet nor any of its parts. Fix: add chips.")
    best_mixed = min(mixed, key=lambda r: r["step_time_s"]) if mixed else None
    fastest = max(alone, key=lambda r: r["tokens_per_s"]) if alone else None
    steps = job.steps
    if best_mixed is not None and steps is not None:
        best_mixed["time_to_train_s"] = best_mixed["step_time_s"] * steps
    _add_costs(alone)
    if best_mixed is not None:
        sited, site, site_note = _mix_site(catalog, priced, parts, domain, how)
        _mixed_economics(catalog, sited, model, job, best_mixed, parts)
        best_mixed.update(
            {
                "region": site.region,
                "pue": site.pue.value,
                "grid_kg_co2e_per_kwh": site.kg_co2e_per_j * JOULES_PER_KWH,
                "site_note": site_note,
            }
        )
    cause = max(causes, key=(NO_SPLIT, NO_RACK_SPLIT, NO_FIT).index, default=NO_FIT)
    verdict, reason = _verdict(best_mixed, fastest, parts, link_name, racks, job.global_batch, cause)
    out: dict[str, Any] = {
        "kind": "plan-hetero",
        "model": model.name,
        "model_alias": model.alias or None,  # as given, where not the id ("model" had read "alias = id")
        "fleet": fleet,
        # the precision asked for, and the one each part computes in (a chip without its units: a wider one)
        "precision": job.precision,
        "compute_precision": {p.system.chip.id: p.system.chip.native_precision(job.precision) for p in parts},
        # the parts whose chip lists the precision (at a wider one's rate: Gaudi 3's FP8), as plan_result says it
        "precision_listed": [p.system.chip.id for p in parts if job.precision in p.system.chip.flops],
        # the economics options every row is priced with, as plan train gives them
        "pricing": pricing,
        "region": region,
        "provider": provider,
        "utilisation": utilisation,
        "link": {"between": link_name, "bandwidth_per_chip_Bps": link.per_chip, "latency_s": link.latency_s},
        # the hybrid racks the fleet fills (0: over the network) and where the mix's pipelines sit in them
        "racks": racks,
        "placement": f"{racks} racks, each pipeline boundary inside a rack" if racks > 1 else None,
        # the batch the plans run (sequences; tokens a step), and the tokens asked for where given (train.batch)
        "global_batch": job.global_batch,
        "seq_len": job.seq_len,
        "global_batch_tokens": job.global_batch_tokens,
        "global_batch_tokens_asked": global_batch_tokens,
        # a default batch is the whole fleet's (chips it is sized for), and plan train's default for a part's chips
        # alone where it differs (smaller), so that a row 'h100-sxm alone (1024)' is not read as plan train's
        "global_batch_default_chips": None if global_batch_tokens else total,
        "plan_train_default_batch_tokens": {} if global_batch_tokens else _part_defaults(model, job, parts),
        "mixed": best_mixed,
        "alone": alone,
        "alone_infeasible": cannot,
        "fastest_part": fastest,
        "verdict": verdict,
        "reason": reason,
        "projected": any(p.system.projected for p in parts),
        # the rack by its id ('fusion-rack', the alias as typed, had headed the banner beside the title's id)
        "projected_items": sorted({(rack or p.system.chip.id) for p in parts if p.system.projected}),
        "seconds": time.perf_counter() - start,
    }
    return out


def _part_defaults(model: ModelSpec, job: TrainingJob, parts: list[Part]) -> dict[str, int]:
    """plan train's default batch (tokens) for each part's chips alone, where it differs from the mix's default, the
    whole fleet's: at least 1,024 tokens a chip (default_global_batch_tokens), so 1,024 H100 beside 1,024 MI300X
    train Llama 3.1 8B on 2,097,152 tokens a step where plan train gives 1,024 H100 1,048,576. Every option of the
    comparison trains on the one batch, one job's: the H100s' row reads 5,070,741 tokens/s (2.3 days for 1T) beside
    plan train's 3,450,880 (3,370 a chip; 3.4 days) for the same chips, a difference no line had explained."""
    own = {p.system.chip.id: default_global_batch(model, job.seq_len, p.chips) * job.seq_len for p in parts}
    return {chip: tokens for chip, tokens in own.items() if tokens != job.global_batch_tokens}


def _add_costs(alone: list[dict[str, Any]]) -> None:
    """Each part alone's fleet $/hour: its price per chip-hour (attach_economics's: a rental quote, or an owned chip's
    TCO with its share of the run's electricity) x the chips billed, whole rental units, as the cost beside it bills
    them: 12 Trainium2 rent a 16-chip trn2.48xlarge, $43.68 an hour, where the column had read 12 x $2.73 = $32.76
    beside a cost of $43.68 an hour. None where the part has no price in the mode."""
    for a in alone:
        price = a.get("price_usd_per_chip_hour")
        a["usd_per_hour"] = price * a["billed_chips"] if price is not None else None


def _mix_site(
    catalog: Catalog, priced: dict[str, SystemEconomics], parts: list[Part], rack: System | None, how: Pricing
) -> tuple[dict[str, SystemEconomics], EnergySite, str]:
    """Each part's economics as the mixed pipeline runs it, its one site, and the line that says where: the hybrid
    rack's site (serving_economics.rack_site, as a split's pools in the rack are sited), or over the network
    _network_site, each part then drawing the scale-out fabric its hand-off crosses. Each part keeps its own price
    quote. The parts had been sited as each alone: Llama 3.1 70B on 36 trn4 + 36 gb300 in trn4-gb300-fusion-rack
    (10B tokens) had read 767.24 kg CO2e, the trn4 half at us-east-2's 411 g/kWh and the gb300 half at us-east-1's
    379 g (397.8 g over the 1,928.6 kWh); it now reads 730.94 kg, all at us-east-1. A --pue asked for holds at the
    rack's site too (each part's site carries it already)."""
    # a price the user set keeps the region of the catalog quote it replaces (PriceQuote.site): its own is ''
    regions = list(dict.fromkeys(r for e in priced.values() if e.quote and (r := e.quote.site[1])))
    if rack is not None:
        site, note = rack_site(catalog, rack, how.pricing, how.region, regions, what="part")
        if how.pue is not None:
            site = replace(site, pue=next(iter(priced.values())).site.pue)
        return {chip: e._replace(site=site) for chip, e in priced.items()}, site, note
    # the hand-off crosses the scale-out network, so each part draws the fabric's power even where it fits in one
    # system (8 H100 beside 16 Trainium2 had read 21,640 W of facility power, (8 x 969 + 16 x 691.6) x 1.15, with
    # no network; with it, (8 x 1,069 + 16 x 741.6) x 1.15 = 23,480 W). One inside a hybrid rack hands off on the
    # rack's scale-up fabric and draws the network only where the fleet spans racks (system_economics: more chips
    # than the rack holds of its type)
    powered = {
        p.system.chip.id: _networked(catalog, p.system, priced[p.system.chip.id], how)._replace(
            power=power_model(catalog, p.system, scaleout=True)
        )
        for p in parts
    }
    site, note = _network_site(powered, parts, regions, owned=how.pricing == "owned")
    return {chip: e._replace(site=site) for chip, e in powered.items()}, site, note


def _networked(catalog: Catalog, system: System, econ: SystemEconomics, how: Pricing) -> SystemEconomics:
    """A part's economics where it buys its share of the scale-out network the mix hands off over: an owned part's
    TCO with the network's capex, colocation and power (economics.tco.owned_tco's scaleout), even where the part
    alone fits in one system and system_economics left it out; a rented part as it is (the provider's network is in
    its price)."""
    if econ.tco is None:
        return econ
    util = how.utilisation if how.utilisation is not None else 1.0
    tco = owned_tco(catalog, system, how.region, util, how.pue, scaleout=True)
    return econ._replace(tco=tco, price=tco.fixed_and_idle_usd_per_chip_hour, usd_per_j=tco.inputs.electricity.value)


def _network_site(
    powered: dict[str, SystemEconomics], parts: list[Part], regions: list[str], owned: bool = False
) -> tuple[EnergySite, str]:
    """The one site of a mix joined by the scale-out network, and the line that says so (`regions`: where each part's
    price quote is; `owned`: each part is charged its owned cost instead). network_gap joins only
    systems one operator can install side by side, and the hand-off is priced on one datacenter's network, so both
    parts run in one datacenter: the one the part drawing more busy power (chips x busy W a chip) would run in
    alone, so that the smaller draw moves to it (the order of --fleet does not choose; an exact tie goes to the
    chip id later in the alphabet). 16 H100 (p5.48xlarge, us-east-1) beside 16 Trainium2 (priced in us-east-2) had
    read each at its own grid, two sites for one network; both now read us-east-1, the H100s' 17.1 kW against
    11.9 kW."""
    draw = {p.system.chip.id: powered[p.system.chip.id].power.busy_w * p.chips for p in parts}
    return network_site(draw, {chip: powered[chip].site for chip in draw}, regions, owned, "part")


def _mixed_economics(
    catalog: Catalog,
    priced: dict[str, SystemEconomics],
    model: ModelSpec,
    job: TrainingJob,
    mixed: dict[str, Any],
    parts: list[Part],
) -> None:
    """The mix's cost, energy and carbon on plan train's basis (attach_economics, in the pricing mode asked for, best
    recovery): each part priced as that part alone would be, powered and sited as the mix runs it (`priced`:
    _mix_site's), and both under one run's reliability; with its $/hour, price sources and each part's share
    (`parts`). The pipeline is one synchronous job, so a failure on either part stops both: its interruption rate is
    the sum over both parts' chips and hosts, and the downtime it brings idles every chip of the fleet."""
    used = mixed["chips_used"]
    inputs = {p.system.chip.id: reliability_inputs(catalog, p.system, precision=job.precision) for p in parts}
    # each part's whole hosts, together; every other reliability input is the catalog's, the same for both parts
    hosts = sum(float(hosts_of(used[chip], i.chips_per_host.value)) for chip, i in inputs.items())
    first = next(iter(inputs.values()))
    # each part's chips charged the software faults of their own ranks (reliability.rates): the fleet's mean
    ranks = sum(used[chip] * i.rates.ranks_per_chip for chip, i in inputs.items()) / sum(used.values())
    first = replace(first, rates=replace(first.rates, ranks_per_chip=ranks))
    rel = assess_run(first, sum(used.values()), model.params_total, mixed["step_time_s"], "best", hosts=hosts)
    seconds = mixed.get("time_to_train_s")
    run = {
        "tokens": job.tokens,
        "tokens_per_s": mixed["tokens_per_s"],
        "model_flops_per_token": model.training_flops_per_token(job.seq_len, job.lora),
    }
    sums = dict.fromkeys(_ADDITIVE, 0.0)
    basis_s = seconds if seconds is not None else SECONDS_PER_HOUR
    each: dict[str, dict[str, Any]] = {}
    for p in parts:
        chip = p.system.chip.id
        e = priced[chip]
        share = _ideal_and_expected(
            run,
            p.chips,
            basis_s,
            e.price,
            e.power,
            e.site.pue.value,
            e.site.kg_co2e_per_j,
            replace(rel, chips=used[chip]),
            e.billed,
            e.usd_per_j,  # an owned part's electricity, as attach_economics charges it
        )
        for k in _ADDITIVE:
            sums[k] += share[k]
        each[chip] = _part_figures(e, share, basis_s)
        wall, down = share["expected_time_s"], share["expected_downtime_s"]  # the same for both parts
        tokens = share["tokens_per_joule"] * share["energy_j"]  # the run's, whole steps, as each part counts them
    mixed.update({k: (None if math.isnan(v) else v) for k, v in sums.items()})
    rates = [f["usd_per_hour"] for f in each.values()]
    sources = {chip: _price_source(e) for chip, e in priced.items()}
    mixed.update(
        {
            # the fleet's $/hour: each part's chips billed (whole rental units) at its own price in the mode
            "usd_per_hour": sum(rates) if None not in rates else None,
            "price_sources": sources,
            # the parts priced at two providers' rentals: one operator running both is assumed (network_gap)
            "providers": sorted({str(q["provider"]) for q in sources.values() if q and q.get("provider")}),
            # each part's share of the mix's price, power, energy and carbon (they add up to the mix's)
            "parts": each,
            "economics_basis": "whole run" if seconds is not None else "one hour",
            "tokens_per_joule": tokens / sums["energy_j"],
            "expected_tokens_per_joule": tokens / sums["expected_energy_j"],
            "goodput": rel.goodput,
            "failures_per_day": rel.failures_per_day,
            "spare_fraction": rel.spare_fraction,
            "expected_downtime_s": down,
            "expected_time_to_train_s" if seconds is not None else "expected_time_per_hour_of_training_s": wall,
        }
    )


def _price_source(econ: SystemEconomics) -> dict[str, Any] | None:
    """A part's price provenance, as attach_economics records it: the rental quote, an owned fleet's TCO, or None."""
    if econ.quote is not None:
        return econ.quote.record()
    return econ.tco.price_source() if econ.tco is not None else None


def _part_figures(econ: SystemEconomics, share: dict[str, Any], basis_s: float) -> dict[str, Any]:
    """One part's share of the mix (_ideal_and_expected's figures of its chips): the chips billed, its $/hour (its
    ideal cost over the run's hours: the billed chips at its price, an owned part's electricity included; None
    without a price), its facility power, and the run's (or one hour's) energy and carbon, ideal and expected."""
    cost = share["cost_usd"]
    return {
        "billed_chips": econ.billed,
        "usd_per_hour": None if math.isnan(cost) else cost / (basis_s / SECONDS_PER_HOUR),
        "facility_power_w": share["facility_power_w"],
        **{k: share[k] for k in ("energy_j", "expected_energy_j", "co2e_kg", "expected_co2e_kg")},
    }


def _no_mix(cause: str, parts: list[Part], racks: int, batch: int) -> tuple[str, str]:
    """Why no mixed pipeline exists, with the fix: the parts too unequal for one shared data parallelism to keep
    half of each busy, no data parallelism that puts whole pipelines in each rack and divides the batch, or memory."""
    if cause == NO_SPLIT:
        counts = " against ".join(f"{p.chips} {p.system.chip.id}" for p in parts)
        return (
            f"no split with one data parallelism keeps half of each part's chips busy ({counts}): the parts are too "
            "unequal, one would sit mostly idle",
            "bring the two counts closer, or train on the larger part alone",
        )
    if cause == NO_RACK_SPLIT:
        return (
            f"no data parallelism that is a multiple of {racks} (whole pipelines in each rack) divides the "
            f"{batch:,}-sequence batch",
            f"give a batch that a multiple of {racks} divides (--global-batch-tokens)",
        )
    return "no pipeline split fits both parts' memory", "add chips, or a part with more memory per chip"


def _seconds(x: float) -> str:
    return f"{x:.2f} s" if x >= 1.0 else f"{x * 1e3:.0f} ms"


def _step_costs(mixed: dict[str, Any]) -> str:
    """What the mix's step spends beyond its slowest stage's compute, every term of at least half a percent, largest
    first: its pipeline bubble, hand-offs, one part's exposed data-parallel traffic and optimizer update, and the
    larger of the parts' fixed costs per step. The bubble and hand-offs had been named alone: 256 GB200 beside 512
    trn1 (70B) read 'bubble 8%, hand-offs 1%' of a 6.57 s step whose 1.60 s trn1 step overhead (24%) went unsaid."""
    terms, owner, step = mixed["step_terms_s"], mixed["step_term_hardware"], mixed["step_time_s"]
    m, p = mixed["microbatches"], mixed["stages"]
    ovh, own = owner["step_overhead"], _seconds(terms["step_overhead"])
    name, other = next((n, v) for n, v in mixed["step_overhead_s"].items() if n != ovh)
    overhead = (
        f"the fixed cost per step ({own}, the same on both parts)"
        if other == terms["step_overhead"]
        else f"{ovh}'s fixed cost per step ({own} against {_seconds(other)} on {name}; the mix pays the larger)"
    )
    words = {
        "step_overhead": overhead + " takes {}%",
        "bubble": f"the pipeline bubble ({p - 1} of {m + p - 1} micro-batch slots: {m} micro-batches over {p} "
        "stages) idles {}% of its step",
        "hand_offs": "the hand-offs take {}%",
        "dp_comm": f"{owner['dp_comm']}'s exposed data-parallel gradient traffic takes {{}}%",
        "optimizer": f"{owner['optimizer']}'s optimizer update takes {{}}%",
    }
    costs = sorted(((terms[k] / step, w) for k, w in words.items() if terms[k] >= 0.005 * step), reverse=True)
    said = ", ".join(w.format(f"{100 * share:.0f}") for share, w in costs)
    compute = (
        f"of the mix's {_seconds(step)} step, {100 * terms['compute'] / step:.0f}% is its slowest stage's compute "
        f"({owner['compute']}, {m} micro-batches)"
    )
    return f"{compute}; the rest, largest first: {said}" if said else compute


def _mix_costs(mixed: dict[str, Any], fastest: dict[str, Any]) -> str:
    """What the mix pays that its fastest part alone does not, from both plans: the terms of its step beyond its
    slowest stage's compute (_step_costs), and the single-type options the fastest part's plan uses (FSDP, context
    parallelism) that a two-part pipeline (ZeRO-1, CP1) does not. A fixed 'FSDP, context parallelism' had been
    blamed for an H100 plan at ZeRO-2 and CP1, where the bubble took 17% of the mix's step."""
    text = _step_costs(mixed)
    plan = fastest["plan"]
    sharded = "HSDP" if plan.get("hsdp") else "FSDP"  # as fmt.plan names ZeRO-3
    options = ((sharded, plan["zero"] == 3), ("context parallelism", plan["cp"] > 1))
    uses = [name for name, on in options if on]
    if uses:
        text += f"; {fastest['hardware']} alone uses {' and '.join(uses)}, which a two-part pipeline does not"
    return text


def _verdict(
    mixed: dict[str, Any] | None,
    fastest: dict[str, Any] | None,
    parts: list[Part],
    link_name: str,
    racks: int = 1,
    batch: int = 0,
    cause: str = NO_FIT,
) -> tuple[str, str]:
    if mixed is None:
        why, fix = _no_mix(cause, parts, racks, batch)
        return "mix not feasible", f"{why}; the parts can only train separately. Fix: {fix}"
    if fastest is None:
        return "mix needed", "the model fits only when both parts hold stages"
    gain = mixed["tokens_per_s"] / fastest["tokens_per_s"] - 1.0
    (na, ta), (nb, tb) = mixed["layer_time_s"].items()
    cores = {p.system.chip.id: p.system.chip.cores_per_chip for p in parts}
    st = mixed["plan"]["stages"]
    stage_chips = {na: st[0]["tp"] / cores[na], nb: st[1]["tp"] / cores[nb]}
    other = next(n for n in stage_chips if n != fastest["hardware"])
    speed = (
        f"a layer takes {ta * 1e3:.1f} ms on {na} (TP{st[0]['tp']} = {_chips(stage_chips[na])}) and "
        f"{tb * 1e3:.1f} ms on {nb} (TP{st[1]['tp']} = {_chips(stage_chips[nb])}) per micro-batch, so the "
        f"split is {st[0]['layers']}/{st[1]['layers']} layers"
    )
    link = f"the hand-off over the {link_name} costs {100 * mixed['link_share']:.2g}% of a micro-batch"
    cost = ""
    mine, theirs = mixed.get("expected_usd_per_million_tokens"), fastest.get("expected_usd_per_million_tokens")
    if mine and theirs and math.isfinite(mine) and math.isfinite(theirs):  # the table's (expected) figures
        cost = (
            f"; per token the mix costs ${mine:.2f}/M against ${theirs:.2f}/M for {fastest['hardware']} alone "
            f"({'cheaper' if mine < theirs else 'dearer'})"
        )
    if gain > TIE:
        return (
            f"mixed fleet beats its fastest part alone ({fastest['hardware']}) by {100 * gain:.0f}% in throughput",
            f"{speed}; {link}; the {other} chips carry {_share(mixed, other)} instead of idling{_idle(mixed, parts)}"
            f"{cost}",
        )
    why = f"{_mix_costs(mixed, fastest)}; the {other} chips would hold {_share(mixed, other)}{_idle(mixed, parts)}"
    if gain >= -TIE:  # a gain of either sign within the band: a tie, with its signed figure
        tie = f"mix within {100 * TIE:.0f}% of {fastest['hardware']} alone ({100 * gain:+.1f}% in throughput)"
        return tie, f"{speed}; {why}{cost}"
    # the winner's throughput over the other's, as a win of the mix is put: 1,033,854 tokens/s alone against the
    # mix's 638,663 had read 'better by 38%' (1 - 638,663 / 1,033,854); it now reads 62%, 1.62x
    lead = fastest["tokens_per_s"] / mixed["tokens_per_s"] - 1.0
    return (
        f"fastest part alone ({fastest['hardware']}) is better by {100 * lead:.0f}% in throughput",
        f"{speed}; {why}{cost}",
    )


def _chips(n: float) -> str:
    """'1 chip', '4 chips', '0.5 chips' (a TP1 stage on one of a Trainium chip's two cores): 'TP1 = 1 chips' had
    read."""
    return f"{n:g} chip{'' if n == 1 else 's'}"


def _share(mixed: dict[str, Any], chip: str) -> str:
    """The layers the chosen plan gives `chip`'s part, of the model's. The share had been the part's capacity over
    the fleet's (its fleet chips over a layer's chip-seconds on it), whatever the plan used: DeepSeek-V3 on 64 H100
    beside 64 MI300X, split 45/16 layers, had read 'the h100-sxm chips would add 51% of the mix's compute'; they hold
    16 of its 61 layers (26%)."""
    layers = {s["hardware"]: s["layers"] for s in mixed["plan"]["stages"]}
    total = sum(layers.values())
    return f"{layers[chip]} of the model's {total} layers ({100 * layers[chip] / total:.0f}%)"


def _idle(mixed: dict[str, Any], parts: list[Part]) -> str:
    """'; the mix runs 768 of the 1,000 mi300x', where the chosen plan leaves chips of a part idle (whole pipelines
    fill no more of them; the share had counted all 1,000); '' where it runs every chip."""
    used = mixed["chips_used"]
    idle = [
        f"{used[p.system.chip.id]:,} of the {p.chips:,} {p.system.chip.id}"
        for p in parts
        if used[p.system.chip.id] < p.chips
    ]
    return f"; the mix runs {' and '.join(idle)}" if idle else ""
