"""Fit the serving factors of the catalog's engines section to published serving measurements, and write them back.

    python scripts/calibrate_serving.py [--data CSV[::FILTER] ...] [--dry-run] [--groups trtllm/hopper,...]
                                        [--no-holdout] [--holdout-by source_family|model] [--objective log|ape]
                                        [--params step_overhead,...]

A FILTER keeps the rows of that file whose columns match every condition, `;`-separated: `column=value`,
`column!=value` or `column~regex` (e.g. `heldout_inferencex_api.csv::input_len=1024;output_len=1024`).

For each (engine family, chip family) with at least four predictable rows, these factors are fitted:

    compute_scale   multiplies the family's matmul and attention fractions (prefill, large decode batches)
    memory_scale    multiplies the family's HBM fraction (weight and KV-cache streaming)
    moe_scale       multiplies the family's grouped-expert-GEMM fraction (groups with MoE rows only)
    moe_block_scale multiplies moe_scale for a compiled context encoding's blockwise expert pass (Neuron groups with
                    MoE and TTFT rows: NxD's blockwise kernel, beside token generation's expert matmuls)
    step_overhead   fixed time per iteration (scheduling, sampling, launch)
    prefill_overhead fixed time of an iteration that encodes prompts (Neuron groups with TTFT rows only: the
                    separately compiled context-encoding graph)
    layer_overhead  fixed time per decoder layer per iteration (launches, syncs and small collectives not hidden)
    sequence_overhead host time per sequence an iteration samples (GPU engines: the engine loop's per-request work)
    kernel_overhead fixed time per GEMM kernel of an iteration (GPU engines: the gap between graph-replayed kernels,
                    which tells a DeepSeek-R1 layer, about ten GEMMs, from a Llama or gpt-oss one, four)

The objective is robust least squares (scipy least_squares, loss="soft_l1", f_scale 0.25) on log(predicted /
measured) over every measured metric of the group's rows (output tokens/s per chip, TTFT, TPOT), plus a prior
pull: PRIOR_WEIGHT x log(scale) for the scale factors (towards the chip family's training-fitted efficiencies)
and PRIOR_WEIGHT x (overhead - prior) / OVERHEAD_SCALE for the fixed costs (towards the engine's sourced prior).
soft-L1 behaves like least squares for errors under ~25% and like an absolute (median-like) loss beyond, so a
few rows the model cannot represent (or that were mis-measured) do not drag the fit, which is what a MAPE target
wants. Nothing is fitted per row or per source.

Out-of-sample check (leave one source family out): for each group and each source family in it, the factors are
refitted without that family's rows and that family's rows are predicted with them; the pooled held-out MAPE is
reported next to the in-sample MAPE, so a factor that only fits one publication shows up as a large gap.
`--holdout-by model` leaves out one model at a time instead (a group of one source family).

The fitted values, the row counts, the in-sample and held-out errors and the date are written into
src/chipwise/catalog/data/engines.yaml (engines.<engine>.chips.<family>) as derivations.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.optimize import least_squares

from chipwise.catalog import load_catalog
from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.engine import EngineProfile, engine_profile
from chipwise.validation import serving_case_load
from chipwise.validation.groundtruth import read_inference
from chipwise.validation.serving_case import Case, prepare
from chipwise.validation.serving_simulation import predict_case

ROOT = Path(__file__).resolve().parents[1]
ENGINES_YAML = ROOT / "src" / "chipwise" / "catalog" / "data" / "engines.yaml"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "groundtruth_inference.csv"
PRIOR_WEIGHT = 0.5  # residual weight of the prior pull against one metric's log-error
F_SCALE = 0.25  # soft-L1: quadratic below ~25% error, linear beyond
CALIBRATION_MAX_REQUESTS = 3000  # fewer simulated requests while fitting (the steady window is kept)
BOUNDS = {
    "compute_scale": (0.1, 2.5),
    "memory_scale": (0.3, 1.15),
    "moe_scale": (0.1, 3.0),
    "moe_block_scale": (0.1, 3.0),
    "step_overhead": (0.0, 0.08),
    "layer_overhead": (0.0, 2e-3),
    "prefill_overhead": (0.0, 0.2),
    "sequence_overhead": (0.0, 50e-6),
    "kernel_overhead": (0.0, 20e-6),
}
#: Tighter limits on the fixed costs of GPU engines, whose schedulers overlap with the GPU (TensorRT-LLM's
#: overlap scheduler, vLLM V1's async scheduling): a step costs at most a few ms of exposed CPU time.
GPU_OVERHEAD_BOUNDS = {"step_overhead": (0.0, 0.005), "layer_overhead": (0.0, 1e-4), "prefill_overhead": (0.0, 0.005)}
NEURON_ENGINES = ("neuron", "vllm-neuron", "optimum-neuron")
#: How far a fixed cost may move from its prior before the pull costs as much as a 1-in-e error on one metric:
#: GPU engines overlap scheduling with the GPU and capture graphs (ms per step, tens of us per layer); Neuron
#: runtimes pay host round trips per step and NeuronLink collectives per layer (tens of ms, hundreds of us).
OVERHEAD_SCALE = {
    "step_overhead": 5e-3,
    "layer_overhead": 100e-6,
    "prefill_overhead": 5e-3,
    "sequence_overhead": 10e-6,
    "kernel_overhead": 5e-6,
}
NEURON_OVERHEAD_SCALE = {"step_overhead": 20e-3, "layer_overhead": 500e-6, "prefill_overhead": 20e-3}
UNITS = {
    "step_overhead": ("ms", 1e3),
    "layer_overhead": ("us", 1e6),
    "prefill_overhead": ("ms", 1e3),
    "sequence_overhead": ("us", 1e6),
    "kernel_overhead": ("us", 1e6),
}
FIELDS = {
    "step_overhead": "step_overhead_s",
    "layer_overhead": "layer_overhead_s",
    "prefill_overhead": "prefill_overhead_s",
    "sequence_overhead": "sequence_overhead_s",
    "kernel_overhead": "kernel_overhead_s",
}
MIN_ROWS = 4  # a group with fewer rows keeps its engine's defaults (no per-row fitting)
MAX_NFEV = 60
HOLDOUT_NFEV = 25


def _apply(profile: EngineProfile, names: list[str], x: np.ndarray) -> EngineProfile:
    changes: dict[str, Any] = {FIELDS.get(n, n): float(v) for n, v in zip(names, x, strict=True)}
    return replace(profile, **changes)


#: Residual of one metric: 'log' = log(predicted / measured); 'ape' = predicted / measured - 1 (the relative error the
#: MAPE averages: an over-prediction costs more than an under-prediction of the same ratio).
OBJECTIVE = "log"
OBJECTIVE_TEXT = {"log": "log errors", "ape": "relative errors (predicted / measured - 1)"}
#: What the out-of-sample check leaves out, one at a time: each source family (the default), or each model (a group
#: of one source family can still show whether its factors carry from some models to another).
HOLDOUT_BY = "source_family"
HOLDOUT_TEXT = {"source_family": "source-family", "model": "model"}


def _holdout_key(case: Case) -> str:
    return case.row.source_family if HOLDOUT_BY == "source_family" else case.row.raw.get("model", "")


def _residual(log_ratio: float) -> float:
    return log_ratio if OBJECTIVE == "log" else math.expm1(log_ratio)


def _errors(catalog: Catalog, cases: list[Case], prof: EngineProfile) -> list[float]:
    """log(predicted / measured) for every measured metric of the cases (3.0 where nothing was predicted)."""
    res: list[float] = []
    for case in cases:
        try:
            results = predict_case(case.with_profile(catalog, prof))
        except ChipwiseError:
            res.extend([3.0] * len(case.row.measured))
            continue
        got = {r.metric: r for r in results}
        for m in case.row.measured:
            r = got.get(m.metric)
            res.append(math.log(r.predicted / r.measured) if r is not None else 3.0)
    return res


def _residuals(catalog: Catalog, cases: list[Case], base: EngineProfile, names: list[str], x: np.ndarray) -> np.ndarray:
    res = [_residual(r) for r in _errors(catalog, cases, _apply(base, names, x))]
    spread = NEURON_OVERHEAD_SCALE if base.engine in NEURON_ENGINES else OVERHEAD_SCALE
    for n, v in zip(names, x, strict=True):
        if n.endswith("_scale"):
            res.append(PRIOR_WEIGHT * math.log(max(v, 1e-6)))
        else:
            res.append(PRIOR_WEIGHT * (v - getattr(base, FIELDS[n])) / spread[n])
    clipped: np.ndarray = np.clip(np.asarray(res, dtype=np.float64), -4.0, 4.0)
    return clipped


def _params(cases: list[Case]) -> list[str]:
    names = ["compute_scale", "memory_scale", "step_overhead", "layer_overhead"]
    if any(c.job.model.is_moe for c in cases):
        names.append("moe_scale")
    if not any(c.group[0] in NEURON_ENGINES for c in cases):
        # GPU engines batch hundreds to thousands of requests, so the per-request host work is its own term, and
        # replay graphs whose kernels each leave a gap
        names.extend(["sequence_overhead", "kernel_overhead"])
    if any(c.group[0] in NEURON_ENGINES for c in cases) and any(
        m.metric == "ttft_s" for c in cases for m in c.row.measured
    ):
        # Neuron encodes prompts in a separately compiled graph whose fixed cost TTFTs (and only they) show
        names.append("prefill_overhead")
        if "moe_scale" in names:
            # ... and runs their experts blockwise, a kernel of its own beside token generation's expert matmuls
            names.append("moe_block_scale")
    if sum(len(c.row.measured) for c in cases) < 8:
        names = ["compute_scale", "step_overhead"]
    return names


def _mape(errors: list[float]) -> float:
    return float(np.mean(np.abs(np.expm1(np.asarray(errors)))) * 100.0) if errors else math.nan


def _kept(raw: dict[str, str], entry: str) -> bool:
    """Whether a row's columns meet every condition of a `--data PATH::FILTER` entry (see the module docstring)."""
    _, _, spec = entry.partition("::")
    for cond in filter(None, spec.split(";")):
        found = re.match(r"(\w+)(!=|=|~)(.*)", cond)
        if found is None:
            raise SystemExit(f"calibrate_serving.py: filter condition '{cond}' is not column=value, !=value or ~regex")
        col, op, want = found.groups()
        got = raw.get(col, "")
        if (op == "=" and got != want) or (op == "!=" and got == want) or (op == "~" and not re.search(want, got)):
            return False
    return True


