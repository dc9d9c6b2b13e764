"""Entry point of the `chipwise` command: the CLI of the interfaces layer plus the validation command."""

from __future__ import annotations

import sys

from chipwise.interfaces.cli.app import app, run


def _register() -> None:
    from chipwise.validation.command import register

    register(app)


def main() -> None:
    _register()
    sys.exit(run())


if __name__ == "__main__":
    main()
