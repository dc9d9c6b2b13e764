"""The economics of a serving deployment: on-demand or owned-fleet dollars, energy and carbon per million
tokens, the site they are reckoned at (PUE, region, grid), and why a deployment has no price where it has none."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.catalog.units import JOULES_PER_KWH, SECONDS_PER_HOUR
from chipwise.economics.energy import EnergySite, carbon_kg, check_region, energy_j, site_for
from chipwise.economics.power import power_model
from chipwise.economics.pricing import PriceQuote, price_gap, price_per_chip_hour
from chipwise.economics.rental import billed_one, split_rent
from chipwise.economics.tco import COMMITMENT_TERM_S, COMMITMENTS, Tco, owned_gap, owned_tco
from chipwise.hardware.objects import System

if TYPE_CHECKING:  # annotations only: planner.training prices a system here and runs no simulator
    from chipwise.serve.disaggregated import KVTransfer
    from chipwise.serve.sim.run import SimOutput
    from chipwise.serve.simulate import Pool


def per_mtok(per_hour: float, tokens_per_s: float) -> float:
    """A figure per hour (USD, J, kg CO2e) per million of the tokens served at `tokens_per_s`: NaN where none are."""
    return per_hour * 1e6 / (tokens_per_s * SECONDS_PER_HOUR) if tokens_per_s > 0 else math.nan


def _util(utilisation: float | None) -> float:
    """An owned fleet's utilisation as owned_tco takes it: None (not given) is every hour, 1."""
    return 1.0 if utilisation is None else utilisation


def _owned_chip_hour(
    catalog: Catalog, system: System, region: str | None, scaleout: bool, utilisation: float | None = None
) -> tuple[float, Tco]:
    """USD an owned chip of `system`, busy all hour, is charged for it (_owned_charge's rule: the TCO's fixed terms,
    with the scale-out network's where the deployment uses it, `scaleout`, and the chip's facility energy at the
    site's $/kWh; at a `utilisation` under 1, its idle hours' share too), and the TCO it rests on."""
    tco = owned_tco(catalog, system, region, _util(utilisation), scaleout=scaleout)
    busy_j = power_model(catalog, system, scaleout=scaleout).busy_w * SECONDS_PER_HOUR * tco.inputs.site.pue.value
    return sum(tco.charged_per_chip_hour(1.0, busy_j).values()), tco


def chip_hour_price(
    catalog: Catalog,
    system: System,
    pricing: str,
    region: str | None,
    provider: str | None,
    scaleout: bool = False,
    utilisation: float | None = None,
) -> tuple[float, dict[str, Any] | None, PriceQuote | None]:
    """USD per chip-hour (NaN when the catalog has none: price_note says why), its provenance, and the rental quote
    if any; a region the catalog does not know is a one-line error.

    Owned: a chip busy all hour, as its check charges it (_owned_chip_hour), with the scale-out network's capex,
    colocation and power where `scaleout` (the deployment's traffic crosses systems: uses_network): the price a search
    ranks before it knows a pool's busy share, an upper bound of the charge of a pool that uses the network as
    `scaleout` says. The ranking of plan serve had priced every owned pool at the TCO of a fleet of many systems (an
    H100 at $1.683 a chip-hour, the table's $1.68, where its check charged the one chip $1.40): one system reads
    $1.347 + its busy energy, $1.465. A rental price includes the provider's network: `scaleout` leaves it as it is.
    `utilisation`: an owned fleet's share of calendar hours in paid work (None: every hour, 1)."""
    if region is not None:
        check_region(catalog, region)
    if pricing == "owned":
        if system.chip.unit_price is None:
            return math.nan, None, None
        price, tco = _owned_chip_hour(catalog, system, region, scaleout, utilisation)
        return price, {"system": system.id, **tco.price_source()}, None
    quote = price_per_chip_hour(catalog, system, pricing, region, provider)
    if quote is None:
        return math.nan, None, None
    return quote.usd_per_chip_hour, {"system": system.id, **quote.record()}, quote


