"""How fast does `chipwise sweep` run? Points per second for a 1,000-point training grid (5 models x 5 chips x
5 fleet sizes x 8 what-ifs, each point a full plan search), in this process and on a local process pool, and a
check that both store the same results (run: python benchmarks/sweep_speed.py [--workers N])."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb
from record import emit

from chipwise.sweep import load_sweep, run_sweep
from chipwise.sweep.backends import cpu_count

SWEEP = """\
name: bench
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 1024, precision: bf16, tokens: 1e12}
grid:
  model: [llama-3.1-8b, mistral-7b, qwen3-32b, llama-3.1-70b, mixtral-8x7b]
  hardware: [h100-sxm, b200, trn2, mi300x, tpu-v6e]
  chips: [64, 256, 1024, 4096, 16384]
what_if:
  baseline: []
  trn2-hbm-4tb: ["trn2.hbm_bandwidth=4e12"]
  trn2-hbm-5tb: ["trn2.hbm_bandwidth=5e12"]
  b200-hbm-10tb: ["b200.hbm_bandwidth=10e12"]
  h100-hbm-4tb: ["h100-sxm.hbm_bandwidth=4e12"]
  mi300x-hbm-6tb: ["mi300x.hbm_bandwidth=6e12"]
  tpu-v6e-hbm-2tb: ["tpu-v6e.hbm_bandwidth=2e12"]
  all-hbm-plus: ["trn2.hbm_bandwidth=4e12", "b200.hbm_bandwidth=10e12", "h100-sxm.hbm_bandwidth=4e12"]
"""


def _results(store: Path) -> list[tuple[object, ...]]:
    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("SELECT * EXCLUDE (sweep) FROM results ORDER BY id").fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=cpu_count(), help="processes for the pool run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp) / "bench.yaml"
        sweep.write_text(SWEEP)
        t0 = time.perf_counter()
        spec = load_sweep(sweep)
        n = len(spec)
        print(f"{n:,} points; parsed and expanded in {time.perf_counter() - t0:.3f} s")
        runs = []
        for label, workers in (("in-process", 1), (f"{args.workers} processes", args.workers)):
            store = Path(tmp) / f"{workers}.duckdb"
            stats = run_sweep(spec, store, workers=workers)
            runs.append(store)
            emit(
                f"sweep.{'one_process' if workers == 1 else 'pool'}_points_per_s",
                stats.points_per_s,
                "points/s",
                f"{label:>12}: {stats.ran:,} points ({stats.ok:,} ok, {stats.errors:,} do not fit) in "
                f"{stats.seconds:.1f} s = {stats.points_per_s:,.1f} points/s",
            )
        same = _results(runs[0]) == _results(runs[1])
        print(f"stored results identical: {same}; CPUs: {cpu_count()}")


if __name__ == "__main__":
    main()
