"""What --store accepts: someone else's DuckDB database is refused untouched, an empty file is a new store, and the
open error's fix fits the error."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from chipwise.errors import ChipwiseError
from chipwise.sweep import Store, export_store, load_sweep, run_sweep
from cli_run import run_error

WriteSweep = Callable[..., Path]
Capture = pytest.CaptureFixture[str]


@pytest.mark.parametrize(
    ("create", "table", "missing"),
    [
        (
            "CREATE TABLE results (x INT); INSERT INTO results VALUES (42)",
            "results",
            "the columns 'sweep', 'id', 'what_if'",
        ),
        (
            "CREATE TABLE points (a INT, b VARCHAR); INSERT INTO points VALUES (1, 'b')",
            "points",
            "the columns 'sweep', 'id', 'what_if', 'scenario', 'status', 'error'",
        ),
        (
            "CREATE TABLE sweeps (name VARCHAR, spec JSON, points INT); INSERT INTO sweeps VALUES ('n', '{}', 1)",
            "sweeps",
            "the column 'source'",
        ),
    ],
)
def test_a_database_that_is_not_a_store_is_refused_and_left_unchanged(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, create: str, table: str, missing: str
) -> None:
    """A DuckDB file with its own `results (x int)` had gained 77 columns and tables `sweeps` and `points`, then
    stopped with 'internal error: BinderException'; `show` on it gave an internal error too."""
    db = tmp_path / "theirs.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(create)
        before = con.execute(f"SELECT * FROM {table}").fetchall()
    data = db.read_bytes()
    problem = f"'{db}' is a DuckDB database but not a chipwise sweep store (its table '{table}' lacks {missing})."
    err = run_error(capsys, ["sweep", "run", str(write_sweep()), "--store", str(db)])
    assert err == f"error: {problem} Fix: give the --store file a sweep wrote, or a new file's name."
    read = f"error: {problem} Fix: give the --store file a sweep wrote."
    assert run_error(capsys, ["sweep", "show", str(db)]) == read
    assert run_error(capsys, ["sweep", "export", str(db), "--csv", str(tmp_path / "o.csv")]) == read
    assert db.read_bytes() == data and not (tmp_path / "o.csv").exists()
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        assert tables == [table] and con.execute(f"SELECT * FROM {table}").fetchall() == before


def test_an_empty_file_is_a_new_store(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    """What `mktemp --suffix .duckdb` leaves had been refused with DuckDB's 'not a valid DuckDB database file' and
    'Fix: wait for the sweep writing it to finish'."""
    store = tmp_path / "empty.duckdb"
    store.touch()
    assert run_error(capsys, ["sweep", "show", str(store)]) == (
        f"error: '{store}' is empty, not a sweep store. Fix: give the --store file a sweep wrote."
    )
    stats = run_sweep(load_sweep(write_sweep()), store, workers=1)
    assert (stats.ran, stats.ok) == (12, 12)
    assert export_store(store, csv=tmp_path / "e.csv") == 12


def test_the_open_errors_fix_fits_the_error(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """Every error opening a store had said 'Fix: wait for the sweep writing it to finish', a permission error too;
    that fix is for the lock another process holds."""
    store = tmp_path / "held.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys, time; c = duckdb.connect({str(store)!r}); print(1, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        with pytest.raises(ChipwiseError) as exc:
            Store(store)
    finally:
        holder.kill()
        holder.wait()
    assert f"cannot open store '{store}': IO Error: Could not set lock" in str(exc.value)
    assert str(exc.value).endswith("Fix: wait for the sweep writing it to finish, or give another --store.")
    with pytest.raises(ChipwiseError) as exc:
        Store("/sys/no.duckdb")  # a folder no one may create a file in, root included
    assert str(exc.value) == (
        "cannot open store '/sys/no.duckdb': IO Error: Cannot open file \"/sys/no.duckdb\": Permission denied. Fix: "
        "check the permissions of the file and its folder, or give another --store."
    )
    with pytest.raises(ChipwiseError) as exc:
        Store("/proc/self/no.duckdb")  # a folder that takes no new file: neither lock nor permissions
    assert str(exc.value).endswith("No such file or directory. Fix: give another --store.")
