"""chipwise's device model against kernels timed on a real GPU (scripts/measure_serving_gpu.py's JSON).

Each measured kernel or step is priced with the same functions a serving prediction uses, on the chip the file
names, with the figures of ENGINE on the chip's family (its fitted efficiencies, and its per-kernel and per-layer
costs where the iteration model charges them) and none of the engine's host time (the per-iteration scheduler, the
per-request loop, host sampling: the script runs no engine, only its kernels, each step one CUDA graph):

- `gemm`: perf.serving.streamed_gemm_time of the (m x k) @ (k x n) product, the weight stored at its precision
  (the roofline plus one kernel's fixed cost);
- `decode_attention`: perf.serving.context_attention_time over the B x L cached tokens of one layer; the faster of
  the script's one flash-attention call and its flash-decoding split (the kernel choice an engine makes). As the
  iteration prices it: the cache read (or the score FLOPs) alone, the launches being in the per-layer overhead, so
  a row whose read takes a few microseconds is launch-bound and under-predicted;
- `prefill_attention`: the causal FLOPs at perf.serving.attention_rate (likewise without a launch);
- `decode_step`, `prefill_step`: serve.iteration.iteration_breakdown of the step on the preset whose shapes the
  script's decoder has (Llama-3.1-8B), every device term summed.

The result is a validation report like the CSVs' (validation.report.summarise), one row per measurement, its
`metric` the section; `chipwise validate --data FILE.json` prints it. The built-in measurement
(MEASURED_FILE) was taken on one H200 SXM on 2026-12-04; docs/accuracy.md states its errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.serving import attention_rate, context_attention_time, streamed_gemm_time
from chipwise.serve.engine import EngineProfile, engine_profile, serving_device
from chipwise.serve.iteration import IterationInputs, Shapes, iteration_breakdown, prefill_pairs
from chipwise.serve.quant import stored_bytes
from chipwise.validation.report import RowResult, summarise
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model

#: the engine whose figures price the kernels: the script's kernels are vLLM's kind (cuBLAS GEMMs, flash attention
#: with flash-decoding splits, fused add-and-norm, RoPE and SiLU x up, every decode step one CUDA graph)
ENGINE = "vllm"
#: the preset whose shapes the script's decoder has (its `step_model` must match them)
STEP_MODEL = "llama-3.1-8b"
MEASURED_FILE = "h200_serving_kernels.json"
SECTIONS = ("gemm", "decode_attention", "prefill_attention", "decode_step", "prefill_step")
_FIX = "give a file written by scripts/measure_serving_gpu.py"
#: the precisions the script measures, the only ones priced
PRECISIONS = ("bf16", "fp8")
_LISTS = (*SECTIONS, "split_decode_attention")


def measured_path() -> Path:
    """The built-in measurement: one H200 SXM, 2026-12-04."""
    return Path(str(resources.files("chipwise.validation") / "data" / MEASURED_FILE))


def is_kernel_file(path: Path) -> bool:
    """Whether `path` is a kernel measurement (JSON) rather than a ground-truth CSV."""
    return path.suffix.lower() == ".json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ChipwiseError(f"kernel measurement '{path}' cannot be read ({exc}). Fix: {_FIX}.") from None
    if not isinstance(data, dict) or not any(data.get(s) for s in SECTIONS):
        raise ChipwiseError(
            f"kernel measurement '{path}' has no measurements in any of the sections {', '.join(SECTIONS)}. "
            f"Fix: {_FIX}."
        )
    for section in _LISTS:  # a row that is not an object had been an internal error
        rows = data.get(section) or []
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ChipwiseError(f"kernel measurement '{path}': '{section}' is not a list of objects. Fix: {_FIX}.")
        for i, r in enumerate(rows):
            if "precision" in r and r["precision"] not in PRECISIONS:  # another had been priced as bf16
                raise ChipwiseError(
                    f"kernel measurement '{path}': {section} row {i + 1} has precision {r['precision']!r}, not one "
                    f"of {', '.join(PRECISIONS)}. Fix: {_FIX}."
                )
    if not isinstance(data.get("step_model") or {}, dict):
        raise ChipwiseError(f"kernel measurement '{path}': 'step_model' is not an object. Fix: {_FIX}.")
    return data


def _chip_id(catalog: Catalog, data: dict[str, Any], path: Path) -> str:
    """The catalog chip the file was measured on: its 'chip' key, else the chip whose name starts with the device
    name the script read (nvidia-smi's 'NVIDIA H200' is the catalog's 'NVIDIA H200 SXM 141GB')."""
    chip = data.get("chip")
    if isinstance(chip, str) and chip:
        return str(hardware(catalog).chip(chip).id)
    device = str(data.get("device", "")).strip().lower()
    found = sorted(cid for cid, c in catalog.chips.items() if device and c.name.lower().startswith(device))
    if len(found) != 1:
        named = f"'{data.get('device')}' matches {', '.join(found) or 'no catalog chip'}"
        raise ChipwiseError(
            f"kernel measurement '{path}': which chip it was measured on cannot be told ({named}). Fix: add "
            '"chip": "ID" (a catalog chip id) to the file.'
        )
    return found[0]


def _kernels_only(eng: EngineProfile) -> EngineProfile:
    """The engine's device figures without its host time (no engine runs in the measurement)."""
    return replace(eng, step_overhead_s=0.0, sequence_overhead_s=0.0, request_overhead_s=0.0, host_sampling=False)


