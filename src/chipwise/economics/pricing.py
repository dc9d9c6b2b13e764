"""Cloud prices per chip-hour from the catalog: by pricing mode, provider, region and date.

A price set on the command line (`--set ID.price=...`, provider 'user') wins over every catalog price of that
system or chip. Then a system's own price (per system-hour, divided by its chips) is preferred; otherwise a
per-chip price for the same chip, then a price for another system with the same chip. Among candidates the
asked-for provider (or the system's own) wins, then the asked-for region, then the newest date (on or before
`as_of`), then a published price over an estimate, then the lower price.

When the catalog has no price at all for a commitment or spot mode, the on-demand quote is scaled by the
catalog's `datacenter.pricing_mode_ratio` for that mode and the quote says so (`derived`). A managed-service
markup (`datacenter.managed_service_markup`, e.g. SageMaker's ~1.15 over EC2) multiplies the price when asked.
The `owned` mode is not a rental price: economics.tco prices it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import PRICING_MODES, PriceEntry
from chipwise.catalog.terms import Term, node, term
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware.objects import System

#: Every `--pricing` mode: the catalog's rental modes plus `owned` (owned-fleet TCO).
MODES: tuple[str, ...] = (*PRICING_MODES, "owned")


@dataclass(frozen=True)
class PriceQuote:
    """A rental price per chip-hour and its provenance."""

    usd_per_chip_hour: float
    mode: str
    provider: str
    region: str
    date: str
    status: str
    basis: str  # 'system' (the system's own price), 'chip' (a per-chip price) or 'owned' (TCO)
    entry: str  # the system or chip id the catalog price is for
    source: tuple[str, ...]
    derivation: str = ""
    derived_from_mode: str = ""  # the mode whose price was scaled by pricing_mode_ratio, if any
    markup: float = 1.0
    region_matched: bool = True

    @property
    def usd_per_chip_second(self) -> float:
        return self.usd_per_chip_hour / 3600.0

    def record(self) -> dict[str, object]:
        """The JSON form of the quote's provenance."""
        out: dict[str, object] = {
            "provider": self.provider,
            "region": self.region,
            "date": self.date,
            "status": self.status,
            "entry": self.entry,
            "basis": self.basis,
            "source": list(self.source),
        }
        if self.derivation:
            out["derivation"] = self.derivation
        if self.derived_from_mode:
            out["derived_from"] = self.derived_from_mode
        if self.markup != 1.0:
            out["markup"] = self.markup
        if not self.region_matched:
            out["region_note"] = "no price in the region asked for; the nearest listed price is used"
        return out


def check_mode(mode: str) -> str:
    """A valid pricing mode, or a one-line error listing the modes."""
    if mode not in MODES:
        raise ChipwiseError(f"unknown pricing mode '{mode}'. Fix: use one of {', '.join(MODES)}.")
    return mode


def markup_term(catalog: Catalog, managed: str | None) -> Term | None:
    """The managed-service markup figure for `managed` (e.g. 'sagemaker'), or None for plain instances."""
    if managed is None:
        return None
    known = node(catalog, "datacenter", "managed_service_markup") or {}
    if managed not in known:
        raise UnknownNameError(
            "managed service", managed, known, hint=f"use one of {', '.join(known) or 'none'}, or omit it"
        )
    return term(catalog, "datacenter", "managed_service_markup", managed)


#: the provider of a price set on the command line: it wins over every catalog price of its system or chip
USER_PROVIDER = "user"


#: the provider each managed service runs on: its markup applies to that provider's instances only (SageMaker does
#: not rent DigitalOcean's MI300X nor Google's TPUs)
MANAGED_PROVIDER: dict[str, str] = {"sagemaker": "aws"}
#: the providers that sell a rental product at all, where not every cloud does: an EC2 Capacity Block is AWS's, and
#: no ratio makes one out of another provider's on-demand rate
MODE_SELLERS: dict[str, tuple[str, ...]] = {"capacity-block": ("aws",)}


