"""plan fleet and plan lifecycle fork their searches where no other thread runs (pools.fork_safe): their spinner is
turned by the searches' waits (`tick`), not by a thread of its own, which Rich's console.status starts even where
stderr is no terminal and which had kept plan lifecycle's searches in one process."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from chipwise.errors import ChipwiseError
from chipwise.planner import fleet, lifecycle
from chipwise.sweep.backends import cpu_count
from cli_run import run_error

LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T", "--serve-rate", "10",
             "--hardware", "h100-sxm,mi300x"]  # fmt: skip
FLEET = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--slo",
         "ttft_p99=1s,tpot_p99=30ms", "--hardware", "h100-sxm,mi300x"]  # fmt: skip


def _spinner_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if type(t).__name__ == "_RefreshThread"]


@pytest.mark.parametrize(
    ("module", "name", "argv"), [(fleet, "plan_fleet", FLEET), (lifecycle, "plan_lifecycle", LIFECYCLE)]
)
def test_no_spinner_thread_runs_while_the_searches_may_fork(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, module: Any, name: str, argv: list[str]
) -> None:
    seen: dict[str, Any] = {}

    def planner(*args: Any, **kwargs: Any) -> dict[str, Any]:
        seen.update(threads=_spinner_threads(), workers=kwargs["workers"], tick=kwargs["tick"])
        kwargs["tick"]()  # the spinner turned by the search
        raise ChipwiseError("stop here. Fix: none")

    monkeypatch.setattr(module, name, planner)
    assert run_error(capsys, argv) == "error: stop here. Fix: none"
    assert seen["threads"] == [] and seen["workers"] == cpu_count() and callable(seen["tick"])


def test_one_worker_keeps_the_spinners_thread(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --workers 1 nothing forks, and the spinner turns on its own."""
    seen: dict[str, Any] = {}

    def planner(*args: Any, **kwargs: Any) -> dict[str, Any]:
        seen.update(threads=_spinner_threads(), workers=kwargs["workers"])
        raise ChipwiseError("stop here. Fix: none")

    monkeypatch.setattr(fleet, "plan_fleet", planner)
    run_error(capsys, [*FLEET, "--workers", "1"])
    assert len(seen["threads"]) == 1 and seen["workers"] == 1
