"""Energy and carbon of running chips: IT power times PUE, times the grid's carbon intensity.

    E_facility [J] = P_it per chip [W] x chips x seconds x PUE
    CO2e [kg]      = E_facility x grid intensity [kg CO2e / J]    (location-based, the catalog's region factor)

PUE comes from the operator (`datacenter.pue.<operator>`; a region-specific key such as google-us-central1 when
the catalog has one; `colocation` for an owned fleet in a colocation facility); grid intensity and the owned
fleet's electricity price from `datacenter.grid_intensity.<region>` and `datacenter.electricity_usd_per_kwh.<region>`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.catalog.overrides import USER_PROVIDER
from chipwise.catalog.regions import PRICE_REGIONS
from chipwise.catalog.terms import Term, node, override, term
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware.objects import System
from chipwise.types import Array, ArrayLike

PROVIDER_PUE_KEY = {"aws": "aws", "gcp": "google", "google": "google", "azure": "microsoft", "oci": "public-cloud"}
DEFAULT_REGION = {"aws": "us-east-1", "gcp": "us-central1", "google": "us-central1", "azure": "eastus"}
#: Where an owned fleet (or a system with no cloud provider) is assumed to run when no region is given.
OWNED_REGION = "country-usa"
OWNED_PUE_KEY = "colocation"


@dataclass(frozen=True)
class EnergySite:
    """Where the chips run: PUE, grid carbon intensity and (for owned fleets) the electricity price."""

    pue: Term
    region: str
    grid: Term  # kg CO2e per joule
    electricity: Term | None  # USD per joule, None when the region has no price

    @property
    def kg_co2e_per_j(self) -> float:
        return self.grid.value

    @property
    def pue_key(self) -> str:
        return self.pue.key.rsplit(".", 1)[-1]

    def terms(self) -> list[Term]:
        """What energy and carbon rest on: PUE and grid intensity. The electricity price is an owned fleet's cost
        input, listed with its TCO's (economics.tco.Tco.terms): a rented chip-hour's price includes the provider's
        electricity, and a rented run's figures had listed 0.0892 USD/kWh (us-east-1) that its cost never read."""
        return [self.pue, self.grid]


def known_regions(catalog: Catalog) -> list[str]:
    """The regions check_region accepts: those with a grid intensity (a price alone does not place a fleet)."""
    return sorted(node(catalog, "datacenter", "grid_intensity") or {})


#: the kinds of region a --region names, with an example of each (the hint names only those the catalog holds)
REGION_EXAMPLES = (("a cloud region", "us-east-1"), ("a US state", "us-va"), ("a country", "country-usa"))


def grid_region(catalog: Catalog, region: str | None) -> str | None:
    """The grid region a price region lies in (PRICE_REGIONS), the region itself where the catalog has its grid, else
    None."""
    grids = node(catalog, "datacenter", "grid_intensity") or {}
    if region in grids:
        return region
    mapped = PRICE_REGIONS.get(region or "", (None, ""))[0]
    return mapped if mapped in grids else None


def check_region(catalog: Catalog, region: str) -> str:
    """The grid region of a region the catalog has a grid intensity for, or of a price region that lies in one
    (PRICE_REGIONS: us-east-1-dfw is Texas, us-tx); a one-line error with close matches otherwise, and for a price
    region that names no place ('global')."""
    grids = node(catalog, "datacenter", "grid_intensity") or {}
    mapped = grid_region(catalog, region)
    if mapped is not None:
        return mapped
    if region in PRICE_REGIONS:
        raise ChipwiseError(
            f"region '{region}' is {PRICE_REGIONS[region][1]}, not a place chips run in. Fix: name where they run "
            "(a scenario's region: key, or --region where a command takes one), e.g. country-usa or us-east-1."
        )
    if region not in grids:
        kinds = ", ".join(f"{kind} ({ex})" for kind, ex in REGION_EXAMPLES if ex in grids)
        raise UnknownNameError(
            "region",
            region,
            grids,
            hint=f"use {kinds or 'a region'} from the catalog's datacenter.grid_intensity",
        )
    return region


#: The highest PUE accepted: 3, past the 2.5 the Uptime Institute put the industry's average at before its 2011
#: survey (1.8 then, 1.56 in 2024: the catalog's datacenter.pue.industry). A PUE of 1e6 had priced a chip-hour at
#: $96,545.
MAX_PUE = 3.0


def check_pue(pue: float) -> float:
    """A PUE from 1 to MAX_PUE and finite, or one line (an infinite one had given 'inf TWh', NaN 'below 1', 1e9
    4,619 TWh an hour)."""
    fix = f"Fix: give a PUE >= 1 and at most {MAX_PUE:g}, e.g. 1.2."
    if not math.isfinite(pue):
        raise ChipwiseError(f"PUE {pue:g} is not a finite number. {fix}")
    if not pue >= 1.0:
        raise ChipwiseError(f"PUE {pue:g} is below 1 (facility energy cannot be less than IT energy). {fix}")
    if pue > MAX_PUE:
        raise ChipwiseError(
            f"PUE {pue:g} is more than {MAX_PUE:g}, past any surveyed datacenter (the Uptime Institute once put the "
            f"industry average at 2.5; 1.56 in 2024). {fix}"
        )
    return pue


