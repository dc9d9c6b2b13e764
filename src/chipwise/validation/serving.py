"""Predict published serving measurements: each ground-truth row becomes a serving job (model, lengths, load) and
a deployment (replica plan x replicas on the row's chip), which the simulator runs; the predicted output
tokens/s per chip, TTFT and TPOT are compared with the measured ones, statistic for statistic.

Scenarios as the sources define them:
- offline (MLPerf Offline, trtllm-bench max throughput, "infinite request rate"): every request at t = 0;
- server / interactive (MLPerf Server): Poisson arrivals at the measured request rate; TTFT and TPOT are means
  (or the percentiles the row gives);
- rate: Poisson arrivals at the stated rate; closed_loop: a fixed number of concurrent users (or a static batch),
  issued and measured as the row's load generator does (validation.harness: InferenceX, AIPerf, guidellm);
- single: one request at a time.
Assumptions a row forces are written into its notes: an unstated input length is the benchmark dataset's mean prompt
(MLPerf rows state only the output), else taken equal to the mean output length where no known longest prompt rules
that out; an unstated plan is searched for the best throughput per chip.

This module validates a whole table; each step has a module of its own: serving_rows reads a row (serving_row_*),
serving_case makes it a job and a deployment (serving_case_lengths, serving_case_load, serving_case_engine), and
serving_simulation runs it and compares the measurements with the prediction.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.pools import forked_pool, waited
from chipwise.validation.groundtruth import read_inference, require_unique_ids
from chipwise.validation.report import RowResult, summarise
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_simulation import predict_case


def predict_row(catalog: Catalog, row: InferenceRow) -> list[RowResult]:
    """Predict every measured metric of one row (ChipwiseError says why a row cannot be predicted)."""
    return predict_case(prepare(catalog, row))


def catalog_rows(catalog: Catalog, path: Path) -> list[InferenceRow]:
    """A serving ground-truth CSV's rows, their chips read against the catalog's chips and aliases; one line where
    two rows share an id or one has none (their results are reported by id)."""
    rows = read_inference(path, known_chips=frozenset(catalog.chips), aliases=hardware(catalog).chip_aliases())
    require_unique_ids(path, [r.id for r in rows])
    return rows


def validate_serving(
    catalog: Catalog, path: Path, progress: Callable[[int, int], None] | None = None, workers: int = 1
) -> dict[str, Any]:
    """`chipwise validate` on a serving ground-truth CSV: one entry per measured metric of each row, `progress` told
    of each row begun (rows done, rows in the file) and, while one runs, every quarter of a second. `workers` > 1:
    the rows predicted side by side in copies of this process where it can fork (pools.forked_pool), taken back in
    the file's order: the report byte for byte a single process's (tests/validation/test_validate_workers.py)."""
    results: list[RowResult] = []
    skipped: list[tuple[str, str]] = []
    rows_read = catalog_rows(catalog, path)
    total = len(rows_read)
    with forked_pool(workers, lambda i: _outcome(catalog, rows_read[i])) as (submit, _):
        pending = [submit(i) for i in range(total)]
        for done, (row, outcome) in enumerate(zip(rows_read, pending, strict=True)):
            got = waited(outcome, None if progress is None else partial(progress, done, total))
            if isinstance(got, str):
                skipped.append((row.id, got))
            else:
                results.extend(got)
    if progress is not None:
        progress(total, total)
    return summarise("serve", results, skipped)


def _outcome(catalog: Catalog, row: InferenceRow) -> list[RowResult] | str:
    """A row's predicted metrics, or the one line that says why it was not predicted."""
    try:
        rows = predict_row(catalog, row)
    except ChipwiseError as exc:
        return one_line(str(exc))
    return rows or "no metric could be predicted"


def one_line(text: str) -> str:
    """A message on one line (runs of whitespace, newlines included, become one space)."""
    return re.sub(r"\s+", " ", text).strip()
