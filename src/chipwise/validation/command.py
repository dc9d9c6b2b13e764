"""`chipwise validate`: compare predictions with published measurements (registered on the CLI by __main__)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the validate command to the CLI."""
    from chipwise.validation.cli import validate

    app.command("validate")(validate)
