"""Layer 8 - sweep / store: run what-if grids in this process, a local process pool or on Ray; persist every
point to DuckDB, export Parquet; resumable after a crash (docs/sweep.md)."""

from chipwise.sweep.export import export_store
from chipwise.sweep.runner import RunStats, run_sweep
from chipwise.sweep.spec import Point, SweepSpec, Variant, load_sweep
from chipwise.sweep.store import Store

__all__ = ["Point", "RunStats", "Store", "SweepSpec", "Variant", "export_store", "load_sweep", "run_sweep"]