def _rank(p: PriceEntry, provider: str, region: str | None) -> tuple[int, int, str, int, float]:
    in_region = int(region is not None and p.region == region)
    return (int(p.provider == provider), in_region, p.date, int(p.status == "spec"), -p.value)


def _sells(catalog: Catalog, provider: str | None) -> bool:
    """Whether the catalog lists any price of `provider` (a cloud that rents, not a vendor's reference system)."""
    return provider is not None and any(p.provider == provider for p in catalog.prices)


def _in_force(date: str, at: str) -> bool:
    """Whether a price dated `date` was listed by `at`, to the precision of the coarser ('2025-05' by '2025': yes)."""
    n = min(len(date), len(at))
    return date[:n] <= at[:n]


def _rescaled(catalog: Catalog, best: PriceEntry, as_of: str | None) -> tuple[float, str] | None:
    """A commitment or spot price listed against an on-demand price the same entry has since changed: the factor
    (newest on-demand / on-demand in force at its date) that carries it to today's rate, and the derivation; None
    when the on-demand price has not moved since (or the catalog has no on-demand price of it then).

    The p5.48xlarge 1-year reservation (~52 USD/h, 2025) was quoted against the 98.32 on-demand rate; AWS cut that
    to 55.04 in June 2025, so 52 x 55.04 / 98.32 = 29.11 USD/h, the same 47% off the new rate."""
    same = [
        p
        for p in catalog.prices
        if p.mode == "on-demand"
        and p.system == best.system
        and p.chip == best.chip
        and p.provider == best.provider
        and p.region == best.region
        and (as_of is None or p.date <= as_of)
    ]
    if not same:
        return None
    newest = max(same, key=lambda p: p.date)
    then = [p for p in same if _in_force(p.date, best.date)]
    if not then:
        return None
    old = max(then, key=lambda p: p.date)
    if old.date >= newest.date or old.value == newest.value or old.value <= 0:
        return None
    factor = newest.value / old.value
    return factor, (
        f"the catalog's {best.mode} price {best.value:g} USD/h ({best.date}) was listed against on-demand "
        f"{old.value:g} ({old.date}); on-demand is now {newest.value:g} ({newest.date}): {best.value:g} x "
        f"{newest.value:g} / {old.value:g} = {best.value * factor:.4g} USD/h (the same discount off today's rate)"
    )


def _rental_quote(
    catalog: Catalog, system: System, mode: str, region: str | None, provider: str | None, as_of: str | None
) -> PriceQuote | None:
    prefer = provider or system.provider
    # a cloud's own instance type takes that cloud's spot, reserved and capacity-block products only (another
    # cloud's are not offered on it); on-demand rates, and a vendor's reference system, borrow any provider's
    sells = mode != "on-demand" and _sells(catalog, system.provider)
    own = system.provider if sells else None

    def match(p: PriceEntry) -> bool:
        return (
            p.mode == mode
            and (provider is None or p.provider == provider)
            and (provider is not None or own is None or p.provider == own)
            and (as_of is None or p.date <= as_of)
        )

    same_chip_systems = {sid for sid, s in catalog.systems.items() if s.chip == system.chip.id}

    def user(p: PriceEntry) -> bool:  # a price set on the command line (--set ID.price=...) is the user's own
        return p.provider == USER_PROVIDER and p.mode == mode and (as_of is None or p.date <= as_of)

    per_chip = [p for p in catalog.prices if p.chip == system.chip.id and match(p)]
    # another instance type's rate for the same chip, on demand only: its spot, reserved and capacity-block
    # products (AWS's whole-instance blocks) are that instance's
    siblings = [p for p in catalog.prices if p.system in same_chip_systems and match(p) and mode == "on-demand"]
    tiers: list[tuple[list[PriceEntry], str]] = [
        ([p for p in catalog.prices if p.system == system.id and user(p)], "system"),
        ([p for p in catalog.prices if p.chip == system.chip.id and user(p)], "chip"),
        ([p for p in catalog.prices if p.system == system.id and match(p)], "system"),
        # the seller's own price for the same chip before any other provider's: p5e.48xlarge (no on-demand SKU)
        # rents at AWS's p5en rate for the same H200, not at RunPod's per-GPU rate in a colocation facility
        ([p for p in per_chip if p.provider == prefer], "chip"),
        ([p for p in siblings if p.provider == prefer], "system"),
        (per_chip, "chip"),
        (siblings, "system"),
    ]
    for candidates, basis in tiers:
        if not candidates:
            continue
        best = max(candidates, key=lambda p: _rank(p, prefer, region))
        value, status, derivation = best.value, best.status, best.derivation
        moved = None if mode == "on-demand" or best.provider == USER_PROVIDER else _rescaled(catalog, best, as_of)
        if moved is not None:
            value, status = value * moved[0], "estimate"
            derivation = moved[1] + (f"; the entry: {best.derivation}" if best.derivation else "")
        per_chip_value = value if best.chip else value / catalog.systems[best.system].chips
        return PriceQuote(
            usd_per_chip_hour=per_chip_value,
            mode=mode,
            provider=best.provider,
            region=best.region,
            date=best.date,
            status=status,
            basis=basis,
            entry=best.system or best.chip,
            source=tuple(best.source),
            derivation=derivation,
            region_matched=region is None or best.region == region or best.provider == USER_PROVIDER,
        )
    return None


