"""Export a sweep store to Parquet or CSV: one row per point (the points table joined with its results)."""

from __future__ import annotations

import os
from pathlib import Path

from chipwise.errors import ChipwiseError
from chipwise.sweep.store import Store, check_suffix

#: One row per point: the point's status, timing and the chipwise revision that computed it (a row another revision
#: wrote may predate an upgrade's figures), then its flattened prediction (NULL for points that failed).
_SELECT = (
    "SELECT p.sweep, p.id, p.what_if, p.status, p.error, p.started_at, p.finished_at, p.elapsed_s, "
    "{revision} AS revision, p.scenario, r.* EXCLUDE (sweep, id, what_if) FROM points p LEFT JOIN results r "
    "USING (sweep, id)"
)


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _check_target(path: Path, suffix: str, holds: str) -> None:
    """One line where an export cannot be written, before any is: `--parquet A --csv B` had written A and then
    failed on B (a missing folder, or a folder named B, which read as DuckDB's 'File exists')."""
    check_suffix(path, suffix, f"{holds} file", f"{holds} rows")
    if not path.parent.is_dir():
        what = "does not exist" if not path.parent.exists() else "is a file, not a folder"
        raise ChipwiseError(f"folder '{path.parent}' {what}. Fix: create it or export elsewhere.")
    if path.is_dir():
        raise ChipwiseError(
            f"cannot write '{path}': it is a folder. Fix: name a file, e.g. '{path / f'sweep{suffix}'}'."
        )
    if not os.access(path.parent, os.W_OK):
        raise ChipwiseError(f"cannot write '{path}': folder '{path.parent}' is not writable. Fix: export elsewhere.")


def export_store(
    store_path: str | Path,
    parquet: str | Path | None = None,
    csv: str | Path | None = None,
    sweep: str | None = None,
) -> int:
    """Write the store's points (of one sweep, or all) to Parquet and/or CSV; return the number of rows. Every
    target is checked before any is written, and each is written under a temporary name and renamed once all are:
    a failed export leaves no file behind and replaces none."""
    import duckdb  # on exporting: importing the sweep package does not load DuckDB

    if parquet is None and csv is None:
        raise ChipwiseError("nothing to export to. Fix: give --parquet FILE and/or --csv FILE.")
    targets: list[tuple[Path, str]] = []
    for target, suffix, holds, options in (
        (parquet, ".parquet", "Parquet", "FORMAT parquet, COMPRESSION zstd"),
        (csv, ".csv", "CSV", "FORMAT csv, HEADER true"),
    ):
        if target is not None:
            _check_target(Path(target), suffix, holds)
            if Path(target).resolve() == Path(store_path).resolve():  # a store read under any name: not replaced
                raise ChipwiseError(f"'{target}' is the store being exported. Fix: export to another file.")
            targets.append((Path(target), options))
    with Store(store_path, read_only=True) as store:
        if sweep is not None and not store.has_sweep(sweep):
            known = ", ".join(store.sweeps()) or "none"
            raise ChipwiseError(
                f"store '{store_path}' has no sweep '{sweep}' (it has: {known}). Fix: name one of those."
            )
        where = " WHERE p.sweep = ?" if sweep is not None else ""
        params = [sweep] if sweep is not None else []
        query = (
            f"{_SELECT.format(revision=store.revision_sql())}{where} ORDER BY p.sweep, p.what_if, p.started_at, p.id"
        )
        count = store.con.execute(f"SELECT count(*) FROM ({query})", params).fetchall()[0][0]
        written: list[tuple[Path, Path]] = []  # (temporary, target)
        try:
            for path, options in targets:
                part = path.with_name(f".{path.name}.{os.getpid()}.part")
                written.append((part, path))
                try:
                    store.con.execute(f"COPY ({query}) TO {_literal(part)} ({options})", params)
                except duckdb.Error as exc:
                    first = " ".join(str(exc).replace(str(part), str(path)).split())[:200]
                    raise ChipwiseError(
                        f"cannot write '{path}': {first}. Fix: check the path and permissions."
                    ) from None
            for part, path in written:
                try:
                    os.replace(part, path)
                except OSError as exc:
                    raise ChipwiseError(
                        f"cannot write '{path}': {exc.strerror or exc}. Fix: check the path and permissions."
                    ) from None
        finally:
            for part, _ in written:
                part.unlink(missing_ok=True)
    return int(count)
