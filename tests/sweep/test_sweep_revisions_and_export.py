"""What show and export say of points another chipwise revision computed (their figures may predate an upgrade:
only `run --resume` had noticed them), and an export that checks every target before it writes any
(`--parquet A --csv B` had written A and then failed on B)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import duckdb
import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.app import run
from chipwise.sweep import export_store, load_sweep, run_sweep
from chipwise.sweep.store import revision
from cli_run import run_error, run_json

Capture = pytest.CaptureFixture[str]

#: two points, in well under a second
TWO_POINTS = """\
name: two
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, tokens: 1e11, seq_len: 2048}
grid:
  chips: [8, 16]
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("two")
    (folder / "two.yaml").write_text(TWO_POINTS)
    path = folder / "s.duckdb"
    run_sweep(load_sweep(folder / "two.yaml"), path, workers=1)
    return path


@pytest.fixture
def store(stored: Path, tmp_path: Path) -> Path:
    """A copy of the two-point store, its 16-chip point marked as another revision's."""
    path = Path(shutil.copy(stored, tmp_path / "s.duckdb"))
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE points SET revision = 'older' WHERE id IN (SELECT id FROM results WHERE chips = 16)")
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_export_gives_each_points_revision(store: Path, tmp_path: Path) -> None:
    assert export_store(store, csv=tmp_path / "e.csv") == 2
    got = {row["chips"]: row["revision"] for row in _rows(tmp_path / "e.csv")}
    assert got == {"8": revision(), "16": "older"}


def test_show_says_how_many_points_another_revision_computed(store: Path, stored: Path, capsys: Capture) -> None:
    assert [s["outdated"] for s in run_json(capsys, ["sweep", "show", str(store), "--json"])["sweeps"]] == [1]
    assert run(["sweep", "show", str(store)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    source = stored.parent / "two.yaml"
    assert (
        "1 point computed by another chipwise revision (its code or built-in catalog): the figures may have moved "
        f"since; chipwise sweep run {source} --store {store} --name two --resume computes it again." in out
    )
    assert [s["outdated"] for s in run_json(capsys, ["sweep", "show", str(stored), "--json"])["sweeps"]] == [0]
    assert run(["sweep", "show", str(stored)]) == 0
    assert "revision" not in capsys.readouterr().out


def test_a_store_from_before_revisions_reads_as_another_revisions(store: Path, tmp_path: Path, capsys: Capture) -> None:
    """Read-only, it is not migrated: no revision column, every point another revision's (as --resume counts)."""
    with duckdb.connect(str(store)) as con:
        con.execute("ALTER TABLE points DROP COLUMN revision")
    assert [s["outdated"] for s in run_json(capsys, ["sweep", "show", str(store), "--json"])["sweeps"]] == [2]
    assert export_store(store, csv=tmp_path / "e.csv") == 2
    assert [row["revision"] for row in _rows(tmp_path / "e.csv")] == ["", ""]


def test_a_missing_folder_for_the_second_target_writes_neither(store: Path, tmp_path: Path, capsys: Capture) -> None:
    parquet = tmp_path / "x.parquet"
    err = run_error(capsys, ["sweep", "export", str(store), "--parquet", str(parquet), "--csv", "/nonexistent/x.csv"])
    assert err == "error: folder '/nonexistent' does not exist. Fix: create it or export elsewhere."
    assert not parquet.exists()


def test_a_folder_as_a_target_is_said_to_be_one(store: Path, tmp_path: Path, capsys: Capture) -> None:
    """It had read DuckDB's 'IO Error: Cannot open file ...: File exists', after the Parquet file was written."""
    parquet, folder = tmp_path / "x.parquet", tmp_path / "dir.csv"
    folder.mkdir()
    parquet.write_text("kept")  # an earlier export: a failed one does not replace it
    err = run_error(capsys, ["sweep", "export", str(store), "--parquet", str(parquet), "--csv", str(folder)])
    assert err == f"error: cannot write '{folder}': it is a folder. Fix: name a file, e.g. '{folder / 'sweep.csv'}'."
    assert parquet.read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.csv", "s.duckdb", "x.parquet"]  # no part left


def test_a_failed_write_leaves_no_file(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second COPY failing (a full disk, say) after the first succeeded: neither target appears."""
    real = duckdb.DuckDBPyConnection.execute
    calls: list[str] = []

    def execute(con: duckdb.DuckDBPyConnection, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        if sql.startswith("COPY"):
            calls.append(sql)
            if len(calls) == 2:
                raise duckdb.IOException("No space left on device")
        return real(con, sql, *args)

    monkeypatch.setattr(duckdb.DuckDBPyConnection, "execute", execute)
    with pytest.raises(ChipwiseError, match="No space left on device"):
        export_store(store, parquet=tmp_path / "x.parquet", csv=tmp_path / "x.csv")
    assert len(calls) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb"]


def test_the_store_itself_is_not_an_export_target(store: Path, tmp_path: Path) -> None:
    named = Path(shutil.copy(store, tmp_path / "store.csv"))
    with pytest.raises(ChipwiseError, match="is the store being exported"):
        export_store(named, csv=named)
    assert duckdb.connect(str(named), read_only=True).execute("SELECT count(*) FROM points").fetchall() == [(2,)]
