"""Fit the per-family efficiency factors of the catalog to published training runs, and write them back.

    python scripts/calibrate.py [--data CSV] [--dry-run]

For each chip family, the factors below are fitted by least squares on log(predicted / measured) over every
predictable row of that family, with a pull towards the prior (the measured kernel-level fractions in
docs/research/efficiency-evidence.md) so that a family with few rows stays near its measured kernels:

    matmul.<precision>  achievable fraction of dense peak for the precisions the family's rows use
    attention           fused-attention rate relative to the matmul rate
    layer_overhead      framework time per layer and micro-batch (launches, Python, synchronisation)
    step_overhead       fixed time per optimizer step
    dp_overlap          share of compute that hides data-parallel communication

Nothing is fitted per row or per source. The fitted values, the row counts and the date are written into
src/chipwise/catalog/data/efficiency.yaml as each figure's derivation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.optimize import least_squares

from chipwise.catalog import Catalog, load_catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware.objects import Efficiency, carried_family
from chipwise.validation.groundtruth import read_training
from chipwise.validation.training import Case, evaluate, prepare

sys.path.insert(0, str(Path(__file__).resolve().parent))
from efficiency_priors import priors

ROOT = Path(__file__).resolve().parents[1]
CV_JSON = ROOT / "docs" / "cross-validation.json"
EFFICIENCY_YAML = ROOT / "src" / "chipwise" / "catalog" / "data" / "efficiency.yaml"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "groundtruth_training.csv"
PRIOR_WEIGHT = 0.35  # residual weight of log(value / prior) for each fraction, against one row's log-error
OVERHEAD_SCALE = {"layer_overhead": 200e-6, "microbatch_overhead": 20e-3, "step_overhead": 2.0}
BOUNDS = {
    "matmul": (0.15, 0.98),
    "attention": (0.15, 1.2),
    "layer_overhead": (0.0, 5e-3),
    "microbatch_overhead": (0.0, 0.5),
    "step_overhead": (0.0, 20.0),
    "dp_overlap": (0.0, 1.0),
    "ep_overlap": (0.0, 1.0),
    "moe_gemm": (0.2, 1.0),
}
PRECISION_GROUP = {"fp16": "bf16", "tf32": "bf16", "fp32": "bf16"}


def _params(cases: list[Case]) -> list[str]:
    precisions = sorted({PRECISION_GROUP.get(c.job.precision, c.job.precision) for c in cases})
    names = [f"matmul.{p}" for p in precisions] + ["attention", "layer_overhead", "microbatch_overhead"]
    names += ["step_overhead", "dp_overlap"]
    if any(c.model.is_moe for c in cases):
        names.append("moe_gemm")
    if any(c.model.is_moe and c.plans.ep.max() > 1 for c in cases):
        names.append("ep_overlap")
    return names


def _apply(eff: Efficiency, names: list[str], x: np.ndarray) -> Efficiency:
    matmul = dict(eff.matmul)
    fields: dict[str, Any] = {}  # Efficiency fields by name (each a float here)
    for name, value in zip(names, x, strict=True):
        if name.startswith("matmul."):
            prec = name.split(".", 1)[1]
            matmul[prec] = float(value)
            if prec == "bf16":
                for twin in ("fp16", "tf32"):
                    matmul[twin] = float(value)
        elif name in OVERHEAD_SCALE:
            fields[f"{name}_s"] = float(value)
        else:
            fields[name] = float(value)
    return replace(eff, matmul=matmul, **fields)


def matmul_twins(prec: str, figure: dict[str, Any], fitted: list[str], family: str) -> dict[str, dict[str, Any]]:
    """The matmul figures a fitted one stands for: fp16 and tf32 as bf16 (the same matrix-unit rate); int8 as fp8
    (the same rate class) where no int8 run fits it, which had kept the fp8 prior (Hopper 0.7 beside the fitted
    0.8129: W8A8 prefill 13% slower than fp8's at the same peak)."""
    if prec == "bf16":
        return {twin: {**figure, "derivation": "as bf16 (same matrix-unit rate)"} for twin in ("fp16", "tf32")}
    if prec == "fp8" and "matmul.int8" not in fitted:
        derivation = (
            "as fp8, its fitted value (same matrix-unit rate class): scripts/calibrate.py fits the precisions the "
            f"family's training runs use, fp8 alone here ({family}), and no int8 run"
        )
        return {"int8": {**figure, "derivation": derivation}}
    return {}


def _get(eff: Efficiency, name: str) -> float:
    if name.startswith("matmul."):
        return eff.matmul_fraction(name.split(".", 1)[1])
    if name in OVERHEAD_SCALE:
        return float(getattr(eff, f"{name}_s"))
    return float(getattr(eff, name))


def fit_family(cases: list[Case], prior: Efficiency) -> tuple[Efficiency, list[str], float, float]:
    names = _params(cases)
    x0 = np.array([_get(prior, n) for n in names])
    lo = np.array([BOUNDS[n.split(".")[0]][0] for n in names])
    hi = np.array([BOUNDS[n.split(".")[0]][1] for n in names])
    x0 = np.clip(x0, lo, hi)
    measured = np.array([c.row.measured.value for c in cases])  # type: ignore[union-attr]
    slower_is_bigger = np.array([c.row.measured.metric == "step_time_s" for c in cases])  # type: ignore[union-attr]

    def residual(x: np.ndarray) -> np.ndarray:
        eff = _apply(prior, names, x)
        pred = np.array([evaluate(c, eff)[0] for c in cases])
        r = np.log(pred / measured)
        r = np.where(slower_is_bigger, -r, r)  # sign does not matter for the fit; keep it readable
        reg = []
        for n, v in zip(names, x, strict=True):
            if n in OVERHEAD_SCALE:
                reg.append(PRIOR_WEIGHT * v / OVERHEAD_SCALE[n])
            elif n in ("dp_overlap", "ep_overlap"):
                reg.append(PRIOR_WEIGHT * (v - _get(prior, n)))
            else:
                reg.append(PRIOR_WEIGHT * math.log(max(v, 1e-6) / max(_get(prior, n), 1e-6)))
        return np.concatenate([r, np.array(reg)])

    before = float(np.mean(np.abs(residual(x0)[: len(cases)])))
    sol = least_squares(
        residual,
        x0,
        bounds=(lo, hi),
        diff_step=0.02,
        xtol=1e-4,
        ftol=1e-4,
        max_nfev=400,
        loss="soft_l1",
        f_scale=0.1,
    )
    after = float(np.mean(np.abs(residual(sol.x)[: len(cases)])))
    return _apply(prior, names, sol.x), names, before, after


def _prior_catalog() -> Catalog:
    """The catalog with the efficiency section reset to the priors, so every fit starts from the same place."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "priors.yaml"
        path.write_text(yaml.safe_dump(priors()))
        return load_catalog(files=[path])


def _cases(catalog: Catalog, data: Path) -> list[Case]:
    cases = []
    for row in read_training(data):
        if row.skip_reason:
            continue
        try:
            cases.append(prepare(catalog, row))
        except ChipwiseError:
            continue
    return cases


def _by_family(cases: list[Case]) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = defaultdict(list)
    for c in cases:
        out[c.family].append(c)
    return dict(sorted(out.items()))


def cross_validate(cases: list[Case]) -> dict[str, object]:
    """Leave one source family out: fit on the others, predict the held-out rows with the refitted factors."""
    errors: dict[str, list[float]] = defaultdict(list)
    for held in sorted({c.row.source_family for c in cases}):
        train = [c for c in cases if c.row.source_family != held]
        test = [c for c in cases if c.row.source_family == held]
        fitted = {fam: fit_family(fc, fc[0].system.chip.efficiency)[0] for fam, fc in _by_family(train).items()}
        for c in test:
            eff = fitted.get(c.family, c.system.chip.efficiency)
            pred = evaluate(c, eff)[0]
            assert c.row.measured is not None
            errors[held].append(100.0 * (pred - c.row.measured.value) / c.row.measured.value)
        print(f"  held out {held[:40]:40s} n={len(test):3d} MAPE {np.mean(np.abs(errors[held])):.1f}%", flush=True)
    every = [e for v in errors.values() for e in v]
    return {
        "n": len(every),
        "mape_pct": float(np.mean(np.abs(every))),
        "median_ape_pct": float(np.median(np.abs(every))),
        "by_source_family": {
            k: {
                "n": len(v),
                "mape_pct": float(np.mean(np.abs(v))),
                "median_ape_pct": float(np.median(np.abs(v))),
                "bias_pct": float(np.mean(v)),
            }
            for k, v in errors.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--dry-run", action="store_true", help="print the fit, do not write efficiency.yaml")
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="also refit leaving each source family out, and write docs/cross-validation.json",
    )
    args = parser.parse_args()
    cases = _cases(_prior_catalog(), args.data)
    doc = priors()
    today = dt.date.today().isoformat()
    in_sample: list[float] = []
    for family, fam_cases in _by_family(cases).items():
        prior = fam_cases[0].system.chip.efficiency
        fitted, names, before, after = fit_family(fam_cases, prior)
        for c in fam_cases:
            assert c.row.measured is not None
            in_sample.append(abs(100.0 * (evaluate(c, fitted)[0] - c.row.measured.value) / c.row.measured.value))
        chips = sorted({c.row.chip for c in fam_cases})
        print(
            f"{family:16s} rows={len(fam_cases):3d} chips={','.join(chips)} mean|log err| {before:.3f} -> {after:.3f}"
        )
        entry = doc["efficiency"].setdefault(family, {})
        for name in names:
            value = _get(fitted, name)
            unit = "us" if name == "layer_overhead" else ("s" if name in OVERHEAD_SCALE else "1")
            scale = 1e6 if unit == "us" else 1.0
            shown = value * scale
            print(f"    {name:20s} {_get(prior, name) * scale:10.4g} -> {shown:.4g} {unit}")
            figure = {
                "value": round(float(shown), 4),
                "unit": unit,
                "status": "estimate",
                "derivation": (
                    f"fitted by scripts/calibrate.py ({today}) to {len(fam_cases)} published training runs on "
                    f"{', '.join(chips)} (groundtruth_training.csv), pulled towards the prior from "
                    "docs/research/efficiency-evidence.md"
                ),
            }
            if name.startswith("matmul."):
                prec = name.split(".", 1)[1]
                entry.setdefault("matmul", {})[prec] = figure
                entry["matmul"].update(matmul_twins(prec, figure, names, family))
            else:
                entry[name] = figure
    print(f"in-sample MAPE over {len(in_sample)} rows: {np.mean(in_sample):.1f}%")
    if args.cross_validate:
        cv = cross_validate(cases)
        cv["in_sample_mape_pct"] = float(np.mean(in_sample))
        CV_JSON.write_text(json.dumps(cv, indent=2) + "\n")
        print(f"leave-one-source-family-out MAPE over {cv['n']} rows: {cv['mape_pct']:.1f}%")
    carry_to_followers(doc["efficiency"])
    if not args.dry_run:
        EFFICIENCY_YAML.write_text(yaml.safe_dump(doc, sort_keys=False, width=200))
        print(f"wrote {EFFICIENCY_YAML.relative_to(ROOT)}")


_OWN = ("compute_units", "step_overhead")  # a follower's own figures, which no refit of its leader moves


def followers(efficiency: dict[str, Any]) -> dict[str, str]:
    """follower -> leader: the families no training run has been fitted to, which take a fitted predecessor's
    fractions, as their matmul.bf16 derivations say (hardware.objects.carried_family, as Efficiency.carried_from)."""
    derivations = {family: figs["matmul"]["bf16"].get("derivation", "") for family, figs in efficiency.items()}
    return {family: leader for family, text in derivations.items() if (leader := carried_family(text))}


#: the followers the built-in catalog names
FOLLOWERS = followers(yaml.safe_load(EFFICIENCY_YAML.read_text(encoding="utf-8"))["efficiency"])


def carry_to_followers(efficiency: dict[str, Any]) -> None:
    """Copy each leader's values over its followers' (the figures both hold, matmul by precision), so that a refit of
    a leader moves the families that carry it."""
    for follower, leader in followers(efficiency).items():
        src, dst = efficiency.get(leader, {}), efficiency.get(follower, {})
        for name, fig in dst.items():
            if name in _OWN or name not in src:
                continue
            if name == "matmul":
                for prec, f in fig.items():
                    if prec in src["matmul"]:
                        f["value"] = src["matmul"][prec]["value"]
            elif isinstance(fig, dict) and "value" in fig:
                fig["value"] = src[name]["value"]


if __name__ == "__main__":
    main()
