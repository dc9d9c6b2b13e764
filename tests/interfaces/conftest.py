"""Fixtures shared by the interface tests: the web server, and /api/plan/serve's search made quick."""

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


@pytest.fixture
def quick_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """/api/plan/serve's search ranked by the estimate alone, in this process: its answer's keys, not its checks."""
    from chipwise.interfaces.web import routes
    from chipwise.planner.serving_plan import plan_serving

    monkeypatch.setattr(routes, "plan_serving", lambda *a, **k: plan_serving(*a, **{**k, "verify": 0, "workers": 1}))
