"""The economics of a serving deployment: on-demand or owned-fleet dollars, energy and carbon per million
tokens."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.units import SECONDS_PER_HOUR
from chipwise.economics.energy import carbon_kg, check_region, energy_j, site_for
from chipwise.economics.power import power_model
from chipwise.economics.pricing import PriceQuote, price_per_chip_hour
from chipwise.economics.rental import billed_one, split_rent
from chipwise.economics.tco import owned_tco
from chipwise.hardware.objects import System
from chipwise.serve.simulate import Pool


def chip_hour_price(
    catalog: Catalog, system: System, pricing: str, region: str | None, provider: str | None
) -> tuple[float, dict[str, Any] | None, PriceQuote | None]:
    """USD per chip-hour (NaN when the catalog has none), its provenance, and the rental quote if any; a region the
    catalog does not know is a one-line error."""
    if region is not None:
        check_region(catalog, region)
    if pricing == "owned":
        if system.chip.unit_price is None:
            return math.nan, None, None
        tco = owned_tco(catalog, system, region, 1.0, None)
        return tco.usd_per_chip_hour, {"basis": "owned", "tco": tco.record()}, None
    quote = price_per_chip_hour(catalog, system, pricing, region, provider)
    if quote is None:
        return math.nan, None, None
    return quote.usd_per_chip_hour, {"system": system.id, **quote.record()}, quote


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


def energy_per_hour(
    catalog: Catalog,
    system: System,
    chips: float,
    pricing: str,
    quote: PriceQuote | None,
    region: str | None = None,
    scaleout: bool = False,
) -> tuple[float, float]:
    """(facility joules, kg CO2e) an hour of `chips` busy chips of `system`: busy IT power per chip (with the
    scale-out network's where `scaleout`) x PUE, at the site of the operator and region its price `quote` names
    (an owned fleet: the owner's site), x that site's grid."""
    site = site_for(
        catalog,
        system,
        region,
        owned=pricing == "owned",
        operator=quote.provider if quote else None,
        hint_region=quote.region if quote else None,
    )
    e = float(energy_j(power_model(catalog, system, scaleout=scaleout).busy_w, chips, SECONDS_PER_HOUR, site.pue.value))
    return e, float(carbon_kg(e, site))


def economics(
    catalog: Catalog,
    pools: Sequence[Pool],
    output_tps: float,
    total_tps: float,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
) -> dict[str, Any]:
    """Dollars, energy and carbon per hour and per million tokens of a deployment.

    cost/h = sum over pools of chips rented (rented_chips; owned: the chips used) x price per chip-hour (catalog
    rental price, or owned TCO);
    $/Mtok = cost/h / (tokens/s x 3600) x 1e6, for output tokens and for all (input + output) tokens;
    energy/h = sum of chips x busy IT power per chip (economics.power) x 3600 s x PUE; CO2e = energy x grid.
    """
    cost_h = 0.0
    priced = True
    sources: list[dict[str, Any]] = []
    joules_h = 0.0
    co2_h = 0.0
    total = sum(p.chips for p in pools)
    systems = {p.setup.system.id for p in pools}
    if pricing == "owned":  # an owned fleet buys chips
        rents = [p.chips for p in pools]
    else:
        rents = rented_chips([(p.setup.system, p.setup.chips, p.replicas) for p in pools])
    billed = sum(rents)
    for pool, rented in zip(pools, rents, strict=True):
        system, chips = pool.setup.system, pool.chips
        price, record, quote = chip_hour_price(catalog, system, pricing, region, provider)
        if math.isnan(price):
            priced = False
        else:
            cost_h += price * rented
            if record is not None:
                sources.append(record)
        # the deployment's network, not the pool's: a split's pools on one system, past one node, or on two
        # systems hand their KV caches over the scale-out network
        e, co2 = energy_per_hour(
            catalog, system, chips, pricing, quote, region, total > system.chips or len(systems) > 1
        )
        joules_h += e
        co2_h += co2
    nan = float("nan")
    per_mtok_out = 1e6 / (output_tps * 3600.0) if output_tps > 0 else nan
    per_mtok_all = 1e6 / (total_tps * 3600.0) if total_tps > 0 else nan
    return {
        "pricing": pricing,
        "billed_chips": billed,
        "cost_usd_per_hour": cost_h if priced else nan,
        "cost_usd_per_mtok": cost_h * per_mtok_out if priced else nan,
        "cost_usd_per_mtok_total": cost_h * per_mtok_all if priced else nan,
        #: the output tokens/s the per-token figures divide by (planner.serving.served_tokens: the offered load
        #: where the run keeps up with it, else what the run delivered)
        "priced_output_tokens_per_s": output_tps,
        "price_sources": sources,
        "energy_j_per_hour": joules_h,
        "energy_j_per_mtok": joules_h * per_mtok_out,
        "co2e_kg_per_mtok": co2_h * per_mtok_out,
    }
