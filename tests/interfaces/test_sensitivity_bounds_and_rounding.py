"""`chipwise sensitivity`'s table: a figure at its bound whose other side moves nothing is counted with the figures
that move no metric, not ranked with a signed '-0.00'; the elasticity column rounds as 'also moves' does; a move
under the run's resolution (null in --json) still reads '~0'."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.interfaces.cli.common import console
from chipwise.interfaces.cli.sensitivity_cmd import print_sensitivity
from chipwise.interfaces.format import elasticity

LABELS = {k: {"label": k, "unit": "s"} for k in ("step_time", "energy")}


def _row(name: str, e: dict[str, float | None], minus: dict[str, Any], plus: dict[str, Any]) -> dict[str, Any]:
    change = {side: {k: -0.1 * (v or 0.0) for k, v in e.items()} for side in ("minus", "plus")}
    return {"figure": name, "value": 1.0, "unit": "1", "status": "estimate", "minus": minus, "plus": plus,
            "change": change, "elasticity": e}  # fmt: skip


def _result(rows: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"metric": "step_time", "metrics": LABELS, "scenario_kind": "train", "model": "m", "chips": 64,
            "hardware": "h100-sxm", "plan": {}, "plan_held": False, "step": 0.1, "figures": rows, "not_priced": [],
            "baseline": {"step_time": 1.86}, "predictions": 4, "workers": 1, "seconds": 1.0, **extra}  # fmt: skip


def test_a_figure_at_its_bound_is_counted_not_ranked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """dp_overlap at 1: -10% moves nothing, +10% cannot be priced; it had been row 10 reading '+0.00%  cannot price
    -0.00'. kernel_overhead's 0.00545 had read '+0.01' as its elasticity and '(+0.005)' beside it."""
    monkeypatch.setattr(console, "width", 160)
    bound = _row(
        "efficiency.hopper.dp_overlap", {"step_time": 0.0, "energy": 0.0}, {}, {"error": "1.1 is not in [0, 1]"}
    )
    bound["change"]["plus"] = {"step_time": None, "energy": None}
    kernel = _row("efficiency.hopper.kernel_overhead", {"step_time": 0.00545, "energy": 0.00545}, {}, {})
    print_sensitivity(_result([kernel, bound]), 12)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "kernel_overhead" in line]
    assert len(lines) == 1 and lines[0].count("+0.005") == 2 and "+0.01" not in lines[0]
    assert "dp_overlap" not in out and "-0.00" not in out and "cannot price" not in out
    assert "1 moves no metric (an elasticity under 0.001; 1 of them at a bound, the other side not priced)" in " ".join(
        out.split()
    )


def test_a_move_under_the_resolution_reads_0_in_the_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A latency move under the run's resolution is null in --json: the table's cells read '~0' as before, and a
    side that cannot be priced keeps the row ranked (cannot price) with '~0' as its elasticity, not '-'."""
    monkeypatch.setattr(console, "width", 160)
    row = _row("h100-sxm.hbm_bandwidth", {"step_time": None, "energy": -0.02}, {}, {"error": "does not fit"})
    row["change"]["minus"]["step_time"] = -0.0007
    row["below_resolution"] = ["step_time"]
    print_sensitivity(_result([row], requests=600, resolutions={"step_time": 0.0866}), 12)
    line = next(line for line in capsys.readouterr().out.splitlines() if "hbm_bandwidth" in line)
    assert line.split("│")[5:8] == ["      ~0 ", " cannot price ", "         ~0 "]


def test_an_elasticity_that_rounds_to_nothing_is_unsigned() -> None:
    assert [elasticity(v) for v in (-0.0, -0.0004, 0.0049, -0.86)] == ["0", "0", "+0.005", "-0.86"]
