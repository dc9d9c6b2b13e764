"""How fast is a request trace read? Prints the best wall time, over N reads, of `read_trace` on a CSV trace of
the most requests `predict` simulates (MAX_SIMULATED, one a second, 1,024 tokens in and 256 out) and on the same
requests as JSONL (run: python benchmarks/trace_read.py [--runs N] [--requests N]; PYTHONPATH=OTHER/src times
another checkout)."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from record import emit

from chipwise.workload.bounds import MAX_SIMULATED
from chipwise.workload.traces import read_trace


def best(path: Path, runs: int) -> float:
    """The best wall time of reading `path` over `runs` reads."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        read_trace(str(path))
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--requests", type=int, default=MAX_SIMULATED)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, jsonl_path = Path(tmp) / "trace.csv", Path(tmp) / "trace.jsonl"
        rows = range(args.requests)
        csv_path.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{i},1024,256\n" for i in rows))
        jsonl_path.write_text(
            "".join(f'{{"arrival_s": {i}, "input_tokens": 1024, "output_tokens": 256}}\n' for i in rows)
        )
        for name, path in (("CSV", csv_path), ("JSONL", jsonl_path)):
            wall = best(path, args.runs)
            emit(
                f"trace.{name.lower()}_s",
                wall,
                "s",
                f"{name:5s} trace of {args.requests:,} requests: {wall:6.2f} s (best of {args.runs})",
            )


if __name__ == "__main__":
    main()
