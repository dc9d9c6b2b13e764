"""`chipwise catalog list|show`: what the catalog holds, every figure with its status and source on request."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import fields
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.catalog.schema import STATUS_LEGEND, Figure, RentalEntry, status_mark
from chipwise.catalog.track_record import track_record
from chipwise.catalog.units import quantity
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import hardware
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.catalog_prices import price_row, prices_json, print_prices
from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    compact_table,
    console,
    figure_text,
    print_json,
    print_track_record,
    whatif_banner,
    whatif_lines,
)
from chipwise.serve.engine import (
    CAPABILITIES,
    ENGINES,
    EngineProfile,
    check_engine_name,
    engine_carried_from,
    engine_figures,
    engine_fitted,
    engine_profile,
    served_as,
)

app = typer.Typer(
    help="List and inspect the hardware catalog (chips, systems, fabrics, prices: 'catalog prices') and the serving "
    "engines' figures.",
    no_args_is_help=True,
)

SourcesFlag = Annotated[bool, typer.Option("--sources", help="Show each figure's status and source.")]


def figure_json(catalog: Catalog, fig: Figure, name: str = "") -> dict[str, Any]:
    """A figure as JSON: value, unit, status, sources and its SI value, but for a calendar year (launch_year 2022:
    a date, not a duration of 2022 years, whose 'si' had been 6.4e10 seconds) and text."""
    out: dict[str, Any] = {
        "value": fig.value,
        "unit": fig.unit,
        "status": fig.status,
        "source": [catalog.source_text(s) for s in fig.source],
    }
    calendar_year = name.endswith("_year") and fig.unit == "year"
    if quantity(fig.unit) != "text" and not isinstance(fig.value, str) and not calendar_year:
        out["si"] = fig.si
    for key in ("note", "derivation"):
        if getattr(fig, key):
            out[key] = getattr(fig, key)
    if fig.alternatives:
        # each with its sources' text, as the figure's own (a bare key such as KLOCK_H100 said nothing)
        out["alternatives"] = [
            a.model_dump(exclude_defaults=True)
            | ({"source": [catalog.source_text(s) for s in a.source]} if a.source else {})
            for a in fig.alternatives
        ]
    return out


def _alternatives_text(fig: Figure, detailed: bool) -> str:
    """The other values the catalog keeps for a figure (Rubin's sparse 50 PF beside its dense 35 PF), so that a
    disagreement is seen in the table too (it was in --json only); with --sources, each with its note."""
    if not fig.alternatives:
        return ""
    said = ["-" if a.value is None else fmt.value_text(a.value, a.unit) for a in fig.alternatives]
    if not detailed:
        return "alternatives (--sources says whose): " + "; ".join(said)
    return "alternatives: " + "; ".join(
        f"{v} ({a.note})" if a.note else v for v, a in zip(said, fig.alternatives, strict=True)
    )


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
        "figures": {k: figure_json(catalog, f, k) for k, f in _figures(entry).items()},
        "prices": _prices(catalog, {cid}, {s for s, e in catalog.systems.items() if e.chip == cid}),
    }


def _prices(catalog: Catalog, chips: set[str], systems: set[str]) -> list[dict[str, Any]]:
    """The rental prices that apply: the systems' own (per system-hour) and the chips' (per chip-hour, on any of
    their systems: each member's of a hybrid system), each with its sources' text."""
    return [price_row(catalog, p) for p in catalog.prices if p.system in systems or (p.chip in chips and not p.system)]


def system_json(catalog: Catalog, sid: str) -> dict[str, Any]:
    entry = catalog.systems[sid]
    chips = set(entry.members) or {entry.chip}
    return {
        "id": sid,
        "name": entry.name,
        "system_kind": entry.kind,
        "provider": entry.provider,
        "chip": entry.chip,
        "chips": entry.chips,
        "status": entry.status,
        "projected": entry.status in ("projected", "announced")
        or any(catalog.chips[c].status in ("projected", "announced") for c in chips),
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
        # where its make-up (chips, domain, fabric, host) comes from: the system's own sources
        "source": [catalog.source_text(s) for s in entry.source],
        "figures": {k: figure_json(catalog, f, k) for k, f in _figures(entry).items()},
        "rental": _rental(catalog, entry.rental),
        "prices": _prices(catalog, chips, {sid}),
    }


def _rental(catalog: Catalog, rental: RentalEntry | None) -> dict[str, Any] | None:
    """The chip counts the system is rented in, with their provenance (None: billed per chip used)."""
    if rental is None:
        return None
    out: dict[str, Any] = {"chips": rental.chips, "modes": rental.modes, "status": rental.status, "note": rental.note}
    out["source"] = rental.source
    out["source_text"] = [catalog.source_text(s) for s in rental.source]
    if rental.derivation:
        out["derivation"] = rental.derivation
    return out


#: The chip table's figure columns, each in one unit named in its header: header -> SI units per displayed unit. HBM in
#: GiB, as docs/catalog.md and the vendors' own "144 GB" (binary: trn3 144, not 155 decimal GB) give it
CHIP_COLUMNS = {
    "fp4\nPFLOP/s": 1e15,
    "fp8\nPFLOP/s": 1e15,
    "bf16\nPFLOP/s": 1e15,
    "HBM\nGiB": 2**30,
    "HBM\nTB/s": 1e12,
    "TDP\nkW": 1e3,
    "up\nGB/s": 1e9,
    "out\nGB/s": 1e9,
}


def _status(status: str) -> str:
    """'spec', or a projected or announced entry flagged in yellow and abbreviated to fit a narrow table."""
    return status if status == "spec" else f"[yellow]{status[:4]}.[/]"


def _in_unit(fig: Figure | None, scale: float) -> str:
    """A figure in its column's unit to three significant figures with its status mark, as docs/catalog.md marks it
    (trn2's TDP '0.500 (e)': an estimate had read as a vendor spec); '-' where the catalog has none."""
    return "-" if fig is None else fmt.significant(fig.si / scale) + status_mark(fig.status)


def list_json(cat: Catalog) -> dict[str, Any]:
    """`catalog list --json` (and chipwise.api.catalog_list): every chip and system, the fabrics and the models."""
    return {
        "chips": [chip_json(cat, cid) for cid in cat.chips],
        "systems": [system_json(cat, sid) for sid in cat.systems],
        "fabrics": {fid: {"name": f.name, "layer": f.layer, "kind": f.kind} for fid, f in cat.fabrics.items()},
        "models": sorted(cat.models),
    }


def _chip_rows(cat: Catalog) -> list[list[str]]:
    """`catalog list`'s chip rows: id, status, each CHIP_COLUMNS figure with its status mark, launch year."""
    rows = []
    for cid, c in cat.chips.items():
        figures = (c.flops.get("fp4"), c.flops.get("fp8"), c.flops.get("bf16"), c.hbm_capacity, c.hbm_bandwidth,
                   c.tdp, c.scaleup_bandwidth, c.scaleout_bandwidth)  # fmt: skip
        cells = [_in_unit(f, scale) for f, scale in zip(figures, CHIP_COLUMNS.values(), strict=True)]
        year = f"{float(c.launch_year.value):.0f}" if c.launch_year else "-"
        rows.append([cid, _status(c.status), *cells, year])
    return rows


def _widest(cells: list[str]) -> int:
    """The width of the widest line of `cells` on the terminal, markup aside ('[yellow]proj.[/]' is 5)."""
    return max(Text.from_markup(line).cell_len for cell in cells for line in cell.split("\n"))


def _print_chip_table(cat: Catalog) -> None:
    """The chip table, one line a chip where the terminal is wide enough; else each figure column as wide as its
    header and bare numbers, the status marks wrapping under them ('0.250' over '(e)'): rich had cut the cells
    evenly, '0.250 …' hiding the mark and 'ye…' the year."""
    rows = _chip_rows(cat)
    table = compact_table(
        "Chips (dense peak; links per chip and direction; 'chipwise catalog show ID' for names, figures and sources)"
    )
    heads = ("id", "status", *CHIP_COLUMNS, "year")
    full = [_widest([h, *(r[i] for r in rows)]) for i, h in enumerate(heads)]
    narrow = sum(full) + len(full) - 1 > console.width
    for i, col in enumerate(heads):
        marked = col in CHIP_COLUMNS
        table.add_column(
            col,
            justify="left" if col in ("id", "status") else "right",
            no_wrap=not marked,
            width=_widest([col, *(r[i].split(" (")[0] for r in rows)]) if marked and narrow else None,
        )
    for row in rows:
        table.add_row(*row)
    console.print(table)


@app.command("list")
def list_(
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: SourcesFlag = False,
) -> None:
    """List every chip and system in the catalog."""
    cat = catalog_from(catalog_files, sets)
    if as_json:  # what a --set or --catalog changed, as every command's --json names it (catalog's had not)
        print_json({**list_json(cat), "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)  # trn2's HBM at x1.1 had read 3.19 TB/s in a row of status spec, with no word of the --set
    _print_chip_table(cat)
    console.print(STATUS_LEGEND, highlight=False)
    console.print()
    systems = compact_table("Systems (* projected: announced, not shipping)")
    for col in ("id", "chip", "chips", "scale-up", "scale-out", "kW"):
        # the power's status mark wraps under it where the terminal is narrow ("10,000" over "(e)"), not cut
        systems.add_column(col, justify="right" if col in ("chips", "kW") else "left", no_wrap=col != "kW")
    for sid, s in cat.systems.items():
        dims = "x".join(str(d) for d in s.scaleup.dims)
        up = f"torus {dims}" if s.scaleup.kind == "torus" and dims else f"{s.scaleup.kind} {s.scaleup.size}"
        ident = sid if s.status == "spec" else f"{sid} [yellow]*[/]"
        chip = "+".join(s.members) if s.members else s.chip  # a hybrid rack holds two chip types
        systems.add_row(ident, chip, str(s.chips), up, s.scaleout.fabric, _in_unit(s.power, 1e3))
    console.print(systems)
    console.print(STATUS_LEGEND, highlight=False)
    if sources:
        _print_sources(cat, [(cid, _figures(c)) for cid, c in cat.chips.items()])


@app.command("prices")
def prices(
    chip: Annotated[str | None, typer.Option("--chip", help="A chip id or alias: its prices and its systems'.")] = None,
    provider: Annotated[str | None, typer.Option("--provider", help="A provider, e.g. aws, gcp, neocloud.")] = None,
    region: Annotated[
        str | None, typer.Option("--region", help="A region, e.g. us-east-1 (prices given for no region hold there).")
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: SourcesFlag = False,
) -> None:
    """List the rental prices (per chip-hour, mode, region, date, status), by --chip, --provider or --region."""
    cat = catalog_from(catalog_files, sets)
    data = prices_json(cat, chip, provider, region)
    if as_json:
        print_json({**data, "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)
    print_prices(data, sources)


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
            table.add_row(ident, name, _figure_text(name, fig), status, origin)
    console.print(table)


#: a source key as the catalog's texts cite one ('see EFA_NOTE', '(BOM_NOTE)')
_KEY = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z]{3,}[0-9]*\b")


def cited_keys(cat: Catalog, texts: Iterable[str]) -> dict[str, str]:
    """The catalog's source keys `texts` name in passing (a derivation's '(BOM_NOTE)'), each with its citation: no
    command had said what they stand for."""
    found = (k for t in texts for k in _KEY.findall(str(t)))
    return {k: cat.sources[k] for k in dict.fromkeys(found) if k in cat.sources}


def _origin(cat: Catalog, fig: Figure) -> str:
    """A figure's derivation, or else its sources' text: the table's 'source / derivation' cell."""
    return fig.derivation if fig.derivation else "; ".join(cat.source_text(s) for s in fig.source)


def _with_unit(value: object, unit: str) -> str:
    """A figure and its unit, as the catalog states it (69.0 us) but for a float's rounding noise (a scaled --set had
    read 75.9000000001); a ratio (unit '1') bare: an efficiency of 0.8, not '0.8 1'."""
    text = f"{value:.10g}" if isinstance(value, float) and not value.is_integer() else str(value)
    return text if unit in ("1", "") else f"{text} {unit}"


def _figure_text(name: str, fig: Figure, unit: str = "") -> str:
    """A figure as a table shows it (common.figure_text: 144 GiB, not 144.0; 5.39 TB/s, not 5.390000000000001),
    in `unit` where given (the built-in catalog's, for a figure a --set gave in SI), and a calendar year bare
    (launch_year 2024, not '2024 year'; a duration in years keeps its unit)."""
    if name.endswith("_year"):
        return fmt.value_text(fig.value, "")
    return figure_text(fig, unit)


def _builtin_units(kind: str, ident: str) -> dict[str, str]:
    """The unit of each figure of a chip, system or fabric in the built-in catalog (none for an entry a --catalog
    file added), for `catalog show` to give a --set figure in."""
    builtin = load_catalog()
    by_kind: dict[str, dict[str, Any]] = {"chip": builtin.chips, "system": builtin.systems, "fabric": builtin.fabrics}
    entries = by_kind[kind]
    return {k: f.unit for k, f in _figures(entries[ident]).items()} if ident in entries else {}


#: the type of each engine figure, from the profile it builds (EngineProfile's fields; a time's carries '_s'), and
#: the engine's capabilities, switches read beside the profile (serve.engine.CAPABILITIES: yes or no, not 1.0)
_ENGINE_TYPES = {f.name.removesuffix("_s"): str(f.type) for f in fields(EngineProfile)} | dict.fromkeys(
    CAPABILITIES, "bool"
)


def _engine_text(key: str, fig: Figure) -> str:
    """An engine figure as a table shows it: a flag as yes or no (chunked_prefill, not 1.0), a count whole
    (block_tokens 16, not 16.0), the rest as the catalog states it (69.0 us)."""
    kind = _ENGINE_TYPES.get(key)
    if kind == "bool" and not isinstance(fig.value, str):
        return fmt.yes_no(fig.value)
    if kind == "int" and isinstance(fig.value, float) and fig.value.is_integer():
        return _with_unit(int(fig.value), fig.unit)
    return _with_unit(fig.value, fig.unit)


@app.command("show")
def show(
    ident: Annotated[
        str, typer.Argument(help="A chip, system or fabric id (or alias), or efficiency.FAMILY.", metavar="ID")
    ],
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: SourcesFlag = False,
) -> None:
    """Show every figure of one chip, system or fabric, with its status (and sources with --sources); a chip
    family's efficiency factors with efficiency.FAMILY (catalog show CHIP names its family)."""
    cat = catalog_from(catalog_files, sets)
    key = ident.strip().lower()
    if key.startswith(EFFICIENCY_PREFIX):
        _show_efficiency(cat, key.removeprefix(EFFICIENCY_PREFIX), as_json, sources)
        return
    data, figs = _shown(cat, ident)
    cited = data.pop("cited")
    if as_json:
        print_json({**data, "cited": cited, "what_if": whatif_lines(cat)})
        return
    # it had marked the shown entry's --set rows alone ('estimate', 'what-if override'): a --catalog file's changes
    # and a --set of another entry went unsaid
    whatif_banner(cat)
    rows = _system_rows(data) + _inherited_rows(cat, data["id"]) if data["kind"] == "system" else []
    units = _builtin_units(data["kind"], data["id"])
    for name, fig in figs.items():
        note = "; ".join(t for t in (fig.note, _alternatives_text(fig, sources)) if t)
        rows.append((name, _figure_text(name, fig, units.get(name, "")), fig.status, _origin(cat, fig), note))
    table = Table(title=_show_title(cat, data), header_style="bold")
    # the figure column as wide as its longest name: folded to fit, 'scaleup.dim_bandwidth.0' had broken mid-word
    # ('scaleup.dim_bandwidt' / 'h.0') while the value and note columns, which wrap at spaces, kept their width
    table.add_column("figure", overflow="fold", width=max(len("figure"), *(len(row[0]) for row in rows)))
    for col in ("value", "status") + (("source / derivation", "note") if sources else ("note",)):
        table.add_column(col, overflow="fold")
    for name, value, status, origin, note in rows:
        table.add_row(name, value, status, *((origin,) if sources else ()), note)
    console.print(table)
    rental = data.get("rental")
    if rental:
        origin = rental.get("derivation") or "; ".join(rental["source_text"])
        # no ': ' where there is nothing to say (tpu-v6e-256's rental has a derivation, shown with --sources, no note)
        said = "; ".join(t for t in (rental["note"], origin if sources else "") if t)
        console.print(
            escape(
                "rented in units of "
                + (f"{', '.join(map(str, rental['chips']))} chips" if rental["chips"] else "any number of chips")
                + "".join(f"; {mode}: {', '.join(map(str, c))} chips" for mode, c in rental["modes"].items())
                + f" ({rental['status']})"
                + (f": {said}" if said else "")
            )
        )
    _print_price_section(data, sources)
    if sources:  # a derivation's or note's 'see EFA_NOTE', 'BOM_NOTE': the source each key names
        for key, text in cited.items():
            console.print(escape(f"{key}: {text}"), highlight=False)
    if sources and data["kind"] == "chip":  # the factors every compute term of the chip is scaled by
        family = cat.chips[data["id"]].family
        console.print(f"efficiency factors of its family: chipwise catalog show {EFFICIENCY_PREFIX}{family} --sources")


def show_json(cat: Catalog, ident: str) -> dict[str, Any]:
    """`catalog show ID --json` (and chipwise.api.catalog_show): a chip's, system's or fabric's figures, or a chip
    family's efficiency factors (efficiency.FAMILY)."""
    key = ident.strip().lower()
    if key.startswith(EFFICIENCY_PREFIX):
        return efficiency_json(cat, key.removeprefix(EFFICIENCY_PREFIX))
    return _shown(cat, ident)[0]


def _shown(cat: Catalog, ident: str) -> tuple[dict[str, Any], dict[str, Figure]]:
    """What `catalog show` gives of a chip, system or fabric: its JSON record (with the source keys its texts
    cite) and its figures by name."""
    hw = hardware(cat)
    key = ident.strip().lower()
    if key in cat.fabrics:
        fab = cat.fabrics[key]
        data: dict[str, Any] = {
            "id": key,
            "kind": "fabric",
            "name": fab.name,
            "figures": {k: figure_json(cat, f, k) for k, f in _figures(fab).items()},
        }
        figs = _figures(fab)
    else:
        try:
            system = hw.system(ident)
        except UnknownNameError:
            raise UnknownNameError(
                "chip, system or fabric",
                ident,
                list(cat.chips) + list(cat.systems) + list(cat.fabrics),
                # the catalog's help names its prices beside its chips: 'show prices' had been told only of ids
                hint="'chipwise catalog prices' lists the prices" if key == "prices" else "",
            ) from None
        is_chip = key in cat.chips or any(key in (a.lower() for a in c.aliases) for c in cat.chips.values())
        if is_chip:
            cid = hw.chip(ident).id
            data = {"kind": "chip", **chip_json(cat, cid)}
            figs = _figures(cat.chips[cid])
        else:
            data = {"kind": "system", **system_json(cat, system.id)}
            figs = _figures(cat.systems[system.id])
    # the source keys its texts name in passing, with their citations
    return {**data, "cited": cited_keys(cat, [json.dumps(data)])}, figs


#: `catalog show efficiency.FAMILY`: a chip family's efficiency factors (efficiency.yaml), as a prediction's figures
#: name them (efficiency.trainium2.matmul.bf16)
EFFICIENCY_PREFIX = "efficiency."


def _cited(cat: Catalog, fig: Figure) -> dict[str, str]:
    """The source keys a figure cites (its source list; the efficiency factors whose derivations name a key list it
    there too), with their citations."""
    return {k: cat.sources[k] for k in dict.fromkeys(fig.source) if k in cat.sources}


def _efficiency_figures(cat: Catalog, family: str) -> dict[str, tuple[Figure, str]]:
    """A chip family's efficiency factors by name, each the family's own or else the default family's (as
    hardware.build.build_efficiency takes them), with where it comes from."""
    if family not in cat.efficiency:
        raise UnknownNameError(
            "efficiency family",
            family,
            cat.efficiency,
            hint="give one of the families 'chipwise catalog show CHIP' names (efficiency.hopper)",
        )
    base = {n: (f, "default") for n, f in _figures(cat.efficiency.get("default", {})).items()}
    return dict(sorted((base | {n: (f, family) for n, f in _figures(cat.efficiency[family]).items()}).items()))


def efficiency_json(cat: Catalog, family: str) -> dict[str, Any]:
    """`catalog show efficiency.FAMILY --json`: the family's factors with their derivations and cited sources."""
    return {
        "id": family,
        "kind": "efficiency",
        "chips": sorted(cid for cid, c in cat.chips.items() if c.family == family),
        "figures": {
            n: {**figure_json(cat, f, n), "from": origin, "derivation": f.derivation, "cited": _cited(cat, f)}
            for n, (f, origin) in _efficiency_figures(cat, family).items()
        },
    }


def _show_efficiency(cat: Catalog, family: str, as_json: bool, sources: bool) -> None:
    """A chip family's efficiency factors (_efficiency_figures), with its derivation and the sources it cites."""
    figs = _efficiency_figures(cat, family)
    users = sorted(cid for cid, c in cat.chips.items() if c.family == family)
    if as_json:
        print_json({**efficiency_json(cat, family), "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)
    table = Table(title=f"Efficiency factors of {family} ({', '.join(users) or 'no chip'})", header_style="bold")
    for col in ("figure", "value", "status", "from") + (("source / derivation",) if sources else ()):
        table.add_column(col, overflow="fold")
    for name, (fig, origin) in figs.items():
        cited = "".join(f"\n{k}: {text}" for k, text in _cited(cat, fig).items())
        cell = (fig.derivation or "; ".join(cat.source_text(s) for s in fig.source)) + cited
        table.add_row(name, _figure_text(name, fig), fig.status, origin, *((escape(cell),) if sources else ()))
    console.print(table)


def _print_price_section(data: dict[str, Any], sources: bool) -> None:
    """`catalog show`'s prices of a chip or system: a heading naming what `--set` calls them (ID.price[.MODE], which
    the figure table has no row for: 'h100-sxm.price=2' had been pointed to a list without it) and where all the
    chip's prices are tabled, then one line each (_price_line)."""
    if data["kind"] not in ("chip", "system"):
        return
    chips = [data["id"]] if data["kind"] == "chip" else list(data["members"]) or [data["chip"]]
    tables = ", ".join(f"'chipwise catalog prices --chip {c}'" for c in chips)  # a hybrid's: each member's
    console.print(
        escape(
            f"price ({len(data['prices']) or 'none'}; as a table: {tables}; a what-if one: --set "
            f"{data['id']}.price[.MODE]=USD/h):"
        ),
        highlight=False,
    )
    for p in data["prices"]:
        console.print(escape(_price_line(p, sources, bool(data.get("members")))))


def _price_line(p: dict[str, Any], sources: bool, members: bool = False) -> str:
    """One price of `catalog show`: its mode, provider and region, the value per system-hour of the system it is
    for (a chip's systems differ: trn1.32xlarge and trn1n.32xlarge) with its value per chip-hour, or per chip-hour
    (of which member chip, in a hybrid system), its date and status, and whether a later price of the same offer
    replaces it."""
    origin = p.get("derivation") or "; ".join(p.get("source_text", []))
    of = f" of {p['system']}" if p.get("system") else (f" of {p['chip']}" if members else "")
    if p.get("system"):
        of += f" = ${p['usd_per_chip_hour']:,.2f}/chip-hour"
    newer = p.get("superseded_by")
    replaced = f"; superseded by ${newer['value']} of {newer['date']}" if newer else ""
    offer = " ".join(x for x in (p["mode"], p.get("provider"), p.get("region")) if x)
    return (
        f"price: {offer} ${p['value']}/{p['basis']}{of} "
        f"({', '.join(x for x in (p.get('date'), p['status']) if x)}{replaced})"
        + (f": {origin}" if sources and origin else "")
    )


#: what an entry's status says of the product, in `catalog show`'s title: an `announced` product was announced by
#: its vendor; a `projected` entry only has figures derived from announced ratios or roadmaps, so its title must not
#: call it announced (the Trainium4 + GB300 rack, which no vendor has announced, had read 'announced, not shipping')
NOT_SHIPPING = {"announced": "announced, not shipping", "projected": "figures projected, not shipping"}


def _show_title(cat: Catalog, data: dict[str, Any]) -> str:
    """'ID - name', with the projected banner where the entry is projected or announced (or, for a system, its
    chip is), saying which, its PROJECTED once: a name that says it already ('... (PROJECTED hybrid)') is followed
    by what it means only."""
    title = f"{data['id']} - {data['name']}"
    if data.get("projected"):
        said = "projected" in str(data["name"]).lower()
        what = NOT_SHIPPING.get(data["status"])
        if what is None:  # a shipping system of a chip that is not: the chip's status tells
            what = f"chip {data['chip']}: {NOT_SHIPPING[cat.chips[data['chip']].status]}"
        title += f"  [yellow]({'' if said else 'PROJECTED: '}{what})[/]"
    return title


def _system_rows(data: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """A system's make-up as rows of its figure table (figure, value, status, origin, note), as its --json gives
    it: its chips (a hybrid's members, each type and count), scale-up domain and scale-out fabric."""
    members = data["members"] or {data["chip"]: data["chips"]}
    chips = " + ".join(f"{count} x {chip}" for chip, count in members.items())
    if len(members) > 1:
        chips = f"{data['chips']}: {chips}"
    up = data["scaleup"]
    shape = f"{up['kind']} {'x'.join(map(str, up['dims']))}" if up["dims"] else up["kind"]
    status = str(data["status"])
    out = str(data["scaleout_fabric"])
    # a one-chip domain may name no fabric (the loader refuses none for a larger one): 'over ' had ended the line
    over = up["fabric"] or "no scale-up fabric (one chip)"
    origin = "; ".join(data.get("source") or ()) or str(data.get("note") or "")  # the system's sources
    rows = [
        ("chips", chips, status, origin, "members of a hybrid system" if len(members) > 1 else ""),
        ("scale-up", f"{shape} domain of {up['size']} chips over {over}", status, origin, _see(up["fabric"])),
        ("scale-out", out, status, origin, _see(out)),
    ]
    if data.get("host"):
        rows.append(("host", str(data["host"]), status, origin, ""))
    return rows


def _inherited_rows(cat: Catalog, sid: str) -> list[tuple[str, str, str, str, str]]:
    """The scale-up bandwidth a system takes from its chip (it gives none of its own, neither a total nor a torus
    dimension's), as a row of its figure table: every collective in its domain runs on it, and a trn3-ultraserver's
    table had shown no scale-up bandwidth at all. None for a hybrid, whose links each carry their own."""
    entry = cat.systems[sid]
    if entry.members or entry.scaleup.bandwidth is not None or entry.scaleup.dim_bandwidth:
        return []
    fig = cat.chips[entry.chip].scaleup_bandwidth
    unit = _builtin_units("chip", entry.chip).get("scaleup_bandwidth", "")
    note = f"from chip {entry.chip}" + (f"; {fig.note}" if fig.note else "")
    return [("scaleup.bandwidth", _figure_text("scaleup_bandwidth", fig, unit), fig.status, _origin(cat, fig), note)]


def _see(fabric: str) -> str:
    """Where a fabric's own figures are shown."""
    return f"'chipwise catalog show {fabric}' for its figures" if fabric else ""


def _chip_family(cat: Catalog, chip: str) -> tuple[str, str]:
    """(family, vendor) of a chip family named directly, or of a chip id or alias; one line for an empty --chip (''
    had read as no --chip, and shown the engine's figures on no family)."""
    key = chip.strip().lower()
    if not key:
        raise ChipwiseError(
            "--chip is empty. Fix: give a chip id, alias or chip family ('chipwise catalog list' lists them), or leave "
            "--chip out for the engine's own figures."
        )
    named = next((c for c in cat.chips.values() if c.family == key), None)
    if named is not None:
        return named.family, named.vendor
    try:
        found = hardware(cat).chip(chip)
    except UnknownNameError:
        # the families among the near matches and in the fix: '--chip hoper' had been offered neither 'hopper' nor
        # the families the option takes, only the chips and systems
        families = sorted({c.family for c in cat.chips.values()})
        raise UnknownNameError(
            "chip, system or chip family",
            chip,
            [*cat.chips, *cat.systems, *families],
            hint=f"give a chip family ({', '.join(families)}) or a chip or system id ('chipwise catalog list' lists "
            "them)",
        ) from None
    return found.family, found.vendor


def engine_json(cat: Catalog, name: str, chip: str | None = None) -> dict[str, Any]:
    """`catalog engine ENGINE [--chip ID] --json` (and chipwise.api.catalog_engine): every figure the engine is
    priced with on the chip's family, the level each comes from, and the track record on that family. The engine is
    the one predict runs on that family's chips (serve.engine.served_as: vllm on an AWS chip is vllm-neuron, whose
    figures it had shown as GPU vLLM's); `engine_asked` is the name given."""
    asked = check_engine_name(name)
    family, vendor = _chip_family(cat, chip) if chip is not None else ("", "")
    name = served_as(asked, vendor) if family else asked
    if family:
        engine_profile(cat, name, family)  # a one-line error where the engine does not run on the family's chips
    fitted = bool(family) and engine_fitted(cat, name, family)
    return {
        "engine": name,
        "engine_asked": asked,
        "chip_family": family or None,
        "projected_chips": [
            cid for cid, c in cat.chips.items() if c.family == family and c.status in ("projected", "announced")
        ],
        "fitted": fitted,
        "carried_from": engine_carried_from(cat, name, family) if fitted else None,
        "figures": {
            k: {**figure_json(cat, f, k), "level": level} for k, (f, level) in engine_figures(cat, name, family).items()
        },
        "track_record": track_record("serve", (family, vendor), name) if family else {},
    }


@app.command("engine")
def engine(
    name: Annotated[str, typer.Argument(help=f"A serving engine family: {', '.join(ENGINES)}.", metavar="ENGINE")],
    chip: Annotated[
        str | None,
        typer.Option("--chip", help="A chip id, alias or chip family: the figures the engine takes on it."),
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    sources: SourcesFlag = False,
) -> None:
    """Show every figure a serving engine is priced with (on a chip family with --chip), the catalog level each
    comes from (the defaults, an engine family, or a fit on the family), and with --sources its derivation; with
    --chip, how far its predictions have been from the published runs of the engine on the family (the track
    record)."""
    cat = catalog_from(catalog_files, sets)
    data = engine_json(cat, name, chip)
    if as_json:
        print_json({**data, "what_if": whatif_lines(cat)})
        return
    name, family, fitted, carried = data["engine"], data["chip_family"] or "", data["fitted"], data["carried_from"]
    if data["engine_asked"] != name:
        console.print(f"{data['engine_asked']} on {family} chips runs as {name}: its figures are shown")
    figs = engine_figures(cat, name, family)
    projected, record = data["projected_chips"], data["track_record"]
    if not family:
        state = "no chip family given: the engine's own figures over the defaults (--chip for a family's fit)"
    elif not fitted:
        state = f"no serving run of {name} on {family} was fitted: its figures are the engine's own"
    elif carried:
        state = (
            f"no serving run of {name} on {family} was fitted: the figures marked from {carried} are carried from its "
            "fit, the others are the engine's own"
        )
    else:
        state = f"fitted to serving runs of {name} on {family}"
    whatif_banner(cat)  # a figure set on the command line had read as the catalog's own fit
    mark = f" [yellow](PROJECTED: {', '.join(projected)}, announced, not shipping)[/]" if projected else ""
    table = Table(title=f"{name}" + (f" on {family}" if family else "") + f"{mark} - {state}", header_style="bold")
    for col in ("figure", "value", "status", "from") + (("source / derivation",) if sources else ()):
        table.add_column(col, overflow="fold")
    for key, (fig, level) in figs.items():
        # a carried family's figures sit under the family in the catalog but are the fit they were carried from
        row = [
            key,
            _engine_text(key, fig),
            fig.status,
            carried if carried and level.endswith(f" on {family}") and key not in CAPABILITIES else level,
        ]
        if sources:
            row.append(_origin(cat, fig))
        table.add_row(*row)
    console.print(table)
    print_track_record(record)
