"""`chipwise catalog list|show`: what the catalog holds, every figure with its status and source on request."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import Figure
from chipwise.catalog.units import quantity
from chipwise.errors import UnknownNameError
from chipwise.hardware import hardware
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    console,
    print_json,
)

app = typer.Typer(help="List and inspect the hardware catalog (chips, systems, fabrics, prices).", no_args_is_help=True)

SourcesFlag = Annotated[bool, typer.Option("--sources", help="Show each figure's status and source.")]


def figure_json(catalog: Catalog, fig: Figure) -> dict[str, Any]:
    out: dict[str, Any] = {
        "value": fig.value,
        "unit": fig.unit,
        "status": fig.status,
        "source": [catalog.source_text(s) for s in fig.source],
    }
    if quantity(fig.unit) != "text" and not isinstance(fig.value, str):
        out["si"] = fig.si
    for key in ("note", "derivation"):
        if getattr(fig, key):
            out[key] = getattr(fig, key)
    if fig.alternatives:
        out["alternatives"] = [a.model_dump(exclude_defaults=True) for a in fig.alternatives]
    return out


def _figures(node: Any, prefix: str = "") -> dict[str, Figure]:
    """Every figure inside an entry, by dotted field path."""
    out: dict[str, Figure] = {}
    if isinstance(node, Figure):
        out[prefix] = node
    elif hasattr(type(node), "model_fields") and not isinstance(node, type):
        for name in type(node).model_fields:
            out.update(_figures(getattr(node, name), f"{prefix}.{name}" if prefix else name))
    elif isinstance(node, dict):
        for k, v in node.items():
            out.update(_figures(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            between = getattr(v, "between", None)  # a hybrid domain's link is named by its pair of chip types
            out.update(_figures(v, f"{prefix}.{'-'.join(between) if between else i}"))
    return out


def chip_json(catalog: Catalog, cid: str) -> dict[str, Any]:
    entry = catalog.chips[cid]
    return {
        "id": cid,
        "name": entry.name,
        "vendor": entry.vendor,
        "family": entry.family,
        "status": entry.status,
        "projected": entry.status in ("projected", "announced"),
        "aliases": entry.aliases,
        "default_system": entry.default_system,
        "cores_per_chip": entry.cores_per_chip,
        "memory_type": entry.memory_type,
        "note": entry.note,
        "figures": {k: figure_json(catalog, f) for k, f in _figures(entry).items()},
    }


def system_json(catalog: Catalog, sid: str) -> dict[str, Any]:
    entry = catalog.systems[sid]
    return {
        "id": sid,
        "name": entry.name,
        "system_kind": entry.kind,
        "provider": entry.provider,
        "chip": entry.chip,
        "chips": entry.chips,
        "status": entry.status,
        "projected": entry.status in ("projected", "announced")
        or catalog.chips[entry.chip].status in ("projected", "announced"),
        "aliases": entry.aliases,
        "scaleup": {
            "kind": entry.scaleup.kind,
            "size": entry.scaleup.size,
            "dims": entry.scaleup.dims,
            "fabric": entry.scaleup.fabric,
        },
        "scaleout_fabric": entry.scaleout.fabric,
        "members": entry.members,
        "host": entry.host,
        "note": entry.note,
        "figures": {k: figure_json(catalog, f) for k, f in _figures(entry).items()},
        "prices": [p.model_dump(exclude_defaults=True) for p in catalog.prices if p.system == sid],
    }


def _fig_cell(fig: Figure | None, render: Any) -> str:
    if fig is None:
        return "-"
    return str(render(fig.si))


@app.command("list")
def list_(
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: SourcesFlag = False,
) -> None:
    """List every chip and system in the catalog."""
    cat = catalog_from(catalog_files, sets)
    if as_json:
        print_json(
            {
                "chips": [chip_json(cat, cid) for cid in cat.chips],
                "systems": [system_json(cat, sid) for sid in cat.systems],
                "fabrics": {fid: {"name": f.name, "layer": f.layer, "kind": f.kind} for fid, f in cat.fabrics.items()},
                "models": sorted(cat.models),
            }
        )
        return
    table = Table(title="Chips (dense peak FLOP/s; link bandwidths per chip and direction)", header_style="bold")
    for col in (
        "id",
        "name",
        "status",
        "fp4",
        "fp8",
        "bf16",
        "HBM",
        "HBM BW",
        "TDP",
        "scale-up",
        "scale-out",
        "year",
    ):
        table.add_column(col, justify="left" if col in ("id", "name", "status") else "right")
    for cid, c in cat.chips.items():
        status = c.status if c.status == "spec" else f"[yellow]{c.status}[/]"
        table.add_row(
            cid,
            c.name,
            status,
            _fig_cell(c.flops.get("fp4"), fmt.flops),
            _fig_cell(c.flops.get("fp8"), fmt.flops),
            _fig_cell(c.flops.get("bf16"), fmt.flops),
            _fig_cell(c.hbm_capacity, fmt.bytes_),
            _fig_cell(c.hbm_bandwidth, fmt.bandwidth),
            _fig_cell(c.tdp, fmt.power),
            _fig_cell(c.scaleup_bandwidth, fmt.bandwidth),
            _fig_cell(c.scaleout_bandwidth, fmt.bandwidth),
            str(c.launch_year.value) if c.launch_year else "-",
        )
    console.print(table)
    systems = Table(title="Systems", header_style="bold")
    for col in ("id", "name", "chip", "chips", "scale-up", "scale-out", "power", "status"):
        systems.add_column(col)
    for sid, s in cat.systems.items():
        dims = "x".join(str(d) for d in s.scaleup.dims)
        up = f"{s.scaleup.kind} {s.scaleup.size}" + (f" ({dims})" if dims else "")
        systems.add_row(
            sid,
            s.name,
            s.chip,
            str(s.chips),
            up,
            s.scaleout.fabric,
            _fig_cell(s.power, fmt.power),
            s.status if s.status == "spec" else f"[yellow]{s.status}[/]",
        )
    console.print(systems)
    if sources:
        _print_sources(cat, [(cid, _figures(c)) for cid, c in cat.chips.items()])


def _print_sources(cat: Catalog, entries: list[tuple[str, dict[str, Figure]]]) -> None:
    table = Table(title="Figures, status and sources", header_style="bold", show_lines=False)
    for col in ("id", "figure", "value", "status", "source / derivation"):
        table.add_column(col, overflow="fold")
    for ident, figs in entries:
        for name, fig in figs.items():
            origin = (
                fig.derivation
                if fig.status in ("estimate", "projected") and fig.derivation
                else "; ".join(cat.source_text(s) for s in fig.source)
            )
            status = fig.status if fig.status in ("spec", "measured") else f"[yellow]{fig.status}[/]"
            table.add_row(ident, name, f"{fig.value} {fig.unit}".strip(), status, origin)
    console.print(table)


@app.command("show")
def show(
    ident: Annotated[str, typer.Argument(help="A chip, system or fabric id (or alias).", metavar="ID")],
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: SourcesFlag = False,
) -> None:
    """Show every figure of one chip, system or fabric, with its status (and sources with --sources)."""
    cat = catalog_from(catalog_files, sets)
    hw = hardware(cat)
    key = ident.strip().lower()
    if key in cat.fabrics:
        fab = cat.fabrics[key]
        data: dict[str, Any] = {
            "id": key,
            "kind": "fabric",
            "name": fab.name,
            "figures": {k: figure_json(cat, f) for k, f in _figures(fab).items()},
        }
        figs = _figures(fab)
    else:
        try:
            system = hw.system(ident)
        except UnknownNameError:
            raise UnknownNameError(
                "chip, system or fabric", ident, list(cat.chips) + list(cat.systems) + list(cat.fabrics)
            ) from None
        is_chip = key in cat.chips or any(key in (a.lower() for a in c.aliases) for c in cat.chips.values())
        if is_chip:
            cid = hw.chip(ident).id
            data = {"kind": "chip", **chip_json(cat, cid)}
            figs = _figures(cat.chips[cid])
        else:
            data = {"kind": "system", **system_json(cat, system.id)}
            figs = _figures(cat.systems[system.id])
    if as_json:
        print_json(data)
        return
    title = f"{data['id']} - {data['name']}"
    if data.get("projected"):
        title += "  [yellow](PROJECTED: announced, not shipping)[/]"
    table = Table(title=title, header_style="bold")
    for col in ("figure", "value", "status") + (("source / derivation", "note") if sources else ("note",)):
        table.add_column(col, overflow="fold")
    for name, fig in figs.items():
        row = [name, f"{fig.value} {fig.unit}".strip(), fig.status]
        if sources:
            row.append(fig.derivation if fig.derivation else "; ".join(cat.source_text(s) for s in fig.source))
        row.append(fig.note)
        table.add_row(*row)
    console.print(table)
    for p in data.get("prices", []):
        console.print(
            f"price: {p['mode']} {p.get('provider', '')} {p.get('region', '')} ${p['value']}/h "
            f"({p.get('date', '')}, {p['status']})"
        )
