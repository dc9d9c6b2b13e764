"""Serving ground-truth rows for tests, written as CSV and parsed like the real table."""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

from chipwise.validation.groundtruth import read_inference
from chipwise.validation.rows import InferenceRow

#: Llama-3.1-8B on one H100, offline, 1,000 in / 1,000 out, 100 output tokens/s
BASE_ROW = {
    "id": "X1", "source_family": "test", "model": "Llama-3.1-8B-Instruct", "chip": "h100-sxm", "num_chips": "1",
    "precision": "FP8", "serving_engine": "TensorRT-LLM", "parallelism": "TP1", "scenario": "offline",
    "batch_or_concurrency": "", "input_len": "1000", "output_len": "1000", "output_tokens_per_s_per_chip": "100",
}  # fmt: skip


def write_rows(path: Path, *rows: dict[str, str]) -> Path:
    """A CSV of BASE_ROW updated by each of `rows` (the union of their columns)."""
    full = [{**BASE_ROW, **r} for r in rows]
    columns = list(dict.fromkeys(k for r in full for k in r))
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(full)
    return path


def inference_row(**raw: str) -> InferenceRow:
    """BASE_ROW with `raw`'s columns, parsed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_rows(Path(tmp) / "row.csv", raw)
        return read_inference(path, known_chips=frozenset({"h100-sxm"}))[0]