def _number(row: dict[str, Any], key: str, where: str) -> float:
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value <= 0:
        raise ChipwiseError(f"kernel measurement {where}: '{key}' is {value!r}, not a positive number. Fix: {_FIX}.")
    return float(value)


def _step_model(catalog: Catalog, data: dict[str, Any]) -> tuple[ModelSpec | None, str]:
    """The preset the steps were measured on, or None and why not."""
    model = load_model(catalog, STEP_MODEL)
    shape = data.get("step_model") or {}
    mlp = model.groups[0].mlp
    want = {
        "layers": model.layers,
        "hidden": model.hidden,
        "heads": model.attention.heads,
        "kv_heads": model.attention.kv_heads,
        "head_dim": model.attention.head_dim,
        "ffn": mlp.ffn if mlp is not None else None,
        "vocab": model.vocab,
    }
    off = [k for k, v in want.items() if shape.get(k) != v]
    if off:
        return None, f"the decoder's {', '.join(off)} differ from {STEP_MODEL}'s (a --smoke run?)"
    return model, ""


def _rows(catalog: Catalog, data: dict[str, Any], path: Path) -> Iterator[RowResult | tuple[str, str]]:
    chip = _chip_id(catalog, data, path)
    system = hardware(catalog).system(chip)
    eng = _kernels_only(engine_profile(catalog, ENGINE, system.chip.family))
    dev = serving_device(device_of(system), eng)
    topo = topology_of(system)
    family = f"chipwise device run {data.get('date', '')}".strip()

    def row(section: str, label: str, measured: float, predicted: float, plan: str) -> RowResult:
        return RowResult(label, chip, section, measured, predicted, plan, family)

    engine_note = f"{ENGINE} figures on {system.chip.family}, no host time"
    for i, g in enumerate(data.get("gemm") or []):
        where = f"gemm row {i + 1}"
        m, n, k = (_number(g, key, where) for key in ("m", "n", "k"))
        prec = str(g.get("precision", "bf16"))
        t = float(streamed_gemm_time(m, n, k, dev, prec, stored_bytes(prec)))
        label = f"gemm {g.get('shape', f'{n:.0f}x{k:.0f}')} {prec} m={m:.0f}"
        yield row("gemm", label, _number(g, "seconds", where), t, engine_note)
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for section in ("decode_attention", "split_decode_attention"):
        for i, a in enumerate(data.get(section) or []):
            seconds = _number(a, "seconds", f"{section} row {i + 1}")
            key = (a.get("layout"), a.get("batch"), a.get("context"))
            if key not in best or seconds < best[key]["seconds"]:
                best[key] = a
    for (layout, _, _), a in best.items():
        where = f"decode attention {layout}"
        b, ctx, kvh, group, d = (
            _number(a, key, where) for key in ("batch", "context", "kv_heads", "group", "head_dim")
        )
        per_token_bytes = 2.0 * kvh * d * 2.0  # K and V, bf16
        per_token_flops = 2.0 * kvh * group * 2.0 * d  # q.k and p.v of every query head
        t = float(context_attention_time(b * ctx, per_token_flops, per_token_bytes, dev))
        splits = _number(a, "splits", where) if "splits" in a else 1.0
        split = f", {splits:.0f} KV splits" if splits > 1 else ""
        label = f"decode attention {layout} B={b:.0f} L={ctx:.0f}"
        yield row("decode_attention", label, _number(a, "seconds", where), t, engine_note + split)
    rate = attention_rate(dev, "bf16")
    for a in data.get("prefill_attention") or []:
        where = "prefill attention"
        t = _number(a, "flops", where) / rate
        yield row("prefill_attention", f"prefill attention L={a.get('length')}", _number(a, "seconds", where), t,
                  engine_note)  # fmt: skip
    model, why = _step_model(catalog, data)
    for section in ("decode_step", "prefill_step"):
        for s in data.get(section) or []:
            prec = str(s.get("precision", "bf16"))
            if section == "decode_step":
                label = f"decode step {prec} B={s.get('batch')} L={s.get('context')}"
            else:
                label = f"prefill step {prec} L={s.get('length')}"
            if model is None:
                yield label, why
                continue
            where = label
            if section == "decode_step":
                b, ctx = _number(s, "batch", where), _number(s, "context", where)
                work = IterationInputs(np.asarray(b), np.asarray(b), np.asarray(b * ctx), np.asarray(0.0))
                typical_context, typical_prompt = ctx, ctx
            else:
                length = _number(s, "length", where)
                pairs = prefill_pairs(0.0, length)
                work = IterationInputs(np.asarray(length), np.asarray(1.0), np.asarray(0.0), pairs)
                typical_context, typical_prompt = length, length
            parts = iteration_breakdown(
                model, dev, topo, eng, prec, "bf16", Shapes.of(1), work, typical_context, typical_prompt
            )
            t = float(sum(float(v) for v in parts.values()))
            yield row(section, label, _number(s, "seconds", where), t, f"{engine_note}, {STEP_MODEL} TP1")


def validate_kernels(catalog: Catalog, path: Path) -> dict[str, Any]:
    """The validation report of a kernel measurement (summarise's object, kind 'kernels')."""
    data = _read(path)
    results: list[RowResult] = []
    skipped: list[tuple[str, str]] = []
    for got in _rows(catalog, data, path):
        if isinstance(got, RowResult):
            results.append(got)
        else:
            skipped.append(got)
    report = summarise("kernels", results, skipped)
    report["measurement"] = {k: data.get(k) for k in ("device", "chip", "date", "torch", "cuda", "method", "script")}
    return report
