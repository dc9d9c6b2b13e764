"""`chipwise catalog prices`: every rental price in the catalog, per chip-hour, with its mode, region, date and status
(a vendor's list price or an estimate the rankings fall back on), filtered by chip, provider or region."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import PriceEntry
from chipwise.errors import UnknownNameError
from chipwise.interfaces.cli.common import compact_table, console


def superseded_by(catalog: Catalog, price: PriceEntry) -> PriceEntry | None:
    """The newest later price of the same system or chip, provider, region and mode, which replaces `price` (the
    p5.48xlarge's 98.32 USD/h of 2025-05 by AWS's cut to 55.04); None where none is later."""
    later = [
        p
        for p in catalog.prices
        if (p.system, p.chip, p.provider, p.region, p.mode)
        == (price.system, price.chip, price.provider, price.region, price.mode)
        and p.date > price.date
    ]
    return max(later, key=lambda p: p.date) if later else None


def price_row(catalog: Catalog, price: PriceEntry) -> dict[str, Any]:
    """A price as JSON: the catalog's entry, its basis (a system's price is per system-hour, a chip's per chip-hour on
    any of its systems), its value per chip-hour (a system's over its chips), its sources' text and the later price of
    the same offer that replaces it, if any."""
    row = price.model_dump(exclude_defaults=True)
    row["basis"] = "system-hour" if price.system else "chip-hour"
    row["usd_per_chip_hour"] = price.value / (catalog.systems[price.system].chips if price.system else 1)
    row["source_text"] = [catalog.source_text(s) for s in price.source]
    newer = superseded_by(catalog, price)
    if newer is not None:
        row["superseded_by"] = {"value": newer.value, "date": newer.date}
    return row


def _chips_of(catalog: Catalog, price: PriceEntry) -> list[str]:
    """The chip types a price rents: a chip price its chip, a system price the system's chip (a hybrid's members)."""
    if price.chip:
        return [price.chip]
    system = catalog.systems[price.system]
    return list(system.members) or [system.chip]


def _chip_filter(catalog: Catalog, chip: str) -> str:
    """The catalog id of the chip `--chip` names (an id or alias, any case); one line naming the chips where none."""
    names = {n.lower(): cid for cid, c in catalog.chips.items() for n in (cid, *c.aliases)}
    found = names.get(chip.strip().lower())
    if found is None:
        raise UnknownNameError("chip", chip, catalog.chips)
    return found


def _one_of(given: str, known: set[str], kind: str, option: str) -> str:
    """`given` where the catalog's prices name it, else one line with the near matches and the ones they name."""
    if given not in known:
        raise UnknownNameError(kind, given, known, hint=f"give {option} one of {', '.join(sorted(known))}")
    return given


def prices_json(
    catalog: Catalog, chip: str | None = None, provider: str | None = None, region: str | None = None
) -> dict[str, Any]:
    """`catalog prices --json`: the prices that rent `chip` (its own per chip-hour and its systems'), from
    `provider`, in `region` (a price with no region holds in every region of its provider), each with its value per
    chip-hour (a system's price over its chips)."""
    cid = _chip_filter(catalog, chip) if chip is not None else None
    if provider is not None:
        _one_of(provider, {p.provider for p in catalog.prices}, "provider", "--provider")
    if region is not None:
        _one_of(region, {p.region for p in catalog.prices if p.region}, "region", "--region")
    rows = []
    for p in catalog.prices:
        if cid is not None and cid not in _chips_of(catalog, p):
            continue
        if (provider is not None and p.provider != provider) or (region is not None and p.region not in ("", region)):
            continue
        rows.append({**price_row(catalog, p), "chips": _chips_of(catalog, p)})
    return {"filters": {"chip": cid, "provider": provider, "region": region}, "prices": rows}


def print_prices(data: dict[str, Any], sources: bool) -> None:
    """The prices as a table: what is rented, mode, provider, region, the offer's price and per chip-hour, date and
    status (an estimate in yellow), and with `sources` each price's derivation or sources."""
    rows = data["prices"]
    said = ", ".join(f"{k} {v}" for k, v in data["filters"].items() if v)
    table = compact_table(
        f"Prices ({len(rows)}{'; ' + said if said else ''}; a system's per system-hour, a chip's per chip-hour on any "
        "of its systems)"
    )
    heads = ["rents", "mode", "provider", "region", "USD/h", "USD per\nchip-hour", "date", "status"]
    heads += ["source / derivation"] if sources else []
    for col in heads:
        table.add_column(col, justify="right" if "USD" in col else "left", overflow="fold")
    for r in rows:
        rents = r.get("system") or r["chip"]
        status = r["status"] if r["status"] in ("spec", "measured") else f"[yellow]{r['status']}[/]"
        newer = r.get("superseded_by")
        if newer:
            status += f", superseded by ${newer['value']} of {newer['date']}"
        cells = [escape(rents), r["mode"], r["provider"], r.get("region") or "any", f"{r['value']:,.2f}"]
        cells += [f"{r['usd_per_chip_hour']:,.2f}", r.get("date") or "-", status]
        if sources:
            cells.append(escape(r.get("derivation") or "; ".join(r["source_text"])))
        table.add_row(*cells)
    console.print(table)
    if not rows:
        console.print("no price matches the filters given")
    console.print(
        "status: spec = a provider's published list price; estimate = derived from other prices (the rankings' "
        "fallback where no price is published; --sources says how)",
        highlight=False,
    )
