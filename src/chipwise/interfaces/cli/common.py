"""What every command shares: the catalog options, JSON output, the Rich console, and error reporting."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.spinner import Spinner
from rich.table import Table

from chipwise.catalog.loader import BUILTIN, Catalog, load_catalog, tree_figures
from chipwise.catalog.overrides import SET_ON_COMMAND_LINE
from chipwise.catalog.schema import Figure
from chipwise.catalog.track_record import record_file
from chipwise.catalog.units import UNITS, from_si, quantity
from chipwise.interfaces.format import RECORD_LABELS, jsonable, value_text
from chipwise.serve.plan import count_text
from chipwise.serve.quant import WEIGHT_PRECISIONS

#: the exit code when the reader of stdout stops early (`| head`): 128 + SIGPIPE, as a shell reports a piped
#: command it ended; not the 1 of a search that ranked nothing
PIPE_CLOSED_EXIT = 141


#: the serving commands' --precision help: every weight format the option takes (int8 is W8A8; w8a16 and int4 are
#: weight-only, bf16 matmuls)
WEIGHTS_HELP = (
    f"Weights: {', '.join(WEIGHT_PRECISIONS)} (int8 W8A8; w8a16, int4 weight-only), or auto: the checkpoint's own"
)


def close_stdout() -> None:
    """Send what is left of stdout to /dev/null: its reader stopped (`| head`), and the flush at exit would raise
    again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Rich's own exits with 1, silently: the code of a search that ranked nothing. Raised on instead, for
        `app.run` to end with PIPE_CLOSED_EXIT, as a print of --json's does."""
        self.quiet = True
        raise BrokenPipeError


console = _Console(soft_wrap=False)
err_console = Console(stderr=True)
#: the exit code of a plan search that ranks no option (nothing fits, runs or meets the SLO; each chip's reason is
#: printed): not the 2 of bad input, and not the 0 of an answer
NO_OPTION_EXIT = 1

#: columns of output written to a file or a pipe (not a terminal) when $COLUMNS is unset: Rich would take 80 there
#: and cut figures and help text short
PIPED_WIDTH = 200
#: columns of --help written to a file or a pipe: wide enough for every option's text, narrow enough to read
PIPED_HELP_WIDTH = 120


def output_width() -> int:
    """Columns to render at: $COLUMNS when set, else the terminal's where stdout is one, else PIPED_WIDTH."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return PIPED_WIDTH


def fit_width() -> None:
    """Size the output console, and Typer's help, for where stdout goes now (one command run)."""
    import typer.rich_utils

    width = output_width()
    console.width = width
    piped = width == PIPED_WIDTH and not os.environ.get("COLUMNS")
    typer.rich_utils.MAX_WIDTH = min(width, PIPED_HELP_WIDTH) if piped else width


CatalogFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalog",
        help="A YAML file that extends or overrides the built-in catalog (repeatable; see docs/catalog-format.md).",
        show_default=False,
    ),
]
SetFigures = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Set one figure for a what-if, ID.FIELD=VALUE in SI or with a unit, e.g. trn3.hbm_bandwidth=6e12, or "
        "scaled, e.g. trn3.hbm_bandwidth=x1.1 (repeatable).",
        show_default=False,
        metavar="ID.FIELD=VALUE",
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]
#: the rental and owned-fleet options plan train, plan hetero, plan serve and plan lifecycle share (here, not in
#: plan_cmd, which imports plan serve's and plan lifecycle's commands)
ProviderOpt = Annotated[str | None, typer.Option("--provider", help="Only this cloud's prices (aws, azure, gcp, ...).")]
#: plan serve's and plan lifecycle's (a serving search)
NoDisaggregatedOpt = Annotated[
    bool, typer.Option("--no-disaggregated", help="Try whole replicas only, no prefill/decode pool splits.")
]
UtilisationOpt = Annotated[
    float | None,
    typer.Option("--utilisation", help="With --pricing owned: share of hours the fleet does paid work, 0.01 to 1."),
]
SloTargets = Annotated[
    list[str] | None,
    typer.Option(
        "--slo",
        help="Latency targets with units, e.g. ttft_p99=2s,tpot_p99=50ms (repeatable: --slo ttft_p99=2s --slo "
        "tpot_p99=50ms).",
        show_default=False,
        metavar="TARGETS",
    ),
]


