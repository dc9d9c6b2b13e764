"""A trace's busiest minute is read over a sliding window, so that one straddling a 60 s boundary is told
(planner.fleet_workload.burst_note); fixed windows from 0 had split it in two."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from chipwise.planner.fleet_workload import burst_note, busiest


def test_the_busiest_window_starts_at_any_arrival() -> None:
    """Arrivals at 0, 40, 50, 70 and 80 s: the 60 s from 40 hold four, where fixed windows from 0 hold three at
    most (0, 40 and 50; 70 and 80 in the next); [t, t + 60) leaves out the arrival 60 s on."""
    t = np.array([0.0, 40.0, 50.0, 70.0, 80.0])
    assert busiest(t, 60.0) == 4.0
    assert busiest(np.array([0.0, 60.0, 120.0]), 60.0) == 1.0


def test_a_busy_minute_straddling_a_60_s_boundary_is_told(tmp_path: Path) -> None:
    """14 req/s evenly over 0-600 s and 9.8 req/s more over 330-390 s: the minute from 330 s offers 840 + 588 =
    1,428 requests, 23.8 req/s, 1.59x the trace's mean of 8,987 gaps over 599.93 s (14.98 req/s). The fixed
    minutes 300-360 and 360-420 s held 1,134 each (18.9 req/s, 1.26x), under the 1.3x that tells it, and the
    note was missing."""
    times = np.sort(np.concatenate([np.arange(8400) / 14.0, 330.0 + np.arange(588) / 9.8]))
    path = tmp_path / "straddle.csv"
    path.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{t:.4f},1024,256\n" for t in times))
    note = burst_note(str(path))
    assert note is not None and note.startswith("the trace's busiest 60 s offers 23.8 req/s, 1.6x its mean 15:")


def test_poisson_noise_at_a_low_rate_is_no_burst(tmp_path: Path) -> None:
    """A Poisson trace of 1 req/s over 600 s: its busiest sliding minute is Poisson noise the replay simulates
    itself (it had been told of a burst in 43 of 100 seeds); none of 20 seeds is told now."""
    told = 0
    for seed in range(20):
        t = np.cumsum(np.random.default_rng(seed).exponential(1.0, 600))
        path = tmp_path / f"poisson{seed}.csv"
        path.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{x:.4f},100,10\n" for x in t))
        told += burst_note(str(path)) is not None
    assert told == 0
