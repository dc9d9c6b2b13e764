"""`chipwise sensitivity`'s table: it reads whole at 80 columns, names the metrics a figure moves alike, says where a
cap absorbs a move and how finely a short serving run reads a latency."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chipwise.interfaces.cli.common import console
from chipwise.interfaces.cli.sensitivity_cmd import _also, print_sensitivity

LABELS = {k: {"label": k, "unit": "s"} for k in ("step_time", "cost", "energy")}


def _row(name: str, e: dict[str, float | None], capped: str | None = None) -> dict[str, Any]:
    change = {
        side: {k: (0.0 if side == capped else -0.1 * (v or 0.0)) for k, v in e.items()} for side in ("minus", "plus")
    }
    return {
        "figure": name,
        "value": 128.0,
        "unit": "1",
        "status": "estimate",
        "minus": {},
        "plus": {},
        "change": change,
        "elasticity": e,
        **({"capped": dict.fromkeys(e, capped)} if capped else {}),
    }


def test_metrics_moved_alike_are_named_not_dashed() -> None:
    """FLOP/s moves all five training metrics by -0.86; '-' had read as moving nothing else."""
    assert _also(_row("f", {"step_time": -0.86, "cost": -0.86, "energy": -0.86}), "step_time", LABELS) == (
        "all alike (-0.86)"
    )
    assert _also(_row("f", {"step_time": -0.86, "cost": -0.86, "energy": 0.0}), "step_time", LABELS) == (
        "cost alike (-0.86)"
    )
    assert _also(_row("f", {"step_time": 0.5, "cost": 0.0, "energy": None}), "step_time", LABELS) == "-"


def _result(rows: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "metric": "step_time",
        "metrics": LABELS,
        "scenario_kind": "serve",
        "model": "m",
        "chips": 8,
        "hardware": "h200",
        "plan": {},
        "plan_held": False,
        "step": 0.1,
        "figures": rows,
        "not_priced": [{"figure": "efficiency.hopper.tile_m", "kind": "discrete"}],
        "baseline": {"step_time": 1.0},
        "predictions": 5,
        "workers": 1,
        "seconds": 1.0,
        **extra,
    }


@pytest.mark.parametrize("width", [80, 120])
def test_the_table_reads_whole_at_80_and_120_columns(
    width: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns every number had been cut ('+9…', '-0…'), at 120 a long name cut the elasticity header. A side
    a cap absorbs reads 'capped' and is said so; a short run's resolution is stated."""
    monkeypatch.setattr(console, "width", width)
    rows = [
        _row("datacenter.electricity_usd_per_kwh.country-usa", {"step_time": -0.8612, "cost": -0.8612, "energy": 0.2}),
        _row("engines.trtllm.memory_scale", {"step_time": -0.42, "cost": 0.0, "energy": 0.0}, capped="plus"),
        _row("h200.flops.bf16", {"step_time": 0.0004, "cost": 0.0, "energy": 0.0}),
    ]
    rows[2]["change"]["minus"]["step_time"] = 0.0048  # under the resolution: ~0
    print_sensitivity(_result(rows, requests=2000, resolution=0.02, resolutions={"step_time": 0.0067}), 12)  # its own
    out = capsys.readouterr().out
    assert "…" not in out
    assert "elasticity" in out and "+8.61%" in out and "-0.86" in out
    assert "capped" in out and "engines.trtllm.memory_scale +10% leaves step_time still: the model caps" in " ".join(
        out.split()
    )
    assert "~0" in out and "A serving run of 2,000 requests reads step_time to about 0.7%" in " ".join(out.split())
    assert "1 is a tile size or a count" in " ".join(out.split())
    assert max(len(line) for line in out.splitlines()) <= width


def test_the_plot_draws_the_rows_the_table_shows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--top 2 had drawn every moving figure (up to 12) where the table listed 2."""
    from chipwise.interfaces.cli import sensitivity_cmd
    from chipwise.interfaces.cli.app import run

    drawn: list[dict[str, Any]] = []
    monkeypatch.setattr(sensitivity_cmd, "write_plot", lambda result, path: drawn.append(dict(result)))
    scenario = "{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: 1e9}"
    argv = ["sensitivity", scenario, "--top", "2", "--figures", "h100-sxm", "--plot", str(tmp_path / "s.png")]
    assert run(argv) == 0
    (result,) = drawn
    assert len(result["figures"]) == 2