def _cases(catalog: Catalog, data: Sequence[str]) -> dict[tuple[str, str], list[Case]]:
    serving_case_load.MAX_REQUESTS = CALIBRATION_MAX_REQUESTS
    groups: dict[tuple[str, str], list[Case]] = defaultdict(list)
    rows = [
        row
        for entry in data
        for row in read_inference(Path(entry.split("::")[0]), known_chips=frozenset(catalog.chips))
        if _kept(row.raw, entry)
    ]
    for row in rows:
        try:
            case = prepare(catalog, row)
        except ChipwiseError:
            continue
        groups[case.group].append(case)
    return groups


def _solve(
    catalog: Catalog, cases: list[Case], base: EngineProfile, names: list[str], engine: str, nfev: int
) -> np.ndarray:
    x0 = np.asarray([getattr(base, FIELDS.get(n, n)) for n in names], dtype=float)
    bounds = dict(BOUNDS) if engine in NEURON_ENGINES else {**BOUNDS, **GPU_OVERHEAD_BOUNDS}
    lo = np.asarray([bounds[n][0] for n in names])
    hi = np.asarray([bounds[n][1] for n in names])
    x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)
    fixed = ("step_overhead", "prefill_overhead")
    per_unit = {"layer_overhead": 1e-4, "sequence_overhead": 1e-5, "kernel_overhead": 1e-5}
    scale = [1e-3 if n in fixed else per_unit.get(n, 0.3) for n in names]
    sol = least_squares(
        lambda x: _residuals(catalog, cases, base, names, x),
        x0,
        bounds=(lo, hi),
        diff_step=0.05,
        max_nfev=nfev,
        loss="soft_l1",
        f_scale=F_SCALE,
        x_scale=np.maximum(np.abs(x0), scale),
    )
    fitted: np.ndarray = np.asarray(sol.x, dtype=np.float64)
    return fitted


