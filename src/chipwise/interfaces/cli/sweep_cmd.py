"""`chipwise sweep run|show|export`: what-if grids into a DuckDB store (docs/sweep.md).

`chipwise sweep SWEEP.yaml ...` is short for `chipwise sweep run SWEEP.yaml ...`, and `--ray` takes an optional
address (`--ray` alone starts a local Ray or joins RAY_ADDRESS).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text
from typer.core import TyperGroup

from chipwise.catalog.loader import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    JsonFlag,
    compact_table,
    console,
    err_console,
    print_json,
    print_model_notes,
)
from chipwise.sweep import RunStats, Store, export_store, load_sweep, run_sweep
from chipwise.sweep.check import text_values
from chipwise.sweep.runner import MAX_POINTS, check_backend
from chipwise.sweep.store import TIE_BREAKS, is_store

LOCAL_RAY = "local"  # what a bare --ray means: start a local Ray (or join RAY_ADDRESS)
_SWEEP_SUFFIXES = (".yaml", ".yml", ".json")


class _SweepGroup(TyperGroup):
    """`sweep FILE` runs FILE; a bare `--ray` (no address after it) means a local Ray."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:  # options first too
            first = args[0]
            # a mistyped command ('shwo') is not a sweep file: it had read "sweep file 'shwo' does not exist"
            close = difflib.get_close_matches(first, list(self.commands), n=1)
            if close and not first.startswith("-") and not _sweep_file_like(first):
                ctx.fail(f"No such command '{first}'. Did you mean '{close[0]}'?")
            args = ["run", *args]
        fixed: list[str] = []
        for i, arg in enumerate(args):
            nxt = args[i + 1] if i + 1 < len(args) else None
            bare = nxt is None or nxt.startswith("-") or nxt.endswith(_SWEEP_SUFFIXES)
            fixed.append(f"--ray={LOCAL_RAY}" if arg == "--ray" and bare else arg)
        return super().parse_args(ctx, fixed)


def _sweep_file_like(word: str) -> bool:
    """Whether a word after `sweep` names a sweep file: by its suffix, or a file that exists."""
    return word.lower().endswith(_SWEEP_SUFFIXES) or Path(word).is_file()


app = typer.Typer(
    cls=_SweepGroup,
    help="Run what-if grids (hypothetical chips included) into a DuckDB store; show and export the results. "
    "'chipwise sweep FILE' is short for 'chipwise sweep run FILE'.",
    no_args_is_help=True,
)

StoreArg = Annotated[Path, typer.Argument(help="A DuckDB store written by 'chipwise sweep run'.", show_default=False)]


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f} points/s" if speed else "- points/s", style="progress.data.speed")


def _progress_bar(label: str) -> tuple[Progress, Any]:
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TextColumn("{task.fields[errors]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
        disable=not err_console.is_terminal,
    )
    task = bar.add_task(label, total=None, errors="")

    told: list[int] = []  # the points listed, then the distinct ones (run_sweep's first two calls)

    def update(done: int, total: int, errors: int) -> None:
        if not told:  # the first call, before the points are listed: a large sweep says its size at once
            err_console.print(f"{label}: {_count(total)} listed in the sweep file")
        elif len(told) == 1 and total != told[0]:  # a value listed twice ([8, 8.0]) runs once
            err_console.print(f"{label}: {_count(total, 'distinct point')} (a point listed twice runs once)")
        if len(told) < 2:
            told.append(total)
        bar.update(task, completed=done, total=total, errors=f"{errors:,} errors" if errors else "")

    return bar, update


