"""Run a validation: read a ground-truth CSV, predict every predictable row, summarise the errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, user_file
from chipwise.hardware import hardware
from chipwise.validation.groundtruth import detect_kind, read_training, require_unique_ids
from chipwise.validation.kernels import is_kernel_file, validate_kernels
from chipwise.validation.report import RowResult, summarise
from chipwise.validation.training import predict_row


def validate_training(catalog: Catalog, path: Path) -> dict[str, Any]:
    results: list[RowResult] = []
    skipped: list[tuple[str, str]] = []
    known = frozenset(catalog.chips)
    rows = read_training(path, known_chips=known, aliases=hardware(catalog).chip_aliases())
    require_unique_ids(path, [r.id for r in rows])
    for row in rows:
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
    return summarise("train", results, skipped)


def validate_file(catalog: Catalog, path: Path, kind: str) -> dict[str, Any]:
    if kind == "train":
        return validate_training(catalog, path)
    if kind == "kernels":
        return validate_kernels(catalog, path)
    from chipwise.validation.serving import validate_serving

    return validate_serving(catalog, path)


def data_kind(path: Path) -> str:
    """'train' or 'serve', as a ground-truth CSV's header says; 'kernels' for a kernel measurement's JSON
    (validation.kernels); one line naming a missing file."""
    found = user_file(path, "data file", "give the path of a ground-truth CSV")
    return "kernels" if is_kernel_file(found) else detect_kind(found)


#: the skipped rows a 'no row could be predicted' error names (the rest counted)
NAMED_SKIPS = 3


def validate_path(catalog: Catalog, path: Path) -> dict[str, Any]:
    """Validate a ground-truth CSV, training or serving as its header says; one line naming why where no row could
    be predicted (it had reported 'MAPE nan%' and empty tables, exit 0)."""
    report = validate_file(catalog, path, data_kind(path))
    if report["summary"]["rows_predicted"] == 0:
        skipped = report["skipped"]
        named = "; ".join(f"{x['id']} ({str(x['reason']).split(' Fix:')[0]})" for x in skipped[:NAMED_SKIPS])
        more = f" and {len(skipped) - NAMED_SKIPS} more" if len(skipped) > NAMED_SKIPS else ""
        raise ChipwiseError(
            f"no row of '{path}' could be predicted: {named}{more}. Fix: correct those rows, or add their chips "
            "and models to the catalog (--catalog)."
        )
    return report