def free_params(group: tuple[str, str], names: Sequence[str], only_params: Sequence[str] = ()) -> list[str]:
    """The factors a group's fit moves: those asked for, less the figures it carries from another group's fit
    (SHARED_FIGURES: TensorRT-LLM on Hopper fits its efficiencies, its fixed costs are Blackwell's)."""
    carried = SHARED_FIGURES[group][2] if group in SHARED_FIGURES else ()
    return [n for n in names if n not in carried and (not only_params or n in only_params)]


def fit_group(
    data: Sequence[str], group: tuple[str, str], holdout: bool, only_params: Sequence[str] = ()
) -> dict[str, object]:
    """Fit one (engine, chip family) group, and its leave-one-out check (HOLDOUT_BY; run in a worker)."""
    catalog = load_catalog()
    cases = _cases(catalog, data)[group]
    engine, family = group
    base = engine_profile(catalog, engine, family)
    names = free_params(group, _params(cases), only_params)
    start = time.perf_counter()
    before = _errors(catalog, cases, base)
    x = _solve(catalog, cases, base, names, engine, MAX_NFEV)
    after = _errors(catalog, cases, _apply(base, names, x))
    held: list[float] = []
    inside: list[float] = []
    left_out: dict[str, list[Case]] = defaultdict(list)  # the groups the check leaves out in turn
    for c in cases:
        left_out[_holdout_key(c)].append(c)
    if holdout and len(left_out) > 1:
        fitted = _apply(base, names, x)
        for key, out in left_out.items():
            rest = [c for c in cases if _holdout_key(c) != key]
            if len(rest) < MIN_ROWS:
                continue
            xf = _solve(catalog, rest, base, names, engine, HOLDOUT_NFEV)
            held.extend(_errors(catalog, out, _apply(base, names, xf)))
            inside.extend(_errors(catalog, out, fitted))
    return {
        "values": dict(zip(names, (float(v) for v in x), strict=True)),
        "rows": len(cases),
        "metrics": len(before),
        "families": len({c.row.source_family for c in cases}),
        "held_out_groups": len(left_out),
        "mape_before": _mape(before),
        "mape_after": _mape(after),
        "mape_heldout": _mape(held),
        "mape_heldout_insample": _mape(inside),
        "heldout_metrics": len(held),
        "seconds": time.perf_counter() - start,
    }


