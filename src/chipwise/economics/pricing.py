"""Cloud prices per chip-hour from the catalog: by pricing mode, provider, region and date.

A price set on the command line (`--set ID.price=...`, provider 'user') wins over every catalog price of that
system or chip; where the user set the on-demand price and not another mode's, that mode follows it where the
catalog has no published price in the mode (the catalog's estimate in the mode x the user's on-demand price / the
catalog's, or the user's price x the mode's ratio: an estimate that says so); a published one (Trainium2's $2.235
capacity block) is the seller's own product and stays. A user's price keeps the site of the catalog quote it
replaces (PriceQuote.site): it changes what the chips cost, not who runs them or where. A vendor's reference system
(a provider the catalog has no price of: dgx-h100) is priced as its chip's default system where a cloud rents that
(p5.48xlarge, in every mode), so it costs what its chip costs.

Otherwise a system's own price (per system-hour, divided by its chips) is preferred; then the seller's per-chip price
for the same chip, or (on demand, or for a vendor's reference system in any mode) the seller's price for another
system with the same chip; then any provider's. Among candidates the asked-for provider (or the system's own; for a
vendor's reference system DEFAULT_PROVIDER) wins, then the asked-for region, then the newest date (listed by
`as_of`, to the precision of the coarser: a price of '2025-05' by '2025', _in_force), then a published price over
an estimate, then the lower price; where none is the preferred provider's, each provider's current price and of
those the middle one (_pick).

When the catalog has no price at all for a commitment or spot mode, the on-demand quote is scaled by the
catalog's `datacenter.pricing_mode_ratio` for that mode and the quote says so (`derived`). A managed-service
markup (`datacenter.managed_service_markup`, e.g. SageMaker's ~1.15 over EC2) multiplies the price when asked.
The `owned` mode is not a rental price: economics.tco prices it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from chipwise.catalog.loader import Catalog
from chipwise.catalog.overrides import USER_PROVIDER
from chipwise.catalog.schema import PRICING_MODES, PriceEntry
from chipwise.catalog.terms import Term, node, term
from chipwise.catalog.units import to_si
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
    priced_as: str = ""  # the system a vendor's reference system is priced as (its chip's default system), if any
    #: a price set by the user (provider 'user', no region): the provider and region of the catalog quote it
    #: replaces (the provider asked for and no region where the catalog has none in the mode), where the chips still
    #: run; None for a catalog quote, whose own they are
    replaces: tuple[str | None, str | None] | None = None

    @property
    def site(self) -> tuple[str | None, str | None]:
        """The operator and region the chips run at (economics.energy.site_for): the quote's own, or for a price the
        user set those of the catalog quote it replaces, so that a price changes what the chips cost, not who runs
        them or where: --set gb200.price.on-demand=12.2, the catalog's own rate, had moved GB200 from AWS's us-tx
        (PUE 1.15, 373 g/kWh) to a colocation site in country-usa (1.42, 366 g), energy +23.5%, CO2e +21.2%."""
        return self.replaces if self.replaces is not None else (self.provider, self.region)

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
        if self.priced_as:
            out["priced_as"] = self.priced_as
        if not self.region_matched:
            out["region_note"] = "no price in the region asked for; the nearest listed price is used"
        return out

    def _seller(self) -> str:
        """Who sells the price, where and as of when, for a figure's note: a price the user set has no region and no
        date, and had read 'user  , per chip-hour'; it now reads 'set by the user, per chip-hour' (a part the quote
        lacks is left out)."""
        who = "set by the user" if self.provider == USER_PROVIDER else self.provider
        return " ".join(part for part in (who, self.region, self.date) if part)

    def figure(self, system: System) -> dict[str, dict[str, Any]]:
        """The price as a figure the prediction rests on, named as `--set` takes it (ENTRY.price.MODE) and in that
        entry's own unit: USD per system-hour for a system's price, per chip-hour for a chip's, before a managed
        markup (a --set price is marked up again). `--sources` lists it and a sensitivity moves it, by value: the
        cost moves with it one for one, and it had been in no list (a $2.73 estimate no row named)."""
        per = system.chips if self.basis == "system" else 1
        value = float(f"{self.usd_per_chip_hour / self.markup * per:.12g}")
        record: dict[str, Any] = {
            "key": f"{self.entry}.price.{self.mode}",
            "value": value,
            "unit": "USD/h",
            # as every other figure carries it (Term.record): trn2's $2.73 an hour had had no 'si'; it now reads
            # 7.583e-4 USD/s
            "si": to_si(value, "USD/h"),
            "status": self.status,
            "source": list(self.source),
            "note": f"{self._seller()}, per {'system' if per > 1 else 'chip'}-hour",
        }
        if self.derivation:
            record["derivation"] = self.derivation
        return {record["key"]: record}


def check_mode(mode: str) -> str:
    """A valid pricing mode, or a one-line error listing the modes."""
    if mode not in MODES:
        raise UnknownNameError("pricing mode", mode, MODES, hint=f"use one of {', '.join(MODES)}")
    return mode


def check_rental_options(pricing: str, given: Mapping[str, str | None]) -> None:
    """One line where a rental setting (a provider, a managed service: `given`, by the name the user wrote) comes
    with owned pricing, which buys the chips and rents from no one: they had been dropped in silence."""
    for name, value in given.items():
        if value is not None and pricing == "owned":
            raise ChipwiseError(
                f"{name} {value} chooses whom chips are rented from, but pricing is owned: an owned fleet is "
                f"bought, not rented. Fix: drop {name}, or give a rental pricing mode."
            )


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


def catalog_estimate(record: Mapping[str, object] | None) -> bool:
    """Whether a price's provenance (PriceQuote.record(), a report's price_source) is a catalog estimate, the § of
    every table and plot: no published offer, and not a price the user set (--set, a --catalog file), which is
    taken as given (plan serve had marked one '§ priced by an estimate' under its own WHAT-IF line)."""
    return record is not None and record.get("status") == "estimate" and record.get("provider") != USER_PROVIDER


#: the provider each managed service runs on: its markup applies to that provider's instances only (SageMaker does
#: not rent DigitalOcean's MI300X nor Google's TPUs)
MANAGED_PROVIDER: dict[str, str] = {"sagemaker": "aws"}
#: the providers that sell a rental product at all, where not every cloud does: an EC2 Capacity Block is AWS's, and
#: no ratio makes one out of another provider's on-demand rate
MODE_SELLERS: dict[str, tuple[str, ...]] = {"capacity-block": ("aws",)}


def _per_chip(catalog: Catalog, p: PriceEntry) -> float:
    """A catalog price per chip-hour (a system's per system-hour price over its chips)."""
    return p.value if p.chip else p.value / catalog.systems[p.system].chips


def _in_region(p: PriceEntry, region: str | None) -> bool:
    """Whether a price holds in the region asked for: listed there, or listed for no region (a user's file may give
    one: it holds in every region of its provider, as it replaces the catalog's prices there, catalog.loader)."""
    return region is not None and p.region in (region, "")


def _rank(
    catalog: Catalog, p: PriceEntry, provider: str | None, region: str | None
) -> tuple[int, int, str, int, float]:
    """Preferred provider, asked-for region, newest, published, then the lower price per chip-hour (the UltraServer's
    $761.90 an hour for 72 GB200 is the same per chip as the 36-chip one's $380.95, not dearer)."""
    in_region = int(_in_region(p, region))
    mine = int(provider is not None and p.provider == provider)
    return (mine, in_region, p.date, int(p.status == "spec"), -round(_per_chip(catalog, p), 9))


def _pick(catalog: Catalog, candidates: list[PriceEntry], prefer: str | None, region: str | None) -> PriceEntry:
    """The candidate a lookup takes: the preferred provider's (then the asked-for region, the newest date, a
    published price over an estimate, the lower price). Where none is the preferred provider's: each provider's
    current price (the asked-for region's where there is one, then the newest, published, lower), and of those the
    middle one (the lower of the two middle ones), so that neither the cheapest specialist's nor the dearest
    hyperscaler's rate stands for the chip, and the date a provider last moved its price does not pick the provider
    (the newest-dated had priced an H100 at Azure's $12.29 where AWS's is $6.88 and Lambda's $3.99)."""
    if prefer is not None and any(p.provider == prefer for p in candidates):
        return max(candidates, key=lambda p: _rank(catalog, p, prefer, region))
    if any(_in_region(p, region) for p in candidates):
        candidates = [p for p in candidates if _in_region(p, region)]
    current: dict[str, PriceEntry] = {}
    for p in candidates:
        held = current.get(p.provider)
        if held is None or _rank(catalog, p, None, region) > _rank(catalog, held, None, region):
            current[p.provider] = p
    ordered = sorted(current.values(), key=lambda p: (_per_chip(catalog, p), p.provider))
    return ordered[(len(ordered) - 1) // 2]


#: the cloud whose price stands for a vendor's reference system (gb200-nvl72, mi300x-8x) where the catalog has one
#: and no system of a cloud is the chip's default: the catalog's default systems are AWS instance types wherever AWS
#: rents the chip, so a vendor's rack is priced as the chip is by default
DEFAULT_PROVIDER = "aws"


def rents_out(catalog: Catalog, provider: str | None) -> bool:
    """Whether the catalog lists any price of `provider` (a cloud that rents, not a vendor's reference system)."""
    return provider is not None and any(p.provider == provider for p in catalog.prices)


def _in_force(date: str, at: str) -> bool:
    """Whether a price dated `date` was listed by `at`, to the precision of the coarser ('2025-05' by '2025': yes)."""
    n = min(len(date), len(at))
    return date[:n] <= at[:n]


def _rescaled(catalog: Catalog, best: PriceEntry, as_of: str | None) -> tuple[float, str, bool] | None:
    """A commitment or spot price listed against an on-demand price the same entry has since changed: the factor
    (newest on-demand / on-demand in force at its date) that carries it to today's rate, the derivation, and whether
    the entry's own note still holds (False where today's rate is not from the entry's own catalog: a built-in note
    that carries it to the built-in rate names a rate no longer in use); None when the on-demand price has not moved
    since (or the catalog has no on-demand price of it then).

    The p5.48xlarge 1-year reservation (~52 USD/h, 2025) was quoted against the 98.32 on-demand rate; AWS cut that
    to 55.04 in June 2025, so 52 x 55.04 / 98.32 = 29.11 USD/h, the same 47% off the new rate.

    The rate of its day is read from the commitment's own source: a built-in one's from the built-in prices (those a
    --catalog file replaced too), never from a file's, so a file's on-demand price of any date carries it as --set's
    does (52 x 40 / 98.32 for a file's 40; one dated 2025-12-15 had been taken as the rate of the reservation's
    '2025', and an undated one had wiped the history, leaving the reservation above the user's on-demand rate)."""

    def offer(p: PriceEntry) -> bool:
        return (
            p.mode == "on-demand"
            and (p.system, p.chip, p.provider) == (best.system, best.chip, best.provider)
            and (as_of is None or _in_force(p.date, as_of))
        )

    now = [p for p in catalog.prices if offer(p) and p.region in (best.region, "")]
    if not now:
        return None
    newest = max(now, key=lambda p: p.date)
    origin = catalog.price_origin(best)
    then = [
        p
        for p in (*catalog.prices, *catalog.replaced)
        if offer(p) and p.region == best.region and _in_force(p.date, best.date) and catalog.price_origin(p) == origin
    ]
    if not then:
        return None
    old = max(then, key=lambda p: p.date)
    if old is newest or old.value == newest.value or old.value <= 0:
        return None
    factor = newest.value / old.value
    moved_by = catalog.price_origin(newest)
    derivation = (
        f"the catalog's {best.mode} price {best.value:g} USD/h ({best.date}) was listed against on-demand "
        f"{old.value:g} ({old.date}); on-demand is now {newest.value:g} ({newest.date}): {best.value:g} x "
        f"{newest.value:g} / {old.value:g} = {best.value * factor:.4g} USD/h (the same discount off today's rate)"
    )
    if moved_by == origin:
        return factor, derivation, True
    # the entry's note carries it to the rate of its own catalog: beside a file's p5 on-demand price of 40 it had
    # given a second 'today's rate' (29.11 USD/h, 3.64 a GPU-hour) under the 21.16 applied
    return (
        factor,
        f"{derivation}; today's on-demand rate is {moved_by}'s, so the entry's own note, carried to the "
        "rate it replaced, is left out",
        False,
    )


def _stand_in(catalog: Catalog, system: System, provider: str | None) -> System:
    """The system whose prices a system is rented at: itself, or for a vendor's reference system (a provider with no
    price in the catalog: dgx-h100, hgx-h800) with no provider asked for, its chip's default system where a cloud
    rents that (dgx-h100 as p5.48xlarge, in every mode), so that it costs what its chip costs by default. Where the
    chip's default system is the vendor's own (gb200-nvl72, mi300x-8x) it stays itself: DEFAULT_PROVIDER's price of
    the chip is preferred, else the middle provider's (_pick)."""
    if provider is not None or rents_out(catalog, system.provider):
        return system
    chip = catalog.chips.get(system.chip.id)
    default = getattr(chip, "default_system", "") if chip is not None else ""
    entry = catalog.systems.get(default) if default and default != system.id else None
    if entry is None or entry.chip != system.chip.id or not rents_out(catalog, entry.provider):
        return system
    return replace(system, id=default, provider=entry.provider)


def _quote_of(
    catalog: Catalog, best: PriceEntry, mode: str, basis: str, region: str | None, as_of: str | None
) -> PriceQuote:
    """The quote of one catalog price: per chip-hour, a commitment carried to today's on-demand rate (_rescaled)."""
    value, status, derivation = _per_chip(catalog, best), best.status, best.derivation
    moved = None if mode == "on-demand" or best.provider == USER_PROVIDER else _rescaled(catalog, best, as_of)
    if moved is not None:
        value, status = value * moved[0], "estimate"
        derivation = moved[1] + (f"; the entry: {best.derivation}" if best.derivation and moved[2] else "")
    return PriceQuote(
        usd_per_chip_hour=value,
        mode=mode,
        provider=best.provider,
        region=best.region,
        date=best.date,
        status=status,
        basis=basis,
        entry=best.system or best.chip,
        source=tuple(best.source),
        derivation=derivation,
        region_matched=region is None or _in_region(best, region) or best.provider == USER_PROVIDER,
    )


def _user_quote(catalog: Catalog, system: System, mode: str, as_of: str | None, also: str = "") -> PriceQuote | None:
    """A price set on the command line (--set ID.price[.MODE]=...) for the system (or `also`, the system it is
    priced as) or its chip in `mode`: it wins over every catalog price of them."""

    def user(p: PriceEntry) -> bool:
        return p.provider == USER_PROVIDER and p.mode == mode and (as_of is None or _in_force(p.date, as_of))

    ids = {system.id, also} - {""}
    own = [p for p in catalog.prices if user(p) and p.system in ids]
    per_chip = [p for p in catalog.prices if user(p) and p.chip == system.chip.id]
    for found, basis in ((own, "system"), (per_chip, "chip")):
        if found:
            best = max(found, key=lambda p: _rank(catalog, p, USER_PROVIDER, None))
            return _quote_of(catalog, best, mode, basis, None, as_of)
    return None


def _rental_quote(
    catalog: Catalog, system: System, mode: str, region: str | None, provider: str | None, as_of: str | None
) -> PriceQuote | None:
    """The catalog's own price of `system` in `mode` (prices set on the command line aside: _user_quote): the
    system's, else the seller's per-chip price for its chip or another of its instance types', else any provider's
    (see the module docstring). `system` is the one it is priced as (_stand_in)."""
    vendor = provider is None and not rents_out(catalog, system.provider)  # a vendor's reference system, itself priced
    prefer = provider or (DEFAULT_PROVIDER if vendor else system.provider)
    # a cloud's own instance type takes that cloud's spot, reserved and capacity-block products only (another
    # cloud's are not offered on it); on-demand rates, and a vendor's reference system, borrow any provider's
    sells = mode != "on-demand" and not vendor and provider is None
    own = system.provider if sells else None

    def match(p: PriceEntry) -> bool:
        return (
            p.provider != USER_PROVIDER
            and p.mode == mode
            and (provider is None or p.provider == provider)
            and (own is None or p.provider == own)
            and (as_of is None or _in_force(p.date, as_of))
        )

    same_chip_systems = {sid for sid, s in catalog.systems.items() if s.chip == system.chip.id and sid != system.id}
    per_chip = [p for p in catalog.prices if p.chip == system.chip.id and match(p)]
    # another instance type's rate for the same chip: on demand (its spot, reserved and capacity-block products, AWS's
    # whole-instance blocks, are that instance's), or any mode for a vendor's reference system, which is not an
    # instance of a cloud (gb200-nvl72 at the p6e-gb200 UltraServer's capacity-block price, not 0.82 x on-demand)
    borrow = mode == "on-demand" or vendor
    siblings = [p for p in catalog.prices if p.system in same_chip_systems and match(p) and borrow]
    tiers: list[tuple[list[PriceEntry], str]] = [
        ([p for p in catalog.prices if p.system == system.id and match(p)], "system"),
        # the seller's own price for the same chip before any other provider's: p5e.48xlarge (no on-demand SKU)
        # rents at AWS's p5en rate for the same H200, not at RunPod's per-GPU rate in a colocation facility
        ([p for p in per_chip if p.provider == prefer], "chip"),
        ([p for p in siblings if p.provider == prefer], "system"),
        (per_chip, "chip"),
        (siblings, "system"),
    ]
    for candidates, basis in tiers:
        if candidates:
            return _quote_of(catalog, _pick(catalog, candidates, prefer, region), mode, basis, region, as_of)
    return None


#: a commitment and the shorter one it never costs more than
LONGER_TERM = {"reserved-3y": "reserved-1y"}


def _seller(catalog: Catalog, system: System, provider: str | None) -> str | None:
    """Whose products a system's commitment and spot prices must be: the provider asked for, else the system's own
    cloud where the catalog prices it; None for a vendor's reference system (any provider's rate stands in)."""
    if provider is not None:
        return provider
    return system.provider if rents_out(catalog, system.provider) else None


def _managed_provider(managed: str | None, provider: str | None) -> str | None:
    """The provider a managed service pins the lookup to (SageMaker: aws), or a one-line error for another."""
    pinned = MANAGED_PROVIDER.get(managed or "")
    if pinned is not None and provider is not None and provider != pinned:
        raise ChipwiseError(
            f"{managed} runs on {pinned} instances only, not {provider}'s. Fix: drop --managed, or use --provider "
            f"{pinned}."
        )
    return pinned or provider


def _catalog_quote(
    catalog: Catalog, system: System, mode: str, region: str | None, provider: str | None, as_of: str | None
) -> PriceQuote | None:
    """The catalog's price of `system` (the one it is priced as) in `mode`: its own listed price, else the on-demand
    rate scaled by the mode's ratio (an estimate) where the seller sells that product, else None."""
    quote = _rental_quote(catalog, system, mode, region, provider, as_of)
    sellers = MODE_SELLERS.get(mode)
    if quote is not None and sellers is not None and quote.provider not in sellers:
        quote = None  # another provider's price filed under a product only these sell
    if quote is None and mode != "on-demand":
        base = _rental_quote(catalog, system, "on-demand", region, provider, as_of)
        ratio = node(catalog, "datacenter", "pricing_mode_ratio", mode)
        seller = _seller(catalog, system, provider)
        if (
            base is not None
            and ratio is not None
            and (sellers is None or base.provider in sellers)
            and (seller is None or base.provider == seller)
        ):
            quote = _by_mode_ratio(catalog, base, mode, f"no {mode} price in the catalog: on-demand")
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
    return quote


def _follow_user(
    catalog: Catalog,
    system: System,
    mode: str,
    region: str | None,
    provider: str | None,
    as_of: str | None,
    user: PriceQuote,
    quote: PriceQuote | None,
) -> PriceQuote | None:
    """A commitment or spot price where the user set the on-demand price (--set ID.price=...) and not this mode's:
    the catalog's published price in this mode as it is (the seller's own product, not a discount off the user's
    rate), else the catalog's estimate in this mode scaled by the user's on-demand price over the catalog's on-demand
    price of the same provider (the same discount off the user's rate), else the user's price x the mode's ratio.

    A reserved price carried from AWS's on-demand rate (p5's $3.64) had been kept beside a negotiated $2.00; it now
    reads $1.06. A published price had followed too: `--set trn2.price=4.8` had priced Trainium2's capacity block,
    $2.235 on AWS's page, at 4.8 x 2.235 / 2.7257 = $3.93 'set on the command line'; it now reads $2.235 [spec]."""
    if quote is not None and quote.status == "spec":
        return quote
    if quote is not None:
        od = _rental_quote(catalog, system, "on-demand", region, quote.provider, as_of)
        if od is not None and od.usd_per_chip_hour > 0:
            share = quote.usd_per_chip_hour / od.usd_per_chip_hour
            return replace(
                quote,
                usd_per_chip_hour=user.usd_per_chip_hour * share,
                provider=USER_PROVIDER,
                region="",
                status="estimate",
                derived_from_mode="on-demand",
                region_matched=True,
                derivation=(
                    f"follows the on-demand price set on the command line: {user.usd_per_chip_hour:.4g} USD/chip-h x "
                    f"the catalog's {mode} / on-demand ratio for {quote.entry} ({quote.provider}: "
                    f"{quote.usd_per_chip_hour:.4g} / {od.usd_per_chip_hour:.4g} = {share:.4g})"
                ),
            )
    sellers = MODE_SELLERS.get(mode)
    seller = quote.provider if quote is not None else _seller(catalog, system, provider)
    if node(catalog, "datacenter", "pricing_mode_ratio", mode) is None or (
        sellers is not None and seller not in sellers
    ):
        return quote
    return _by_mode_ratio(catalog, user, mode, "follows the on-demand price set on the command line:")


def _by_mode_ratio(catalog: Catalog, base: PriceQuote, mode: str, basis: str) -> PriceQuote:
    """An on-demand quote carried to `mode` by the catalog's ratio of that mode's prices to on-demand ones (an
    estimate whose derivation starts with `basis`)."""
    r = term(catalog, "datacenter", "pricing_mode_ratio", mode)
    return replace(
        base,
        usd_per_chip_hour=base.usd_per_chip_hour * r.value,
        mode=mode,
        status="estimate",
        derived_from_mode="on-demand",
        derivation=(
            f"{basis} {base.usd_per_chip_hour:.4g} USD/chip-h x datacenter.pricing_mode_ratio.{mode} {r.value:g} "
            f"({r.derivation.rstrip('.')})"  # whole: a cut at the first '.' had read "H100 6" for 6.571
        ),
    )


def no_unit_price(chip: str) -> str:
    """Why an owned fleet of `chip` has no cost, with the fix (one clause, for a '-' in a table's note)."""
    return f"no unit price for {chip} in the catalog: owned cost unknown (give one: --set {chip}.unit_price=USD)"


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
    # the prices a quote in `mode` may come from: the mode's own, or the on-demand rate it is derived from (once, on
    # demand: it had read 'no lambda on-demand or on-demand price')
    wanted = mode if mode == "on-demand" else f"{mode} or on-demand"
    if mode == "owned":
        return no_unit_price(chip)
    if sellers is not None and lookup is not None and lookup not in sellers:
        return f"{mode} is sold by {', '.join(sellers)} only, not by {lookup}"
    priced = _stand_in(catalog, system, lookup)
    base = _rental_quote(catalog, priced, "on-demand", None, lookup, as_of)
    if base is None and pinned is not None:
        return f"{managed} runs on {pinned} instances and the catalog has no {pinned} price for {chip}"
    if base is None:
        return f"the catalog has no {lookup + ' ' if lookup else ''}{wanted} price for {chip}"
    if sellers is not None and base.provider not in sellers:
        if rents_out(catalog, priced.provider):  # a cloud's own instance: another cloud's product is not sold on it
            return f"{mode} is sold by {', '.join(sellers)} only, not by {priced.provider}, which rents {priced.id}"
        return (
            f"{mode} is sold by {', '.join(sellers)} only, and the catalog has no {', '.join(sellers)} price for {chip}"
        )
    seller = _seller(catalog, priced, lookup)
    if seller is not None and base.provider != seller:
        return (
            f"the catalog has no {seller} {wanted} price for {priced.id}; a {mode} price is not derived "
            f"from another provider's ({base.provider}) on-demand rate"
        )
    return f"the catalog has no {mode} price for {priced.id}"


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

    A price set on the command line wins; a vendor's reference system is priced as its chip's default system
    (_stand_in); a managed service looks only at its provider's prices (MANAGED_PROVIDER); a commitment or spot price
    missing from the catalog is derived only from the on-demand rate of the provider that sells the system (the
    system's own cloud, or `provider`), and only for a provider that sells that product (MODE_SELLERS); where the user
    set the on-demand price, the other modes without a published catalog price follow it (_follow_user). `as_of`
    ('2025-06') ignores prices dated after it ('2025' keeps those of 2025-05: _in_force). For mode 'owned' this
    returns None: use economics.tco.
    """
    check_mode(mode)
    if mode == "owned":
        return None
    mk = markup_term(catalog, managed)
    provider = _managed_provider(managed, provider)
    priced = _stand_in(catalog, system, provider)
    also = priced.id if priced is not system else ""
    quote = _user_quote(catalog, system, mode, as_of, also)
    unset = _catalog_quote(catalog, priced, mode, region, provider, as_of)  # the catalog's, as if nothing were set
    if quote is None:
        quote = unset
        user_od = None if mode == "on-demand" else _user_quote(catalog, system, "on-demand", as_of, also)
        if user_od is not None:
            quote = _follow_user(catalog, priced, mode, region, provider, as_of, user_od, quote)
        if quote is not None and also and quote.provider != USER_PROVIDER:
            quote = replace(
                quote,
                priced_as=also,
                derivation=(
                    f"{system.id} ({system.provider}'s reference system, no price of its own) is priced as "
                    f"{system.chip.id}'s default system, {also}" + (f"; {quote.derivation}" if quote.derivation else "")
                ),
            )
    if quote is not None and quote.provider == USER_PROVIDER:  # the chips run where the unset run's would
        quote = replace(quote, replaces=unset.site if unset is not None else (provider, None))
    if quote is not None and mk is not None:
        quote = replace(
            quote,
            usd_per_chip_hour=quote.usd_per_chip_hour * mk.value,
            markup=mk.value,
            derivation=(quote.derivation + "; " if quote.derivation else "")
            + f"x {mk.value:g} managed-service markup ({managed})",
        )
    return quote


class ListedPrice(NamedTuple):
    """One catalog price of a chip as `latest_quotes` lists it."""

    provider: str
    region: str
    usd_per_chip_hour: float
    status: str
    entry: str  # the system or chip the catalog's price is for
    derivation: str = ""  # how a commitment was carried to today's on-demand rate (_rescaled), or the entry's own
    date: str = ""


def latest_quotes(catalog: Catalog, chip_id: str, mode: str = "on-demand") -> list[ListedPrice]:
    """Every provider's newest catalog price of one chip in one mode, per region and per system or chip it is for
    (p5e.48xlarge's and p5en.48xlarge's H200 capacity blocks both; keyed by provider and region, p5en's had stood for
    p5e's), cheapest first; a per-chip price older than a system's price of the same provider and region is left out
    (superseded), and so is a regional price that a regionless one of its provider, as new or newer, covers (a
    --catalog file's regionless price is that provider's offer everywhere). A commitment price listed against an
    on-demand rate that has since moved is carried to today's (_rescaled, an estimate) and says how."""
    newest: dict[tuple[str, str, str], PriceEntry] = {}
    for p in catalog.prices:
        if p.mode != mode or (p.chip or catalog.systems[p.system].chip) != chip_id:
            continue
        key = (p.provider, p.region, p.system or p.chip)
        if key not in newest or p.date > newest[key].date:
            newest[key] = p
    rows = []
    for (provider, region, entry), p in newest.items():
        if p.chip and any(
            q.system and (q.provider, q.region) == (provider, region) and q.date > p.date for q in newest.values()
        ):
            continue
        # a price without a region covers its provider's offer everywhere: older regional ones are history (a
        # file's regionless p5 price had left AWS's us-east-1 list price beside it as a current offer)
        if region and (cover := newest.get((provider, "", entry))) is not None and cover.date >= p.date:
            continue
        q = _quote_of(catalog, p, mode, "system" if p.system else "chip", None, None)
        rows.append(ListedPrice(provider, region, q.usd_per_chip_hour, q.status, q.entry, q.derivation, p.date))
    return sorted(rows, key=lambda q: (q.usd_per_chip_hour, q.provider, q.entry))
