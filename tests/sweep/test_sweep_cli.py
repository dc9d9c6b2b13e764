"""`chipwise sweep run|show|export`: JSON output, the short form, and one-line errors with exit code 2."""

from __future__ import annotations

import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


#: what a gRPC server (Ray's GCS, Ray Client) sends first: an empty HTTP/2 SETTINGS frame
GRPC_HELLO = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


@contextmanager
def _answering(reply: bytes) -> Iterator[int]:
    """A local port whose server sends `reply` to each connection, then closes it."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()

        def serve() -> None:
            while True:
                try:
                    conn, _ = listening.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(reply)

        threading.Thread(target=serve, daemon=True).start()
        yield int(listening.getsockname()[1])


def test_an_http_port_given_as_a_ray_address_is_one_line_at_once(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An HTTP server (the dashboard's port 8265, which RAY_ADDRESS often holds for the Jobs CLI) accepts the
    connection: ray.init had retried it for minutes, printing Ray's warnings."""
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    store = tmp_path / "s.duckdb"
    with _answering(b"HTTP/1.0 400 Bad request\r\n\r\n") as port:
        started = time.perf_counter()
        err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray", f"127.0.0.1:{port}"])
    assert (
        f"cannot start or reach Ray at 127.0.0.1:{port}: something at 127.0.0.1:{port} accepts connections but does "
        "not speak Ray's protocol (gRPC; it answered b'HTTP/1.0': an HTTP port such as the dashboard's 8265?)" in err
    )
    assert time.perf_counter() - started < 5 and fake.inits == 0 and not store.exists()


class _HangingRay(_FakeRay):
    """A ray whose init never returns (a gRPC server that is not Ray's: Ray retries it for minutes)."""

    def init(self, *args: Any, **kwargs: Any) -> None:
        self.inits += 1
        time.sleep(60)


