"""`chipwise sweep run|show|export`: JSON output, the short form, and one-line errors with exit code 2."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_error, run_json

WriteSweep = Callable[..., Path]

Capture = pytest.CaptureFixture[str]


def test_run_short_form_show_and_export(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    sweep, store = write_sweep(base="errors"), tmp_path / "s.duckdb"
    out = run_json(capsys, ["sweep", str(sweep), "--store", str(store), "--workers", "1", "--json"])
    assert out["run"]["ran"] == 4 and out["run"]["ok"] == 2 and out["run"]["errors"] == 2
    assert {(b["what_if"], b["best_by"]) for b in out["best"]} == {("baseline", "time"), ("baseline", "cost")}
    assert out["best"][0]["plan"]["tp"] >= 1 and out["error_messages"][0]["points"] == 1
    shown = run_json(capsys, ["sweep", "show", str(store), "--top", "1", "--json"])
    (s,) = shown["sweeps"]
    assert (s["sweep"], s["points"], s["ok"], s["errors"], len(s["top"])) == ("errs", 4, 2, 2, 1)
    assert s["axes"] == ["model", "chips"]
    assert run(["sweep", "show", str(store), "--by", "cost"]) == 0
    assert "errs: best point per what-if" in capsys.readouterr().out
    parquet = tmp_path / "o.parquet"
    assert run(["sweep", "export", str(store), "--parquet", str(parquet)]) == 0
    assert "wrote 4 points" in capsys.readouterr().err
    with duckdb.connect() as con:
        assert con.execute(f"SELECT count(*) FROM '{parquet}'").fetchall()[0][0] == 4


def test_resume_through_the_cli(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    sweep, store = write_sweep(), tmp_path / "s.duckdb"
    argv = ["sweep", "run", str(sweep), "--store", str(store), "--workers", "1"]
    assert run(argv) == 0
    assert "small: ran 12 of 12 points" in capsys.readouterr().out
    err = run_error(capsys, argv)
    assert "already holds sweep 'small'" in err and "--resume" in err
    assert run_json(capsys, [*argv, "--resume", "--json"])["run"]["skipped"] == 12


@pytest.mark.parametrize(
    ("how", "needle"),
    [
        ({"append": "grdi: {}\n"}, "unknown key 'grdi'"),
        ({"edits": [("  model: [llama-3.1-8b, qwen3-8b]\n  chips: [8, 16, 32]\n", "  {}\n")]}, "grid is empty"),
        ({"text": "name: x\nbase: {model: [\n"}, "not valid YAML"),
        ({"edits": [("h100-sxm.hbm_bandwidth", "h900.hbm_bandwidth")]}, "unknown catalog id 'h900'"),
    ],
)
def test_bad_sweep_files_exit_2_and_store_nothing(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, how: dict[str, Any], needle: str
) -> None:
    store = tmp_path / "s.duckdb"
    err = run_error(capsys, ["sweep", "run", str(write_sweep(**how)), "--store", str(store)])
    assert needle in err and "Fix:" in err
    assert not store.exists()


def test_bad_stores_and_options_exit_2(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    assert "does not exist" in run_error(capsys, ["sweep", "show", str(tmp_path / "none.duckdb")])
    assert "--parquet" in run_error(capsys, ["sweep", "export", str(tmp_path / "none.duckdb")])
    assert "does not exist" in run_error(capsys, ["sweep", str(tmp_path / "missing.yaml")])
    assert "--workers" in run_error(capsys, ["sweep", str(write_sweep()), "--workers", "0"])


def test_ray_missing_is_a_one_line_error(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: `import ray` fails
    store = tmp_path / "s.duckdb"
    err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray"])
    assert "needs Ray, which is not installed" in err and "pip install 'ray>=2.9'" in err
    assert not store.exists()
