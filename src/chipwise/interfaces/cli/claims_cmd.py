"""`chipwise claims`: the public Trainium3/Trainium4 claims, what chipwise computes for each, and a verdict.

Its command imports the planner when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    console,
    print_json,
    whatif_banner,
    whatif_lines,
)

VERDICT_STYLE = {
    "holds": "green",
    "holds only at peak specs": "yellow",
    "does not hold on this workload": "red",
    "does not hold": "red",
    "rests on estimates": "cyan",
    "cannot be checked": "dim",
}


def claims(catalog_files: CatalogFiles = None, sets: SetFigures = None, as_json: JsonFlag = False) -> None:
    """Check the re:Invent 2025 claims about Trainium3 and Trainium4 against chipwise's models."""
    from chipwise.planner.claims import check_claims

    cat = catalog_from(catalog_files, sets)
    report = check_claims(cat)
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
