"""plan serve's simulated checks started from a replica count a test states, whatever the estimate sized: how the
planner tests reach a check that grows or narrows from a known fleet."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.planner import serving_check, serving_shortlist


def start_checks_at(monkeypatch: pytest.MonkeyPatch, replicas: int) -> None:
    """Each option the shortlist checks starts from `replicas` replicas (serving_check.check_option as it calls it)."""
    check = serving_check.check_option

    def forced(catalog: Catalog, model: Any, name: str, job: Any, targets: Any, row: dict[str, Any], *a: Any) -> Any:
        option = row["_choice"]
        choice = dataclasses.replace(option.choice, replicas=replicas)
        return check(
            catalog, model, name, job, targets, {**row, "_choice": dataclasses.replace(option, choice=choice)}, *a
        )

    monkeypatch.setattr(serving_shortlist, "check_option", forced)
