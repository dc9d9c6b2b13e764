"""The `--plot FILE` option that commands share, and writing the figure before the result is printed (a reader
that stops early, `| head`, still gets the figure)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from chipwise.interfaces.cli.common import err_console


def _checked(path: Path | None) -> Path | None:
    """A plot path is checked as the command line is read, before any work (a known suffix, an existing folder)."""
    from chipwise.interfaces.chart import check_path

    return None if path is None else check_path(path)


PlotFile = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Also draw the result to FILE: .png or .svg (static) or .html (interactive, works offline).",
        show_default=False,
        metavar="FILE",
        callback=_checked,
    ),
]


def write_plot(result: Mapping[str, Any], path: Path | None) -> None:
    """Draw the result's default figure (see `chipwise.interfaces.plots.plot`) and say where it went (on stderr,
    so that `--json` output stays clean). Nothing happens without a path. A result with nothing to draw (no priced
    fleet, no figure that moves the metric) is said so in one line: the answer is printed after it as without
    --plot, not lost to an error (a search of minutes had been)."""
    if path is None:
        return
    from chipwise.interfaces import plots
    from chipwise.interfaces.chart import NothingToDrawError

    if result.get("results") == []:
        # a plan search that ranked no option: its answer (each chip's reason) is printed and the command exits 1;
        # there is nothing to draw
        err_console.print(f"plot: nothing drawn to {path}: no option was ranked", highlight=False, soft_wrap=True)
        return
    try:
        written = plots.plot(result, path)
    except NothingToDrawError as exc:
        err_console.print(f"plot: nothing drawn to {path}: {exc}", highlight=False, soft_wrap=True)
        return
    err_console.print(f"plot: wrote {written}", highlight=False, soft_wrap=True)
