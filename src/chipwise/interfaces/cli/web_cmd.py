"""`chipwise web`: serve the page (rank fleets, see cost against time and where the step time goes) on this machine."""

from __future__ import annotations

import webbrowser
from typing import Annotated

import typer

from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.common import CatalogFiles, SetFigures, catalog_from, console


def web(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: any free port).")] = 8765,
    open_browser: Annotated[bool, typer.Option("--open/--no-open", help="Open the page in a web browser.")] = True,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
) -> None:
    """Serve the chipwise web page and its JSON API until Ctrl+C (works offline: no CDN, no network)."""
    from chipwise.interfaces.web.routes import Settings
    from chipwise.interfaces.web.server import WILDCARD_HOSTS, make_server

    if not host.strip():  # an unset $HOST: the socket binds every interface, where the default is this machine only
        raise ChipwiseError(
            "--host is empty. Fix: give an address, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)."
        )
    files, overrides = list(catalog_files or ()), list(sets or ())
    catalog_from(files, overrides)  # a bad catalog file or --set fails now, in one line, not on the first request
    server = make_server(host, port, Settings(files, overrides))
    url = server.url
    console.print(f"chipwise web: serving on [bold]{url}[/] (Ctrl+C to stop)", highlight=False)
    if host.strip() in WILDCARD_HOSTS:  # the URL shown is this machine's: say who else reaches the page
        console.print("chipwise web: listening on every interface (no login: trusted networks only)")
    if open_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("chipwise web: stopped")
    finally:
        server.server_close()
