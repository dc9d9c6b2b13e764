"""A store, a Parquet and a CSV file are written under their own suffixes (docs/sweep.md: fleet.duckdb,
fleet.parquet, fleet.csv): `sweep run --store ok.csv` had written a DuckDB database under a CSV's name, and
`sweep export --parquet x.txt` Parquet under a text file's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from chipwise.errors import ChipwiseError
from chipwise.sweep import Store, export_store, load_sweep, run_sweep
from cli_run import run_error, run_json

WriteSweep = Callable[..., Path]
Capture = pytest.CaptureFixture[str]

#: one point: a sweep that runs in well under a second
ONE_POINT = """\
name: one
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, tokens: 1e11, seq_len: 2048}
grid:
  chips: [8]
"""


@pytest.fixture
def store(write_sweep: WriteSweep, tmp_path: Path) -> Path:
    """A store holding one sweep of one point."""
    path = tmp_path / "s.duckdb"
    run_sweep(load_sweep(write_sweep(ONE_POINT)), path, workers=1)
    return path


@pytest.mark.parametrize("name", ["ok.csv", "store", "s.duckdb.bak"])
def test_a_store_not_named_duckdb_is_refused_before_it_is_written(
    write_sweep: WriteSweep, tmp_path: Path, capsys: Capture, name: str
) -> None:
    target = tmp_path / name
    meant = target.with_name(f"{target.stem}.duckdb")
    err = run_error(capsys, ["sweep", "run", str(write_sweep(ONE_POINT)), "--store", str(target)])
    assert (
        f"store '{target}' does not end in .duckdb, yet would hold a DuckDB database. Fix: give a name ending in "
        f".duckdb, e.g. {meant}." in err
    )
    assert not target.exists()
    with pytest.raises(ChipwiseError, match=r"does not end in \.duckdb"):
        Store(target)


def test_a_store_named_duckdb_in_any_case_is_written(write_sweep: WriteSweep, tmp_path: Path, capsys: Capture) -> None:
    target = tmp_path / "Fleet.DuckDB"
    out = run_json(capsys, ["sweep", "run", str(write_sweep(ONE_POINT)), "--store", str(target), "--json"])
    assert out["run"]["ran"] == 1 and target.is_file()


def test_a_store_already_written_under_another_name_is_still_read(store: Path, capsys: Capture) -> None:
    """Reading (show, export) does not write the store: one written before the check is read as before."""
    renamed = store.rename(store.with_name("old.db"))
    shown = run_json(capsys, ["sweep", "show", str(renamed), "--json"])
    assert shown["sweeps"][0]["sweep"] == "one"
    assert export_store(renamed, parquet=renamed.with_name("old.parquet")) == 1


def test_a_store_already_written_under_another_name_resumes(
    store: Path, write_sweep: WriteSweep, capsys: Capture
) -> None:
    """The suffix is a new store's: a sweep written before the check had been refused its --resume."""
    renamed = store.rename(store.with_name("old.db"))
    out = run_json(capsys, ["sweep", "run", str(write_sweep(ONE_POINT)), "--store", str(renamed), "--resume", "--json"])
    assert out["run"]["ran"] == 0 and renamed.is_file()


@pytest.mark.parametrize(
    ("option", "name", "holds", "suffix"),
    [
        ("--parquet", "x.txt", "Parquet", ".parquet"),
        ("--parquet", "x.csv", "Parquet", ".parquet"),
        ("--csv", "x.tsv", "CSV", ".csv"),
        ("--csv", "x.parquet", "CSV", ".csv"),
    ],
)
def test_an_export_not_named_for_its_format_is_refused(
    store: Path, tmp_path: Path, capsys: Capture, option: str, name: str, holds: str, suffix: str
) -> None:
    target = tmp_path / name
    err = run_error(capsys, ["sweep", "export", str(store), option, str(target)])
    meant = target.with_name(f"{target.stem}{suffix}")
    assert (
        f"{holds} file '{target}' does not end in {suffix}, yet would hold {holds} rows. Fix: give a name ending in "
        f"{suffix}, e.g. {meant}." in err
    )
    assert not target.exists()


def test_a_bad_name_writes_neither_export(store: Path, tmp_path: Path) -> None:
    """The names are checked before anything is written: a good --parquet beside a bad --csv is not written."""
    good, bad = tmp_path / "o.parquet", tmp_path / "o.txt"
    with pytest.raises(ChipwiseError, match=r"CSV file .* does not end in \.csv"):
        export_store(store, parquet=good, csv=bad)
    assert not good.exists() and not bad.exists()


def test_exports_named_for_their_format_in_any_case_are_written(store: Path, tmp_path: Path) -> None:
    parquet, csv = tmp_path / "O.PARQUET", tmp_path / "o.CSV"
    assert export_store(store, parquet=parquet, csv=csv) == 1
    with duckdb.connect() as con:
        assert con.execute(f"SELECT count(*) FROM read_parquet('{parquet}')").fetchall()[0][0] == 1
        assert con.execute(f"SELECT count(*) FROM read_csv_auto('{csv}')").fetchall()[0][0] == 1