def price_note(catalog: Catalog, system: System, pricing: str, provider: str | None = None) -> str:
    """Why chip_hour_price has no price for `system` (one clause, for a '-' in a table): no unit price for an owned
    fleet, else economics.pricing.price_gap (a Capacity Block off AWS, no price of that provider, ...)."""
    if pricing == "owned":
        return owned_gap(system) or f"no owned cost for {system.chip.id}"
    return price_gap(catalog, system, pricing, provider)


@dataclass(frozen=True)
class RankingPrice:
    """What plan serve's ranking charges a chip of one system an hour (chip_hour_price, busy all hour): `usd` where
    the deployment's traffic stays inside its systems, and `network_usd` more where it crosses the scale-out network
    (uses_network): an owned chip's share of the fabric's capex, colocation and power; 0 for a rental, whose price
    includes the provider's network, and for a system with no price (`usd` NaN)."""

    usd: float
    network_usd: float = 0.0

    def per_chip_hour(self, network: bool) -> float:
        """USD per chip-hour of a deployment that uses the scale-out network (`network`) or not."""
        return self.usd + self.network_usd if network else self.usd


def network_price(
    catalog: Catalog, system: System, pricing: str, region: str | None, price: float, utilisation: float | None = None
) -> float:
    """USD per chip-hour an owned chip of `system` pays for the scale-out network where its deployment uses it, over
    its one-system `price` (chip_hour_price both ways: an H100 of a p5.48xlarge $1.683 against $1.465); 0 for a rental
    and for a system with no price."""
    if pricing != "owned" or not math.isfinite(price):
        return 0.0
    return chip_hour_price(catalog, system, pricing, region, None, scaleout=True, utilisation=utilisation)[0] - price


def split_network(catalog: Catalog, pools: Sequence[tuple[System, float, int]]) -> bool:
    """Whether a split of two pools of (system, chips a replica, replicas), before its replicas are set up, uses the
    scale-out network (uses_network), its KV path as planner.serving_deployment.kv_path takes it: a replica of more
    chips than its system holds, or a cache that leaves one system's scale-up domain (shares_domain) with no hybrid
    rack holding both chip types to hand it over in (serve.disaggregated.pools_rack). Where a --set makes the network
    faster than such a rack's link, kv_path takes the network: the split's set-up transfer says so (serving_split
    prices its cheapest splits again by it)."""
    from chipwise.serve.disaggregated import pools_rack  # the simulator's package: not for planner.training

    if any(chips > system.chips for system, chips, _ in pools):
        return True
    (pre, pre_chips, n_pre), (dec, dec_chips, n_dec) = pools
    if shares_domain(pre, pre_chips, n_pre, dec, dec_chips, n_dec):
        return False
    return pools_rack(catalog, pre, pre_chips * n_pre, dec, dec_chips * n_dec) is None


def shares_domain(pre: System, pre_chips: float, n_pre: int, dec: System, dec_chips: float, n_dec: int) -> bool:
    """Whether a split's two pools of `n_pre` and `n_dec` replicas sit in one system's scale-up domain, where the KV
    cache moves over it (planner.serving_deployment.kv_path): pools of one system within its scale-up size, or, of a
    system its provider rents in units (a TPU slice, an EC2 instance size), within one unit (rental.split_rent)."""
    if pre.id != dec.id:
        return False
    if pre.rental_chips:
        return split_rent(pre.rental_chips, pre_chips, n_pre, dec_chips, n_dec)[1]
    return pre_chips * n_pre + dec_chips * n_dec <= pre.scaleup.size


def priced_system(system: System, pricing: str) -> System:
    """The system as a fleet of it is priced in `pricing`: its provider's rental units in that mode (EC2 Capacity
    Blocks sell whole instances), and none for an owned fleet, which buys chips."""
    units = () if pricing == "owned" else system.rental_modes.get(pricing, system.rental_chips)
    return system if units == system.rental_chips else replace(system, rental_chips=units)


def rented_chips(pools: Sequence[tuple[System, float, int]]) -> list[float]:
    """Chips rented for each pool of (system, chips a replica, replicas): its system's units that host its replicas
    (economics.rental), or, for a split of one system, the one unit that holds both where that costs no more
    (rental.split_rent; the first pool carries it)."""
    if len(pools) == 2 and pools[0][0].id == pools[1][0].id:
        (system, pre_chips, n_pre), (_, dec_chips, n_dec) = pools
        return [split_rent(system.rental_chips, pre_chips, n_pre, dec_chips, n_dec)[0], 0.0]
    return [billed_one(system.rental_chips, chips, n) for system, chips, n in pools]