@app.command("run")
def run(
    sweep_file: Annotated[Path, typer.Argument(help="The sweep YAML file (docs/sweep.md).", show_default=False)],
    store: Annotated[Path, typer.Option("--store", help="The DuckDB file to write (created if missing).")] = Path(
        "sweep.duckdb"
    ),
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Local worker processes (default: one per CPU, in-process for up to 64 points; 1: in-process).",
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="Run on Ray (chipwise's ray extra): alone, a local Ray; or an address: auto, ray://HOST:PORT.",
            show_default=False,
        ),
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip the points already stored ok; run the rest.")] = False,
    name: Annotated[
        str | None, typer.Option("--name", help="Store the sweep under this name (default: the file's name: key).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help=f"Run a sweep of over {MAX_POINTS:,} points.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Run a sweep: every point of the grid under every what-if, stored as it finishes."""
    check_backend(workers, ray is not None)  # before a model's notes or the sweep's size are printed
    if is_store(sweep_file):
        raise ChipwiseError(
            f"'{sweep_file}' is a sweep store, not a sweep file. Fix: chipwise sweep show {sweep_file} to see it, "
            "or give the sweep YAML file to run."
        )
    spec = load_sweep(sweep_file)
    if name is not None:
        if not name.strip():
            raise ChipwiseError("--name is empty. Fix: give the sweep a name, e.g. --name trn-vs-gpu.")
        spec = dataclasses.replace(spec, name=name.strip())
    for model in text_values(spec, "model"):  # each once; a config.json's notes do not depend on the what-if's catalog
        print_model_notes(load_catalog(), model)
    bar, update = _progress_bar(spec.name)
    try:
        with bar:
            stats = run_sweep(
                spec,
                store,
                workers=workers,
                ray=ray is not None,
                ray_address=None if ray in (None, LOCAL_RAY) else ray,
                resume=resume,
                progress=update,
                max_points=None if yes else MAX_POINTS,
            )
    except KeyboardInterrupt:
        err_console.print(f"the points finished so far are stored in {store}; rerun with --resume to finish.")
        raise
    with Store(store, read_only=True) as db:
        best = db.best_per_what_if(spec.name)
        id_ties = _id_ties(db, spec.name, best)
        errors = db.errors(spec.name)
        axes = _axes(db, spec.name)
    if as_json:
        print_json({"run": stats.as_dict(), "best": [_decoded(r) for r in best], "error_messages": errors})
        return
    _print_stats(stats)
    if best:
        console.print(_best_table(spec.name, best, axes, id_ties))
    _print_errors(errors)


@app.command("show")
def show(
    store: StoreArg,
    top: Annotated[int, typer.Option("--top", min=1, help="Points to list per sweep, best first.")] = 10,
    by: Annotated[str, typer.Option("--by", help="Rank the list by time or cost.")] = "time",
    sweep: Annotated[str | None, typer.Option("--sweep", help="Only this sweep (default: every sweep).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a store: per sweep, its counts, the best point per what-if by time and by cost, and the top points."""
    if by not in ("time", "cost"):
        raise ChipwiseError(f"--by '{by}' is not time or cost. Fix: use --by time or --by cost.")
    out: list[dict[str, Any]] = []
    id_ties: dict[str, list[int]] = {}  # per sweep, the best table's (not a key of --json's)
    with Store(store, read_only=True) as db:
        names = db.sweeps()
        if sweep is not None:
            if sweep not in names:
                raise ChipwiseError(
                    f"store '{store}' has no sweep '{sweep}' (it has: {', '.join(names) or 'none'}). "
                    "Fix: name one of those."
                )
            names = [sweep]
        for name in names:
            best = db.best_per_what_if(name)
            id_ties[name] = _id_ties(db, name, best)
            out.append(
                {
                    **db.counts(name),
                    "outdated": db.outdated(name),
                    "best": [_decoded(r) for r in best],
                    "top": [_decoded(r) for r in db.ranked(name, by, top)],
                    "error_messages": db.errors(name),
                    "axes": _axes(db, name),
                }
            )
    if as_json:
        print_json({"store": str(store), "by": by, "sweeps": out})
        return
    if not out:
        console.print(f"{store} holds no sweeps yet.")
    for s in out:
        console.print(
            f"[bold]{s['sweep']}[/]: {_count(s['points'])} stored ({s['ok']:,} ok, {s['errors']:,} errors) "
            f"of {s['declared_points'] or '?'} in {s['source']}; {fmt.duration(s['cpu_s'] or 0.0)} of compute"
        )
        if s["outdated"]:  # after an upgrade or an edited built-in catalog their figures may have moved
            them = "them" if s["outdated"] > 1 else "it"
            console.print(
                f"[yellow]{_count(s['outdated'])} computed by another chipwise revision (its code or built-in "
                f"catalog)[/]: the figures may have moved since; chipwise sweep run {s['source'] or 'SWEEP.yaml'} "
                f"--store {store} --name {s['sweep']} --resume computes {them} again.",
                highlight=False,
                soft_wrap=True,
            )
        if s["best"]:
            console.print(_best_table(s["sweep"], s["best"], s["axes"], id_ties[s["sweep"]]))
            console.print(_rows_table(f"{s['sweep']}: top {len(s['top'])} by {by}", s["top"], s["axes"]))
        _print_errors(s["error_messages"])


@app.command("export")
def export(
    store: StoreArg,
    parquet: Annotated[Path | None, typer.Option("--parquet", help="Write a Parquet file.")] = None,
    csv: Annotated[Path | None, typer.Option("--csv", help="Write a CSV file.")] = None,
    sweep: Annotated[str | None, typer.Option("--sweep", help="Only this sweep (default: every sweep).")] = None,
) -> None:
    """Export a store to Parquet and/or CSV: one row per point, its status and its flattened prediction."""
    rows = export_store(store, parquet=parquet, csv=csv, sweep=sweep)
    targets = " and ".join(str(p) for p in (parquet, csv) if p is not None)
    err_console.print(f"wrote {rows:,} points to {targets}")


# -- views ---------------------------------------------------------------------------------------------------------
def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row with its JSON columns as objects."""
    out = dict(row)
    for key in ("plan", "breakdown_s", "other", "scenario"):
        if isinstance(out.get(key), str):
            out[key] = json.loads(out[key])
    return out


def _axes(db: Store, sweep: str) -> list[str]:
    """The grid and zip keys of a sweep (from the stored sweep file), to show what each point varies."""
    rows = db.query("SELECT spec FROM sweeps WHERE name = ?", [sweep])
    if not rows:
        return []
    raw = json.loads(rows[0]["spec"])
    keys = list(raw.get("grid") or {})
    zips = raw.get("zip") or {}
    for group in zips if isinstance(zips, list) else [zips]:
        keys += list(group or {})
    return keys


def _point_label(row: dict[str, Any], axes: list[str]) -> str:
    scenario = row["scenario"] if isinstance(row["scenario"], dict) else json.loads(row["scenario"])
    parts = []
    for key in axes:
        if key in ("hardware", "model", "chips"):
            continue  # own columns
        node: Any = scenario
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        parts.append(f"{key}={node}")
    return " ".join(parts)


def _num(value: Any, render: Any) -> str:
    return "-" if value is None else str(render(value))


#: training figures priced for one hour where a sweep gives no tokens (planner.training's economics_basis)
HOURLY_KEYS = ("expected_cost_usd", "expected_co2e_kg")


def _rows_table(title: str, rows: list[dict[str, Any]], axes: list[str], lead: tuple[str, ...] = ()) -> Group:
    """Points in a table narrow enough for a 100-column terminal: figures whole, a model named once in the title
    where every row has it, training figures the expected (goodput-adjusted) ones plan train ranks by."""
    serve = any(r.get("kind") == "serve" for r in rows)
    models = {str(r.get("model") or "-") for r in rows}
    one_model = len(models) == 1
    table = compact_table(title + (f" ({models.pop()})" if one_model else ""))

    def column(header: str, figure: bool = False) -> None:
        table.add_column(header, justify="right" if figure else "left", no_wrap=figure, overflow="fold")

    for name in lead:
        column(name.replace(" ", "\n"))
    column("what-if")
    column("hardware")
    if not one_model:
        column("model")
    column("chips", figure=True)
    with_point = any(_point_label(r, axes) for r in rows)
    if with_point:
        column("point")
    column("plan")
    metrics: list[tuple[str, str, Any]] = (
        [
            ("output\ntok/s", "output_tokens_per_s", lambda v: f"{v:,.0f}"),
            ("TTFT\np99", "ttft_p99_s", fmt.latency),  # as predict writes them: 176 ms, not 176.5 ms
            ("TPOT\np99", "tpot_p99_s", fmt.latency),
            ("SLO", "slo_met", lambda v: "met" if v else "missed"),
            ("$/M\nout", "cost_usd_per_mtok", lambda v: f"{v:.3f}"),
        ]
        if serve
        else [
            ("time to\ntrain", "expected_time_to_train_s", fmt.duration),
            ("tok/s\n/chip", "tokens_per_s_per_chip", lambda v: f"{v:,.0f}"),
            ("MFU", "mfu", fmt.percent),
            ("cost", "expected_cost_usd", fmt.usd),
            ("$/Mtok", "expected_usd_per_million_tokens", fmt.per_mtok),
            ("CO2e", "expected_co2e_kg", lambda v: fmt.carbon(v).replace(" CO2e", "")),
        ]
    )
    for header, _, _ in metrics:
        column(header, figure=True)
    for r in rows:
        cells = [str(r.get(name.replace(" ", "_"), "")) for name in lead]
        hw = str(r.get("hardware") or "-") + (" (proj.)" if r.get("projected") else "")
        cells += [str(r["what_if"]), hw] + ([] if one_model else [str(r.get("model") or "-")])
        cells.append(_num(r.get("chips"), lambda v: f"{v:,}"))
        if with_point:
            cells.append(_point_label(r, axes))
        cells.append(fmt.any_plan(r.get("plan")))
        # a store written before the expected figures were kept has the ideal ones only; a training point without
        # tokens priced an hour of training, and says so beside the whole runs' totals
        hourly = r.get("economics_basis") == "one hour"
        for _, key, render in metrics:
            cell = _num(r.get(key, r.get(key.removeprefix("expected_"))), render)
            cell = cell + "/h" if hourly and key in HOURLY_KEYS and cell != "-" else cell
            if key == "slo_met" and _overloaded(r):
                cell = cell.removesuffix("-") + "*"  # no SLO: '*' alone
            if cell != "-" and key in COST_KEYS and r.get("price_status") == "estimate":
                cell += " §"
            cells.append(cell)
        table.add_row(*cells)
    notes = []
    if any(_overloaded(r) for r in rows):
        notes.append(OVERLOAD_NOTE)
    estimated = [str(r.get("hardware")) for r in rows if r.get("price_status") == "estimate"]
    if estimated:
        notes.append(
            f"§ {', '.join(dict.fromkeys(estimated))}: priced by a catalog estimate, not a published price "
            "(chipwise predict --json: price_source gives its derivation)"
        )
    return Group(table, *(Text(n) for n in notes))  # footnotes at the terminal's width, unpadded


#: the cost cells a catalog's estimated price marks with §, as predict marks them
COST_KEYS = ("expected_cost_usd", "expected_usd_per_million_tokens", "cost_usd_per_mtok")

#: the footnote to a serving point's SLO cell marked * (ranked after every point that carries its load)
OVERLOAD_NOTE = (
    "* offered more requests than it serves (load.utilisation >= 1: its queue grows as long as it runs), so it "
    "ranks after the points that carry their load"
)


def _overloaded(row: dict[str, Any]) -> bool:
    """Whether a serving point is offered more load than its capacity (what Store.ranked sorts last)."""
    other = json.loads(row["other"]) if isinstance(row.get("other"), str) else row.get("other") or {}
    utilisation = other.get("load.utilisation")
    return isinstance(utilisation, int | float) and utilisation >= 1


#: each ranking's figure and what breaks a tie on it (store.TIE_BREAKS), by kind and ranking, for the best table's †
TIES = {
    ("serve", "time"): ("TTFT p99", ("TPOT p99", "$/M out")),
    ("serve", "cost"): ("$/M out", ("TTFT p99", "TPOT p99")),
    ("train", "time"): ("time to train", ("$/Mtok",)),
    ("train", "cost"): ("$/Mtok", ("time to train",)),
}


def _id_ties(db: Store, sweep: str, rows: list[dict[str, Any]]) -> list[int]:
    """Per best row (best_per_what_if), how many of the points tied with it on its figure also tie with it on every
    tie-break (TIE_BREAKS), so that the point id, which Store.ranked orders by last, chose it (0 where untied)."""
    out = []
    for r in rows:
        tied, by, what_if = int(r.get("tied_with") or 0), str(r["best_by"]), str(r["what_if"])
        if not tied:
            out.append(0)
            continue
        ids = [str(x["id"]) for x in db.ranked(sweep, by, tied + 1, what_if)]  # the best, then the points it ties
        breaks = ", ".join(TIE_BREAKS[str(r.get("kind") or "train")][by])
        marks = ", ".join("?" * len(ids))
        found = db.query(
            f"SELECT id, [{breaks}] AS breaks FROM results WHERE sweep = ? AND what_if = ? AND id IN ({marks})",
            [sweep, what_if, *ids],
        )
        values = {str(x["id"]): x["breaks"] for x in found}
        out.append(sum(values[i] == values[ids[0]] for i in ids[1:]))
    return out


def _best_table(sweep: str, rows: list[dict[str, Any]], axes: list[str], id_ties: Sequence[int] = ()) -> Group:
    """The best point per what-if by time and by cost; a best tied with other points on its figure is marked † and
    said so (a serving cost is priced on the tokens offered: every point that carries one load had tied unsaid, the
    best of them the first by point id), with the tie-breaks, or the point id where `id_ties` (_id_ties) says
    some of them tie on those too (max_batch 16, 32 and 64 of one load that never fills 16 had read 'the tie goes
    to the lowest TPOT p99, then $/M out' of three points alike in both, b32 the first by id)."""
    marked = [{**r, "best_by": f"{r['best_by']}†"} if r.get("tied_with") else r for r in rows]
    table = _rows_table(f"{sweep}: best point per what-if, by time and by cost", marked, axes, lead=("best by",))
    notes = []
    for r, same in zip(rows, list(id_ties) or [0] * len(rows), strict=True):
        if r.get("tied_with"):
            tied = int(r["tied_with"])
            figure, breaks = TIES[(str(r.get("kind") or "train"), str(r["best_by"]))]
            head = f"† {r['best_by']} {r['what_if']}: tied on {figure} with {_count(tied, 'other point')}"
            if not same:
                notes.append(f"{head}; the tie goes to the lowest {', then '.join(breaks)}")
                continue
            some = f"with {same:,} of them " if same < tied else ""
            notes.append(f"{head}, and {some}on {' and '.join(breaks)} too; the tie goes to the first by point id")
    return Group(table, *(Text(n) for n in notes))


def _count(n: int, noun: str = "point") -> str:
    """'1 point', '16 points'."""
    return f"{n:,} {noun}{'s' if n != 1 else ''}"


def _print_stats(stats: RunStats) -> None:
    where = {"in-process": "in this process", "processes": f"on {stats.workers} processes", "ray": "on Ray"}
    dropped = f"; dropped {_count(stats.dropped)} no longer in the sweep" if stats.dropped else ""
    if stats.outdated:  # stored by another chipwise (code or built-in catalog): their figures may have moved
        dropped += f"; ran {_count(stats.outdated)} again, stored by another chipwise revision"
    console.print(
        f"{stats.sweep}: ran {stats.ran:,} of {_count(stats.points)} ({stats.skipped:,} already stored, "
        f"{stats.ok:,} ok, {stats.errors:,} errors) in {fmt.duration(stats.seconds)} = "
        f"{stats.points_per_s:,.1f} points/s {where[stats.backend]}{dropped}; store: {stats.store}"
    )


def _print_errors(errors: list[dict[str, Any]]) -> None:
    for e in errors:
        n = int(e["points"])
        label = f"{_count(n)} failed:"
        console.print(f"[yellow]{label}[/] {e['error']}", highlight=False, soft_wrap=True)