def test_joining_ray_has_a_deadline(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chipwise.sweep import backends

    fake = _HangingRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(backends, "RAY_INIT_TIMEOUT_S", 0.5)
    store = tmp_path / "s.duckdb"
    with _answering(GRPC_HELLO) as port:
        started = time.perf_counter()
        err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray", f"127.0.0.1:{port}"])
    assert f"cannot start or reach Ray at 127.0.0.1:{port} (TimeoutError: joining did not finish within 0.5 s)" in err
    assert time.perf_counter() - started < 5 and fake.inits == 1 and not store.exists()


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
    # the two variants of the fix read as sentences (the RAY_ADDRESS one had read '... for a local Ray) (auto, ...')
    assert err.endswith(
        "Fix: correct RAY_ADDRESS (auto, or ray://HOST:10001) or unset it for a local Ray, and check that the cluster "
        "is up."
    )
    monkeypatch.delenv("RAY_ADDRESS")
    err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray", f"ray://127.0.0.1:{port}"])
    assert f"cannot start or reach Ray at ray://127.0.0.1:{port}: nothing accepts" in err
    assert err.endswith("Fix: check the address (auto, or ray://HOST:10001) and that the cluster is up.")
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
    with _answering(GRPC_HELLO) as port:
        address = f"ray://127.0.0.1:{port}"
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


def test_an_estimated_price_is_marked_in_tables_the_store_and_exports(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture
) -> None:
    """predict marks trn2's price (a catalog estimate: no on-demand SKU) with §; the sweep's table, store and exports
    had shown it as a listed price."""
    # 16 chips: one whole trn2.48xlarge (8 are billed as one, which no longer wins on cost)
    edits = [("chips: [8, 16, 32]", "hardware: [trn2, h100-sxm]"), ("what_if:", "x:"), ("chips: 8,", "chips: 16,")]
    sweep = write_sweep(edits=edits)
    sweep.write_text(sweep.read_text().split("x:")[0])  # no what-ifs: baseline only
    store = tmp_path / "s.duckdb"
    assert run(["sweep", str(sweep), "--store", str(store), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " trn2 " in line]
    assert rows and all(line.count(" §") == 2 for line in rows)  # the cost and the $/Mtok cells
    assert all("§" not in line for line in out.splitlines() if " h100-sxm " in line)
    assert "§ trn2: priced by a catalog estimate, not a published price" in out
    export = tmp_path / "s.csv"
    assert run(["sweep", "export", str(store), "--csv", str(export)]) == 0
    with duckdb.connect() as con:
        sql = f"SELECT DISTINCT hardware, price_status FROM read_csv_auto('{export}') ORDER BY 1"
        got = con.execute(sql).fetchall()
    assert got == [("h100-sxm", "spec"), ("trn2", "estimate")]


def test_show_marks_an_overloaded_serving_point(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    """A point offered more than its capacity ranks last (Store.ranked); the table had shown no reason, so a cheaper
    point that met its SLO read as mis-sorted."""
    text = (
        "name: serve\n"
        "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 1024,\n"
        "       output_tokens: 128, requests: 400, plan: {tp: 1, max_batch: 64}}\n"
        "grid: {arrival_rate: [2, 60]}\n"
    )
    store = tmp_path / "s.duckdb"
    assert run(["sweep", str(write_sweep(text)), "--store", str(store), "--workers", "1"]) == 0
    capsys.readouterr()
    assert run(["sweep", "show", str(store), "--by", "cost"]) == 0
    out = capsys.readouterr().out
    top = out.split("top 2 by cost")[1]
    rows = [line for line in top.splitlines() if line.startswith("baseline")]  # a narrow terminal wraps the point
    assert len(rows) == 2 and " - " in rows[0] and " * " in rows[1]  # 2 req/s first; 60 overloaded, no SLO: '*'
    assert top.index("=2") < top.index("=60")
    assert "* offered more requests than it serves (load.utilisation >= 1" in " ".join(out.split())


def test_a_serving_sweeps_hardware_typo_fails_before_running(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture
) -> None:
    """A training sweep's typo exits 2 at once; a serving one's had run every point and exited 0."""
    text = (
        "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 1024,\n"
        "       output_tokens: 128, arrival_rate: 2, requests: 50}\n"
        "grid: {hardware: [h200, h20O]}\n"
    )
    store = tmp_path / "s.duckdb"
    err = run_error(capsys, ["sweep", str(write_sweep(text)), "--store", str(store)])
    assert "hardware 'h20O': unknown chip or system 'h20O'" in err and "'h200'" in err and not store.exists()


def test_the_short_form_takes_options_first_and_names_a_store(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture
) -> None:
    """'sweep --store x.duckdb f.yaml' had failed with 'No such option: --store'; 'sweep x.duckdb' (meant as show)
    with a UTF-8 decoding error."""
    store = tmp_path / "x.duckdb"
    out = run_json(capsys, ["sweep", "--store", str(store), "--workers", "1", str(write_sweep()), "--json"])
    assert out["run"]["ok"] == 12 and store.is_file()
    err = run_error(capsys, ["sweep", str(store)])
    assert err == (
        f"error: '{store}' is a sweep store, not a sweep file. Fix: chipwise sweep show {store} to see it, or give the "
        "sweep YAML file to run."
    )


def test_the_run_says_how_many_points_first_and_takes_a_name(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture
) -> None:
    store, sweep = tmp_path / "s.duckdb", str(write_sweep())
    assert run(["sweep", sweep, "--store", str(store), "--workers", "1", "--name", "other"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("other: 12 points listed in the sweep file\n")
    assert "other: ran 12 of 12 points" in captured.out


def test_workers_with_ray_is_refused(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    """--workers 2 --ray had run on Ray without a word about the --workers it ignored."""
    store = tmp_path / "s.duckdb"
    err = run_error(capsys, ["sweep", str(write_sweep()), "--store", str(store), "--ray", "--workers", "2"])
    assert err == (
        "error: --workers does not apply to --ray: Ray places the tasks on its own cluster's CPUs. Fix: drop "
        "--workers (workers= from Python)."
    )
    assert not store.exists()


def test_the_run_says_how_many_points_it_ran_again_for_another_revision(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture
) -> None:
    store = str(tmp_path / "s.duckdb")
    assert run(["sweep", str(write_sweep(ONE_POINT)), "--store", store]) == 0
    with duckdb.connect(store) as con:
        con.execute("UPDATE points SET revision = 'older'")
    capsys.readouterr()
    assert run(["sweep", str(write_sweep(ONE_POINT)), "--store", store, "--resume"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the line wraps at the terminal's width
    assert "one: ran 1 of 1 point (0 already stored, 1 ok, 0 errors)" in out
    assert "; ran 1 point again, stored by another chipwise revision; store:" in out