#: a commitment and the shorter one it never costs more than
LONGER_TERM = {"reserved-3y": "reserved-1y"}


def _seller(catalog: Catalog, system: System, provider: str | None) -> str | None:
    """Whose products a system's commitment and spot prices must be: the provider asked for, else the system's own
    cloud where the catalog prices it; None for a vendor's reference system (any provider's rate stands in)."""
    if provider is not None:
        return provider
    return system.provider if _sells(catalog, system.provider) else None


def _managed_provider(managed: str | None, provider: str | None) -> str | None:
    """The provider a managed service pins the lookup to (SageMaker: aws), or a one-line error for another."""
    pinned = MANAGED_PROVIDER.get(managed or "")
    if pinned is not None and provider is not None and provider != pinned:
        raise ChipwiseError(
            f"{managed} runs on {pinned} instances only, not {provider}'s. Fix: drop --managed, or use --provider "
            f"{pinned}."
        )
    return pinned or provider


def price_gap(
    catalog: Catalog,
    system: System,
    mode: str = "on-demand",
    provider: str | None = None,
    managed: str | None = None,
    as_of: str | None = None,
) -> str:
    """Why price_per_chip_hour has no price for a system (one clause, for a '-' in a table's note)."""
    pinned = MANAGED_PROVIDER.get(managed or "")
    lookup = pinned or provider
    chip = system.chip.id
    sellers = MODE_SELLERS.get(mode)
    base = _rental_quote(catalog, system, "on-demand", None, lookup, as_of)
    if base is None and pinned is not None:
        return f"{managed} runs on {pinned} instances and the catalog has no {pinned} price for {chip}"
    if base is None:
        return f"the catalog has no {mode} or on-demand price for {chip}"
    if sellers is not None and base.provider not in sellers:
        return (
            f"{mode} is sold by {', '.join(sellers)} only, and the catalog has no {', '.join(sellers)} price for {chip}"
        )
    seller = _seller(catalog, system, lookup)
    if seller is not None and base.provider != seller:
        return (
            f"the catalog has no {seller} {mode} or on-demand price for {system.id}; a {mode} price is not derived "
            f"from another provider's ({base.provider}) on-demand rate"
        )
    return f"the catalog has no {mode} price for {system.id}"