def site_for(
    catalog: Catalog,
    system: System,
    region: str | None = None,
    pue_key: str | None = None,
    pue: float | None = None,
    owned: bool = False,
    operator: str | None = None,
    hint_region: str | None = None,
) -> EnergySite:
    """PUE, grid intensity and electricity price for the chips' operator and a region.

    The operator is the renting provider (`operator`, e.g. the price quote's; not a user's --set price) or the
    system's provider; an owned fleet, or one rented from a provider the catalog has no PUE for, runs in a
    colocation facility.
    Without a region: `hint_region` when the catalog knows its grid (the price quote's region, or the grid region it
    lies in: PRICE_REGIONS), else the cloud's default region, else `country-usa`. `pue` (a number) overrides the
    catalog; `pue_key` names an operator.
    """
    # a price set on the command line (provider 'user') changes what the chips cost, not who runs them or where:
    # callers pass the site of the catalog quote it replaces (economics.pricing.PriceQuote.site); one that passes the
    # user's quote gets the system's provider
    op = None if owned else (operator if operator not in (None, USER_PROVIDER) else system.provider)
    cloud = op in DEFAULT_REGION
    asked = region
    if region is None and grid_region(catalog, hint_region) is not None:
        region = hint_region
    # "" is a region asked for, refused by name as elsewhere (it had been looked up in PRICE_REGIONS: a KeyError)
    reg = check_region(catalog, region if region is not None else DEFAULT_REGION.get(op or "", OWNED_REGION))
    grid = term(catalog, "datacenter", "grid_intensity", reg)
    if region is not None and region != reg:  # a price region placed in its grid region: say where and why
        where = f"{region} is {PRICE_REGIONS[region][1]}: {reg}'s grid"
        grid = replace(grid, extra={"located": where if asked else f"the price's region {where}"})
    elif region is None and hint_region in PRICE_REGIONS:  # a price that names no place ('global'): say what stood in
        where = f"{hint_region} is {PRICE_REGIONS[hint_region][1]}, which names no place"
        grid = replace(grid, extra={"located": f"the price's region {where}: {reg}'s grid assumed"})
    if pue is not None:
        pue_term = override(check_pue(pue), "datacenter.pue", "1")
    else:
        pues = node(catalog, "datacenter", "pue") or {}
        if pue_key is not None and pue_key not in pues:
            raise UnknownNameError("PUE operator", pue_key, pues, hint=f"use one of {', '.join(sorted(pues))}")
        key = pue_key or PROVIDER_PUE_KEY.get(op or "", OWNED_PUE_KEY)
        if cloud and pue_key is None and f"{key}-{reg}" in pues:
            key = f"{key}-{reg}"
        if key not in pues:
            key = "industry"
        pue_term = term(catalog, "datacenter", "pue", key)
    prices = node(catalog, "datacenter", "electricity_usd_per_kwh") or {}
    electricity = term(catalog, "datacenter", "electricity_usd_per_kwh", reg) if reg in prices else None
    return EnergySite(pue=pue_term, region=reg, grid=grid, electricity=electricity)


def require_electricity(catalog: Catalog, site: EnergySite) -> Term:
    """The site's electricity price, or a one-line error naming the regions that have one."""
    if site.electricity is None:
        prices = node(catalog, "datacenter", "electricity_usd_per_kwh") or {}
        usable = [r for r in known_regions(catalog) if r in prices]  # a region --region accepts, and priced
        raise ChipwiseError(
            f"the catalog has no electricity price for region '{site.region}'. Fix: use a region with one "
            f"({', '.join(usable[:8])}{', ...' if len(usable) > 8 else ''}) or "
            f"--set datacenter.electricity_usd_per_kwh.{site.region}=0.1USD/kWh."
        )
    return site.electricity


def energy_j(power_w_per_chip: ArrayLike, chips: ArrayLike, seconds: ArrayLike, pue: float) -> Array:
    """Facility energy of `chips` drawing `power_w_per_chip` for `seconds`, joules (NumPy arrays broadcast)."""
    joules = np.asarray(power_w_per_chip, dtype=np.float64) * np.asarray(chips) * np.asarray(seconds) * pue
    return np.asarray(joules, dtype=np.float64)


def carbon_kg(energy: ArrayLike, site: EnergySite) -> Array:
    """Location-based emissions of `energy` joules at the site's grid intensity, kg CO2e."""
    return np.asarray(energy, dtype=np.float64) * site.kg_co2e_per_j
