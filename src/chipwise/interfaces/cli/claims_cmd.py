"""`chipwise claims`: the public Trainium3/Trainium4 claims, what chipwise computes for each, and a verdict.

Its command imports the planner when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    console,
    print_json,
    transient_bar,
    whatif_banner,
    whatif_lines,
)
from chipwise.interfaces.cli.plan_cmd import PRECISION_HELP, SEQ_LEN_EXAMPLE
from chipwise.interfaces.cli.plan_serve_cmd import PricingOpt, RegionOpt
from chipwise.workload.counts import read_count

VERDICT_STYLE = {
    "holds": "green",
    "holds only at peak specs": "yellow",
    "does not hold on this workload": "red",
    "does not hold": "red",
    "rests on estimates": "cyan",
    "cannot be checked": "dim",
}


def claims(
    model: Annotated[
        str | None,
        typer.Option("--model", help="A model preset or a config.json to train and serve (default: each claim's own)."),
    ] = None,
    seq_len: Annotated[str | None, typer.Option("--seq-len", help="Training sequence length (default 8192).")] = None,
    precision: Annotated[
        str | None, typer.Option("--precision", help=f"{PRECISION_HELP} Default: each claim's own.")
    ] = None,
    chips: Annotated[
        str | None,
        typer.Option(
            "--chips",
            help="Fleet size of the claims about a fleet (3-6; an UltraServer keeps its own; default each claim's).",
        ),
    ] = None,
    tokens: Annotated[str | None, typer.Option("--tokens", help="Tokens to train on (default 15T).")] = None,
    pricing: PricingOpt = "on-demand",
    region: RegionOpt = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--claim",
            help="Only these claims, by number or a check's id, e.g. 3 or 1a,5 (repeatable; default all seven).",
        ),
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """Check the re:Invent 2025 claims about Trainium3 and Trainium4 against chipwise's models, on your workload."""
    from chipwise.planner.claim_runs import SEQ, TOKENS, ClaimWorkload
    from chipwise.planner.claims import check_claims, chosen_claims

    chosen = chosen_claims(only)
    workload = ClaimWorkload(
        model,
        read_count(seq_len, "--seq-len", whole=True, example=SEQ_LEN_EXAMPLE) or SEQ,
        precision,
        read_count(chips, "--chips", whole=True),
        read_count(tokens, "--tokens") or TOKENS,
        pricing,
        region,
    )
    cat = catalog_from(catalog_files, sets)
    bar, task = transient_bar("claims")

    def tell(done: int, total: int, ran: int) -> None:
        bar.update(task, description=f"{ran:,} runs", completed=done, total=total)

    with bar:  # on a terminal's stderr only, gone once the answer prints (stdout is --json's)
        report = check_claims(cat, workload, tell, chosen)
    if as_json:  # the what-ifs the verdicts rest on, as validate --json names them (the table's banner)
        print_json({**report, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_claims(report)


def print_claims(report: dict[str, Any]) -> None:
    for c in report["claims"]:
        t = Table(
            title=escape(f"Claim {c['claim']}: {c['text']}"),
            caption=escape(f"made: {'; '.join(c['made'])}\nworkload: {c['workload']}"),
            header_style="bold",
            show_lines=True,
            title_justify="left",
            caption_justify="left",
        )
        for col, width in (("#", 3), ("claim", 28), ("chipwise computes", 60), ("verdict", 16), ("why", 40)):
            t.add_column(col, overflow="fold", ratio=width)
        for k in c["checks"]:
            style = VERDICT_STYLE.get(k["verdict"], "")
            t.add_row(
                k["id"], escape(k["claim"]), escape(k["computed"]), f"[{style}]{k['verdict']}[/]", escape(k["why"])
            )
        console.print(t)
        console.print()
