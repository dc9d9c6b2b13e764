"""Run a validation: read a ground-truth CSV, predict every predictable row, summarise the errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, user_file
from chipwise.hardware import hardware
from chipwise.validation.groundtruth import detect_kind, read_training, require_unique_ids
from chipwise.validation.kernels import is_kernel_file, validate_kernels
from chipwise.validation.report import RowResult, summarise
from chipwise.validation.training import predict_row

#: told of each row done: (rows done, rows in the file), as `chipwise validate`'s progress bar counts them
RowProgress = Callable[[int, int], None]


def validate_training(catalog: Catalog, path: Path, progress: RowProgress | None = None) -> dict[str, Any]:
    results: list[RowResult] = []
    skipped: list[tuple[str, str]] = []
    known = frozenset(catalog.chips)
    rows = read_training(path, known_chips=known, aliases=hardware(catalog).chip_aliases())
    require_unique_ids(path, [r.id for r in rows])
    for done, row in enumerate(rows):
        if progress is not None:
            progress(done, len(rows))
        if row.skip_reason:
            skipped.append((row.id, row.skip_reason))
            continue
        try:
            p = predict_row(catalog, row)
        except ChipwiseError as exc:
            skipped.append((row.id, str(exc)))
            continue
        results.append(
            RowResult(
                p.id, p.chip, p.metric, p.measured, p.predicted, p.plan_source, p.source_family, p.notes, stat=p.stat
            )
        )
    if progress is not None:
        progress(len(rows), len(rows))
    return summarise("train", results, skipped)


def validate_file(
    catalog: Catalog, path: Path, kind: str, progress: RowProgress | None = None, workers: int = 1
) -> dict[str, Any]:
    """A file's validation by its `kind`, `progress` told of each row (a kernel file's few are not counted); a serving
    file's rows predicted on `workers` processes (validate_serving; a training file's take seconds on one)."""
    if kind == "train":
        return validate_training(catalog, path, progress)
    if kind == "kernels":
        return validate_kernels(catalog, path)
    from chipwise.validation.serving import validate_serving

    return validate_serving(catalog, path, progress, workers)


def data_kind(path: Path) -> str:
    """'train' or 'serve', as a ground-truth CSV's header says; 'kernels' for a kernel measurement's JSON
    (validation.kernels); one line naming a missing file."""
    found = user_file(path, "data file", "give the path of a ground-truth CSV")
    return "kernels" if is_kernel_file(found) else detect_kind(found)


#: the skipped rows a 'no row could be predicted' error names (the rest counted)
NAMED_SKIPS = 3


def validate_path(
    catalog: Catalog, path: Path, progress: RowProgress | None = None, workers: int = 1
) -> dict[str, Any]:
    """Validate a ground-truth CSV, training or serving as its header says, `progress` told of each row (a serving
    file ran for minutes with no sign); one line naming why where no row could be predicted (it had reported 'MAPE
    nan%' and empty tables, exit 0)."""
    report = validate_file(catalog, path, data_kind(path), progress, workers)
    if report["summary"]["rows_predicted"] == 0:
        skipped = report["skipped"]
        named = "; ".join(f"{x['id']} ({str(x['reason']).split(' Fix:')[0]})" for x in skipped[:NAMED_SKIPS])
        more = f" and {len(skipped) - NAMED_SKIPS} more" if len(skipped) > NAMED_SKIPS else ""
        raise ChipwiseError(
            f"no row of '{path}' could be predicted: {named}{more}. Fix: correct those rows, or add their chips "
            "and models to the catalog (--catalog)."
        )
    return report