def busy_shares(out: SimOutput, requests_per_s: float | None = None) -> list[float]:
    """Per pool of a simulated run (in the deployment's order: out.roles), the share of the time its replicas spend
    running iterations, in [0, 1]: the mean over its replicas of busy seconds over the run's makespan or, where the
    run's tokens are priced at its offered load (`requests_per_s`: planner.serving_outcome.priced_request_rate), over
    the time that load takes to bring the requests served (busy seconds x rate / requests), so that energy and cost
    are per token of one basis. A replica between iterations waits for requests, at idle power (economics). Over the
    makespan, one request of Llama-3.1-8B at 0.01 req/s read busy 97.5% of the hour and 152 kWh per M tokens priced at
    the load's 2 tok/s, where 200 such requests read 1.2% and 36.6 kWh."""
    span = max(_priced_span(out, requests_per_s) if requests_per_s else float(out.end), 1e-12)
    shares = []
    for role in out.roles or ["both"]:
        busy = [float(r["busy_s"]) for r in out.replicas if r.get("role", "both") == role]
        shares.append(min(1.0, max(0.0, sum(busy) / len(busy) / span)) if busy else 1.0)
    return shares


def _priced_span(out: SimOutput, requests_per_s: float) -> float:
    """Seconds a load of `requests_per_s` takes to bring the requests a run served (its makespan where none was)."""
    served = int(np.sum(np.isfinite(out.requests["finish"]) & (out.requests["dropped"] == 0)))
    return served / requests_per_s if served else float(out.end)


def serving_site(
    catalog: Catalog,
    system: System,
    pricing: str,
    quote: PriceQuote | None,
    region: str | None = None,
    provider: str | None = None,
) -> EnergySite:
    """Where a pool's chips run: the operator and region its price `quote` names (a price the user set: those of
    the catalog quote it replaces, PriceQuote.site; an owned fleet: the owner's site; a price region with no grid of
    its own: the grid region it lies in, catalog.regions.PRICE_REGIONS)."""
    return site_for(
        catalog,
        system,
        region,
        owned=pricing == "owned",
        # unpriced: the provider asked for (--provider lambda with no Lambda price had put the chips at AWS's site)
        operator=quote.site[0] if quote else provider,
        hint_region=quote.site[1] if quote else None,
    )


def shared_rack(catalog: Catalog, pools: Sequence[Pool]) -> System | None:
    """The hybrid rack a split's two pools sit in: the first hybrid scale-up system holding both chip types in the
    numbers the pools need (serve.disaggregated.hybrid_domain, the rack planner.serving_deployment.kv_path hands
    the KV cache over in, at the faster of its link and its network), else None."""
    from chipwise.serve.disaggregated import pools_rack  # the simulator's package: not for planner.training

    if len(pools) != 2:
        return None
    pre, dec = pools
    return pools_rack(
        catalog, pre.setup.system, pre.setup.chips * pre.replicas, dec.setup.system, dec.setup.chips * dec.replicas
    )


def uses_network(pools: Sequence[Pool], transfer: KVTransfer | None) -> bool:
    """Whether a deployment's traffic crosses the scale-out network, and so draws its power and (owned) pays its
    capex and colocation: a replica of more chips than its system holds (its ranks talk across systems), or a split
    whose KV cache its `transfer` sends over the network (planner.serving_deployment.kv_path: not where one system's
    scale-up domain or one rental unit holds both pools, nor over a hybrid rack's link unless a --set makes the
    network faster). Replicas that each fit in one system never use it, however many systems they fill: 16 H100 as
    two TP8 replicas of Llama 3.1 8B had drawn 100 W a chip of 400G fabric, even idle, and paid its $6,600 a chip
    owned: 7.47 kWh (on demand) and $14.27 (owned) per million output tokens, against 5.90 kWh and $12.32 for the same
    replica on 8; they now read 6.47 kWh and $12.38, the rest their busier run."""
    return any(p.setup.chips > p.setup.system.chips for p in pools) or (transfer is not None and transfer.network)


