"""`chipwise tco HARDWARE`: the owned-fleet cost of one chip-hour, every term with its source, and the
utilisation at which owning beats renting.

Its command imports the TCO model when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from chipwise.hardware import hardware
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    console,
    print_json,
    projected_banner,
    whatif_banner,
    whatif_lines,
)

#: what a cost option left out is: the figure the catalog gives the chip or system (`tco` lists it under Inputs)
CATALOGS = "(default: the catalog's)"


def tco(
    hardware_id: Annotated[str, typer.Argument(metavar="HARDWARE", help="A chip or system id (h100-sxm, dgx-h100).")],
    region: Annotated[
        str | None, typer.Option("--region", help="Where the fleet runs (electricity and grid); default country-usa.")
    ] = None,
    utilisation: Annotated[
        float, typer.Option("--utilisation", help="Share of calendar hours the chips do paid work, 0.01 to 1.")
    ] = 1.0,
    pue: Annotated[float | None, typer.Option("--pue", help="Override the PUE (>= 1); default colocation.")] = None,
    facility: Annotated[
        str, typer.Option("--facility", help="colocation (rent space and power) or owned (build the datacenter).")
    ] = "colocation",
    compare: Annotated[
        str, typer.Option("--compare", help="Rental mode to break even against: on-demand, reserved-1y, ...")
    ] = "on-demand",
    chip_price: Annotated[
        float | None, typer.Option("--chip-price", help=f"Accelerator price, USD {CATALOGS}.")
    ] = None,
    server: Annotated[
        float | None, typer.Option("--server", help=f"Server (non-accelerator) capex per chip, USD {CATALOGS}.")
    ] = None,
    scaleup_network: Annotated[
        float | None, typer.Option("--scaleup-network", help=f"Scale-up network capex per chip, USD {CATALOGS}.")
    ] = None,
    scaleout_network: Annotated[
        float | None, typer.Option("--scaleout-network", help=f"Scale-out network capex per chip, USD {CATALOGS}.")
    ] = None,
    storage: Annotated[float | None, typer.Option("--storage", help=f"Storage capex per chip, USD {CATALOGS}.")] = None,
    depreciation_years: Annotated[
        float | None,
        typer.Option(
            "--depreciation-years", help=f"Useful life of the capex, years, over which it is depreciated {CATALOGS}."
        ),
    ] = None,
    operations: Annotated[
        float | None, typer.Option("--operations", help=f"Operations cost per year as a fraction of capex {CATALOGS}.")
    ] = None,
    colocation: Annotated[
        float | None, typer.Option("--colocation", help=f"Colocation USD per kW-month {CATALOGS}.")
    ] = None,
    electricity: Annotated[
        float | None, typer.Option("--electricity", help="Electricity USD per kWh (default: the region's).")
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """Owned-fleet TCO per chip-hour: capex (chip, server, networks, storage) depreciated, operations,
    colocation and energy x PUE, each term with its source; and the break-even utilisation against renting."""
    from chipwise.economics.tco import owned_tco, tco_report

    cat = catalog_from(catalog_files, sets)
    given = {
        "chip_price_usd": chip_price,
        "server_usd_per_chip": server,
        "scaleup_network_usd_per_chip": scaleup_network,
        "scaleout_network_usd_per_chip": scaleout_network,
        "storage_usd_per_chip": storage,
        "depreciation_years": depreciation_years,
        "operations_fraction": operations,
        "colocation_usd_per_kw_month": colocation,
        "electricity_usd_per_kwh": electricity,
    }
    system = hardware(cat).system(hardware_id)
    overrides = {k: v for k, v in given.items() if v is not None}
    report = tco_report(cat, owned_tco(cat, system, region, utilisation, pue, facility, overrides), compare)
    if as_json:
        print_json({**report, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_tco(report)


def _hourly(value: float, places: int) -> str:
    """A chip-hour's dollars to `places` decimals ('$2.345'); past a thousand, whole dollars with separators
    ('$1,590,400,001', not '$1590400001.491'), and past a trillion as format.usd writes it."""
    if abs(value) >= 1e12:
        return fmt.usd(value)
    return f"${value:,.0f}" if abs(value) >= 1000 else f"${value:.{places}f}"


def _share(value: float, total: float) -> str:
    """A term's share of the total; '-' where the total is zero (every input given as 0 had raised
    ZeroDivisionError)."""
    return fmt.share(value / total) if total > 0 else "-"


def _input_text(f: dict[str, Any]) -> str:
    """An input as the lines above it write money: '$27,500', '$184.06/kW/month', '$0.0862/kWh'; a duration
    '5 years'; the rest as a catalog table shows a figure (format.number_text: 0.04, not '0.04 1'; 700 W, not
    700.0 W)."""
    value, unit = f["value"], str(f.get("unit") or "")
    if isinstance(value, str):
        return fmt.figure_value(f)
    if unit == "USD" or unit.startswith("USD/"):
        cents = f"${value:,.2f}" if abs(value) >= 1 else f"${value:.4g}"
        money = f"${value:,.0f}" if float(value).is_integer() else cents
        return money + unit.removeprefix("USD")
    if unit == "year":
        return f"{fmt.number_text(value)} year" + ("" if value == 1 else "s")
    return fmt.value_text(value, unit)


def print_tco(r: dict[str, Any]) -> None:
    projected_banner([r["hardware"]] if r.get("projected") else [])
    total = r["usd_per_chip_hour"]
    t = Table(
        title=f"Owned {r['hardware']} ({r['system']}), {r['facility']}, {r['region']}, "
        f"utilisation {fmt.percent(r['utilisation'])}: {_hourly(total, 3)} per chip-hour used",
        header_style="bold",
    )
    for c in ("term", "$/chip-hour", "share", "formula"):
        t.add_column(c, justify="right" if c in ("$/chip-hour", "share") else "left", overflow="fold")
    for name, v in r["terms_usd_per_chip_hour"].items():
        t.add_row(name, _hourly(v, 4).lstrip("$"), _share(v, total), r["formulas"].get(name, ""))
    t.add_row(
        "[bold]total[/]",
        f"[bold]{_hourly(total, 4).lstrip('$')}[/]",
        "100.0%" if total > 0 else "-",
        r["formulas"]["usd_per_chip_hour"],
    )
    console.print(t)
    capex = r["capex_usd_per_chip_by_part"]
    console.print(
        f"capex per chip ${r['capex_usd_per_chip']:,.0f} = "
        + " + ".join(f"{k} ${v:,.0f}" for k, v in capex.items())
        + f"; power per chip {r['power_w_per_chip']['it_busy']:,.0f} W IT busy, "
        f"{r['power_w_per_chip']['it_idle']:,.0f} W idle, {r['power_w_per_chip']['it_rated']:,.0f} W rated",
        style="dim",
    )
    src = Table(title="Inputs", header_style="bold")
    for c in ("input", "value", "status", "source / derivation"):
        src.add_column(c, overflow="fold")
    for name, f in r["inputs"].items():
        text = f.get("derivation") or "; ".join(f["source"]) or ""
        src.add_row(name, _input_text(f), f["status"], escape(text))
    console.print(src)
    if r["break_even"]:
        own = any(q.get("this_system") for q in r["break_even"])
        be = Table(
            title="Owning vs renting: break-even utilisation"
            if r["break_even"][0].get("verdict") is None
            else f"Owning vs renting {r['compare']}, paid every hour of its term (u: the owned chips' utilisation)",
            caption=f"* {r['system']}'s own price, the one predict and plan train use for it"
            if own
            else escape(
                f"{r['system']} has no {r['compare']} price ({r['break_even_note']}): predict and plan train "
                "leave it '-'; the prices above are other systems' of its chip"
            ),
            caption_justify="left",
            header_style="bold",
        )
        last = "own when utilisation >" if r["break_even"][0].get("verdict") is None else "cheaper"
        for c in ("provider", "region", "price of", "mode", "$/chip-hour", "status", last):
            # folded, not cut: at 80 columns the providers, regions and headers had read 'hyperst…', 'us-east…'
            be.add_column(
                c,
                justify="right" if c in ("$/chip-hour", last) else "left",
                overflow="fold",
                no_wrap=c == last == "cheaper",
            )
        notes = []
        for q in r["break_even"]:
            u = q["break_even_utilisation"]
            mark = ""
            if q.get("derivation"):
                notes.append(q["derivation"])
                mark = f" [{len(notes)}]"
            be.add_row(
                q["provider"],
                q["region"],
                q.get("entry", "") + (" *" if q.get("this_system") else ""),
                q["mode"],
                f"{q['usd_per_chip_hour']:.2f}",
                q["status"] + escape(mark),
                # a reservation is paid every hour of its term: a verdict, not a utilisation (economics.tco), short
                # enough for 80 columns (the sentence had folded to 'utilisat / ion')
                _verdict_cell(q) if q.get("verdict") else fmt.percent(u) if u is not None else "never",
            )
        console.print(be)
        for i, note in enumerate(notes, start=1):
            console.print(escape(f"[{i}] {note}"), style="dim", highlight=False)
    elif r.get("break_even_note"):
        console.print(f"[yellow]no break-even against {r['compare']} prices: {escape(r['break_even_note'])}[/]")


def _verdict_cell(row: dict[str, Any]) -> str:
    """A reservation row's verdict in a few words, by its code (economics.tco.commitment_verdict): 'own, any u',
    'rent, any u' or 'own if u < 71.4%'."""
    if row["cheaper"] == "own below":
        return f"own if u < {fmt.percent(row['own_cheaper_below_utilisation'])}"
    return f"{row['cheaper']}, any u"
