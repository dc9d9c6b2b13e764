"""A Ray run reports the CPUs of the cluster its tasks run on as its workers: it had reported this machine's CPUs
(backends.cpu_count(): 'workers': 2 on a 2-CPU laptop driving a cluster). Ray itself is stood in for, so this runs
without it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog.loader import Catalog
from chipwise.sweep import backends, load_sweep, run_sweep
from chipwise.sweep.spec import Point

WriteSweep = Callable[..., Path]


class _Cluster:
    """What the run asks of Ray: its cluster's resources (48 CPUs over three nodes)."""

    @staticmethod
    def cluster_resources() -> dict[str, Any]:
        return {"CPU": 48.0, "memory": 4e11, "node:10.0.0.1": 1.0}


def test_a_ray_run_reports_its_clusters_cpus_as_workers(
    write_sweep: WriteSweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def on_cluster(points: Iterable[Point], total: int, catalogs: dict[str, Catalog]) -> Any:
        return backends.in_process(points, catalogs)  # the tasks as Ray would run them, here

    monkeypatch.setattr(backends, "start_ray", lambda address: True)
    monkeypatch.setattr(backends, "stop_ray", lambda: None)
    monkeypatch.setattr(backends, "import_ray", lambda: _Cluster)
    monkeypatch.setattr(backends, "ray_cluster", on_cluster)
    monkeypatch.setattr(backends, "cpu_count", lambda: 2)
    stats = run_sweep(load_sweep(write_sweep()), tmp_path / "s.duckdb", ray=True)
    assert (stats.backend, stats.workers, stats.ran, stats.ok) == ("ray", 48, 12, 12)
    assert stats.as_dict()["workers"] == 48
