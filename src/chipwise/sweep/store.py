"""The sweep store: one DuckDB file holding any number of sweeps.

Tables (timestamps are UTC; units SI unless a column name says otherwise):
- `sweeps`: name, source file, the sweep file's content as JSON, distinct points in the sweep, created_at (when the
  sweep was first registered), chipwise version (of the last run).
- `points`: (sweep, id) key, what_if, scenario (JSON), status ('ok' or 'error'), error (one line), started_at,
  finished_at, elapsed_s, revision (of the chipwise code and built-in catalog that computed it: `revision()`).
- `results`: (sweep, id) key, what_if, then the flattened prediction (columns.COLUMNS) of every ok point.

Records are written in batches, each in one transaction, so a crash loses at most the batch in flight; a point
written again (a resumed error) replaces its old rows. Registering a sweep again (--resume, maybe after its file was
edited) drops the stored points its file no longer has. A point stored under another revision is not done: --resume
computes it again.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
import time
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import chipwise
from chipwise import __version__
from chipwise.errors import ChipwiseError, user_file
from chipwise.sweep.columns import COLUMNS
from chipwise.sweep.spec import Point, SweepSpec
from chipwise.sweep.worker import Record

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sweeps (
        name VARCHAR PRIMARY KEY, source VARCHAR, spec JSON, points BIGINT, created_at TIMESTAMP, chipwise VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS points (
        sweep VARCHAR, id VARCHAR, what_if VARCHAR, scenario JSON, status VARCHAR, error VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, elapsed_s DOUBLE, revision VARCHAR, PRIMARY KEY (sweep, id))""",
    "CREATE TABLE IF NOT EXISTS results (sweep VARCHAR, id VARCHAR, what_if VARCHAR, PRIMARY KEY (sweep, id))",
)

#: The columns a table of a chipwise store has whatever chipwise wrote it: a database whose table of that name lacks
#: one is someone else's, and had been altered (78 columns added to its `results`) before an internal error
KEYS: dict[str, tuple[str, ...]] = {
    "sweeps": ("name", "source", "spec", "points"),
    "points": ("sweep", "id", "what_if", "scenario", "status", "error"),
    "results": ("sweep", "id", "what_if"),
}


#: The package's files no stored result depends on (paths under the package; a folder covers what is in it), which
#: the revision leaves out: the accuracy table, which a prediction quotes under `track_record`, a mapping the results
#: table does not keep (columns.flatten keeps scalars only); and the layers after the sweep's (DESIGN.md, held by
#: tests/test_layering.py), which no point's code imports: the CLI, the web page, validation (with its measured
#: kernels) and the Python facade. A refreshed accuracy table had marked every stored point outdated, and --resume
#: computed them all again to the same figures.
NOT_IN_RESULTS: tuple[str, ...] = (
    "catalog/data/track_record.json",
    "interfaces",
    "validation",
    "api.py",
    "__main__.py",
)


def _in_results(relative: str) -> bool:
    """Whether a file of the package (its path under it) can reach a stored result (NOT_IN_RESULTS)."""
    return not any(relative == left or relative.startswith(left + "/") for left in NOT_IN_RESULTS)


@functools.cache
def revision() -> str:
    """16 hex digits of SHA-256 over chipwise's version and every file of its package that can reach a stored result
    (NOT_IN_RESULTS), the code and the built-in catalog data (some 200 files, 3 MB: ~15 ms, once per process). A
    point's id covers the sweep file and its what-ifs, not these: a changed catalog figure or model had left --resume
    keeping the points computed before."""
    root = Path(chipwise.__file__).parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and "__pycache__" not in path.parts and _in_results(relative):
            digest.update(relative.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


#: A training point's time to train (the expected, goodput-adjusted one where stored): NULL where it has no `tokens`
RUN_S = "coalesce(expected_time_to_train_s, time_to_train_s)"

#: How each kind ranks "fastest" and "cheapest" (SQL over the results table; lower is better): training on the
#: expected (goodput-adjusted) figures, as plan train ranks and shows them
RANKS: dict[str, dict[str, str]] = {
    "train": {
        "time": f"coalesce({RUN_S}, 1.0 / tokens_per_s)",
        "cost": "coalesce(expected_usd_per_million_tokens, usd_per_million_tokens)",
    },
    "serve": {"time": "ttft_p99_s", "cost": "cost_usd_per_mtok"},
}

#: The unit of each ranking's figure (SQL over the results table, NULL where a point has no figure), and the units in
#: the order they rank: a ranking compares figures of one unit only. A training point without `tokens` has no run to
#: time, and its time is seconds per token: one ORDER BY over both had ranked 64 b200 without tokens first by time
#: (5.98e-07 s per token), beside 597.9 s for a whole run of 1e9 tokens; the whole runs now rank first, by their time
#: to train, then the points without tokens, by their seconds per token. Costs are per million tokens either way
#: (economics_basis 'one hour' or 'whole run' alike), so one unit.
UNITS: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "train": {
        "time": (
            f"CASE WHEN {RUN_S} IS NOT NULL THEN 's' WHEN tokens_per_s IS NOT NULL THEN 's/token' END",
            ("s", "s/token"),
        ),
        "cost": ("'$/Mtok'", ("$/Mtok",)),
    },
    "serve": {"time": ("'s'", ("s",)), "cost": ("'$/Mtok out'", ("$/Mtok out",))},
}


