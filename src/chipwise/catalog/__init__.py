"""Layer 1 - the catalog: chips, systems, fabrics, prices, datacenter economics and model presets, as sourced data."""

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.catalog.schema import STATUSES, ChipEntry, Figure, PriceEntry, SystemEntry

__all__ = ["STATUSES", "Catalog", "ChipEntry", "Figure", "PriceEntry", "SystemEntry", "load_catalog"]