def rack_site(
    catalog: Catalog,
    rack: System,
    pricing: str,
    region: str | None,
    price_regions: Sequence[str],
    what: str = "pool",
) -> tuple[EnergySite, str]:
    """One rack is one datacenter: both pools at the rack's own site (the region asked for, else its provider's
    default region, economics.energy.site_for), and the line that says so. Each pool keeps its own chip's price
    quote, whose regions may differ: Llama 3.1 70B's trn4 prefill beside gb300 decode in trn4-gb300-fusion-rack had
    read its energy at 'us-east-2>us-east-1', 388 g CO2e/kWh (404 g at 'us-east-1>us-east-2' with the roles
    swapped: two grids for one rack); it now reads us-east-1, 379 g, either way. `what` names the rack's halves in
    the line: a split's pools, or a mixed pipeline's parts (planner.hetero, which sites its rack here too)."""
    owned = pricing == "owned"
    site = site_for(catalog, rack, region, owned=owned)
    if region is not None:
        where = "the region asked for"
    elif owned or not rack.provider:
        where = "an owned fleet's site"
    else:
        where = f"the default region of {rack.provider}, the rack's provider"
    prices = f" ({', '.join(price_regions)})" if price_regions else ""
    priced = "charged its own chip's owned cost" if owned else f"priced at its own chip's quote{prices}"
    note = f"{rack.id} is one site: both {what}s' energy and carbon at {site.region} ({where}); each {what} is {priced}"
    return site, note


def network_site(
    draws: Mapping[str, float], sites: Mapping[str, EnergySite], regions: Sequence[str], owned: bool, what: str
) -> tuple[EnergySite, str]:
    """The one site of two halves joined by one datacenter's scale-out network (a mixed pipeline's parts, a split's
    pools), and the line that says so: the site the half drawing more busy power (`draws`, W by the halves' names)
    would run at alone (`sites`), so that the smaller draw moves to it; an exact tie goes to the name later in the
    alphabet. `regions`: where each half's price quote is (`owned`: each is charged its owned cost instead); `what`
    names a half in the line. planner.hetero sites a mix over the network so, and economics a split whose KV cache
    crosses it: 2 trn2 beside 4 H100 had read 'us-east-2>us-east-1' at a blend of both grids, one network's hand-off
    priced between two regions."""
    host = max(draws, key=lambda name: (draws[name], name))
    other = next(name for name in draws if name != host)
    site = sites[host]
    priced = f" ({', '.join(regions)})" if regions else ""
    note = (
        f"{host} and {other} on one datacenter network are one site: both {what}s' energy and carbon at "
        f"{site.region}, where {host} runs alone (the {what} drawing more power busy: {draws[host] / 1e3:,.1f} kW "
        f"against {draws[other] / 1e3:,.1f} kW); each {what} is "
        + ("charged its own chip's owned cost" if owned else f"priced at its own chip's quote{priced}")
    )
    return site, note


def split_site(
    catalog: Catalog,
    pools: Sequence[Pool],
    pricing: str,
    region: str | None,
    provider: str | None,
    transfer: KVTransfer | None,
) -> tuple[EnergySite | None, str | None]:
    """The one site a split's two pools run at, and the line that says so; (None, None) where each pool runs at its
    own price quote's site (one pool, or a split whose pools would sit at one site anyway). A hybrid rack is one
    datacenter (rack_site); a KV cache over the scale-out network is one datacenter's network (docs/hybrid.md, 'One
    network'), sited as plan hetero sites a mix over it (network_site): the TPU v6e prefill beside an H100 decode on
    GCP had read 'us-east5>us-central1', its 30 ms handover priced on one data-centre network ~1,000 km across."""
    if len(pools) != 2:
        return None, None
    # the rental quotes (an owned fleet has none); a price the user set keeps the region of the catalog quote it
    # replaces (PriceQuote.site): its own is ''
    owned = pricing == "owned"
    quotes = [None if owned else chip_hour_price(catalog, p.setup.system, pricing, region, provider)[2] for p in pools]
    regions = list(dict.fromkeys(r for q in quotes if q is not None and (r := q.site[1])))
    rack = shared_rack(catalog, pools)
    if rack is not None:
        return rack_site(catalog, rack, pricing, region, regions)
    if transfer is None or not transfer.network:
        return None, None
    names = [f"the {p.setup.system.chip.id} {p.role} pool" for p in pools]
    sites = {
        name: serving_site(catalog, p.setup.system, pricing, q, region, provider)
        for name, p, q in zip(names, pools, quotes, strict=True)
    }
    if len({(s.region, s.pue.value, s.kg_co2e_per_j) for s in sites.values()}) == 1:
        return None, None
    draws = {
        name: power_model(catalog, p.setup.system, scaleout=True).busy_w * p.chips
        for name, p in zip(names, pools, strict=True)
    }
    return network_site(draws, sites, regions, owned, "pool")