def unit_order(kind: str, by: str) -> str:
    """SQL: where a point's unit on a ranking (UNITS) comes in its order, 0 first; NULL where it has no figure."""
    unit, order = UNITS[kind][by]
    return f"CASE {unit} " + " ".join(f"WHEN '{u}' THEN {i}" for i, u in enumerate(order)) + " END"


#: What breaks a tie on each ranking, in order (SQL, lower is better; the point id last of all). A serving point's
#: cost is priced on the tokens offered, so every point that carries one load costs the same to the last digit: six
#: at 8 req/s on 2 H100 cost $1.8663194444/M each, and the cheapest had been the first by point id (sglang in one
#: what-if, vllm in the other, where trtllm has the lowest TTFT p99); it is now the fastest of them.
TIE_BREAKS: dict[str, dict[str, tuple[str, ...]]] = {
    "train": {"time": (RANKS["train"]["cost"],), "cost": (unit_order("train", "time"), RANKS["train"]["time"])},
    "serve": {"time": ("tpot_p99_s", "cost_usd_per_mtok"), "cost": ("ttft_p99_s", "tpot_p99_s")},
}


def _utc(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)


#: Whether a serving point's load exceeds its capacity (`load.utilisation` >= 1, kept in the `other` JSON).
OVERLOADED = "coalesce(TRY_CAST(json_extract_string(r.other, '$.\"load.utilisation\"') AS DOUBLE) >= 1, false)"


#: what a DuckDB database file holds at bytes 8-11 (its header's magic)
DUCKDB_MAGIC = b"DUCK"


def _is_duckdb(path: Path) -> bool:
    """Whether a file is a DuckDB database, as its header says (an empty file is a new store)."""
    try:
        with path.open("rb") as f:
            head = f.read(12)
    except OSError:
        return True  # DuckDB's own error names why it cannot be read
    return not head or head[8:12] == DUCKDB_MAGIC


def is_store(path: Path) -> bool:
    """Whether `path` is a DuckDB file (a store given where a sweep file belongs)."""
    return path.is_file() and path.stat().st_size > 0 and _is_duckdb(path)


#: the name a store is written under (docs/sweep.md: fleet.duckdb)
STORE_SUFFIX = ".duckdb"


def check_suffix(path: Path, suffix: str, what: str, holds: str) -> None:
    """One line where a file about to be written (`what`: 'store', holding `holds`) is not named with `suffix` (a
    '--store ok.csv' had written a DuckDB database under a CSV's name, a '--parquet x.txt' Parquet under a text
    file's)."""
    if not path.name.lower().endswith(suffix):
        meant = path.with_name(f"{path.stem}{suffix}")
        raise ChipwiseError(
            f"{what} '{path}' does not end in {suffix}, yet would hold {holds}. Fix: give a name ending in {suffix}, "
            f"e.g. {meant}."
        )


