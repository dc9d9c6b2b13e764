"""Operator costs on one rank: a roofline with achievable-efficiency curves. Every function broadcasts arrays.

GEMM of (M x K) @ (K x N):
    flops = 2 M N K
    bytes = b_in (M K + K N) + b_out M N
    t     = roofline(flops / (P * eta_mm * q_tile * q_wave * k_ramp),  bytes / (BW * eta_mem)) + t_kernel
where P is the dense peak at the precision, eta_mm the family's achievable fraction for large GEMMs,
q_tile = M N / (ceil(M/tm) tm ceil(N/tn) tn) the padding loss of output tiles (tm x tn), q_wave = tiles /
(ceil(tiles / units) units) the loss of a partly filled last wave over the chip's compute units, and
ramp = K/(K + d_half) * N/(N + d_half) * M/(M + d_half) the prologue/epilogue and pipeline-fill cost that
makes narrow GEMMs slower than large square ones (d_half = 128: a 128-wide dimension runs at half rate).
(Tile and wave quantisation: NVIDIA's "Matrix Multiplication Background" guide.)

Flash attention (Dao et al. 2022) computes softmax(QK^T)V tile by tile without writing the score matrix, so it
is compute-bound at flops / (P * eta_mm * eta_attn) with IO of Q, K, V and O only (the two joined by `roofline`).

Element-wise work (norms, activations, residuals, optimizer updates) is memory-bound: bytes / (BW * eta_mem).

A GEMM (or an attention kernel) near the ridge point, where its compute and memory terms are alike, reaches
neither roof: its tiles wait on HBM while the matrix units drain, so the two terms are joined by their Euclidean
norm instead of the max():
    roofline(t_compute, t_memory) = sqrt(t_compute^2 + t_memory^2)
which is the larger term far from the ridge and sqrt(2) x it on the ridge (the comment above `roofline` gives why).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chipwise.hardware.objects import PRECISION_BYTES
from chipwise.perf.device import Device
from chipwise.types import Array

#: GEMM dimension at which a kernel runs at half its large-shape rate (prologue, epilogue and pipeline fill):
#: ramp = d / (d + D_HALF) per dimension. An estimate, no kernel measurement behind the 128 itself (one 128-wide
#: tile); the family's eta_mm, fitted to large shapes (docs/research/efficiency-evidence.md s.1), absorbs the rest.
D_HALF = 128.0


# Why the roofline's two terms are joined by their Euclidean norm (`roofline`) rather than max(): of the p-norms
# p = 1.5, 2, 3 and max() (p = infinity), p = 2 gives the smallest summed error over the shared serving table and the
# 17 held-out serving files (287,854 / 287,654 / 288,376 / 290,552 summed absolute % errors, the norm in GEMMs
# only; 286,820 with attention's terms joined the same way), where the GEMMs of decode batches of a few hundred rows
# sit near the ridge. DeepGEMM's FP8 table on H800 (github deepseek-ai/DeepGEMM README, first release) measures its
# one shape on the ridge (M 4,096, N 32,768, K 512) at 233 us where the larger term is 111 us. An estimate: one
# figure for every chip (docs/research/heldout_serving.md, "Stop 47").
def roofline(t_compute: Array | float, t_memory: Array | float) -> Array:
    """A kernel's time (a GEMM, attention) from its compute and memory terms: their Euclidean norm, the larger term
    away from the ridge point and sqrt(2) x it on the ridge, where neither the matrix units nor HBM run at their
    roof."""
    return np.asarray(np.hypot(t_compute, t_memory), dtype=np.float64)


def gemm_compute_time(
    m: Array | float, n: Array | float, k: Array | float, dev: Device, precision: str, waves: bool = True
) -> Array:
    """The compute term of one GEMM (m x k) @ (k x n) (each dimension at least 1): flops / (P eta_mm q_tile q_wave
    ramp); `waves=False` leaves out the last-wave loss (split-K / stream-K kernels that fill every unit)."""
    m = np.maximum(np.asarray(m, dtype=np.float64), 1.0)
    n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    k = np.maximum(np.asarray(k, dtype=np.float64), 1.0)
    return rows_term(m, gemm_columns(n, k, dev, precision), waves)


@dataclass(frozen=True)
class GemmColumns:
    """What gemm_compute_time prices from a GEMM's n and k alone (rows_term adds the rows): its output tiles along
    n, the ramp k / (k + d_half) * n / (n + d_half), 2 k, and the rate."""

    tiles_n: Array
    ramp: Array
    two_k: Array
    peak: float
    tile_m: float
    tile_n: float
    units: float


def gemm_columns(n: Array | float, k: Array | float, dev: Device, precision: str) -> GemmColumns:
    """gemm_compute_time's terms in n and k (each at least 1), to price at many row counts (rows_term)."""
    eff = dev.eff
    tn = float(eff.tile_n)
    native = dev.chip.native_precision(precision)  # fp4 on a Hopper runs, and is efficient, as fp8
    return GemmColumns(
        tiles_n=np.ceil(n / tn),
        ramp=np.asarray(k / (k + D_HALF) * n / (n + D_HALF), dtype=np.float64),
        two_k=2.0 * np.asarray(k, dtype=np.float64),
        peak=dev.peak_flops(native) * eff.matmul_fraction(native),
        tile_m=float(eff.tile_m),
        tile_n=tn,
        units=float(eff.compute_units),
    )


