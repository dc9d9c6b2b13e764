"""`chipwise sweep run|show|export`: JSON output, the short form, and one-line errors with exit code 2."""

from __future__ import annotations

import socket
import sys
import time
import types
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
        # docs/sweep.md: checked before the store is opened (it had stored each point as failed, exit 0)
        ({"edits": [("chips: [8, 16, 32]", "plan.tq: [4]")]}, "unknown plan key 'tq'"),
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


def test_a_folder_or_a_file_that_is_no_store_is_named(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    """A folder read as 'does not exist'; a missing folder or a YAML file given as the store printed DuckDB's own
    error and 'Fix: wait for the sweep writing it to finish'."""
    sweep = str(write_sweep())
    assert f"sweep file '{tmp_path}' is a folder. Fix: name a sweep file in it." in run_error(
        capsys, ["sweep", "run", str(tmp_path)]
    )
    assert f"store '{tmp_path}' is a folder. Fix: name a store in it." in run_error(
        capsys, ["sweep", "show", str(tmp_path)]
    )
    missing = tmp_path / "nope" / "s.duckdb"
    err = run_error(capsys, ["sweep", "run", sweep, "--store", str(missing)])
    assert f"folder '{missing.parent}' for the store does not exist. Fix: create it, or give another --store." in err
    err = run_error(capsys, ["sweep", "show", sweep])
    assert f"'{sweep}' is not a DuckDB store. Fix: give the --store file a sweep wrote." in err
    err = run_error(capsys, ["sweep", "run", sweep, "--store", sweep])
    assert "is not a DuckDB store" in err and "wait" not in err


def test_ray_missing_is_a_one_line_error(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: `import ray` fails
    store = tmp_path / "s.duckdb"
    err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray"])
    assert "needs Ray, which is not installed" in err and "pip install 'chipwise[ray]'" in err
    assert not store.exists()


class _FakeRay(types.ModuleType):
    """A `ray` module that never starts: init raises what it is given (or fails the test where it must not run)."""

    def __init__(self, init_error: Exception | None = None) -> None:
        super().__init__("ray")
        self.init_error, self.inits = init_error, 0

    def is_initialized(self) -> bool:
        return False

    def init(self, *args: Any, **kwargs: Any) -> None:
        self.inits += 1
        raise self.init_error or AssertionError("ray.init must not be called")


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_ray_address_is_one_line_in_seconds(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RAY_ADDRESS=127.0.0.1:1 had hung for minutes in Ray's retries, printing a warning every few seconds; the
    address is tried first (a few seconds at most), and the error names it and where it came from."""
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "grpc", types.ModuleType("grpc"))  # as if ray[client] were installed
    port, store = _closed_port(), tmp_path / "s.duckdb"
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    started = time.perf_counter()
    err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray"])
    assert f"cannot start or reach Ray at 127.0.0.1:{port} (RAY_ADDRESS): nothing accepts connections" in err
    assert "Fix: correct RAY_ADDRESS (or unset it for a local Ray)" in err
    monkeypatch.delenv("RAY_ADDRESS")
    err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray", f"ray://127.0.0.1:{port}"])
    assert f"cannot start or reach Ray at ray://127.0.0.1:{port}: nothing accepts" in err and "check the address" in err
    assert time.perf_counter() - started < 30 and fake.inits == 0 and not store.exists()


def test_ray_client_missing_names_the_package(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--ray ray://HOST:PORT needs ray[client]; Ray's error had been read as a bad address ('Fix: check the address
    ... and that the cluster is up')."""
    monkeypatch.setitem(sys.modules, "ray", _FakeRay())
    monkeypatch.setitem(sys.modules, "grpc", None)  # Ray Client's dependency not installed
    argv = ["sweep", str(write_sweep()), "--store", str(tmp_path / "s.duckdb"), "--ray", "ray://head:10001"]
    err = run_error(capsys, argv)
    assert "ray://head:10001 goes through Ray Client, which needs the package ray[client]" in err
    assert "Fix: pip install 'chipwise[ray]' (or 'ray[client]>=2.9')." in err and "check the address" not in err
    # where Ray itself says so (a Ray that checks more than its grpc dependency), the fix names the package too
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        address = f"ray://127.0.0.1:{listening.getsockname()[1]}"
        message = "Ray Client requires pip package `ray[client]`. If you installed the minimal Ray, reinstall."
        monkeypatch.setitem(sys.modules, "ray", _FakeRay(ValueError(message)))
        monkeypatch.setitem(sys.modules, "grpc", types.ModuleType("grpc"))
        err = run_error(capsys, [*argv[:-1], address])
    assert "needs the package ray[client]" in err and "pip install 'chipwise[ray]'" in err
    assert "check the address" not in err


def test_show_fits_100_columns_with_the_figures_plan_train_gives(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trn-vs-gpu example shown at 100 columns: the cost column read '$39.…', names 'what…', and a plan took
    six lines; the figures were the ideal ones where plan train ranks and shows the expected. Now every figure is
    whole, the model is named once, and the cost is plan train's expected cost."""
    from chipwise.catalog import load_catalog
    from chipwise.planner.training import plan_training

    store = tmp_path / "f.duckdb"
    assert run(["sweep", "examples/trn-vs-gpu.yaml", "--store", str(store), "--workers", "1", "--json"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "100")
    assert run(["sweep", "show", str(store)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 100
    assert "best point per what-if, by time and by cost (llama-3.1-70b)" in out
    best = run_json(capsys, ["sweep", "show", str(store), "--json"])["sweeps"][0]["best"]
    fastest = next(b for b in best if b["what_if"] == "baseline" and b["best_by"] == "time")
    plan = plan_training(load_catalog(), "llama-3.1-70b", fastest["chips"], [fastest["hardware"]], tokens=15e12)
    assert fastest["expected_cost_usd"] == pytest.approx(plan["results"][0]["expected_cost_usd"], rel=1e-9)


def test_show_marks_an_hour_of_training_where_a_sweep_gives_no_tokens(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without tokens a training point prices one hour, as plan train labels its columns 'cost /hour': sweep show
    had printed '$32.68' and '15.7 kg' under plain 'cost' and 'CO2e', beside whole runs' totals in a store that
    holds both."""
    sweep = write_sweep(edits=[(", tokens: 1e11", ""), ("chips: [8, 16, 32]", "chips: [8]")])
    store = tmp_path / "h.duckdb"
    assert run(["sweep", str(sweep), "--store", str(store), "--workers", "1", "--json"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "160")
    assert run(["sweep", "show", str(store), "--by", "cost"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "h100-sxm" in line]
    assert rows and all("/h" in line for line in rows)


ONE_POINT = """\
name: one
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, tokens: 1e11, seq_len: 2048}
grid: {chips: [8, 8.0, '8']}
what_if:
  cheap: ["h100-sxm.price=0.5"]
"""


def test_the_run_says_what_it_dropped_and_one_point_is_singular(
    write_sweep: WriteSweep, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'ran 1 of 1 points' and '1 points stored ... of 3' for chips: [8, 8.0, '8']; an edited sweep resumed said
    nothing of the points it no longer has."""
    store = str(tmp_path / "s.duckdb")
    assert run(["sweep", str(write_sweep(ONE_POINT)), "--store", store]) == 0
    assert "one: ran 1 of 1 point (0 already stored, 1 ok, 0 errors)" in capsys.readouterr().out
    assert run(["sweep", "show", store]) == 0
    assert "one: 1 point stored (1 ok, 0 errors) of 1 in" in capsys.readouterr().out
    edited = write_sweep(ONE_POINT, edits=[("price=0.5", "price=5")])
    assert run(["sweep", str(edited), "--store", store, "--resume"]) == 0
    assert "; dropped 1 point no longer in the sweep; store:" in capsys.readouterr().out