def slo_text(given: Sequence[str] | None, default: str | None = None) -> str | None:
    """The --slo options as one target list: repeated ones joined (a second --slo had replaced the first), none
    given the default."""
    return ",".join(given) if given else default


def catalog_from(files: Sequence[Path] | None, sets: Sequence[str] | None) -> Catalog:
    return load_catalog(list(files or ()), list(sets or ()))


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(jsonable(obj), indent=2) + "\n")


def transient_bar(label: str, refresh_thread: bool = True) -> tuple[Progress, TaskID]:
    """A progress bar on stderr for long work ('LABEL description  ━━━━  m/n  0:00:12'), on a terminal only and gone
    once the answer prints, with its one task; redrawn by a thread of its own, or (`refresh_thread` False: work that
    forks, pools.fork_safe) at each update, which the work then makes often enough."""
    bar = Progress(
        TextColumn(f"[bold]{label}[/] {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
        auto_refresh=refresh_thread,
    )
    return bar, bar.add_task("", total=None)


def transient_spinner(text: str, refresh_thread: bool = True) -> Live:
    """A spinner on stderr beside `text` for long work, on a terminal only and gone once the answer prints; turned by
    a thread of its own, or (`refresh_thread` False: work that forks, pools.fork_safe) at each refresh() the work
    makes (Rich's console.status always starts the thread, even where nothing is drawn)."""
    return Live(Spinner("dots", text), console=err_console, transient=True, auto_refresh=refresh_thread)


def projected_banner(names: Sequence[str]) -> None:
    """Say, in every output that uses one, that a projected or announced product is not a shipping one."""
    if names:
        console.print(
            f"[bold yellow]PROJECTED:[/] {', '.join(sorted(set(names)))} - announced, not shipping; figures derived "
            "from announced ratios or estimated (see 'chipwise catalog show ID --sources')."
        )


#: the catalog's sections of figures, as a what-if (a --set, a --catalog file) may change them
_FIGURE_SECTIONS = ("chips", "systems", "fabrics", "efficiency", "engines", "datacenter", "reliability")


def _catalog_figures(cat: Catalog) -> dict[str, Figure]:
    return {f"{section}.{p}": f for section in _FIGURE_SECTIONS for p, f in tree_figures(getattr(cat, section))}


def figure_text(fig: Figure, unit: str = "") -> str:
    """A figure's value and unit (a ratio's bare: 0.8, not '0.8 1'), in `unit` where given and of the figure's
    quantity: a --set value in the catalog figure's own unit, 6 TB/s where it had read 6000000000000 B/s beside
    the catalog's 4.9 TB/s."""
    value, shown = fig.value, fig.unit
    if isinstance(value, str):
        return value_text(value, shown)
    if unit and unit != fig.unit and unit in UNITS and fig.unit in UNITS and quantity(unit) == quantity(fig.unit):
        value, shown = from_si(fig.si, unit), unit
    return value_text(value, shown)


def _same(a: Figure, b: Figure) -> bool:
    """Whether two figures state one value (80 GB is 74.5 GiB; a text figure by its text)."""
    if isinstance(a.value, str) or isinstance(b.value, str):
        return a.value == b.value
    return math.isclose(a.si, b.si, rel_tol=1e-9)


def whatif_lines(cat: Catalog) -> list[str]:
    """What a what-if changed in the catalog the output reads, one line a --set (the figure, its value and the
    built-in one) and one a --catalog file (how many figures it gives that differ from the built-in catalog's, and
    the model presets it replaces or adds), from the loader's records (Catalog.overrides, the figures' derivations,
    Catalog.origins)."""
    files = list(dict.fromkeys(o for o in cat.origins.values() if o not in ("--set", BUILTIN)))
    if not cat.overrides and not files:
        return []
    now, builtin = _catalog_figures(cat), _catalog_figures(load_catalog())
    lines = []
    for path in files:
        entries = [k for k, o in cat.origins.items() if o == path]
        changed = sum(
            1
            for k in entries
            if not k.startswith("prices.")
            for p, f in now.items()
            # a figure a --set gave is that --set's line, not the file's: a --set on a file's new system had been
            # counted as one more figure the file changed (9 where it gives 8)
            if p.startswith(f"{k}.")
            and not f.derivation.startswith(SET_ON_COMMAND_LINE)
            and (p not in builtin or not _same(builtin[p], f))
        ) + sum(k.startswith("prices.") for k in entries)
        differ = "figure differs" if changed == 1 else "figures differ"
        models = _preset_changes(cat, path, entries)
        counted = [f"{changed:,} {differ} from the built-in catalog's"] if changed or not models else []
        lines.append(f"--catalog {path}: {'; '.join(counted + models)}")
    for assignment in cat.overrides:
        lhs = assignment.split("=", 1)[0].strip()
        derivation = f"{SET_ON_COMMAND_LINE}: --set {assignment}"
        # an engine's figure is copied to each of its chip families: the shortest path is the one set
        hits = sorted((p for p, f in now.items() if f.derivation == derivation), key=lambda p: p.count("."))
        price = next((p for p in cat.prices if p.derivation == derivation), None)
        if hits:
            # an engine without the figure of its own had taken the default engine's (catalog engine ENGINE)
            section, _, rest = hits[0].split(".", 2)
            was = builtin.get(hits[0]) or (builtin.get(f"engines.default.{rest}") if section == "engines" else None)
            value = figure_text(now[hits[0]], was.unit if was else "")
            shown = f"{lhs} = {value}" + (f" (catalog {figure_text(was)})" if was else "")
        elif price is not None:
            shown = f"{lhs} = ${price.value:,.2f}/h (over the catalog's prices)"
        else:
            shown = f"--set {assignment}"
        lines.append(f"{shown}, set on the command line")
    return lines


def _preset_changes(cat: Catalog, path: str, entries: Sequence[str]) -> list[str]:
    """What the --catalog file `path` does to the model presets, from its catalog entries (`entries`): 'replaces model
    preset llama-3.1-8b', 'adds model presets a, b' (none: []). A file that only gave a preset another config had read
    "0 figures differ from the built-in catalog's" above 15.0 B parameters for llama-3.1-8b."""
    builtin = load_catalog()
    given = [k.removeprefix("models.") for k in entries if k.startswith("models.")]
    ids = [pid for pid in given if pid in cat.models]  # models.ID, not models.ID.file (where its config is read)
    replaced = [
        pid
        for pid in ids
        if pid in builtin.models
        and (cat.models[pid] != builtin.models[pid] or cat.origins.get(f"models.{pid}.file") == path)
    ]
    added = [pid for pid in ids if pid not in builtin.models]
    return [
        f"{verb} model preset{'s' if len(pids) > 1 else ''} {', '.join(pids)}"
        for verb, pids in (("replaces", replaced), ("adds", added))
        if pids
    ]


def whatif_banner(cat: Catalog) -> None:
    """Say, in every table output that reads a catalog changed by --set or --catalog, what was changed (a table
    had read the same as the catalog's own, only --json recording the what-if): PROJECTED's counterpart."""
    for line in whatif_lines(cat):
        console.print(f"[bold yellow]WHAT-IF:[/] {escape(line)}")


def figure_table(title: str, **options: Any) -> Table:
    """A two-column 'figure / value' table without a header: one prediction's or row's figures, a name in bold
    beside each value (`options` go to rich's Table)."""
    table = Table(title=title, show_header=False, **options)
    # below NARROW columns a figure's name wraps at two fifths of the width: at 60 columns "TTFT's wait to start p50
    # / p90 / p99" had kept 43 of them and left the values 12 a line (a batch limit's note ran 22 lines)
    narrow = console.width < NARROW
    table.add_column("figure", no_wrap=not narrow, style="bold", max_width=console.width * 2 // 5 if narrow else None)
    table.add_column("value")
    return table


#: a terminal narrower than this wraps figure_table's names (80 columns, the tests' and most terminals', keep them)
NARROW = 80


#: the columns of a track record's figures (track_record_cells)
TRACK_COLUMNS = ("runs", "half within", "4 in 5 within", "median error")


def track_record_cells(r: Mapping[str, Any]) -> list[str]:
    """One scope's figures as a track-record table prints them (TRACK_COLUMNS)."""
    return [
        count_text(r["n"]),
        f"{r['median_ape_pct']:.0f}%",
        f"{r['p80_ape_pct']:.0f}%",
        f"{round(r['median_error_pct']):+d}%",  # an int: a median of -0.4% prints +0%, not -0%
    ]


def print_track_record(record: Mapping[str, Any], projected: str | None = None) -> None:
    """A prediction's track record (catalog.track_record): how far the model has been from the published runs of
    its scope, per metric; the scope in the title where every metric shares one; nothing without a record. A
    `projected` chip (announced, or a user's what-if) has none of them: the title says so (a user's hypothetical
    chip of the blackwell family had quoted blackwell's 27 runs as if measured on it)."""
    if not record:
        return
    scopes = {r["scope"] for r in record.values()}
    shared = scopes.pop() if len(scopes) == 1 else None
    asked = {r.get("asked", r["scope"]) for r in record.values()}
    fewer = ""
    if shared and len(asked) == 1 and asked != {shared}:
        fewer = f"; fewer than {record_file()['min_runs']} of {next(iter(asked))}"
    if projected:
        fewer += f"; none of them of {projected}, which is projected"
    runs = (
        f"published runs ({shared}{fewer}; docs/accuracy.md)"
        if shared
        else f"published runs like it ({fewer.removeprefix('; ') + '; ' if fewer else ''}docs/accuracy.md)"
    )
    table = Table(title=f"Track record: chipwise against {runs}")
    table.add_column("metric")
    for name in TRACK_COLUMNS:
        table.add_column(name, justify="right")
    if shared is None:
        table.add_column("scope")
    for metric, r in record.items():
        table.add_row(RECORD_LABELS[metric], *track_record_cells(r), *([] if shared else [r["scope"]]))
    console.print(table)


def hidden_rows_line(hidden: int, shown: int) -> str:
    """The line under a ranking cut at --top: '2 more ranked: --top 4 shows them' (plan train and plan serve)."""
    return f"{hidden:,} more ranked: --top {shown + hidden:,} shows {'it' if hidden == 1 else 'them'}"


def compact_table(title: str) -> Table:
    """A listing narrow enough for an 80-column terminal: no vertical rules (a blank between columns), the title
    printed above it at the terminal's width rather than the table's; headers may take two lines."""
    console.print(f"[bold]{title}[/]")
    return Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, padding=0, show_edge=False)


def print_model_notes(cat: Catalog, model: str) -> None:
    """What reading a config.json on disk took that it did not say (e.g. no model_type: read as a Llama), for every
    command that takes a model, as `model show` prints it: on stderr, so that `--json` stays clean and a script
    still sees it. A preset's notes are the catalog's own (index.yaml), not the user's to act on."""
    from chipwise.workload.presets import config_file, load_model

    if config_file(Path(model).expanduser()) is None:  # a preset: a config on disk wins over one (load_model)
        return
    for note in load_model(cat, model).notes:
        err_console.print(f"note: {escape(model)}: {escape(note)}", highlight=False, soft_wrap=True)