def rows_term(m: Array | float, g: GemmColumns, waves: bool = True) -> Array:
    """gemm_compute_time of `m` rows (at least 1) by the columns `g`: flops / (P eta_mm q_tile q_wave ramp)."""
    tiles_m = np.ceil(m / g.tile_m)
    padded = tiles_m * g.tile_m * g.tiles_n * g.tile_n  # flops / q_tile = 2 k x the padded output
    if waves:
        tiles = tiles_m * g.tiles_n
        padded = padded * (np.ceil(tiles / g.units) * g.units) / tiles  # / q_wave
    ramp = g.ramp * m / (m + D_HALF)
    return np.asarray(g.two_k * padded / (g.peak * ramp), dtype=np.float64)


def gemm_time(
    m: Array | float,
    n: Array | float,
    k: Array | float,
    dev: Device,
    precision: str,
    count: Array | float = 1.0,
) -> Array:
    """Time of `count` GEMMs of shape (m x k) @ (k x n) on one rank, in seconds:
    t = count (roofline(2 m n k / (P eta_mm q_tile q_wave ramp), (b (m k + k n) + 2 m n) / (BW eta_mem)) + t_kernel).
    Roofline model (Williams, Waterman & Patterson 2009; joined by `roofline`'s norm, an estimate); tile and wave
    quantisation from NVIDIA's "Matrix Multiplication Background" guide; eta_mm and eta_mem are the catalog's
    fractions (docs/research/efficiency-evidence.md s.1, s.2)."""
    m = np.maximum(np.asarray(m, dtype=np.float64), 1.0)
    n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    k = np.maximum(np.asarray(k, dtype=np.float64), 1.0)
    t_compute = gemm_compute_time(m, n, k, dev, precision)
    b = PRECISION_BYTES.get(dev.chip.native_precision(precision), 2.0)
    t_memory = (b * (m * k + k * n) + 2.0 * m * n) / (dev.hbm_bandwidth * dev.eff.memory)
    return np.asarray(count * (roofline(t_compute, t_memory) + dev.eff.kernel_overhead_s), dtype=np.float64)


def attention_time(
    flops: Array | float, io_bytes: Array | float, dev: Device, precision: str, count: Array | float = 1.0
) -> Array:
    """Time of fused (flash) attention: `flops` of QK^T and AV, `io_bytes` of Q, K, V and O traffic:
    t = count (roofline(flops / (P_bf16 eta_mm eta_attn), io_bytes / (BW eta_mem)) + t_kernel). Flash attention
    (Dao et al. 2022); eta_attn is the catalog's fraction (docs/research/efficiency-evidence.md s.3)."""
    # Attention runs its matmuls in bf16 even in fp8 training (Transformer Engine, torchtitan, MaxText).
    prec = "bf16" if precision in ("fp8", "fp4", "int8", "fp6") else precision
    eff = dev.eff
    rate = dev.peak_flops(prec) * eff.matmul_fraction(prec) * eff.attention
    t = roofline(np.asarray(flops) / rate, np.asarray(io_bytes) / (dev.hbm_bandwidth * eff.memory))
    return np.asarray(count * (t + eff.kernel_overhead_s), dtype=np.float64)


def memory_time(nbytes: Array | float, dev: Device, kernels: Array | float = 0.0) -> Array:
    """Time of memory-bound work moving `nbytes` through HBM in `kernels` kernel launches:
    t = nbytes / (BW eta_mem) + kernels t_kernel; eta_mem is the catalog's STREAM-like fraction
    (docs/research/efficiency-evidence.md s.2: 0.85-0.89 of spec on NVIDIA HBM3/HBM3e)."""
    eff = dev.eff
    return np.asarray(
        np.asarray(nbytes) / (dev.hbm_bandwidth * eff.memory) + np.asarray(kernels) * eff.kernel_overhead_s,
        dtype=np.float64,
    )
