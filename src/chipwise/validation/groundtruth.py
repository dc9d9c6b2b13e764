"""Parse the published ground-truth CSVs into normalized, typed records.

Two files are read: the training runs (``groundtruth_training.csv``) and the serving runs
(``groundtruth_inference.csv``); see ``shared/data/groundtruth.md`` for column semantics. Every row
becomes a :class:`TrainingRow` or :class:`InferenceRow`. A row that cannot be predicted keeps a short
``skip_reason``; anything the normalizer had to assume is written to ``notes``. Rows are parsed by
rules on the text of their cells, never by row id, so new rows in the same format parse the same way.

Units: parameters as counts (the CSV gives billions), times in seconds, rates in tokens/s or req/s.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal, TextIO, TypeVar

from chipwise.errors import ChipwiseError
from chipwise.validation.rows import KNOWN_CHIPS, InferenceRow, ModelDims, TrainingRow
from chipwise.validation.serving_rows import parse_inference_row
from chipwise.validation.training_rows import parse_training_row

_TRAIN_MARKERS: Final[frozenset[str]] = frozenset({"step_time_s", "tokens_per_s_per_chip", "global_batch_seqs"})
_SERVE_MARKERS: Final[frozenset[str]] = frozenset({"output_tokens_per_s_per_chip", "ttft_ms", "tpot_ms"})


#: The columns every row is read by: without one, each row was skipped as 'chip not in catalog: <empty>'
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("id", "model", "chip")
#: A training row is priced on its chip count too (a serving row takes it from its parallelism where not stated):
#: without the column each row was skipped as 'no chip count', and the error suggested --catalog
TRAINING_REQUIRED_COLUMNS: Final[tuple[str, ...]] = (*REQUIRED_COLUMNS, "num_chips")
_EXAMPLE = "../shared/data/groundtruth_training.csv or groundtruth_inference.csv"


@contextmanager
def _opened(path: Path) -> Iterator[TextIO]:
    """A ground-truth CSV open for reading (a spreadsheet's byte-order mark dropped), or one line naming the file
    when it is not UTF-8 text."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            yield handle
    except UnicodeDecodeError:
        raise ChipwiseError(f"data file '{path}' is not UTF-8 text. Fix: save it as a UTF-8 CSV.") from None


def _unreadable(path: Path, line: int, exc: csv.Error) -> ChipwiseError:
    """One line naming the file and line a CSV reader stopped at (a cell over the csv module's size limit, a stray
    NUL byte), in place of an internal error."""
    why, fix = str(exc), "correct that row"
    if "field larger than field limit" in why:
        why = f"a cell is longer than {csv.field_size_limit():,} characters"
        fix = "shorten that cell, or close the quote it opens (an unclosed quote runs on to the end of the file)"
    return ChipwiseError(f"data file '{path}', line {line}: cannot be read as CSV ({why}). Fix: {fix}.")


def _read_csv(path: Path, required: tuple[str, ...] = REQUIRED_COLUMNS) -> list[dict[str, str]]:
    """The rows of a ground-truth CSV; one line when it lacks a column every row needs, holds no rows or cannot be
    read as CSV."""
    with _opened(path) as handle:
        reader = csv.DictReader(handle)
        try:
            rows = [{str(k): (v or "") for k, v in row.items() if k is not None} for row in reader]
        except csv.Error as exc:  # the DictReader's own line_num is the last row it returned
            raise _unreadable(path, reader.reader.line_num, exc) from None
        header = list(reader.fieldnames or [])
    missing = [c for c in required if c not in header]
    if missing:
        raise ChipwiseError(
            f"data file '{path}' has no {' or '.join(repr(c) for c in missing)} column. Fix: add "
            f"{'it' if len(missing) == 1 else 'them'} (see the header of {_EXAMPLE})."
        )
    if not rows:
        raise ChipwiseError(f"data file '{path}' has a header but no rows. Fix: add the runs to validate.")
    return rows


def detect_kind(path: Path) -> Literal["train", "serve"]:
    """'train' or 'serve' from the header columns of a ground-truth CSV."""
    with _opened(path) as handle:
        reader = csv.reader(handle)
        try:
            header = set(next(reader, []))
        except csv.Error as exc:
            raise _unreadable(path, reader.line_num, exc) from None
    if not header:
        raise ChipwiseError(f"data file '{path}' is empty. Fix: give a CSV with the header and rows of {_EXAMPLE}.")
    train, serve = sorted(header & _TRAIN_MARKERS), sorted(header & _SERVE_MARKERS)
    if train and serve:
        raise ChipwiseError(
            f"data file '{path}' has both training columns ({', '.join(train)}) and serving columns "
            f"({', '.join(serve)}), so which table it is cannot be told. Fix: keep one kind's columns (see the "
            f"header of {_EXAMPLE})."
        )
    if train:
        return "train"
    if serve:
        return "serve"
    raise ChipwiseError(
        f"{path}: the header is neither a training nor a serving ground-truth table. "
        f"Fix: give a CSV with the columns of {_EXAMPLE}."
    )


def require_unique_ids(path: Path, ids: Sequence[str]) -> None:
    """One line naming the first blank or repeated id of a table: the validation counts and reports rows by id, so
    two rows under one id were counted as one ('1 of 1 rows predicted' for a row given twice)."""
    fix = "Fix: give every row an id of its own (ids must be unique and non-empty)."
    seen: dict[str, int] = {}
    for number, row_id in enumerate(ids, start=1):
        if not row_id.strip():
            raise ChipwiseError(f"data file '{path}': row {number} under the header has no id. {fix}")
        if row_id in seen:
            raise ChipwiseError(
                f"data file '{path}': rows {seen[row_id]} and {number} under the header have the same id '{row_id}'. "
                f"{fix}"
            )
        seen[row_id] = number


_Row = TypeVar("_Row")


def _parse_all(
    rows: list[dict[str, str]],
    parse: Callable[[dict[str, str]], _Row],
    fallback: Callable[[dict[str, str], str], _Row],
) -> list[_Row]:
    parsed: list[_Row] = []
    for raw in rows:
        try:
            parsed.append(parse(raw))
        except (ValueError, ArithmeticError, KeyError, IndexError, TypeError) as exc:
            parsed.append(fallback(raw, f"unparseable row: {exc}"))
    return parsed


def _unparsed_training(raw: dict[str, str], reason: str) -> TrainingRow:
    dims = ModelDims(raw.get("model", ""), "dense", None, None, None, None, None, None, None, None)
    return TrainingRow(
        raw.get("id", ""), raw.get("source_family", ""), dims, raw.get("chip", ""), None, "bf16",
        None, None, None, {}, False, None, reason, False, reason, raw,
    )  # fmt: skip


def _unparsed_inference(raw: dict[str, str], reason: str) -> InferenceRow:
    return InferenceRow(
        raw.get("id", ""), raw.get("source_family", ""), raw.get("model", ""), "dense", None, None,
        raw.get("chip", ""), None, "bf16", "bf16", "other", 1, 1, 1, 1, False, False, False, "single",
        None, None, None, None, None, None, None, False, [], reason, reason, raw,
    )  # fmt: skip


def read_training(
    path: Path,
    known_chips: frozenset[str] = KNOWN_CHIPS,
    derive_from_tflops: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> list[TrainingRow]:
    """Every row of a training ground-truth CSV as a :class:`TrainingRow`.

    With ``derive_from_tflops`` a row that gives only model TFLOP/s per chip gets tokens/s per chip
    derived from it (6*N + attention FLOPs per token) when attention is a small share of the FLOPs.
    """
    return _parse_all(
        _read_csv(path, TRAINING_REQUIRED_COLUMNS),
        lambda raw: parse_training_row(raw, known_chips, derive_from_tflops, aliases or {}),
        _unparsed_training,
    )


def read_inference(
    path: Path, known_chips: frozenset[str] = KNOWN_CHIPS, aliases: Mapping[str, str] | None = None
) -> list[InferenceRow]:
    """Every row of a serving ground-truth CSV as an :class:`InferenceRow` (`aliases`: chip and system names to
    chip ids, Hardware.chip_aliases)."""
    names = aliases or {}
    return _parse_all(_read_csv(path), lambda raw: parse_inference_row(raw, known_chips, names), _unparsed_inference)
