"""plan train's note where failures take over half the run: the failure rate as the table prints it (it read
'every 33.0 d (0 per day)'), 'no fleet size' where even one chip misses half goodput (it read 'at most 1 chips'),
and chip or chips as the count says."""

from __future__ import annotations

import re

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _scale_note

SLOW_STORE = "reliability.checkpoint.storage_aggregate_bandwidth=1B/s"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the note on one line, whatever the terminal


def _note(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    cmd = ["plan", "train", "--tokens", "1e12", "--hardware", "h100-sxm", "--recovery", "checkpoint", *args]
    assert run([*cmd, "--set", SLOW_STORE]) == 0
    out = " ".join(capsys.readouterr().out.split())
    return out[re.search(r"on the \d", out).start() :]  # type: ignore[union-attr]


def test_a_rare_failure_reads_as_a_rate_and_no_fleet_keeps_half(capsys: pytest.CaptureFixture[str]) -> None:
    """64 H100s fail 0.030 times a day (every 33 d); at 1 B/s even one chip's checkpoint never ends."""
    note = _note(capsys, "--model", "llama-3.1-8b", "--chips", "64")
    assert note.startswith("on the 64 chips it runs a failure every 33.0 d (0.030 per day) leaves <0.1% goodput")
    assert "at its step time, no fleet size keeps half the run for training" in note
    assert "(0 per day)" not in note and "at most 1 chips" not in note


def test_one_chip_is_singular_and_has_no_peer(capsys: pytest.CaptureFixture[str]) -> None:
    note = _note(capsys, "--model", "llama-3.2-1b", "--chips", "1")
    assert note.startswith("on the 1 chip it runs a failure every 3.06 y (0.00089 per day)")
    assert "with checkpoint-restart (in-memory recovery needs a second host); at its step time, no fleet size" in note


def test_a_fleet_of_one_that_keeps_half_is_singular(capsys: pytest.CaptureFixture[str]) -> None:
    rel = {"chips": 4, "mtbf_s": 3600.0, "failures_per_day": 24.0, "goodput_checkpoint": 0.2, "goodput_in_memory": 0.3}
    _scale_note([{"goodput": 0.3, "chips": 4, "reliability": rel, "half_goodput_chips": 1}])
    out = " ".join(capsys.readouterr().out.split())
    assert "(24.0 per day)" in out and out.endswith("half the run goes to training on at most 1 chip")
