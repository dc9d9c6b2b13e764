"""Export a sweep store to Parquet or CSV: one row per point (the points table joined with its results)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from chipwise.errors import ChipwiseError
from chipwise.sweep.store import Store, check_suffix

#: One row per point: the point's status and timing, then its flattened prediction (NULL for points that failed).
_SELECT = (
    "SELECT p.sweep, p.id, p.what_if, p.status, p.error, p.started_at, p.finished_at, p.elapsed_s, p.scenario, "
    "r.* EXCLUDE (sweep, id, what_if) FROM points p LEFT JOIN results r USING (sweep, id)"
)


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def export_store(
    store_path: str | Path,
    parquet: str | Path | None = None,
    csv: str | Path | None = None,
    sweep: str | None = None,
) -> int:
    """Write the store's points (of one sweep, or all) to Parquet and/or CSV; return the number of rows."""
    if parquet is None and csv is None:
        raise ChipwiseError("nothing to export to. Fix: give --parquet FILE and/or --csv FILE.")
    for target, suffix, holds in ((parquet, ".parquet", "Parquet"), (csv, ".csv", "CSV")):
        if target is not None:
            check_suffix(Path(target), suffix, f"{holds} file", f"{holds} rows")
    with Store(store_path, read_only=True) as store:
        if sweep is not None and not store.has_sweep(sweep):
            known = ", ".join(store.sweeps()) or "none"
            raise ChipwiseError(
                f"store '{store_path}' has no sweep '{sweep}' (it has: {known}). Fix: name one of those."
            )
        where = " WHERE p.sweep = ?" if sweep is not None else ""
        params = [sweep] if sweep is not None else []
        query = f"{_SELECT}{where} ORDER BY p.sweep, p.what_if, p.started_at, p.id"
        count = store.con.execute(f"SELECT count(*) FROM ({query})", params).fetchall()[0][0]
        for target, options in ((parquet, "FORMAT parquet, COMPRESSION zstd"), (csv, "FORMAT csv, HEADER true")):
            if target is None:
                continue
            path = Path(target)
            if not path.parent.exists():
                raise ChipwiseError(f"folder '{path.parent}' does not exist. Fix: create it or export elsewhere.")
            try:
                store.con.execute(f"COPY ({query}) TO {_literal(path)} ({options})", params)
            except duckdb.Error as exc:
                first = " ".join(str(exc).split())[:200]
                raise ChipwiseError(f"cannot write '{path}': {first}. Fix: check the path and permissions.") from None
    return int(count)