@dataclass(frozen=True)
class _PoolHour:
    """One pool's hour of a deployment: its cost (None where it has none), its IT and facility energy and their
    carbon, its price record (None where it has no price), why it has no price (None where it has one), the figures
    they rest on, and the region it runs in."""

    cost_usd: float | None
    it_j: float
    facility_j: float
    co2e_kg: float
    source: dict[str, Any] | None
    price_note: str | None
    figures: dict[str, Any]
    region: str


def _owned_charge(
    catalog: Catalog,
    system: System,
    region: str | None,
    scaleout: bool,
    rented: float,
    facility_j: float,
    share: float,
    record: dict[str, Any],
    utilisation: float | None = None,
) -> tuple[float, dict[str, Any], dict[str, Any]]:
    """What an owned pool of `rented` chips is charged for an hour in which they draw `facility_j` (busy for `share`
    of it): the TCO's fixed terms per chip-hour and that energy at the site's $/kWh; its price record, the charge
    beside the TCO's at full use; and the owned cost's inputs (economics_figures)."""
    # the electricity the energy figure reports, not the TCO's busy-all-hour draw with a scale-out fabric
    # (8 H100s busy 11% of the hour had paid for 1,120 W a chip: $13.02/h where these figures give $12.23)
    # the scale-out network's capex and colocation, like its power, only where the deployment uses it
    # (uses_network; one H100 had paid $6,600 of 400G fabric: $0.21 a chip-hour)
    tco = owned_tco(catalog, system, region, _util(utilisation), scaleout=scaleout)
    terms = tco.charged_per_chip_hour(rented, facility_j)
    charged = rented * sum(terms.values())
    figures = tco.figures()  # the owned cost's inputs, each with its status and source
    # what the pool is charged, beside the TCO record at its utilisation (busy all hour): a reader of
    # price_sources had seen only that record's $1.628 and $0.137 of energy a chip-hour where $1.587 and $0.096
    # were charged
    record = {
        **record,
        **tco.price_source(),
        "usd_per_hour": charged,
        "usd_per_chip_hour": charged / rented if rented > 0 else math.nan,
        "terms_usd_per_chip_hour": terms,
        "busy_share": share,
        "charged_basis": "the TCO's fixed terms per used chip-hour (over the fleet's utilisation) and the pool's "
        "own facility energy (busy for busy_share of the hour, idle the rest) at the site's $/kWh, with the idle "
        "hours' energy where the utilisation is under 1; tco: the owned cost at that utilisation, busy all hour",
    }
    return charged, record, figures


