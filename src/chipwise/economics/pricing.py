"""Cloud prices per chip-hour from the catalog: by pricing mode, provider, region and date.

A system's own price (per system-hour, divided by its chips) is preferred; otherwise a per-chip price for the
same chip, from the system's provider first. Among candidates the newest date wins, then a published price over
an estimate, then the lower price. Every quote says where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import PRICING_MODES, PriceEntry
from chipwise.errors import ChipwiseError
from chipwise.hardware.objects import System


@dataclass(frozen=True)
class PriceQuote:
    """A rental price per chip-hour and its provenance."""

    usd_per_chip_hour: float
    mode: str
    provider: str
    region: str
    date: str
    status: str
    basis: str  # 'system' (the system's own price) or 'chip' (a per-chip price)
    entry: str  # the system or chip id the catalog price is for
    source: tuple[str, ...]
    derivation: str = ""

    @property
    def usd_per_chip_second(self) -> float:
        return self.usd_per_chip_hour / 3600.0


def check_mode(mode: str) -> str:
    if mode not in PRICING_MODES:
        raise ChipwiseError(f"unknown pricing mode '{mode}'. Fix: use one of {', '.join(PRICING_MODES)}.")
    return mode


def _rank(p: PriceEntry, provider: str) -> tuple[int, str, int, float]:
    return (int(p.provider == provider), p.date, int(p.status == "spec"), -p.value)


def price_per_chip_hour(
    catalog: Catalog, system: System, mode: str = "on-demand", region: str | None = None, provider: str | None = None
) -> PriceQuote | None:
    """The best matching price per chip-hour for a system, or None when the catalog has none for that mode."""
    check_mode(mode)
    prefer = provider or system.provider

    def match(p: PriceEntry) -> bool:
        return (
            p.mode == mode and (region is None or p.region == region) and (provider is None or p.provider == provider)
        )

    own = [p for p in catalog.prices if p.system == system.id and match(p)]
    if own:
        best = max(own, key=lambda p: _rank(p, prefer))
        per_chip = best.value / system.chips
        basis = "system"
    else:
        same_chip_systems = {sid for sid, s in catalog.systems.items() if s.chip == system.chip.id}
        chip_prices = [p for p in catalog.prices if p.chip == system.chip.id and match(p)]
        sys_prices = [p for p in catalog.prices if p.system in same_chip_systems and match(p)]
        if chip_prices:
            best = max(chip_prices, key=lambda p: _rank(p, prefer))
            per_chip, basis = best.value, "chip"
        elif sys_prices:
            best = max(sys_prices, key=lambda p: _rank(p, prefer))
            per_chip, basis = best.value / catalog.systems[best.system].chips, "system"
        else:
            return None
    return PriceQuote(
        usd_per_chip_hour=per_chip,
        mode=mode,
        provider=best.provider,
        region=best.region,
        date=best.date,
        status=best.status,
        basis=basis,
        entry=best.system or best.chip,
        source=tuple(best.source),
        derivation=best.derivation,
    )
