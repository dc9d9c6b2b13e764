"""Request traces: a CSV, JSONL or JSON-array file with an arrival time, input tokens and output tokens per
request, read into a Trace, or refused in one line naming the file, the row and the fix."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import Any

import numpy as np

from chipwise.errors import ChipwiseError, user_file
from chipwise.types import Array as FloatArray
from chipwise.types import IntArray
from chipwise.workload.bounds import MAX_TOKENS, shown

TRACE_COLUMNS: dict[str, tuple[str, ...]] = {
    # a name ending in _ms holds milliseconds
    "arrival": ("arrival_s", "arrival_time", "arrival", "timestamp", "time_s", "arrival_ms", "timestamp_ms", "time_ms"),
    "input": ("input_tokens", "input_len", "prompt_tokens", "input_length"),
    "output": ("output_tokens", "output_len", "completion_tokens", "output_length"),
}


@dataclass(frozen=True)
class Trace:
    """Requests of a trace file: arrival times (s, from the first arrival), input and output tokens. An arrival
    column named *_ms is read in milliseconds, and epoch timestamps in finer units than seconds by their size
    (EPOCH_SCALES)."""

    arrival: FloatArray
    input: IntArray
    output: IntArray
    path: str


#: Times past this are epoch seconds (after 2001), not Mooncake's milliseconds from its first request
EPOCH_SECONDS = 1e9
#: Epoch timestamps in finer units than seconds, told apart by their size: past the year 2001 in nanoseconds,
#: microseconds or milliseconds (each past 33,000 years in the next coarser unit), with the units in a second.
EPOCH_SCALES: tuple[tuple[float, float], ...] = ((1e18, 1e9), (1e15, 1e6), (1e12, 1e3))
JSON_SUFFIXES: tuple[str, ...] = (".jsonl", ".json", ".ndjson")
#: the suffixes that name a trace file where a file may be something else (plan fleet's --workload, else a YAML
#: mix): CSV (a .tsv too, its separator read from its header) and JSON. `predict` reads any file a scenario's
#: `trace:` names, and plan fleet had taken .csv, .jsonl and .ndjson alone: a .json array read "needs a non-empty
#: 'buckets' list", a .tsv "not valid YAML".
TRACE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", *JSON_SUFFIXES)
#: the longest a trace may span, first arrival to last: a year (a replayed production trace spans hours or days)
MAX_SPAN_S = 366 * 24 * 3600.0


def _column(header: list[Any], role: str, path: str) -> str:
    """The header's column for `role`, matched without regard to case or surrounding spaces. Two that could be it
    are refused: the first of TRACE_COLUMNS had been read and the other dropped without a word (input_len 8,000
    beside input_tokens 100 read a mean prompt of 100 tokens)."""
    found = [str(h) for h in header if str(h).strip().lower() in TRACE_COLUMNS[role]]
    if len(found) > 1:
        raise ChipwiseError(
            f"trace '{path}' has {len(found)} {role} columns, {', '.join(found[:-1])} and {found[-1]}: only one would "
            "be read. Fix: keep the one that holds the requests' "
            + ("arrival times" if role == "arrival" else f"{role} tokens")
            + " (drop or rename the rest)."
        )
    if found:
        return found[0]
    raise ChipwiseError(
        f"trace '{path}' has no {role} column (one of {', '.join(TRACE_COLUMNS[role])}). Fix: add that column."
    )


def _trace_text(path: str) -> str:
    """The text of a trace file (a spreadsheet's byte-order mark dropped), or one line naming the file."""
    p = user_file(path, "trace file", "check the path", folder_fix="give a CSV or JSONL file")
    try:
        return p.read_text(encoding="utf-8-sig")  # a spreadsheet's CSV export opens with a byte-order mark
    except UnicodeDecodeError:
        raise ChipwiseError(f"trace '{path}' is not UTF-8 text. Fix: save it as UTF-8 CSV or JSONL.") from None
    except OSError as exc:
        raise ChipwiseError(f"cannot read trace '{path}': {exc.strerror}. Fix: check the path.") from None


def _json_rows(text: str, path: str) -> tuple[list[Any], list[int], str]:
    """The requests of a JSON trace: one object per line (JSONL), or one array of objects (a .json file), with the
    number an error names each by and the word for it: a JSONL request's line in the file, blank lines counted (its
    place among the requests had been named its line: a record on line 4, below a blank line, read 'line 3')."""
    if text.lstrip().startswith("["):
        try:
            items = list(json.loads(text))
        except ValueError:
            raise ChipwiseError(
                f"trace '{path}' is not a valid JSON array. Fix: give one array of objects, or one object per line."
            ) from None
        return items, list(range(1, len(items) + 1)), "item"
    rows: list[Any] = []
    lines: list[int] = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            raise ChipwiseError(f"trace '{path}' line {i} is not JSON. Fix: one JSON object per line.") from None
        lines.append(i)
    return rows, lines, "line"


def _cell(raw: Any) -> str:
    """A trace value as an error shows it (a 400-digit number is not printed whole)."""
    text = shown(raw) if isinstance(raw, int) and not isinstance(raw, bool) else str(raw)
    return text if len(text) <= 24 else text[:21] + "..."


def _trace_value(raw: Any, role: str, col: str, where: str) -> float:
    """One number of a trace: an arrival time (finite: times are taken from the first arrival, so a trace that starts
    before 0 is shifted as any other; -5 s had been refused as 'out of range' without the range) or a token count
    (1 to MAX_TOKENS)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ChipwiseError(f"{where} has no {col}. Fix: give every request its {col}.")
    try:
        if isinstance(raw, bool):  # JSON true is not a count
            raise TypeError
        v = float(raw)
    except (TypeError, ValueError):
        raise ChipwiseError(f"{where}: {col} '{_cell(raw)}' is not a number. Fix: correct that value.") from None
    except OverflowError:  # a JSON integer past a float's range
        v = math.inf
    if role == "arrival" and not math.isfinite(v):
        raise ChipwiseError(f"{where}: {col} {_cell(raw)} is out of range (a finite time). Fix: correct that value.")
    if role != "arrival" and not 1 <= v <= MAX_TOKENS:  # past any context: would overflow the simulator's integers
        raise ChipwiseError(
            f"{where}: {col} {_cell(raw)} is out of range (1 to {MAX_TOKENS:,} tokens). Fix: correct that value."
        )
    if role != "arrival" and not v.is_integer():  # 512.5 tokens had been rounded without a word
        raise ChipwiseError(
            f"{where}: {col} {_cell(raw)} is not a whole number of tokens. Fix: give a whole number, e.g. "
            f"{math.floor(v):,}."
        )
    return v


def _units_per_second(column: str, first: float, input_column: str = "") -> float:
    """The unit of a trace's arrival times, as units in a second: milliseconds in a column named *_ms, or in
    Mooncake's `timestamp` beside its `input_length` (its format's times are milliseconds since the first request:
    a Mooncake trace at 10 req/s had been read at 0.01) unless they read as epoch seconds, else by the first time's
    size (EPOCH_SCALES), else seconds."""
    name = column.strip().lower()
    mooncake = name == "timestamp" and input_column.strip().lower() == "input_length" and first < EPOCH_SECONDS
    if name.endswith("_ms") or mooncake:
        return 1e3
    return next((units for edge, units in EPOCH_SCALES if first > edge), 1.0)


def _delimiter(header: str) -> str:
    """A CSV trace's separator, from its header: a comma, or the semicolon or tab of a spreadsheet's export in a
    locale whose decimal mark is a comma (such a file read as one column: 'no arrival column')."""
    return max((",", ";", "\t"), key=header.count) if header else ","


def _extra_cells(rows: list[list[str]], path: str, header: int) -> None:
    """One line for a CSV row with more cells than the header: a value with a thousands separator ('1,024') splits in
    two and shifts the rest (input 1, output 24). Blank cells past the header (a trailing separator) are let be."""
    if max(map(len, rows), default=0) <= header:
        return
    for i, row in enumerate(rows, start=1):
        if len(row) > header and any(cell.strip() for cell in row[header:]):
            raise ChipwiseError(
                f"trace '{path}' data row {i} has {len(row)} cells where the header names {header}. Fix: give every "
                "row the header's cells, with no thousands separators or unquoted commas in its values."
            )


def _in_time_order(arrival: FloatArray, col: str, path: str, word: str, numbers: list[int]) -> None:
    """One line naming the first request that arrives before the one above it (by `numbers`, each request's
    `word` number): rows out of time order are most likely a mis-joined file (until 2026-12 they were sorted
    without a word)."""
    times = np.asarray(arrival, dtype=np.float64)
    back = np.flatnonzero(times[1:] < times[:-1])
    if back.size:
        k = int(back[0]) + 1  # the later request's index
        raise ChipwiseError(
            f"trace '{path}' {word} {numbers[k]} arrives at {col} {times[k]:g}, before {word} {numbers[k - 1]} "
            f"({times[k - 1]:g}): its rows are not in time order. Fix: sort the trace by its arrival time."
        )


def _repeated_names(fields: list[str], path: str) -> None:
    """One line for a CSV header that names a column twice: csv.DictReader keeps the last of them, and input_tokens
    100 then input_tokens 8,000 had read a mean prompt of 8,000 tokens without a word (a second name only alike,
    Input_Tokens, is refused as a second input column: _column). Blank names (trailing separators) are let be."""
    named = [f for f in fields if f.strip()]
    repeated = list(dict.fromkeys(f for f in named if named.count(f) > 1))
    if repeated:
        raise ChipwiseError(
            f"trace '{path}' header names {', '.join(repeated)} more than once: only the last column of that name "
            "would be read. Fix: keep one column of each name (drop or rename the others)."
        )


def _whole_columns(records: list[Any], pick: Mapping[str, Callable[[Any], Any]]) -> dict[str, FloatArray] | None:
    """A trace's columns (`pick`: each role's value of a record) read whole, one float() pass a column and the checks
    at once (a million-row CSV trace in under half the time value by value took: benchmarks/trace_read.py), or None
    where a value is missing, not a number (a JSON true is not a count, though float() reads it 1) or out of range:
    _trace_value then names the first."""
    try:
        raw = {role: list(map(get, records)) for role, get in pick.items()}
        if any(bool in set(map(type, column)) for column in raw.values()):
            return None
        out = {
            role: np.fromiter(map(float, column), dtype=np.float64, count=len(column)) for role, column in raw.items()
        }
    except (IndexError, TypeError, ValueError, OverflowError):
        return None
    tokens = np.concatenate([out["input"], out["output"]])
    whole = (tokens >= 1) & (tokens <= MAX_TOKENS) & (tokens == np.floor(tokens))
    return out if bool(np.all(np.isfinite(out["arrival"])) and np.all(whole)) else None


def _csv_rows(text: str) -> tuple[list[str], list[list[str]]]:
    """A CSV trace's header and its data rows as lists of cells, blank lines skipped (above the header too, where
    csv.DictReader had read a blank first line as a header naming no column)."""
    lines = text.splitlines()
    rows = [row for row in csv.reader(lines, delimiter=_delimiter(lines[0] if lines else "")) if row]
    return (rows[0], rows[1:]) if rows else ([], [])


def read_trace(path: str) -> Trace:
    """Read a CSV, JSONL or JSON-array trace; a missing column, a bad value, a row with more cells than the header or
    rows out of time order are a one-line error."""
    text = _trace_text(path)
    if Path(path).suffix.lower() in JSON_SUFFIXES:
        rows, numbers, word = _json_rows(text, path)
        bad = next((i for i, row in zip(numbers, rows, strict=True) if not isinstance(row, dict)), None)
        if bad is not None:
            raise ChipwiseError(f"trace '{path}' {word} {bad} is not a JSON object. Fix: one object per request.")
        header = list(dict.fromkeys(key for row in rows for key in row))  # a JSON trace's rows may each name theirs
        records: list[Any] = rows
    else:
        header, records = _csv_rows(text)
        _repeated_names(header, path)
        word, numbers = "data row", list(range(1, len(records) + 1))
        _extra_cells(records, path, len(header))
    if not records:
        raise ChipwiseError(f"trace '{path}' holds no requests. Fix: give at least one row.")
    cols = {role: _column(header, role, path) for role in TRACE_COLUMNS}
    # a CSV row is a list of cells, read by each column's place; a JSON row names its values
    at = {} if isinstance(records[0], dict) else {role: header.index(col) for role, col in cols.items()}
    pick = {role: itemgetter(at[role]) if at else methodcaller("get", col) for role, col in cols.items()}
    values = _whole_columns(records, pick)
    if values is None:  # row by row: the first value missing, not a number or out of range is named
        values = {role: np.zeros(len(records)) for role in cols}
        for k, (i, row) in enumerate(zip(numbers, records, strict=True)):
            for role, col in cols.items():
                raw = (row[at[role]] if at[role] < len(row) else None) if at else row.get(col)
                values[role][k] = _trace_value(raw, role, col, f"trace '{path}' {word} {i}")
    _in_time_order(values["arrival"], cols["arrival"], path, word, numbers)
    arrival = np.asarray(values["arrival"], dtype=np.float64)
    first = float(arrival[0])
    arrival = (arrival - first) / _units_per_second(cols["arrival"], first, cols["input"])  # from the first arrival
    if arrival[-1] > MAX_SPAN_S:  # 1e300 s had run, its requests' times lost to rounding, at "$2.55e+302 per M"
        raise ChipwiseError(
            f"trace '{path}' spans {arrival[-1]:.3g} s from its first arrival to its last, more than a year. Fix: "
            f"check the {cols['arrival']} column's times and unit (seconds; milliseconds in a column named *_ms)."
        )
    return Trace(
        arrival=arrival,
        input=np.rint(np.asarray(values["input"])).astype(np.int64),
        output=np.rint(np.asarray(values["output"])).astype(np.int64),
        path=path,
    )
