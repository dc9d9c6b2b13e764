"""The point limit's message prices a sweep at its own kind's CPU time a point (runner.POINT_S): one figure of 25 ms
had stood for both, where a training point takes some 50 ms and a serving point (simulated) some 0.3 s."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from chipwise.errors import ChipwiseError
from chipwise.sweep import load_sweep, run_sweep
from chipwise.sweep.runner import POINT_S

WriteSweep = Callable[..., Path]

SERVE = """\
name: big-serve
base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: bf16, input_tokens: 512,
       output_tokens: 128, requests: 50}
grid:
  arrival_rate: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  input_tokens: [128, 256, 384, 512, 640, 768, 896, 1024, 1152, 1280]
  output_tokens: [16, 32, 48, 64, 80, 96, 112, 128, 144, 160]
"""


def test_the_figures_per_kind() -> None:
    assert POINT_S == {"train": 0.05, "serve": 0.3}


def test_a_serving_sweep_over_the_limit_is_priced_per_serving_point(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """1,000 points at 0.3 s: 300 s, 0.083 CPU-hours, read as 0 whole ones; 900 over a limit of 100 read the same."""
    spec, store = load_sweep(write_sweep(SERVE)), tmp_path / "s.duckdb"
    with pytest.raises(ChipwiseError) as exc:
        run_sweep(spec, store, workers=1, max_points=100)
    assert str(exc.value) == (
        f"{spec.source}: the sweep lists 1,000 points, more than 100 (at some 300 ms a serving point, 0 CPU-hours). "
        "Fix: narrow its axes, or run it anyway with --yes (max_points=None from Python)."
    )
    assert not store.exists()


TRAIN = """\
name: big-train
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, seq_len: 2048}
grid:
  chips: [%s]
  tokens: [%s]
  seq_len: [%s]
"""


def test_a_training_sweep_over_the_limit_is_priced_per_training_point(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """144,000 points (48 x 50 x 60) at 50 ms: 7,200 s, two CPU-hours (at 25 ms it had read one)."""
    text = TRAIN % (
        ", ".join(str(8 * i) for i in range(1, 49)),
        ", ".join(f"{i}e9" for i in range(1, 51)),
        ", ".join(str(1024 + 64 * i) for i in range(60)),
    )
    spec, store = load_sweep(write_sweep(text)), tmp_path / "s.duckdb"
    with pytest.raises(ChipwiseError) as exc:
        run_sweep(spec, store, workers=1, max_points=100_000)
    assert str(exc.value) == (
        f"{spec.source}: the sweep lists 144,000 points, more than 100,000 (at some 50 ms a training point, 2 "
        "CPU-hours). Fix: narrow its axes, or run it anyway with --yes (max_points=None from Python)."
    )
    assert not store.exists()
