"""Fixtures shared by the interface tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chipwise.interfaces.web.server import ChipwiseServer, make_server, serve_in_thread


@pytest.fixture(scope="module")
def server() -> Iterator[ChipwiseServer]:
    """The web server on a free loopback port, one per test module."""
    srv = make_server("127.0.0.1", 0)
    serve_in_thread(srv)
    yield srv
    srv.shutdown()
    srv.server_close()
