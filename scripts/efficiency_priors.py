"""The priors of the per-family efficiency factors, from kernel-level measurements (docs/research/
efficiency-evidence.md). scripts/calibrate.py starts every fit from these, so a calibration is reproducible:

    python scripts/efficiency_priors.py   # write the priors alone to efficiency.yaml (undo a calibration)
    python scripts/calibrate.py           # fit from the priors and write the fitted values
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
EFFICIENCY_YAML = ROOT / "src" / "chipwise" / "catalog" / "data" / "efficiency.yaml"
NOTE = "docs/research/efficiency-evidence.md"


def _est(value: float, unit: str, why: str) -> dict[str, Any]:
    return {"value": value, "unit": unit, "status": "estimate", "derivation": why}


def _spec(value: float, source: str, note: str) -> dict[str, Any]:
    return {"value": value, "unit": "1", "status": "spec", "source": [source], "note": note}


def _family(
    bf16: float,
    fp8: float | None = None,
    fp4: float | None = None,
    *,
    basis: str,
    memory: float = 0.85,
    attention: float = 0.7,
    units: float | dict[str, Any] = 132,
    tile: tuple[int, int] = (128, 256),
    reserved_gib: float = 4.0,
    tp_overlap: float = 0.0,
    reference_tdp: float = 0.0,
) -> dict[str, Any]:
    refined = "refined by scripts/calibrate.py"
    mm = {
        "bf16": _est(
            bf16, "1", f"prior from the measured large-GEMM fraction of dense peak ({basis}; {NOTE} s.7); {refined}"
        ),
        "fp16": _est(bf16, "1", "as bf16 (same matrix-unit rate)"),
        "tf32": _est(bf16, "1", "as bf16"),
        "fp32": _est(0.9, "1", "vector FP32 runs close to peak on large GEMMs (estimate)"),
    }
    if fp8 is not None:
        mm["fp8"] = _est(fp8, "1", f"prior from the measured FP8 GEMM fraction ({basis}; {NOTE}); {refined}")
        mm["int8"] = _est(fp8, "1", "as fp8 (same matrix-unit rate class)")
    if fp4 is not None:
        mm["fp4"] = _est(
            fp4, "1", f"prior: FP4 GEMMs reach 0.3-0.5 of FP8's fraction on LLM shapes ({NOTE} s.7); {refined}"
        )
    fitted = "fitted by scripts/calibrate.py"
    return {
        "matmul": mm,
        "memory": _est(
            memory, "1", f"achievable HBM fraction of streaming kernels ({NOTE} s.2: STREAM copy/triad 0.84-0.89)"
        ),
        "attention": _est(
            attention,
            "1",
            f"fused-attention rate relative to the GEMM rate ({NOTE} s.3: FA3 0.75, FA2 0.35-0.55 of peak)",
        ),
        "kernel_overhead": _est(
            4.0, "us", f"fixed time per kernel launch and tail (2-5 us launch latency; {NOTE} s.5)"
        ),
        "layer_overhead": _est(0.0, "us", f"framework time per layer and micro-batch beyond kernel costs; {fitted}"),
        "microbatch_overhead": _est(
            0.0, "s", f"fixed time per micro-batch and pipeline stage (graph launch, loss, sync); {fitted}"
        ),
        "step_overhead": _est(0.0, "s", f"fixed time per optimizer step (update launch, clipping, logging); {fitted}"),
        "compute_units": units
        if isinstance(units, dict)
        else _est(units, "1", "compute units per rank, for GEMM wave quantisation"),
        "tile_m": _est(tile[0], "1", "output-tile rows of the library's typical large GEMM kernel"),
        "tile_n": _est(tile[1], "1", "output-tile columns of the library's typical large GEMM kernel"),
        "reserved_memory": _est(
            reserved_gib,
            "GiB",
            "memory the runtime holds back: context, communication buffers, fragmentation "
            "(PyTorch/NCCL practice 3-6 GiB)",
        ),
        "tp_overlap": _est(
            tp_overlap,
            "1",
            "share of tensor-parallel communication hidden behind GEMMs "
            "(Transformer Engine userbuffers / async TP on Hopper and later)",
        ),
        "dp_overlap": _est(
            0.9,
            "1",
            "share of compute that hides data-parallel communication "
            f"(bucketed overlap in DDP, FSDP, distributed optimizer); {fitted}",
        ),
        "moe_gemm": _est(
            0.8,
            "1",
            "grouped expert GEMMs relative to dense GEMMs (grouped-GEMM kernels, token permutation); "
            f"{fitted} where MoE runs exist",
        ),
        "ep_overlap": _est(
            0.5,
            "1",
            "share of a MoE layer's compute that hides its all-to-all "
            f"(DeepSeek-V3: nearly fully hidden with DualPipe); {fitted}",
        ),
        "reference_tdp": _est(
            reference_tdp, "W", "board power of the parts the fractions describe (0 = no power-cap derating)"
        ),
    }


def priors() -> dict[str, Any]:
    """The efficiency section of the catalog before calibration."""
    fam: dict[str, Any] = {
        "default": _family(
            0.70, 0.60, 0.40, basis="generic prior for an unknown family", memory=0.80, attention=0.6, units=100
        ),
        "ampere": _family(
            0.85,
            basis="A100 MAMF 0.87; FA2 on A100 0.55-0.70",
            memory=0.83,
            attention=0.65,
            units=_spec(108, "KLOCK_A100", "A100 SMs"),
            tile=(128, 128),
            reference_tdp=400,
        ),
        "hopper": _family(
            0.80,
            0.70,
            basis="H100 MAMF bf16 0.80, fp8 0.71; FA3 0.75",
            memory=0.87,
            attention=0.75,
            units=_spec(132, "KLOCK_H100", "H100 SXM SMs"),
            tp_overlap=0.3,
            reference_tdp=700,
        ),
        "blackwell": _family(
            0.75,
            0.73,
            0.50,
            basis="B200 MAMF bf16 0.78, fp8 0.76; GB200 0.73; FA4 0.71",
            attention=0.71,
            units=_spec(148, "KLOCK_B200", "B200 SMs"),
            tp_overlap=0.3,
            reference_tdp=1000,
        ),
        "blackwell-ultra": _family(
            0.75,
            0.73,
            0.50,
            basis="as Blackwell (no separate B300 GEMM measurement found)",
            attention=0.71,
            units=160,
            tp_overlap=0.3,
            reference_tdp=1100,
        ),
        "blackwell-rtx": _family(
            0.70,
            0.65,
            0.45,
            basis="as Blackwell, lower for a GDDR part (no measurement found)",
            attention=0.6,
            units=156,
        ),
        "cdna3": _family(
            0.58,
            0.55,
            basis="MI300X MAMF 0.51-0.60; MI325X 0.60",
            memory=0.80,
            attention=0.6,
            units=304,
            tile=(256, 256),
            reference_tdp=750,
        ),
        "cdna4": _family(
            0.68, 0.65, 0.45, basis="MI355X MAMF 0.68", memory=0.80, attention=0.6, units=256, tile=(256, 256)
        ),
        "gaudi2": _family(
            0.85,
            0.85,
            basis="Gaudi2 MAMF 0.95 (v1 table, optimistic), capped",
            memory=0.80,
            attention=0.6,
            units=2,
            tile=(256, 256),
            reserved_gib=3.0,
        ),
        "gaudi3": _family(
            0.74,
            0.74,
            basis="Gaudi3 MAMF bf16 0.74, fp8 0.77",
            memory=0.80,
            attention=0.6,
            units=8,
            tile=(256, 256),
            reserved_gib=3.0,
        ),
    }
    for tpu, units in (("tpu-v4", 8), ("tpu-v5e", 4), ("tpu-v5p", 8), ("tpu-v6e", 2), ("tpu-v7", 8)):
        fp8 = 0.70 if tpu in ("tpu-v5p", "tpu-v6e", "tpu-v7") else None
        fam[tpu] = _family(
            0.75,
            fp8,
            basis="TPU v6e JAX GEMM 0.75 (TPU_PEDIA); MaxText MFU 0.56-0.71",
            attention=0.7,
            units=units,
            tile=(128, 128),
            reserved_gib=1.0,
        )
    for trn, frac, fp4 in (
        ("trainium1", 0.70, None),
        ("trainium2", 0.60, None),
        ("trainium3", 0.65, 0.50),
        ("trainium4", 0.65, 0.50),
    ):
        fam[trn] = _family(
            frac,
            frac,
            fp4,
            basis="Trainium production kernels ~60% (ANTHROPIC_TRN)",
            memory=0.80,
            attention=0.6,
            units=1,
            tile=(128, 512),
            reserved_gib=2.0,
        )
    return {"efficiency": fam}


def main() -> None:
    EFFICIENCY_YAML.write_text(yaml.safe_dump(priors(), sort_keys=False, width=200))
    print(f"wrote the priors to {EFFICIENCY_YAML.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
