"""Energy and carbon of running chips: IT power at load times PUE, times grid carbon intensity.

Average IT power per chip while training = (system power at full load / chips) x utilisation power fraction,
where system power includes host CPUs, memory, NICs and fans (a DGX H100 draws 10.2 kW for 8 x 700 W GPUs) and
the fraction (~0.8 during training) is the catalog's datacenter figure. Facility energy = IT energy x PUE.
Carbon = facility energy x the grid's kg CO2e per joule (location-based, the catalog's per-region factors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import Figure
from chipwise.errors import UnknownNameError
from chipwise.hardware.objects import System

PROVIDER_PUE_KEY = {"aws": "aws", "gcp": "google", "google": "google", "azure": "microsoft", "oci": "public-cloud"}
DEFAULT_REGION = {"aws": "us-east-1", "gcp": "us-central1", "google": "us-central1", "azure": "eastus"}


@dataclass(frozen=True)
class EnergySite:
    """Where the chips run: the PUE and grid carbon intensity applied, with their keys in the catalog."""

    pue: float
    pue_key: str
    region: str
    kg_co2e_per_j: float
    utilisation_power_fraction: float


def _fig(tree: Any, *path: str) -> Figure | None:
    node = tree
    for p in path:
        if not isinstance(node, dict) or p not in node:
            return None
        node = node[p]
    return node if isinstance(node, Figure) else None


def site_for(catalog: Catalog, system: System, region: str | None = None, pue_key: str | None = None) -> EnergySite:
    """PUE and grid intensity for a system's provider and a region (the provider's default region if None)."""
    dc = catalog.datacenter
    grids = dc.get("grid_intensity", {})
    reg = region or DEFAULT_REGION.get(system.provider, "country-usa")
    if reg not in grids:
        raise UnknownNameError(
            "region", reg, grids, hint="use a cloud region or a country-… key of the catalog's grid_intensity"
        )
    key = pue_key or PROVIDER_PUE_KEY.get(system.provider, "industry")
    pue = _fig(dc, "pue", key) or _fig(dc, "pue", "industry")
    util = _fig(dc, "opex", "utilisation_power_fraction")
    return EnergySite(
        pue=pue.si if pue else 1.5,
        pue_key=key,
        region=reg,
        kg_co2e_per_j=grids[reg].si,
        utilisation_power_fraction=util.si if util else 0.8,
    )


def it_power_per_chip(system: System, utilisation: float) -> float:
    """Average IT power of one chip with its share of host and network, watts."""
    return system.power / system.chips * utilisation


def energy_j(system: System, chips: int, seconds: float, site: EnergySite, utilisation: float | None = None) -> float:
    """Facility energy of `chips` running for `seconds`, joules."""
    u = site.utilisation_power_fraction if utilisation is None else utilisation
    return it_power_per_chip(system, u) * chips * seconds * site.pue


def carbon_kg(energy: float, site: EnergySite) -> float:
    return energy * site.kg_co2e_per_j
