"""One serving ground-truth row for tests, written as a one-line CSV and parsed like the real table."""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

from chipwise.validation.groundtruth import InferenceRow, read_inference


def inference_row(**raw: str) -> InferenceRow:
    """A row of Llama-3.1-8B on one H100 (offline, 1,000 in / 1,000 out, 100 tokens/s) with `raw`'s columns."""
    base = {
        "id": "X1", "source_family": "test", "model": "Llama-3.1-8B-Instruct", "chip": "h100-sxm", "num_chips": "1",
        "precision": "FP8", "serving_engine": "TensorRT-LLM", "parallelism": "TP1", "scenario": "offline",
        "batch_or_concurrency": "", "input_len": "1000", "output_len": "1000", "output_tokens_per_s_per_chip": "100",
    }  # fmt: skip
    base.update(raw)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "row.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(base))
            writer.writeheader()
            writer.writerow(base)
        return read_inference(path, known_chips=frozenset({"h100-sxm"}))[0]