def fit(
    catalog: Catalog,
    data: Sequence[str],
    only: set[str] | None,
    workers: int,
    holdout: bool,
    only_params: Sequence[str] = (),
) -> dict[tuple[str, str], dict[str, object]]:
    groups = _cases(catalog, data)
    todo = [
        g
        for g, cases in sorted(groups.items())
        if len(cases) >= MIN_ROWS
        and (not only or f"{g[0]}/{g[1]}" in only)
        and free_params(g, _params(cases), only_params)  # a follower asked only its leader's figures has none
    ]
    for g, cases in sorted(groups.items()):
        if g not in todo:
            print(
                f"{g[0]}/{g[1]:22s} {len(cases):3d} rows: not fitted (fewer than {MIN_ROWS} rows, not asked, or "
                "every factor asked is carried from another group's fit)"
            )
    out: dict[tuple[str, str], dict[str, object]] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(fit_group, data, g, holdout, only_params): g for g in todo}
        for fut in as_completed(futures):
            g = futures[fut]
            info = fut.result()
            out[g] = info
            values = info["values"]
            assert isinstance(values, dict)
            shown = ", ".join(f"{k}={v:.4g}" for k, v in values.items())
            print(
                f"{g[0] + '/' + g[1]:28s} {info['rows']:3d} rows {info['metrics']:3d} metrics  "
                f"MAPE {info['mape_before']:6.1f}% -> {info['mape_after']:6.1f}%  "
                f"held-out {info['mape_heldout']:6.1f}% "
                f"(in-sample on the same {info['heldout_metrics']} metrics {info['mape_heldout_insample']:5.1f}%)  "
                f"{shown}  ({info['seconds']:.0f} s)",
                flush=True,
            )
    return out