def _pool_hour(
    catalog: Catalog,
    pool: Pool,
    rented: float,
    unused: float,
    share: float,
    scaleout: bool,
    pricing: str,
    region: str | None,
    provider: str | None,
    site: EnergySite | None = None,
    utilisation: float | None = None,
) -> _PoolHour:
    """One pool's hour, as economics reckons it: `rented` chips billed, `unused` of them idle all hour, its own
    chips busy for `share` of it; `scaleout`: whether the deployment's scale-out network is used; `site`: where it
    runs where that is not its price quote's (a hybrid rack's one site, rack_site)."""
    system, chips = pool.setup.system, pool.chips
    price, record, quote = chip_hour_price(catalog, system, pricing, region, provider, utilisation=utilisation)
    note = f"{system.id}: {price_note(catalog, system, pricing, provider)}" if math.isnan(price) else None
    site = site or serving_site(catalog, system, pricing, quote, region, provider)
    power = power_model(catalog, system, scaleout=scaleout)
    it_j = float(energy_j(power.mixed_w(share), chips, SECONDS_PER_HOUR, 1.0))
    it_j += float(energy_j(power.idle_w, unused, SECONDS_PER_HOUR, 1.0))
    facility_j = it_j * site.pue.value
    co2e_kg = float(carbon_kg(facility_j, site))
    figures = {t.key: t.record() for t in (*site.terms(), *power.terms())}
    if quote is not None and pricing != "owned":  # the rental price, a figure the cost moves with one for one
        figures.update(quote.figure(system))
    cost: float | None = None
    if pricing == "owned" and record is not None:
        cost, record, owned = _owned_charge(
            catalog, system, region, scaleout, rented, facility_j, share, record, utilisation
        )
        figures.update(owned)
    elif not math.isnan(price):
        cost = price * rented
    source = record if record is not None and not math.isnan(price) else None
    return _PoolHour(cost, it_j, facility_j, co2e_kg, source, note, figures, site.region)


def _pool_figures(pools: Sequence[Pool], hours: Sequence[_PoolHour]) -> dict[str, Any]:
    """The figures every pool's hour rests on, merged: one that a pool reads otherwise than another (the scale-out
    network's power and capex, scaled to each system's ports; a scale-up domain's capex) named with the system of
    each ('datacenter.opex.network_power_w_per_chip (trn2.48xlarge)'), as serving_figures.pool_figures names an
    engine figure by chip family. A split of a trn2.48xlarge prefill pool and a p5.48xlarge decode pool, owned, had
    read the later pool's 100 W and $6,600 a chip of fabric for both; the trn2 pool's now read 50 W and $3,300."""
    out: dict[str, Any] = {}
    for pool, hour in zip(pools, hours, strict=True):
        for name, figure in hour.figures.items():
            differs = any(name in other.figures and other.figures[name] != figure for other in hours)
            out[f"{name} ({pool.setup.system.id})" if differs else name] = figure
    return out


