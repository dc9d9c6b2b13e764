"""The economics of a serving deployment: on-demand or owned-fleet dollars, energy and carbon per million
tokens."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.economics.energy import carbon_kg, check_region, energy_j, site_for
from chipwise.economics.power import power_model
from chipwise.economics.pricing import PriceQuote, price_per_chip_hour
from chipwise.economics.tco import owned_tco
from chipwise.hardware.objects import System


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


def economics(
    catalog: Catalog,
    pools: Sequence[tuple[System, float]],
    output_tps: float,
    total_tps: float,
    pricing: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
) -> dict[str, Any]:
    """Dollars, energy and carbon per hour and per million tokens of a deployment (pools of system x chips).

    cost/h = sum over pools of chips x price per chip-hour (catalog rental price, or owned TCO);
    $/Mtok = cost/h / (tokens/s x 3600) x 1e6, for output tokens and for all (input + output) tokens;
    energy/h = sum of chips x busy IT power per chip (economics.power) x 3600 s x PUE; CO2e = energy x grid.
    """
    cost_h = 0.0
    priced = True
    sources: list[dict[str, Any]] = []
    joules_h = 0.0
    co2_h = 0.0
    total = sum(chips for _, chips in pools)
    systems = {system.id for system, _ in pools}
    for system, chips in pools:
        price, record, quote = chip_hour_price(catalog, system, pricing, region, provider)
        if math.isnan(price):
            priced = False
        else:
            cost_h += price * chips
            if record is not None:
                sources.append(record)
        site = site_for(
            catalog,
            system,
            region,
            owned=pricing == "owned",
            operator=quote.provider if quote else None,
            hint_region=quote.region if quote else None,
        )
        # the deployment's network, not the pool's: a split's pools on one system, past one node, or on two
        # systems hand their KV caches over the scale-out network
        power = power_model(catalog, system, scaleout=total > system.chips or len(systems) > 1)
        e = float(energy_j(power.busy_w, chips, 3600.0, site.pue.value))
        joules_h += e
        co2_h += float(carbon_kg(e, site))
    nan = float("nan")
    per_mtok_out = 1e6 / (output_tps * 3600.0) if output_tps > 0 else nan
    per_mtok_all = 1e6 / (total_tps * 3600.0) if total_tps > 0 else nan
    return {
        "pricing": pricing,
        "cost_usd_per_hour": cost_h if priced else nan,
        "cost_usd_per_mtok": cost_h * per_mtok_out if priced else nan,
        "cost_usd_per_mtok_total": cost_h * per_mtok_all if priced else nan,
        "price_sources": sources,
        "energy_j_per_hour": joules_h,
        "energy_j_per_mtok": joules_h * per_mtok_out,
        "co2e_kg_per_mtok": co2_h * per_mtok_out,
    }