def _names(data: Sequence[str]) -> str:
    """The data files as a derivation names them: repository-relative, or the shared folder's file name, with any
    row filter."""

    def name(entry: str) -> str:
        path, sep, spec = entry.partition("::")
        p = Path(path).resolve()
        shown = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else p.name
        return f"{shown} rows {spec}" if sep else shown

    return " + ".join(name(e) for e in data)


def _figure(
    name: str, value: float, info: dict[str, object], engine: str, family: str, data: Sequence[str]
) -> dict[str, object]:
    unit, factor = UNITS.get(name, ("1", 1.0))
    today = dt.date.today().isoformat()
    held = info["mape_heldout"]
    assert isinstance(held, float)
    what = HOLDOUT_TEXT[HOLDOUT_BY]
    single = info.get("held_out_groups", info["families"]) == 1
    check = (
        f"; leave-one-{what}-out MAPE {held:.1f}% over {info['heldout_metrics']} metrics"
        if not math.isnan(held)
        else f"; no leave-one-{what}-out check ({'one ' + what.replace('-', ' ') if single else 'not run'})"
    )
    return {
        "value": round(value * factor, 4),
        "unit": unit,
        "status": "estimate",
        "derivation": (
            f"fitted by scripts/calibrate_serving.py ({today}) to {info['rows']} published serving runs "
            f"({info['metrics']} measured metrics, {info['families']} source families) of {engine} on {family} chips "
            f"({_names(data)}): soft-L1 on {OBJECTIVE_TEXT[OBJECTIVE]} with a pull to the prior; MAPE "
            f"{info['mape_before']:.1f}% before, {info['mape_after']:.1f}% after{check}"
        ),
    }


#: Figures that follow another group's fit (engines.yaml gives each reason): (follower engine, follower family) ->
#: (leader engine, leader family, figures). A refit of the leader writes the values over.
_FIXED = ("step_overhead", "layer_overhead")
_FITTED = ("compute_scale", "memory_scale", "moe_scale", *_FIXED, "sequence_overhead")
_TRT_FIXED = (*_FIXED, "sequence_overhead", "kernel_overhead")
_NXD = ("compute_scale", "memory_scale", "moe_scale", "layer_overhead", "prefill_overhead")
SHARED_FIGURES: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {
    # a Blackwell Ultra or Rubin chip runs Blackwell's kernel families, engine loop and host software; the fixed host
    # and launch costs of an A100 or an RTX PRO (unmeasured families) are those of the same engine loop on its
    # neighbour, and Hopper's too: its runs, mostly of 70-405B models, cannot tell a cost per step from one per layer
    # (SGLang's GPU groups and TensorRT-LLM's engine builds keep figures of their own: engines.yaml says which)
    ("trtllm", "blackwell-ultra"): ("trtllm", "blackwell", _TRT_FIXED),
    ("trtllm", "blackwell-rtx"): ("trtllm", "blackwell", _TRT_FIXED),
    ("trtllm", "rubin"): ("trtllm", "blackwell", _TRT_FIXED),
    ("trtllm", "hopper"): ("trtllm", "blackwell", _TRT_FIXED),
    ("trtllm", "ampere"): ("trtllm", "blackwell", _TRT_FIXED),
    ("trtllm-engine", "blackwell-ultra"): ("trtllm-engine", "blackwell", _TRT_FIXED),
    ("trtllm-engine", "blackwell-rtx"): ("trtllm-engine", "blackwell", _TRT_FIXED),
    ("trtllm-engine", "rubin"): ("trtllm-engine", "blackwell", _TRT_FIXED),
    ("trtllm-engine", "ampere"): ("trtllm-engine", "hopper", _TRT_FIXED),
    # MI355X and MI455X run MI300X's ROCm stack, and SGLang's ROCm build the same libraries and graphs as vLLM's
    **dict.fromkeys(
        (("vllm", "cdna4"), ("vllm", "cdna5"), ("sglang", "cdna3"), ("sglang", "cdna4"), ("sglang", "cdna5")),
        ("vllm", "cdna3", _FITTED),
    ),
    # on Trn2 the neuron engine is NxD Inference, whose compiled graphs vLLM drives there too; Trn3 and the announced
    # Trn4 (no serving run published) run the same SDK
    **{("neuron", f): ("vllm-neuron", "trainium2", _NXD) for f in ("trainium2", "trainium3", "trainium4")},
    **{("vllm-neuron", f): ("vllm-neuron", "trainium2", (*_NXD, "step_overhead")) for f in ("trainium3", "trainium4")},
}


