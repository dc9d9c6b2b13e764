"""A scenario's kind is train or serve: anything else, of any type, is one line."""

from __future__ import annotations

import pytest

from cli_run import scenario_error


@pytest.mark.parametrize("kind", ["[serve]", "{a: 1}", "5"])
def test_a_kind_that_is_not_train_or_serve_is_one_line(kind: str) -> None:
    """A list or a mapping had raised an internal TypeError (unhashable type): exit 1 from the CLI, 500 from the
    web API."""
    assert "is not train or serve. Fix: set kind: train or kind: serve." in scenario_error(f"kind: {kind}\n")


def test_an_empty_kind_is_said_so() -> None:
    assert "kind is empty. Fix: set kind: train or kind: serve." in scenario_error("kind: null\n")
