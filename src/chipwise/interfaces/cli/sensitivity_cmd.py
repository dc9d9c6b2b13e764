"""`chipwise sensitivity SCENARIO`: which catalog figure matters most for one training or serving scenario."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from chipwise.errors import ChipwiseError
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    console,
    print_json,
    print_model_notes,
    projected_banner,
    transient_bar,
    whatif_banner,
    whatif_lines,
)
from chipwise.interfaces.cli.plot_opt import PlotFile, write_plot
from chipwise.planner.sensitivity import DEFAULT_STEP, METRICS, MOVES_NOTHING, sensitivity
from chipwise.workload.scenario import load_scenario


def sensitivity_cmd(
    scenario: Annotated[str, typer.Argument(help="A scenario YAML/JSON file, or the scenario inline.")],
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="What to rank the figures by. Training: "
            + ", ".join(METRICS["train"])
            + " (default step_time). Serving: "
            + ", ".join(METRICS["serve"])
            + " (default e2e_p50 under an arrival rate, else throughput).",
            show_default=False,
        ),
    ] = None,
    step: Annotated[
        float, typer.Option("--step", help="How far each figure moves, down and up: 0.1 is -10% and +10%.")
    ] = DEFAULT_STEP,
    replan: Annotated[
        bool,
        typer.Option(
            "--replan", help="Search the plan again for each move (default: hold the plan the prediction chose)."
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Processes to price the moves over (default: every core, up to 8, for a serving scenario; 1 for "
            "training).",
            min=1,
            show_default=False,
        ),
    ] = None,
    only: Annotated[
        str | None,
        typer.Option(
            "--figures",
            help="Move only the figures whose name holds one of these comma-separated texts, e.g. "
            "hbm,flops,efficiency.hopper (default: every figure the prediction rests on).",
            show_default=False,
        ),
    ] = None,
    top: Annotated[int, typer.Option("--top", help="Rows to show, largest elasticity first.", min=1)] = 12,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    plot: PlotFile = None,
) -> None:
    """Which catalog figure matters most for a scenario: each figure moved -10% and +10%, the plan held fixed."""
    texts = [t.strip() for t in (only or "").split(",") if t.strip()]
    if only is not None and not texts:  # an unset variable ('--figures "$F"') had moved every figure, exit 0
        raise ChipwiseError(
            "--figures names no figure. Fix: give texts of figure names, e.g. hbm,flops, or leave --figures out for "
            "every figure."
        )
    cat = catalog_from(catalog_files, sets)
    sc = load_scenario(scenario, cat)
    print_model_notes(cat, sc.model)
    bar, task = transient_bar("sensitivity")

    def tell(done: int, total: int) -> None:
        bar.update(task, description="pricing moves", completed=done, total=total)

    with bar:  # on a terminal only, gone once the answer prints
        result = sensitivity(
            sc,
            catalog_files or (),
            sets or (),
            step,
            metric,
            replan=replan,
            workers=workers,
            progress=tell,
            only=texts,
            catalog=cat,
        )
    # the plot draws the rows the table shows (it had drawn up to 12 whatever --top asked)
    write_plot({**result, "figures": result["figures"][:top]}, plot)
    if as_json:
        print_json({**result, "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)  # the figures moved are moved from the what-if's values
    print_sensitivity(result, top)


def _elasticity_cell(row: dict[str, Any], ranked: str) -> str:
    """The ranked metric's elasticity as the 'also moves' text writes it (fmt.elasticity: kernel_overhead had read +0.01
    here and (+0.005) there), '~0' where both moves are under the run's resolution (None in --json), '-' where
    neither side was priced."""
    if ranked in row.get("below_resolution", ()):
        return "~0"
    value = row["elasticity"].get(ranked)
    return "-" if value is None else fmt.elasticity(value)


def _moved(row: dict[str, Any], side: str, ranked: str, resolution: float | None) -> str:
    """One side's move of the ranked metric: 'cannot price', 'capped' (the side leaves it still where the other moves
    it: the model clamps the figure there), '~0' (a latency move under a short serving run's resolution), or the per
    cent."""
    if row[side].get("error") is not None:
        return "[dim]cannot price[/]"
    if row.get("capped", {}).get(ranked) == side:
        return "[dim]capped[/]"
    change = row["change"][side].get(ranked)
    if change is None:
        return "-"
    noise = resolution is not None and abs(change) < resolution and not row["elasticity"].get(ranked)
    return "~0" if noise else f"{change:+.2%}"  # a consistent pair under the resolution is shown, and ranked


def _figure_value(row: dict[str, Any]) -> str:
    value = row["value"]
    shown = f"{value:,.4g}" if isinstance(value, int | float) else str(value)
    unit = row.get("unit") or ""
    return shown if unit in ("", "1") else f"{shown} {unit}"


def _also(row: dict[str, Any], ranked: str, labels: dict[str, dict[str, str]]) -> str:
    """The other metrics a figure moves, by their elasticity; those it moves as the ranked metric are named together
    ('all alike (-0.86)': left out, the FLOP/s that moves all five had read '-', as moving nothing)."""
    e = row["elasticity"]
    mine = e.get(ranked)
    moving = {k: v for k, v in e.items() if k != ranked and v is not None and abs(v) >= MOVES_NOTHING}
    alike = [k for k, v in moving.items() if mine is not None and abs(v - mine) < 0.005]
    parts = [f"{labels[k]['label']} {fmt.elasticity(v)}" for k, v in moving.items() if k not in alike]
    if alike:
        every = len(alike) == sum(1 for k in e if k != ranked)
        names = "all" if every else ", ".join(labels[k]["label"] for k in alike)
        parts.insert(0, f"{names} alike ({fmt.elasticity(mine)})")
    return ", ".join(parts) or "-"


def _errors(row: dict[str, Any]) -> bool:
    return any(row[side].get("error") is not None for side in ("minus", "plus"))


def _ranked_row(row: dict[str, Any], ranked: str) -> bool:
    """Whether a figure has a row of the ranked table: it moves the ranked metric, or a side cannot be priced and the
    other gives the metric no value. One at its bound whose other side moves nothing is counted with the figures
    that move no metric: dp_overlap at 1 had been row 10, '+0.00%  cannot price  -0.00', above 24 such figures
    counted below the table."""
    return _moves(row, ranked) or (_errors(row) and row["elasticity"].get(ranked) is None)


def _moves(row: dict[str, Any], key: str | None = None) -> bool:
    """Whether a figure moves the metric `key` (any metric: None) by MOVES_NOTHING for a 1% move."""
    e = row["elasticity"]
    return any(abs(v or 0.0) >= MOVES_NOTHING for k, v in e.items() if key is None or k == key)


#: columns from which the other metrics a figure moves have a column of their own (below, a line under the figure)
WIDE = 120


def print_sensitivity(r: dict[str, Any], top: int) -> None:
    labels = r["metrics"]
    ranked = r["metric"]
    label = labels[ranked]["label"]
    what = "training" if r["scenario_kind"] == "train" else "serving"
    held = "the plan held: " + fmt.any_plan(r["plan"]) if r["plan_held"] else "the plan searched again for each move"
    step = r["step"]
    table = Table(
        title=(
            f"Sensitivity of {fmt.model_label(r)} {what} on {r['chips']:,} x {r['hardware']} ({held}): each figure "
            f"moved -{step:.0%} and +{step:.0%}, ranked by the elasticity of {label}"
            + (f" (only figures naming {', '.join(r['only'])})" if r.get("only") else "")
        ),
        title_justify="left",
    )
    # every number is kept whole (at 80 columns rich had cut them to '+9…', the elasticity too); a figure's name is
    # what --set takes, never cut (it folds where narrow); the other metrics' text has its column where there is room
    # for it and the status, else a second line under the figure holds both
    wide = console.width >= WIDE
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("figure", no_wrap=wide, overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    if wide:
        table.add_column("status", no_wrap=True)
    table.add_column(f"at -{step:.0%}", justify="right", no_wrap=True)
    table.add_column(f"at +{step:.0%}", justify="right", no_wrap=True)
    table.add_column("elasticity", justify="right", no_wrap=True, min_width=len("elasticity"))
    if wide:
        table.add_column("also moves")  # a header word too long for a narrow column is cut
    moving = [row for row in r["figures"] if _ranked_row(row, ranked)]
    others = [row for row in r["figures"] if row not in moving and _moves(row)]
    others.sort(key=lambda row: -max(abs(v or 0.0) for v in row["elasticity"].values()))  # the largest first
    still = [row for row in r["figures"] if row not in moving and row not in others]
    latency = (r.get("resolutions") or {}).get(ranked)  # the ranked latency's own: a p99's is wider than a p50's
    for i, row in enumerate(moving[:top], start=1):
        also = _also(row, ranked, labels)
        table.add_row(
            str(i),
            escape(row["figure"]) + ("" if wide else f"\n[dim]{row.get('status', '')}; also moves: {escape(also)}[/]"),
            _figure_value(row),
            *([str(row.get("status", ""))] if wide else []),
            _moved(row, "minus", ranked, latency),
            _moved(row, "plus", ranked, latency),
            _elasticity_cell(row, ranked),
            *([also] if wide else []),
        )
    console.print(table)
    base = r["baseline"][ranked]
    unit = labels[ranked]["unit"]
    shown = fmt.duration(base) if unit == "s" else f"{base:,.4g} {unit}"
    console.print(
        f"{label} {shown}. Elasticity: the per cent {label} moves for a 1% move of the figure (-1: inversely "
        "proportional; 0: the figure does not reach it).",
        highlight=False,
    )
    if len(moving) > top:
        console.print(f"{len(moving) - top} more figures move it less (--top {len(moving)} lists them).")
    for row in moving[:top]:
        for side, sign in (("minus", "-"), ("plus", "+")):
            if (error := row[side].get("error")) is not None:
                console.print(f"{escape(row['figure'])} {sign}{step:.0%} cannot be priced: {escape(error)}.")
            elif row.get("capped", {}).get(ranked) == side:
                console.print(
                    f"{escape(row['figure'])} {sign}{step:.0%} leaves {label} still: the model caps the figure there; "
                    "its elasticity is the other side's.",
                    highlight=False,
                )
    if latency is not None:
        console.print(
            f"A serving run of {r['requests']:,} requests reads {label} to about {latency:.1%}: a figure whose two "
            "moves are both under it reads ~0 and is not ranked, unless they go opposite ways alike in size (every "
            "move reruns the same arrivals); give the scenario more requests to read it finer.",
            highlight=False,
        )
    if others:
        rest = Table(title=f"Figures that move other metrics, not {label}", title_justify="left")
        for name in ("figure", "value", "status", "moves (elasticity)"):
            rest.add_column(name, justify="right" if name == "value" else "left", no_wrap=name == "figure")
        for row in others[:top]:
            moves = _also(row, "", labels)  # every metric it moves
            rest.add_row(escape(row["figure"]), _figure_value(row), str(row.get("status", "")), moves)
        console.print(rest)
        if len(others) > top:
            console.print(f"{len(others) - top} more figures move other metrics (--top {len(others)} lists them).")
    zeros = [row for row in r["not_priced"] if row["kind"] == "zero"]
    # reported 0 where the catalog gives another value (a scale-out network's 100 W for replicas each inside one
    # system): not used here, not 'is 0' (which had counted them with the figures whose catalog value is 0)
    unused = [row for row in r["not_priced"] if row["kind"] == "unused"]
    derived = [row for row in r["not_priced"] if row["kind"] == "derived"]
    tiles = [row for row in r["not_priced"] if row["kind"] == "discrete"]
    bounded = sum(_errors(row) for row in still)  # one side not priced, the other moving nothing
    at_bound = f"; {bounded} of them at a bound, the other side not priced" if bounded else ""
    quiet = [
        f"{len(still)} {'moves' if len(still) == 1 else 'move'} no metric (an elasticity under {MOVES_NOTHING:g}"
        f"{at_bound})"
        if still
        else "",
        f"{len(zeros)} {'is' if len(zeros) == 1 else 'are'} 0, which a move by a share leaves at 0" if zeros else "",
        f"{len(unused)} {'is' if len(unused) == 1 else 'are'} not used by this deployment, reported 0 whatever the "
        "catalog gives"
        if unused
        else "",
        (
            "1 is derived, moved through its inputs"
            if len(derived) == 1
            else f"{len(derived)} are derived, moved through their inputs"
        )
        if derived
        else "",
        f"{len(tiles)} {'is a tile size or a count' if len(tiles) == 1 else 'are tile sizes or counts'}, "
        "which a move by a share leaves no tile or count (--set one to another to compare)"
        if tiles
        else "",
    ]
    if any(quiet):
        said = "; ".join(q for q in quiet if q)
        console.print(f"Of the other figures the prediction rests on, {said} (--json lists each).")
    for row in r["not_priced"]:
        if row["kind"] == "unpriced":
            console.print(f"{escape(row['figure'])} cannot be moved: {escape(row['reason'])}.")
    projected_banner([r["hardware"]] if r.get("projected") else [])
    processes = f"{r['workers']} process{'es' if r['workers'] > 1 else ''}"
    console.print(f"{r['predictions']} predictions in {r['seconds']:.1f} s over {processes}.", highlight=False)
