"""The Ray backend gives the same stored results as the in-process run (skipped where Ray is not installed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from chipwise.sweep import load_sweep, run_sweep

pytest.importorskip("ray")

WriteSweep = Callable[..., Path]


def _rows(store: Path) -> list[tuple[object, ...]]:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("SELECT * EXCLUDE (sweep) FROM results ORDER BY id").fetchall()


def test_ray_matches_in_process(write_sweep: WriteSweep, tmp_path: Path) -> None:
    spec = load_sweep(write_sweep())
    local = run_sweep(spec, tmp_path / "local.duckdb", workers=1)
    on_ray = run_sweep(spec, tmp_path / "ray.duckdb", ray=True)
    assert on_ray.backend == "ray" and on_ray.ok == local.ok == 12
    assert _rows(tmp_path / "ray.duckdb") == _rows(tmp_path / "local.duckdb")