def price_per_chip_hour(
    catalog: Catalog,
    system: System,
    mode: str = "on-demand",
    region: str | None = None,
    provider: str | None = None,
    managed: str | None = None,
    as_of: str | None = None,
) -> PriceQuote | None:
    """The best matching rental price per chip-hour for a system, or None when the catalog has none (price_gap
    says why).

    A managed service looks only at its provider's prices (MANAGED_PROVIDER); a commitment or spot price missing
    from the catalog is derived only from the on-demand rate of the provider that sells the system (the system's own
    cloud, or `provider`), and only for a provider that sells that product (MODE_SELLERS). `as_of` ('2025-06')
    ignores prices dated after it. For mode 'owned' this returns None: use economics.tco.
    """
    check_mode(mode)
    if mode == "owned":
        return None
    mk = markup_term(catalog, managed)
    provider = _managed_provider(managed, provider)
    quote = _rental_quote(catalog, system, mode, region, provider, as_of)
    sellers = MODE_SELLERS.get(mode)
    if quote is not None and sellers is not None and quote.provider not in (*sellers, USER_PROVIDER):
        quote = None  # another provider's price filed under a product only these sell
    if quote is None and mode != "on-demand":
        base = _rental_quote(catalog, system, "on-demand", region, provider, as_of)
        ratio = node(catalog, "datacenter", "pricing_mode_ratio", mode)
        seller = _seller(catalog, system, provider)
        if (
            base is not None
            and ratio is not None
            and (sellers is None or base.provider in sellers)
            and (seller is None or base.provider in (seller, USER_PROVIDER))
        ):
            r = term(catalog, "datacenter", "pricing_mode_ratio", mode)
            quote = replace(
                base,
                usd_per_chip_hour=base.usd_per_chip_hour * r.value,
                mode=mode,
                status="estimate",
                derived_from_mode="on-demand",
                derivation=(
                    f"no {mode} price in the catalog: on-demand {base.usd_per_chip_hour:.4g} USD/chip-h x "
                    f"datacenter.pricing_mode_ratio.{mode} {r.value:g} ({r.derivation.split('.')[0]})"
                ),
            )
    if quote is not None and quote.derived_from_mode and mode in LONGER_TERM:
        # a longer commitment costs no more than a shorter one: a derived 3-year rate above a listed 1-year one
        # (trn1: on-demand x 0.45 = $0.605 a chip-hour against the Neuron table's reserved $0.512) takes that
        shorter = _rental_quote(catalog, system, LONGER_TERM[mode], region, provider, as_of)
        if shorter is not None and shorter.usd_per_chip_hour < quote.usd_per_chip_hour:
            quote = replace(
                shorter,
                mode=mode,
                status="estimate",
                derived_from_mode=LONGER_TERM[mode],
                derivation=(
                    f"no {mode} price in the catalog: the {LONGER_TERM[mode]} price {shorter.usd_per_chip_hour:.4g} "
                    f"USD/chip-h, below on-demand x the {mode} ratio ({quote.usd_per_chip_hour:.4g}); a longer "
                    "commitment costs no more"
                ),
            )
    if quote is not None and mk is not None:
        quote = replace(
            quote,
            usd_per_chip_hour=quote.usd_per_chip_hour * mk.value,
            markup=mk.value,
            derivation=(quote.derivation + "; " if quote.derivation else "")
            + f"x {mk.value:g} managed-service markup ({managed})",
        )
    return quote


def latest_quotes(catalog: Catalog, chip_id: str, mode: str = "on-demand") -> list[tuple[str, str, float, str]]:
    """Every provider's and region's newest catalog price of one chip in one mode, cheapest first:
    (provider, region, USD per chip-hour, status); a commitment price listed against an on-demand rate that has since
    moved is carried to today's (_rescaled, an estimate)."""
    newest: dict[tuple[str, str], tuple[str, tuple[str, str, float, str]]] = {}
    for p in catalog.prices:
        if p.mode != mode:
            continue
        target = p.chip or catalog.systems[p.system].chip
        if target != chip_id:
            continue
        moved = None if mode == "on-demand" else _rescaled(catalog, p, None)  # listed against an older rate
        value, status = (p.value * moved[0], "estimate") if moved else (p.value, p.status)
        per_chip = value if p.chip else value / catalog.systems[p.system].chips
        key = (p.provider, p.region)
        if key not in newest or p.date > newest[key][0]:
            newest[key] = (p.date, (p.provider, p.region, per_chip, status))
    return sorted((v for _, v in newest.values()), key=lambda q: q[2])
