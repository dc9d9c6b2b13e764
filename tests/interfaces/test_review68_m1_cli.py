"""Review 68, M1 (A1): the `chipwise predict` command that plan serve --scenario prints is one line to copy, however
narrow stderr is: Rich had broken it at 80 columns where stderr is a file or a pipe."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from chipwise.interfaces.cli import plan_serve_cmd


def test_the_scenario_command_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(plan_serve_cmd, "err_console", Console(file=err, width=80))  # a file: 80 columns
    path = tmp_path / "a-rather-long-folder-name-for-the-scenario" / "[s5].yaml"
    path.parent.mkdir()
    report = {"verified": [{"keeps_up": True, "slo_met": True, "hardware": "h100-sxm", "scenario": {"kind": "serve"}}]}
    plan_serve_cmd.write_scenario(report, path, sets=["h100-sxm.price=2.5"])
    assert err.getvalue() == (
        f"h100-sxm written to {path}: chipwise predict '{path}' --set h100-sxm.price=2.5\n"  # the path not markup
    )
    assert path.read_text() == "kind: serve\n"
