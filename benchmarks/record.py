"""What a benchmark measured: each figure printed as a line and, where the environment names a record file
(RECORD_ENV), appended to it as one JSON object a line, so that `scripts/write_speed.py` (make speed) can run every
benchmark, each in its own process, and write docs/speed.md and the README's speed passage from the figures."""

from __future__ import annotations

import json
import os

#: the environment variable that names the record file (JSON lines); unset, a benchmark only prints
RECORD_ENV = "CHIPWISE_BENCH_RECORD"


def emit(key: str, value: float, unit: str, text: str) -> None:
    """Print `text`, the figure's line, and record `value` (in `unit`: 's' or 'plans/s' ...) under `key`."""
    print(text, flush=True)
    path = os.environ.get(RECORD_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, "value": value, "unit": unit, "text": text}) + "\n")


def processes(workers: int) -> str:
    """A figure's key part for the processes a run had: 'one_process', or 'per_cpu' (one per CPU, as a command runs)."""
    return "one_process" if workers == 1 else "per_cpu"
