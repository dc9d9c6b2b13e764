"""plan fleet's replays are kept on the catalog they ran on: a search that replays a type with the same traffic
again (a later round, a wider search and the one-type settling) reads the first run's result, the same in every
figure, and a catalog built anew (a --catalog file, a --set) simulates its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.hardware import hardware
from chipwise.planner import fleet as fleet_mod
from chipwise.planner import fleet_replay
from chipwise.planner.fleet_workload import read_workload
from chipwise.workload.presets import load_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat-mix.yaml"
SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}
SAME = "h100-sxm.hbm_bandwidth=x1"  # a what-if that changes nothing builds a catalog of its own, with no replays yet


def _replay_args(catalog: Catalog, seed: int | None = None) -> tuple[Any, ...]:
    """_replay_once's arguments after the catalog: Llama 3.1 8B's first H100 type carrying a little of each bucket
    (on the type's own seed, or `seed`)."""
    model = load_model(catalog, "llama-3.1-8b")
    buckets = read_workload(str(EXAMPLE))
    t = fleet_mod._types_for(catalog, model, hardware(catalog).system("h100-sxm"), buckets, SLO, "fp8")[0]
    share = np.array([2.0, 0.5, 0.1])  # requests/s of each bucket: a short replay
    return model, t, 1, share, buckets, SLO, fleet_replay.replay_seed(t) if seed is None else seed, 1.0


def test_a_replay_run_before_is_read_back_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = load_catalog(sets=[SAME])
    args = _replay_args(catalog)
    simulated = 0
    simulate = fleet_replay._simulate_replay

    def counted(*a: Any) -> dict[str, Any]:
        nonlocal simulated
        simulated += 1
        return simulate(*a)

    monkeypatch.setattr(fleet_replay, "_simulate_replay", counted)
    first = fleet_replay._replay_once(catalog, *args)
    first["buckets"]["chat"]["slo_met"] = "changed by its caller"  # a caller's change stays with its copy
    again = fleet_replay._replay_once(catalog, *args)
    assert simulated == 1
    assert again == simulate(catalog, *args)  # every figure as a fresh simulation gives it
    other = fleet_replay._replay_once(catalog, *_replay_args(catalog, args[-2] + 1))  # another seed runs
    assert simulated == 2 and other != again
    fresh = load_catalog(sets=[SAME])  # another catalog keeps its own replays
    fleet_replay._replay_once(fresh, *_replay_args(fresh))
    assert simulated == 3


def test_the_memo_keeps_at_most_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = load_catalog(sets=[SAME])
    monkeypatch.setattr(fleet_replay, "REPLAY_MEMO", 2)
    monkeypatch.setattr(fleet_replay, "_simulate_replay", lambda *a: {"seed": a[7]})
    for seed in range(5):
        fleet_replay._replay_once(catalog, *_replay_args(catalog, seed))
    memo = catalog.memo["fleet_replays"]
    assert len(memo) == 2 and [key[-2] for key in memo] == [3, 4]  # the newest two