class Store:
    """A DuckDB sweep store, opened for writing (one writer at a time) or read-only."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        import duckdb  # on opening a store: a command that never opens one does not load DuckDB

        self.path = Path(path)
        if read_only:
            user_file(self.path, "store", "give the --store file a sweep wrote")
        elif self.path.is_dir():
            raise ChipwiseError(
                f"store '{self.path}' is a folder. Fix: give a file in it, e.g. {self.path / 'sweeps.duckdb'}."
            )
        elif not self.path.parent.is_dir():
            raise ChipwiseError(
                f"folder '{self.path.parent}' for the store does not exist. Fix: create it, or give another --store."
            )
        if self.path.is_file() and self.path.stat().st_size == 0:
            # what `mktemp --suffix .duckdb` leaves: a new store, but DuckDB refuses a 0-byte file
            if read_only:
                raise ChipwiseError(
                    f"'{self.path}' is empty, not a sweep store. Fix: give the --store file a sweep wrote."
                )
            try:
                self.path.unlink()
            except OSError as exc:
                raise ChipwiseError(
                    f"cannot use the empty file '{self.path}' as a store ({exc.strerror or exc}). Fix: check the "
                    "folder's permissions, or give another --store."
                ) from None
        if self.path.is_file() and not _is_duckdb(self.path):
            # DuckDB's own error had been told to wait for the sweep writing it to finish
            raise ChipwiseError(
                f"'{self.path}' is not a DuckDB store. Fix: give the --store file a sweep wrote"
                + (", or a new file's name." if not read_only else ".")
            )
        if not read_only and not self.path.is_file():  # a new store; one a sweep wrote under another name resumes
            check_suffix(self.path, STORE_SUFFIX, "store", "a DuckDB database")
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as exc:
            first = " ".join(str(exc).split())[:200]
            if "Could not set lock" in first:  # another process holds it open for writing
                fix = "wait for the sweep writing it to finish, or give another --store"
            elif "Permission denied" in first:
                fix = "check the permissions of the file and its folder, or give another --store"
            else:
                fix = "give another --store"
            raise ChipwiseError(f"cannot open store '{self.path}': {first}. Fix: {fix}.") from None
        try:
            self._check_tables(read_only)  # before anything is created or altered
        except ChipwiseError:
            self.con.close()
            raise
        if not read_only:
            self._migrate()
        # a store written before points recorded their revision, read as it is: every point is another revision's
        self._revised = bool(
            self.con.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_name = 'points' AND column_name = 'revision'"
            ).fetchall()
        )

    # -- schema --------------------------------------------------------------------------------------------------
    def _check_tables(self, read_only: bool) -> None:
        """One line where the database is not a sweep store: a table named as a store's lacks a store's key columns
        (someone else's database), or, read-only, it has no `points` table."""
        tables: dict[str, set[str]] = {}
        for table, column in self.con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_name IN ('sweeps', 'points', "
            "'results')"
        ).fetchall():
            tables.setdefault(str(table), set()).add(str(column))
        for table, has in tables.items():
            missing = [repr(k) for k in KEYS[table] if k not in has]
            if missing:
                raise ChipwiseError(
                    f"'{self.path}' is a DuckDB database but not a chipwise sweep store (its table '{table}' lacks "
                    f"the column{'s' if len(missing) > 1 else ''} {', '.join(missing)}). Fix: give the --store file a "
                    "sweep wrote" + (", or a new file's name." if not read_only else ".")
                )
        if read_only and "points" not in tables:
            raise ChipwiseError(
                f"'{self.path}' is not a chipwise sweep store. Fix: give the --store file a sweep wrote."
            )

    def _migrate(self) -> None:
        for statement in _SCHEMA:
            self.con.execute(statement)
        # a store written before points recorded their revision: its points count as another revision's
        self.con.execute("ALTER TABLE points ADD COLUMN IF NOT EXISTS revision VARCHAR")
        for col in COLUMNS:  # a store written by an older chipwise gains the new columns (NULL in old rows)
            self.con.execute(f'ALTER TABLE results ADD COLUMN IF NOT EXISTS "{col.name}" {col.sql}')

    # -- sweeps ---------------------------------------------------------------------------------------------------
    def has_sweep(self, name: str) -> bool:
        return bool(self.con.execute("SELECT 1 FROM points WHERE sweep = ? LIMIT 1", [name]).fetchall())

    def source(self, name: str) -> str | None:
        """The sweep file a stored sweep was registered from (None where the store has no such sweep)."""
        rows = self.con.execute("SELECT source FROM sweeps WHERE name = ?", [name]).fetchall()
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def sweeps(self) -> list[str]:
        rows = self.con.execute("SELECT DISTINCT sweep FROM points ORDER BY sweep").fetchall()
        return [str(r[0]) for r in rows]

    def register(self, spec: SweepSpec, ids: AbstractSet[str] | None = None) -> int:
        """Record a sweep as its file now reads, and drop the points it no longer has; return how many were dropped.

        `ids` are the sweep's distinct point ids (computed from `spec` when not given): `points` counts them (a
        value listed twice is one point), and a stored point whose id is not among them (an axis value or what-if
        edited away since it ran) is deleted with its result in the same transaction, so what the store shows,
        ranks and exports is the sweep as it now reads. A sweep registered before keeps its `created_at`.
        """
        ids = {p.id for p in spec.points()} if ids is None else ids
        stale = sorted(self.stored_ids(spec.name) - ids)
        with self._transaction():
            if stale:
                for table in ("results", "points"):
                    self.con.execute(
                        f"DELETE FROM {table} WHERE sweep = ? AND id IN (SELECT unnest(?::VARCHAR[]))",
                        [spec.name, stale],
                    )
            self.con.execute(
                "INSERT INTO sweeps VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET source = "
                "excluded.source, spec = excluded.spec, points = excluded.points, chipwise = excluded.chipwise",
                [spec.name, spec.source, json.dumps(spec.raw, default=str), len(ids), _utc(time.time()), __version__],
            )
        return len(stale)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction, rolled back on any error; Ctrl+C inside a write is the run's own interrupt."""
        import duckdb

        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
            self.con.execute("COMMIT")
        except BaseException as exc:
            self.con.execute("ROLLBACK")
            if isinstance(exc, duckdb.InterruptException):
                raise KeyboardInterrupt from None
            raise

    def done_ids(self, sweep: str) -> set[str]:
        """Points of a sweep already stored ok by this revision of chipwise (what --resume skips)."""
        rows = self.con.execute(
            "SELECT id FROM points WHERE sweep = ? AND status = 'ok' AND revision = ?", [sweep, revision()]
        ).fetchall()
        return {str(r[0]) for r in rows}

    def outdated(self, sweep: str) -> int:
        """Points of a sweep stored ok by another revision of chipwise (its code or built-in catalog): --resume
        computes them again, and show says how many (their figures may have moved since)."""
        rows = self.con.execute(
            f"SELECT count(*) FROM points p WHERE sweep = ? AND status = 'ok' AND {self.revision_sql()} "
            "IS DISTINCT FROM ?",
            [sweep, revision()],
        ).fetchall()
        return int(rows[0][0])

    def revision_sql(self) -> str:
        """The revision of a point `p` as SQL: NULL (no revision known) in a store written before points recorded
        theirs and opened read-only (show, export), which is not migrated."""
        return "p.revision" if self._revised else "CAST(NULL AS VARCHAR)"

    # -- writing --------------------------------------------------------------------------------------------------
    def stored_ids(self, sweep: str) -> set[str]:
        """Every point of a sweep in the store, ok or not."""
        rows = self.con.execute("SELECT id FROM points WHERE sweep = ?", [sweep]).fetchall()
        return {str(r[0]) for r in rows}

    def write(self, sweep: str, batch: Sequence[tuple[Point, Record]], replace: AbstractSet[str] = frozenset()) -> None:
        """Store a batch of finished points in one transaction; ids in `replace` (points stored before, such as
        errors being retried by --resume) have their old rows replaced."""
        if not batch:
            return
        ids = [p.id for p, _ in batch if p.id in replace]
        points = [
            (
                sweep,
                p.id,
                p.variant.name,
                json.dumps(p.scenario, sort_keys=True, default=str),
                r.status,
                r.error,
                _utc(r.started_at),
                _utc(r.finished_at),
                r.elapsed_s,
                revision(),
            )
            for p, r in batch
        ]
        results = [(sweep, p.id, p.variant.name, *r.row) for p, r in batch if r.row is not None]
        names = ", ".join(f'"{c.name}"' for c in COLUMNS)
        marks = ", ".join("?" for _ in range(3 + len(COLUMNS)))
        holes = ", ".join("?" for _ in ids)
        with self._transaction():
            if ids:
                self.con.execute(f"DELETE FROM results WHERE sweep = ? AND id IN ({holes})", [sweep, *ids])
                self.con.execute(f"DELETE FROM points WHERE sweep = ? AND id IN ({holes})", [sweep, *ids])
            self.con.executemany(
                "INSERT INTO points (sweep, id, what_if, scenario, status, error, started_at, finished_at, elapsed_s, "
                "revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                points,
            )
            if results:
                self.con.executemany(f"INSERT INTO results (sweep, id, what_if, {names}) VALUES ({marks})", results)

    # -- reading --------------------------------------------------------------------------------------------------
    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, list(params))
        names = [d[0] for d in cur.description or ()]
        return [{n: _clean(v) for n, v in zip(names, row, strict=True)} for row in cur.fetchall()]

    def counts(self, sweep: str) -> dict[str, Any]:
        rows = self.query(
            "SELECT count(*) AS points, count(*) FILTER (status = 'ok') AS ok, "
            "count(*) FILTER (status = 'error') AS errors, sum(elapsed_s) AS cpu_s, "
            "min(started_at) AS first_started, max(finished_at) AS last_finished FROM points WHERE sweep = ?",
            [sweep],
        )
        declared = self.query("SELECT points, source FROM sweeps WHERE name = ?", [sweep])
        out = {"sweep": sweep, **rows[0]}
        out["declared_points"] = declared[0]["points"] if declared else None
        out["source"] = declared[0]["source"] if declared else None
        return out

    def _kind(self, sweep: str) -> str:
        rows = self.con.execute("SELECT any_value(kind) FROM results WHERE sweep = ?", [sweep]).fetchall()
        return str(rows[0][0]) if rows and rows[0][0] in RANKS else "train"

    def ranked(self, sweep: str, by: str = "time", limit: int = 10, what_if: str | None = None) -> list[dict[str, Any]]:
        """The ok points of a sweep, best first by 'time' or 'cost' (points without the figure last, and serving
        points that miss their SLO, or are offered more than their capacity, after those that do not; training
        points without `tokens`, timed per token, after those timed over a whole run); points tied on the figure in
        order of TIE_BREAKS, and each row's `tied_with` the other points of its class (SLO met, load carried, unit)
        with the same figure (0 where none, or it has no figure). Each row's `rank_value` is in its `rank_unit`
        (UNITS: 's', 's/token', '$/Mtok', '$/Mtok out')."""
        kind = self._kind(sweep)
        metric = RANKS[kind][by]
        where = "r.sweep = ?" + (" AND r.what_if = ?" if what_if is not None else "")
        params: list[Any] = [sweep, *([what_if] if what_if is not None else []), limit]
        # a serving point that misses its SLO ranks after every one that meets it (or has none), and one offered
        # more than its capacity (its queue grows for as long as it runs) after every one that carries its load
        klass = f"coalesce(NOT r.slo_met, false), {OVERLOADED}"
        unit = unit_order(kind, by)
        breaks = "".join(f"{b} ASC NULLS LAST, " for b in TIE_BREAKS[kind][by])
        return self.query(
            f"SELECT r.*, p.scenario, {metric} AS rank_value, CASE WHEN {metric} IS NOT NULL THEN "
            f"{UNITS[kind][by][0]} END AS rank_unit, CASE WHEN {metric} IS NULL THEN 0 ELSE "
            f"count(*) OVER (PARTITION BY {klass}, {unit}, {metric}) - 1 END AS tied_with "
            f"FROM results r JOIN points p USING (sweep, id) "
            f"WHERE {where} ORDER BY {klass}, {unit} ASC NULLS LAST, rank_value ASC NULLS LAST, {breaks}r.id LIMIT ?",
            params,
        )

    def best_per_what_if(self, sweep: str) -> list[dict[str, Any]]:
        """For each what-if (in first-seen order): its fastest and its cheapest ok point."""
        order = self.con.execute(
            "SELECT what_if FROM points WHERE sweep = ? GROUP BY what_if ORDER BY min(started_at)", [sweep]
        ).fetchall()
        out: list[dict[str, Any]] = []
        for (what_if,) in order:
            for by in ("time", "cost"):
                rows = self.ranked(sweep, by, 1, str(what_if))
                if rows:
                    out.append({"what_if": what_if, "best_by": by, **rows[0]})
        return out

    def errors(self, sweep: str, limit: int = 5) -> list[dict[str, Any]]:
        return self.query(
            "SELECT error, count(*) AS points FROM points WHERE sweep = ? AND status = 'error' "
            "GROUP BY error ORDER BY points DESC, error LIMIT ?",
            [sweep, limit],
        )

    # -- lifetime -------------------------------------------------------------------------------------------------
    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value
