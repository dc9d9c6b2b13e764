"""A sensitivity's JSON says what its table says: a move under the run's resolution is no elasticity of 0 (which
reads 'the figure does not reach it') but null, named in `below_resolution`; a side that leaves a metric exactly
still reads 0.0, not -0.0; and `predictions` counts the moves priced, not those refused as their catalog loaded."""

from __future__ import annotations

import math
from pathlib import Path

import chipwise.api as cw
from chipwise.planner.sensitivity import _moved_row

ROOT_SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "train-llama70b-trn2.yaml"
#: llama-3.1-8b on 64 H100 without a plan: the planner picks one with DP communication fully overlapped (1)
TRAIN = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 64, "tokens": 1e11,
         "seq_len": 4096}  # fmt: skip


def test_a_move_under_the_resolution_has_no_elasticity() -> None:
    """HBM bandwidth -10% and +10% moved a 600-request TTFT p99 of 59.613 ms to 59.573 and 60.211 ms (-0.067% and
    +1.0%, both under 0.3 / sqrt(2 x 600 x 0.01) = 8.66%, and 15x apart): it had read elasticity 0.0."""
    base = {"ttft_p99": 0.059613, "tpot_p99": 0.010}
    row = _moved_row(
        {}, {"ttft_p99": 0.059573, "tpot_p99": 0.011}, {"ttft_p99": 0.060211, "tpot_p99": 0.0091}, base, 0.1,
        {"ttft_p99": 0.3 / math.sqrt(12), "tpot_p99": 0.3 / math.sqrt(12)},
    )  # fmt: skip
    assert row["elasticity"]["ttft_p99"] is None and row["below_resolution"] == ["ttft_p99"]
    # TPOT p99 +10% and -9%: past the resolution, ln(0.0091 / 0.011) / ln(1.1 / 0.9) = -0.945
    assert math.isclose(row["elasticity"]["tpot_p99"], math.log(0.0091 / 0.011) / math.log(1.1 / 0.9))
    clear = _moved_row({}, {"ttft_p99": 0.05}, {"ttft_p99": 0.07}, {"ttft_p99": 0.06}, 0.1, {"ttft_p99": 0.0866})
    assert "below_resolution" not in clear and clear["elasticity"]["ttft_p99"] > 0


def test_a_figure_at_its_bound_reads_plain_zero() -> None:
    """dp_overlap at its bound of 1: x0.9 leaves the step as it was, x1.1 cannot be priced; ln 1 / ln 0.9 had read
    "step_time": -0.0."""
    result = cw.sensitivity(TRAIN, only=["dp_overlap"])
    (row,) = result["figures"]
    assert row["figure"] == "efficiency.hopper.dp_overlap" and "error" in row["plus"]
    assert row["change"]["minus"]["step_time"] == 0.0
    for value in row["elasticity"].values():
        assert value == 0.0 and math.copysign(1.0, value) == 1.0
    assert result["predictions"] == 2  # the baseline and the -10% side: +10% was refused as its catalog loaded


def test_predictions_count_the_moves_priced() -> None:
    """Trn2's host power per chip is derived (from the system's power and its chips' TDP): both its moves are refused
    as their catalog loads ("unknown figure") and had been counted as predictions; the datacenter's host power share
    has its two moves priced: 1 + 2 = 3, not 5."""
    result = cw.sensitivity(ROOT_SCENARIO, only=["host_power"])
    assert [r["figure"] for r in result["figures"]] == ["datacenter.opex.host_power_fraction"]
    assert [(r["figure"], r["kind"]) for r in result["not_priced"]] == [
        ("trn2.48xlarge.host_power_per_chip", "derived")
    ]
    assert result["predictions"] == 3
