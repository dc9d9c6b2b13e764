"""Fit the serving factors of the catalog's engines section to published serving measurements, and write them back.

    python scripts/calibrate_serving.py [--data CSV] [--dry-run] [--groups trtllm/hopper,...]

For each (engine family, chip family) with predictable rows, these factors are fitted by robust least squares
(soft-L1 loss, so that a few rows the model cannot represent do not drag the fit) on log(predicted / measured)
over every measured metric of those rows (output tokens/s per chip, TTFT, TPOT), with a pull towards the prior
(1 for the scale factors) so that a group with few rows stays near the chip family's training-fitted
efficiencies:

    compute_scale   multiplies the family's matmul and attention fractions (prefill, large decode batches)
    memory_scale    multiplies the family's HBM fraction (weight and KV-cache streaming)
    moe_scale       multiplies the family's grouped-expert-GEMM fraction (groups with MoE rows only)
    step_overhead   fixed time per iteration (scheduling, sampling, launch)
    layer_overhead  fixed time per decoder layer per iteration (launches and syncs not hidden by graphs)

Nothing is fitted per row or per source. The fitted values, the row counts, the errors before and after and the
date are written into src/chipwise/catalog/data/engines.yaml (engines.<engine>.chips.<family>) as derivations.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import least_squares

from chipwise.catalog import load_catalog
from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.engine import EngineProfile, engine_profile
from chipwise.validation import serving as vs
from chipwise.validation.groundtruth import read_inference

ROOT = Path(__file__).resolve().parents[1]
ENGINES_YAML = ROOT / "src" / "chipwise" / "catalog" / "data" / "engines.yaml"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "groundtruth_inference.csv"
PRIOR_WEIGHT = 0.5  # residual weight of log(scale / 1) against one metric's log-error
CALIBRATION_MAX_REQUESTS = 3000  # fewer simulated requests while fitting (the steady window is kept)
BOUNDS = {
    "compute_scale": (0.15, 2.5),
    "memory_scale": (0.3, 1.12),
    "moe_scale": (0.1, 3.0),
    "step_overhead": (0.0, 0.08),
    "layer_overhead": (0.0, 2e-3),
}
#: Tighter limits on the fixed costs of GPU engines, whose schedulers overlap with the GPU (TensorRT-LLM's
#: overlap scheduler, vLLM V1's async scheduling): a step costs at most a few ms of exposed CPU time.
GPU_OVERHEAD_BOUNDS = {"step_overhead": (0.0, 0.005), "layer_overhead": (0.0, 1e-4)}
NEURON_ENGINES = ("neuron", "vllm-neuron")
UNITS = {"step_overhead": ("ms", 1e3), "layer_overhead": ("us", 1e6)}
FIELDS = {"step_overhead": "step_overhead_s", "layer_overhead": "layer_overhead_s"}
MIN_ROWS = 4  # a group with fewer rows keeps its engine's defaults (no per-row fitting)


OBJECTIVE = "log"  # 'log': log(predicted / measured); 'ape': predicted / measured - 1 (the MAPE the issue scores)


def _error(ratio: float) -> float:
    return math.log(ratio) if OBJECTIVE == "log" else ratio - 1.0


def _apply(profile: EngineProfile, names: list[str], x: np.ndarray) -> EngineProfile:
    return replace(profile, **{FIELDS.get(n, n): float(v) for n, v in zip(names, x, strict=True)})


def _residuals(
    catalog: Catalog, cases: list[vs.Case], base: EngineProfile, names: list[str], x: np.ndarray
) -> np.ndarray:
    prof = _apply(base, names, x)
    res: list[float] = []
    for case in cases:
        try:
            results = vs.predict_case(case.with_profile(catalog, prof))
        except ChipwiseError:
            res.extend([3.0] * len(case.row.measured))
            continue
        got = {r.metric: r for r in results}
        for m in case.row.measured:
            r = got.get(m.metric)
            res.append(_error(r.predicted / r.measured) if r is not None else 3.0)
    for n, v in zip(names, x, strict=True):
        if n.endswith("_scale"):
            res.append(PRIOR_WEIGHT * math.log(max(v, 1e-6)))
    return np.clip(np.asarray(res), -4.0, 4.0)


def _params(cases: list[vs.Case]) -> list[str]:
    names = ["compute_scale", "memory_scale", "step_overhead", "layer_overhead"]
    if any(c.job.model.is_moe for c in cases):
        names.append("moe_scale")
    metrics = sum(len(c.row.measured) for c in cases)
    if metrics < 8:
        names = ["compute_scale", "step_overhead"]
    return names


def _mape(res: np.ndarray, n: int) -> float:
    ape = np.abs(np.exp(res[:n]) - 1.0) if OBJECTIVE == "log" else np.abs(res[:n])
    return float(np.mean(ape) * 100.0)


def _cases(catalog: Catalog, data: Path) -> dict[tuple[str, str], list[vs.Case]]:
    vs.MAX_REQUESTS = CALIBRATION_MAX_REQUESTS
    groups: dict[tuple[str, str], list[vs.Case]] = defaultdict(list)
    for row in read_inference(data, known_chips=frozenset(catalog.chips)):
        try:
            case = vs.prepare(catalog, row)
        except ChipwiseError:
            continue
        groups[case.group].append(case)
    return groups


def fit_group(data: Path, group: tuple[str, str]) -> dict[str, object]:
    """Fit one (engine, chip family) group (run in a worker process)."""
    catalog = load_catalog()
    cases = _cases(catalog, data)[group]
    engine, family = group
    metrics = sum(len(c.row.measured) for c in cases)
    base = engine_profile(catalog, engine, family)
    names = _params(cases)
    x0 = np.asarray([getattr(base, FIELDS.get(n, n)) for n in names], dtype=float)
    bounds = dict(BOUNDS) if engine in NEURON_ENGINES else {**BOUNDS, **GPU_OVERHEAD_BOUNDS}
    lo = np.asarray([bounds[n][0] for n in names])
    hi = np.asarray([bounds[n][1] for n in names])
    x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)
    start = time.perf_counter()
    r0 = _residuals(catalog, cases, base, names, x0)
    scale = [1e-3 if n == "step_overhead" else 1e-4 if n == "layer_overhead" else 0.3 for n in names]
    sol = least_squares(
        lambda x: _residuals(catalog, cases, base, names, x),
        x0,
        bounds=(lo, hi),
        diff_step=0.08,
        max_nfev=30,
        loss="soft_l1",
        f_scale=0.3,
        x_scale=np.maximum(np.abs(x0), scale),
    )
    r1 = _residuals(catalog, cases, base, names, sol.x)
    return {
        "values": dict(zip(names, (float(v) for v in sol.x), strict=True)),
        "rows": len(cases),
        "metrics": metrics,
        "mape_before": _mape(r0, metrics),
        "mape_after": _mape(r1, metrics),
        "seconds": time.perf_counter() - start,
    }


def fit(catalog: Catalog, data: Path, only: set[str] | None, workers: int) -> dict[tuple[str, str], dict[str, object]]:
    groups = _cases(catalog, data)
    todo = [
        g for g, cases in sorted(groups.items()) if len(cases) >= MIN_ROWS and (not only or f"{g[0]}/{g[1]}" in only)
    ]
    for g, cases in sorted(groups.items()):
        if g not in todo:
            print(f"{g[0]}/{g[1]:22s} {len(cases):3d} rows: not fitted (fewer than {MIN_ROWS} rows or not asked)")
    out: dict[tuple[str, str], dict[str, object]] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(fit_group, data, g): g for g in todo}
        for fut in as_completed(futures):
            g = futures[fut]
            info = fut.result()
            out[g] = info
            values = info["values"]
            assert isinstance(values, dict)
            shown = ", ".join(f"{k}={v:.4g}" for k, v in values.items())
            print(
                f"{g[0] + '/' + g[1]:28s} {info['rows']:3d} rows {info['metrics']:3d} metrics  "
                f"MAPE {info['mape_before']:6.1f}% -> {info['mape_after']:6.1f}%  {shown}  ({info['seconds']:.0f} s)",
                flush=True,
            )
    return out


def _figure(name: str, value: float, info: dict[str, object], engine: str, family: str) -> dict[str, object]:
    unit, factor = UNITS.get(name, ("1", 1.0))
    today = dt.date.today().isoformat()
    return {
        "value": round(value * factor, 4),
        "unit": unit,
        "status": "estimate",
        "derivation": (
            f"fitted by scripts/calibrate_serving.py ({today}) to {info['rows']} published serving runs "
            f"({info['metrics']} measured metrics) of {engine} on {family} chips (groundtruth_inference.csv); "
            f"MAPE {info['mape_before']:.1f}% before, {info['mape_after']:.1f}% after; scale factors pulled towards 1"
        ),
    }


def write(fitted: dict[tuple[str, str], dict[str, object]]) -> None:
    doc = yaml.safe_load(ENGINES_YAML.read_text(encoding="utf-8"))
    head = ENGINES_YAML.read_text(encoding="utf-8").split("\nengines:")[0]
    engines = doc["engines"]
    for (engine, family), info in fitted.items():
        node = engines.setdefault(engine, {}).setdefault("chips", {}).setdefault(family, {})
        values = info["values"]
        assert isinstance(values, dict)
        for name, value in values.items():
            node[name] = _figure(name, float(value), info, engine, family)
    body = yaml.safe_dump({"engines": engines}, sort_keys=False, width=120, allow_unicode=True)
    ENGINES_YAML.write_text(head + "\n" + body, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--groups", default="", help="comma-separated engine/family groups to fit (default: all)")
    ap.add_argument("--workers", type=int, default=2, help="groups fitted in parallel")
    ap.add_argument("--objective", choices=("log", "ape"), default=OBJECTIVE, help="residual: log ratio or APE")
    args = ap.parse_args()
    globals()["OBJECTIVE"] = args.objective
    only = {g.strip() for g in args.groups.split(",") if g.strip()} or None
    fitted = fit(load_catalog(), args.data, only, args.workers)
    if not args.dry_run and fitted:
        write(fitted)
        print(f"wrote {len(fitted)} groups to {ENGINES_YAML}")


if __name__ == "__main__":
    main()