def economics(
    catalog: Catalog,
    pools: Sequence[Pool],
    output_tps: float,
    total_tps: float,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    busy: Sequence[float] | None = None,
    transfer: KVTransfer | None = None,
    utilisation: float | None = None,
) -> dict[str, Any]:
    """Dollars, energy and carbon per hour and per million tokens of a deployment, and the site figures they rest on.
    `transfer`: a split's KV path (serving_deployment.kv_path), which decides whether it uses the network;
    `utilisation`: an owned fleet's share of calendar hours in paid work (Tco.charged_per_chip_hour: each hour served
    also pays for the idle hours between; None: every hour).

    cost/h = sum over pools of chips rented (rented_chips) x catalog rental price per chip-hour; owned: the chips
    used x the TCO's fixed terms per chip-hour (with the scale-out network's capex and colocation only where the
    deployment's network is used, as its power) + the pool's own facility energy below x $/kWh (economics.tco: its
    energy term at the pool's busy share and network, not busy all hour with a scale-out fabric);
    $/Mtok = cost/h / (tokens/s x 3600) x 1e6 (per_mtok), for output tokens and for all (input + output) tokens;
    energy/h = sum over pools of {chips x [P_it(busy) b + P_it(idle) (1 - b)] + (rented - chips) x P_it(idle)}
    (economics.power) x 3600 s x PUE, with b the pool's busy share (`busy`, per pool: busy_shares of its simulated
    run; not given, busy all hour): the billed chips the replicas leave unused idle all hour;
    CO2e = energy x grid. Where a pool has no price, `price_note` says why.
    """
    total = sum(p.chips for p in pools)
    shares = list(busy) if busy is not None else [1.0] * len(pools)
    if pricing == "owned":  # an owned fleet buys chips
        rents = [p.chips for p in pools]
    else:
        rents = rented_chips([(p.setup.system, p.setup.chips, p.replicas) for p in pools])
    billed = sum(rents)
    # the chips each pool's rent pays for: a split on one system rents its pools together, the first pool carrying
    # the rent of both (rented_chips)
    covered = [total, 0.0] if len(pools) == 2 and rents[1] == 0.0 else [p.chips for p in pools]
    site, site_note = split_site(catalog, pools, pricing, region, provider, transfer)
    # the deployment's network, not the pool's: a replica across systems, or a split's KV cache between them (the
    # fleet's size had decided: past one system, every replica drew the fabric, as a training fleet's data
    # parallelism does)
    scaleout = uses_network(pools, transfer)
    hours: list[_PoolHour] = []
    for pool, rented, cover, share in zip(pools, rents, covered, shares, strict=True):
        # the billed chips the replicas leave unused (the rest of a rented instance) are powered too, idle all hour,
        # as a training fleet's are (planner.training): 8 of an inf2.48xlarge's 12 chips had counted 8 chips' power
        unused = max(rented - cover, 0.0)
        hours.append(
            _pool_hour(catalog, pool, rented, unused, share, scaleout, pricing, region, provider, site, utilisation)
        )
    cost_h = 0.0
    joules_h = 0.0
    it_joules_h = 0.0
    co2_h = 0.0
    sources: list[dict[str, Any]] = []
    notes: list[str] = []
    figures = _pool_figures(pools, hours)
    regions: list[str] = []
    for hour in hours:
        if hour.price_note is not None and hour.price_note not in notes:
            notes.append(hour.price_note)
        joules_h += hour.facility_j
        it_joules_h += hour.it_j
        co2_h += hour.co2e_kg
        if hour.cost_usd is not None:
            cost_h += hour.cost_usd
        if hour.source is not None:
            sources.append(hour.source)
        if hour.region not in regions:
            regions.append(hour.region)
    priced = all(hour.price_note is None for hour in hours)
    nan = float("nan")
    weights = [p.chips for p in pools]
    out: dict[str, Any] = {
        "pricing": pricing,
        "billed_chips": billed,
        "cost_usd_per_hour": cost_h if priced else nan,
        "cost_usd_per_mtok": per_mtok(cost_h, output_tps) if priced else nan,
        "cost_usd_per_mtok_total": per_mtok(cost_h, total_tps) if priced else nan,
        #: the output tokens/s the per-token figures divide by (planner.serving_outcome.served_tokens: the offered load
        #: where the run keeps up with it, else what the run delivered)
        "priced_output_tokens_per_s": output_tps,
        "price_sources": sources,
        "energy_j_per_hour": joules_h,
        "co2e_kg_per_hour": co2_h,
        "energy_j_per_mtok": per_mtok(joules_h, output_tps),
        "co2e_kg_per_mtok": per_mtok(co2_h, output_tps),
        # the site the energy and carbon are reckoned at (a split on two providers: facility / IT energy and
        # kg CO2e / facility kWh over both, its regions joined 'a>b' as its hardware is)
        "region": ">".join(regions),
        "pue": joules_h / it_joules_h if it_joules_h > 0 else nan,
        "grid_kg_co2e_per_kwh": co2_h / joules_h * JOULES_PER_KWH if joules_h > 0 else nan,
        # the share of the hour the chips run iterations (busy power) rather than wait for requests (idle power)
        "busy_share": sum(s * w for s, w in zip(shares, weights, strict=True)) / sum(weights) if total > 0 else nan,
        "busy_share_basis": "simulated: replicas' busy time / the run's makespan, or the time the priced load takes "
        "to bring the requests served"
        if busy is not None
        else "not measured: busy all hour",
        "economics_figures": figures,
    }
    if pricing in COMMITMENTS:
        # a reservation is paid every hour of its term, as plan train now charges a shorter run the whole term: a
        # deployment's $/h and $/Mtok are per hour served, so they hold for one that serves through the term
        term_h = COMMITMENT_TERM_S[pricing] / SECONDS_PER_HOUR
        out["reservation"] = {
            "term_s": COMMITMENT_TERM_S[pricing],
            "note": f"per hour of a deployment that serves every hour of the {pricing} term ({term_h:,.0f} h); the "
            "reservation is paid for every hour of it, served or not",
        }
    if site_note is not None:  # a split's pools in one hybrid rack or on one network: one site (split_site)
        out["site_note"] = site_note
    if notes:
        out["price_note"] = "; ".join(notes)
    return out