def _carry(source: dict[str, Any], target: dict[str, Any], names: Sequence[str]) -> None:
    """Copy the values of `names` that both catalog nodes hold from `source` to `target`."""
    for name in names:
        if name in source and name in target:
            target[name]["value"] = source[name]["value"]


def write(fitted: dict[tuple[str, str], dict[str, object]], data: Sequence[str]) -> None:
    doc = yaml.safe_load(ENGINES_YAML.read_text(encoding="utf-8"))
    head = ENGINES_YAML.read_text(encoding="utf-8").split("\nengines:")[0]
    engines = doc["engines"]
    for (engine, family), info in fitted.items():
        node = engines.setdefault(engine, {}).setdefault("chips", {}).setdefault(family, {})
        values = info["values"]
        assert isinstance(values, dict)
        for name, value in values.items():
            node[name] = _figure(name, float(value), info, engine, family, data)
        for (follower, ffamily), (leader, lfamily, names) in SHARED_FIGURES.items():
            if (leader, lfamily) == (engine, family):
                _carry(node, engines.get(follower, {}).get("chips", {}).get(ffamily, {}), names)
    body = yaml.safe_dump({"engines": engines}, sort_keys=False, width=120, allow_unicode=True)
    ENGINES_YAML.write_text(head + "\n" + body, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument(
        "--data",
        action="append",
        help="ground-truth CSV, optionally PATH::FILTER (repeatable; default: the shared inference table)",
    )
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--groups", default="", help="comma-separated engine/family groups to fit (default: all)")
    ap.add_argument("--workers", type=int, default=2, help="groups fitted in parallel")
    ap.add_argument("--no-holdout", action="store_true", help="skip the leave-one-out check")
    ap.add_argument("--params", default="", help="comma-separated factors to fit (default: every one the group takes)")
    ap.add_argument("--objective", choices=("log", "ape"), default=OBJECTIVE, help="residual: log ratio or APE")
    ap.add_argument(
        "--holdout-by", choices=tuple(HOLDOUT_TEXT), default=HOLDOUT_BY, help="what the out-of-sample check leaves out"
    )
    args = ap.parse_args()
    globals()["OBJECTIVE"] = args.objective
    globals()["HOLDOUT_BY"] = args.holdout_by
    only = {g.strip() for g in args.groups.split(",") if g.strip()} or None
    data = args.data or [str(DEFAULT_DATA)]
    params = [p.strip() for p in args.params.split(",") if p.strip()]
    if unknown := sorted(set(params) - set(BOUNDS)):
        ap.error(f"--params: {', '.join(unknown)} is not a fitted factor (one of {', '.join(BOUNDS)})")
    fitted = fit(load_catalog(), data, only, args.workers, not args.no_holdout, params)
    if not args.dry_run and fitted:
        write(fitted, data)
        print(f"wrote {len(fitted)} groups to {ENGINES_YAML}")


if __name__ == "__main__":
    main()
