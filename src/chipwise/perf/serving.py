"""Operator costs that serving needs beyond training's: GEMMs whose weights are stored narrower than they are
multiplied, KV-cache reads of decode attention, and latency-bound small collectives. Every function broadcasts.

Weight-streamed GEMM of (m x k) activations by a (k x n) weight stored at w bytes per element (fp4, int4, fp8):
    t = roofline(t_compute, (w k n + a (m k + m n)) / (BW eta_mem)) + t_kernel
where roofline is perf.compute's (the Euclidean norm of the two terms), t_compute `gemm_compute_time`'s compute term
(tile, wave and ramp losses; Williams et al. 2009 roofline) and a = 2 bytes per activation element. Serving GEMMs
are often too small to give every compute unit an output tile; engines then split K (split-K, stream-K), so no
wave-quantisation loss is charged. Below FULL_ROWS rows
(and columns) decode and chunked-prefill kernels (64-row tiles, swap-AB, split-K GEMV) do work in proportion to m
(and n, down to one 128-column tile) at the large-shape rate instead of padding to a whole training tile and
running a part-empty pipeline:
    t_compute(m, n) = t_compute(FULL_ROWS, FULL_ROWS) (m / FULL_ROWS) (max(n, 128) / FULL_ROWS).
At decode batch sizes m is small and the weight read dominates.

Decode attention over C cached tokens (PagedAttention, Kwon et al. 2023; FlashDecoding): it reads each token's
K and V (or MLA latent) once and does f FLOPs per token, so
    t = C roofline(f / (P eta_mm eta_attn), b / (BW eta_mem))
which is linear in the context summed over the batch.

A small all-reduce (one decode step's activations, tens of KB) is latency-bound: one-shot kernels (TensorRT-LLM
custom all-reduce, NCCL LL) pay a fixed latency L instead of the ring's 2 (n - 1) alpha:
    t = L + ring bandwidth term (perf.collectives.all_reduce with the per-step latencies set to zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from chipwise.perf import collectives as coll
from chipwise.perf.compute import GemmColumns, gemm_columns, roofline, rows_term
from chipwise.perf.device import Device, Topology
from chipwise.types import Array, IntArray

ACTIVATION_BYTES = 2.0
#: Rows at which a serving GEMM runs at the large-shape rate of the training model (perf.compute.gemm_time, whose
#: tile padding and pipeline fill along M are training-shape losses); below it the compute term scales with the
#: rows at that rate: decode and chunked-prefill kernels pick their tile (64-row wgmma tiles, swap-AB for skinny
#: M, split-K / stream-K) to the shape, so M is not padded to a 128-row tile nor does the pipeline run part-empty:
#: t_compute(m) = t_compute(FULL_ROWS) m / FULL_ROWS below it. An estimate: no kernel measurement fixes the 4,096
#: (bf16 GEMMs of 512-4,096 rows ran at 0.67-0.80 of peak on one H200, docs/accuracy.md: a check, not an input).
FULL_ROWS = 4096.0
#: The same holds for narrow outputs (the per-rank slice of a tensor-parallel MoE expert: 2048 / 64 = 32 columns),
#: down to one 128-wide tile (Trainium's 128 x 128 systolic array; a 128-column wgmma tile): below it the matrix
#: unit runs part-empty.
MIN_COLS = 128.0


@dataclass(frozen=True)
class StreamedGemm:
    """What streamed_gemm_time prices from a GEMM's shape alone (n, k, the chip, the precision), once for every row
    count it is then timed at (`time`): a serving iteration's GEMMs have the replica's shapes, only their rows vary.
    `stacked`: several GEMMs (streamed_gemms) along a leading axis, timed at the same rows in one pass."""

    columns: GemmColumns  # the compute term's part in (max(n, FULL_ROWS), k)
    base: Array  # the compute term at FULL_ROWS rows
    used: Array  # narrow outputs: the large-shape rate per column, at least MIN_COLS
    weight_bytes: Array  # bytes of the weight
    width: Array  # k + n: activation elements per row read and written
    dev: Device
    compute_factor: float = 1.0
    memory_factor: float = 1.0
    stacked: bool = False
    #: the stacked terms with the GEMMs' axis ahead of a given number of the rows' axes
    aligned: dict[int, StreamedGemm] = field(default_factory=dict, init=False, repr=False, compare=False)

    def time(self, m: Array | float, count: Array | float = 1.0) -> Array:
        """Time of `count` such GEMMs of `m` rows, run as one (grouped) kernel (streamed_gemm_time); stacked, one
        row of times per GEMM."""
        m_a = np.maximum(np.asarray(m, dtype=np.float64), 0.0)
        g = self._align(max(m_a.ndim, np.ndim(count)) - (self.base.ndim - 1)) if self.stacked else self
        # serving GEMMs with fewer output tiles than compute units use split-K / stream-K kernels: no last-wave loss;
        # most have at most FULL_ROWS rows, priced at FULL_ROWS once (max(m, FULL_ROWS) = FULL_ROWS: the same bits)
        big = (m_a > FULL_ROWS).any()
        full = rows_term(np.maximum(m_a, FULL_ROWS), g.columns, waves=False) if big else g.base
        t_compute = full * np.minimum(1.0, m_a / FULL_ROWS) * g.used
        nbytes = g.weight_bytes + ACTIVATION_BYTES * m_a * g.width
        t_memory = nbytes / (self.dev.hbm_bandwidth * self.dev.eff.memory)
        # (a factor or count of exactly 1 is left out: dividing or multiplying by it changes no bit)
        t = roofline(
            t_compute if self.compute_factor == 1.0 else t_compute / self.compute_factor,
            t_memory if self.memory_factor == 1.0 else t_memory / self.memory_factor,
        )
        if not (isinstance(count, float | int) and count == 1):
            t = np.asarray(count, dtype=np.float64) * t
        return np.asarray(t + self.dev.eff.kernel_overhead_s, dtype=np.float64)

    def _align(self, lead: int) -> StreamedGemm:
        """The stacked terms with `lead` unit axes after the GEMMs' axis (so that it leads the rows' axes)."""
        if lead <= 0:
            return self
        got = self.aligned.get(lead)
        if got is None:

            def expand(x: Array) -> Array:
                return x.reshape(x.shape[:1] + (1,) * lead + x.shape[1:])

            c = self.columns
            columns = replace(c, tiles_n=expand(c.tiles_n), ramp=expand(c.ramp), two_k=expand(c.two_k))
            got = replace(
                self,
                columns=columns,
                base=expand(self.base),
                used=expand(self.used),
                weight_bytes=expand(self.weight_bytes),
                width=expand(self.width),
                stacked=False,
            )
            self.aligned[lead] = got
        return got


def streamed_gemm(
    n: Array | float,
    k: Array | float,
    dev: Device,
    precision: str,
    weight_bytes: float,
    compute_factor: float = 1.0,
    memory_factor: float = 1.0,
    stacked: bool = False,
) -> StreamedGemm:
    """The shape's part of streamed_gemm_time, to time at many row counts."""
    n_a = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    k_a = np.maximum(np.asarray(k, dtype=np.float64), 1.0)
    cols = np.maximum(n_a, FULL_ROWS)
    columns = gemm_columns(cols, k_a, dev, precision)
    return StreamedGemm(
        columns=columns,
        base=rows_term(FULL_ROWS, columns, waves=False),
        used=np.maximum(n_a, MIN_COLS) / cols,
        weight_bytes=np.asarray(weight_bytes * k_a * n_a, dtype=np.float64),
        width=k_a + n_a,
        dev=dev,
        compute_factor=compute_factor,
        memory_factor=memory_factor,
        stacked=stacked,
    )


def streamed_gemms(
    shapes: Sequence[tuple[Array | float, Array | float]],
    dev: Device,
    precision: str,
    weight_bytes: float,
    compute_factor: float = 1.0,
    memory_factor: float = 1.0,
) -> StreamedGemm:
    """Several GEMMs of (n, k) `shapes`, at one precision and the same factors, stacked to be timed in one pass
    (the same arithmetic as one at a time, element by element)."""
    ns = np.broadcast_arrays(
        *(np.asarray(n, dtype=np.float64) for n, _ in shapes), *(np.asarray(k, dtype=np.float64) for _, k in shapes)
    )
    g = len(shapes)
    return streamed_gemm(
        np.stack(ns[:g]), np.stack(ns[g:]), dev, precision, weight_bytes, compute_factor, memory_factor, stacked=True
    )


def streamed_gemm_time(
    m: Array | float,
    n: Array | float,
    k: Array | float,
    dev: Device,
    precision: str,
    weight_bytes: float,
    count: Array | float = 1.0,
    compute_factor: float = 1.0,
    memory_factor: float = 1.0,
) -> Array:
    """Time of `count` GEMMs (m x k) @ (k x n), weight stored at `weight_bytes` per element, run as one (grouped)
    kernel: count x roofline(t_compute / compute_factor, t_memory / memory_factor) + one kernel overhead. Factors < 1
    slow the matrix units and the weight streaming (grouped MoE GEMMs: routing, ragged and small groups)."""
    return streamed_gemm(n, k, dev, precision, weight_bytes, compute_factor, memory_factor).time(m, count)


#: The least share of the GEMM rate a serving engine's fused attention runs at: the catalog's prior for the figure
#: (efficiency.yaml default.attention; docs/research/efficiency-evidence.md s.3: FlashAttention-3's forward pass
#: 0.75 of H100 peak, FlashAttention-2's 0.35-0.55). Serving runs attention forward only, where a family's fitted
#: `attention` prices training's forward and backward passes together (Hopper's fit, 0.30, put a 127K-token prompt
#: of Llama 3.1 8B on an H100 at 29.6 s, where its FLOPs take about 10 s at FlashAttention-3's forward rate).
SERVING_ATTENTION_FLOOR = 0.6


#: The precision attention multiplies in, by the KV cache's where they differ: a cache is a storage format, read back
#: to the kernels' own. An int8 cache is dequantised to 16-bit for QK^T and PV (SGLang issue #10083: quantised KV is
#: "dequantize[d] to BF16/FP16 at the reading time"; no engine runs attention in int8), an NVFP4 one to FP8 (NVIDIA's
#: NVFP4 KV-cache blog, 2025-12-08). An fp8 cache multiplies in fp8 (TensorRT-LLM XQA, FlashMLA FP8) where the chip
#: has FP8 units, in bf16 where it does not (native_precision; quant.FP8_KV_STORED).
ATTENTION_PRECISION = {"int8": "bf16", "fp4": "fp8"}


def attention_rate(dev: Device, precision: str = "bf16") -> float:
    """FLOP/s of fused attention over a `precision` KV cache: the matmul rate at the precision it multiplies in
    (ATTENTION_PRECISION, the chip's native fallback) x the attention fraction, no less than
    SERVING_ATTENTION_FLOOR."""
    prec = dev.chip.native_precision(ATTENTION_PRECISION.get(precision, precision))
    return dev.peak_flops(prec) * dev.eff.matmul_fraction(prec) * max(dev.eff.attention, SERVING_ATTENTION_FLOOR)


def context_attention_time(
    context_tokens: Array | float,
    flops_per_token: Array | float,
    bytes_per_token: Array | float,
    dev: Device,
    precision: str = "bf16",
) -> Array:
    """Decode attention over `context_tokens` cached tokens: the roofline (perf.compute.roofline) of the score/value
    FLOPs at the fused attention rate (attention_rate) and the KV bytes at the achievable HBM rate. MLA's latent, read
    by all of a rank's heads, puts it near the ridge under attention DP (FlashMLA's README: up to 3,000 GB/s
    memory-bound and 660 TFLOP/s compute-bound on H800, two regimes of the one kernel)."""
    rate = attention_rate(dev, precision)
    per_token = roofline(
        np.asarray(flops_per_token, dtype=np.float64) / rate,
        np.asarray(bytes_per_token, dtype=np.float64) / (dev.hbm_bandwidth * dev.eff.memory),
    )
    return np.asarray(np.asarray(context_tokens, dtype=np.float64) * per_token, dtype=np.float64)


def _no_step_latency(topo: Topology) -> Topology:
    return replace(topo, up_latency=0.0, out_latency=0.0)


def _group_latency(size: IntArray, topo: Topology, latency: float, network_latency: float) -> Array:
    """One small collective's latency: `latency` inside a scale-up domain, `network_latency` for a group of `size`
    consecutive ranks that spans domains."""
    _, n_out = coll.split_group(size, 1, topo)
    return np.asarray(np.where(n_out > 1, network_latency, latency), dtype=np.float64)


@dataclass(frozen=True)
class SmallAllReduce:
    """A small all-reduce over groups of consecutive ranks, placed once (small_all_reduce), timed at any size."""

    group: coll.Group  # placed on the topology with the per-step latencies set to zero
    latency: Array
    active: NDArray[np.bool_]

    def time(self, nbytes: Array | float) -> Array:
        """Seconds of an all-reduce of `nbytes` per rank: t = 2 S slope_rs (the ring's bandwidth term,
        perf.collectives.all_reduce with no step latency) + L, L the engine's one-shot latency (catalog engines
        collective_latency, or network_collective_latency across domains); 0 for a group of one."""
        bw = coll.all_reduce(nbytes, self.group)
        return np.asarray(np.where(self.active, bw + self.latency, 0.0), dtype=np.float64)


def small_all_reduce_over(
    size: IntArray | int, topo: Topology, latency: float, network_latency: float
) -> SmallAllReduce:
    """small_all_reduce over `size` consecutive ranks, to time at many sizes."""
    size_a = np.asarray(size, dtype=np.int64)
    return SmallAllReduce(
        # each replica is priced as if placed from a domain's first rank, its group the job's every rank (a TP32
        # decode replica in one NVL72 straddles nothing). An estimate: replicas that do not tile a domain (nine TP16
        # replicas on two NVL72 racks) leave one across two racks in consecutive packing, priced here as the others
        # and named by predict (planner.serving_predict.placement_note)
        coll.group(size_a, 1, _no_step_latency(topo), size_a),
        _group_latency(size_a, topo, latency, network_latency),
        size_a > 1,
    )


def small_all_reduce(
    nbytes: Array | float, size: IntArray | int, topo: Topology, latency: float, network_latency: float
) -> Array:
    """All-reduce of `nbytes` per rank over `size` consecutive ranks: the bandwidth term of the hierarchical
    collective, plus `latency` inside one scale-up domain (one-shot kernels) or `network_latency` for a group that
    spans domains (multi-node tensor parallelism, where the engines fall back to NCCL's cross-node algorithms)."""
    return small_all_reduce_over(size, topo, latency, network_latency).time(nbytes)


@dataclass(frozen=True)
class ExpertExchange:
    """MoE dispatch and combine (perf.collectives.moe_dispatch each way) over groups of `size` expert-parallel ranks,
    placed once (expert_exchange_over), timed at any number of bytes, plus a latency each: the engine's inside a
    scale-up domain, its network one when the group spans domains."""

    group: coll.Group
    quiet: Topology  # the topology with the per-step latencies set to zero
    top_k: int
    latency: Array
    active: NDArray[np.bool_]

    def time(self, dispatch_bytes: Array | float, combine_bytes: Array | float) -> Array:
        """Seconds of a MoE dispatch and combine: t = moe_dispatch(dispatch) + moe_dispatch(combine) + 2 L (node-
        limited dispatch as in DeepEP and DeepSeek-V3, perf.collectives.moe_dispatch; L the engine's latency as in
        SmallAllReduce.time); 0 for a group of one."""
        t = coll.moe_dispatch(dispatch_bytes, self.top_k, self.group, self.quiet) + coll.moe_dispatch(
            combine_bytes, self.top_k, self.group, self.quiet
        )
        return np.asarray(np.where(self.active, t + 2.0 * self.latency, 0.0), dtype=np.float64)


def expert_exchange_over(
    top_k: int, size: IntArray | int, topo: Topology, latency: float, network_latency: float
) -> ExpertExchange:
    """ExpertExchange over `size` expert-parallel ranks (`top_k` experts a token), to time at many sizes: `latency`
    inside a scale-up domain, `network_latency` for a group that spans domains."""
    size_a = np.asarray(size, dtype=np.int64)
    quiet = _no_step_latency(topo)
    return ExpertExchange(
        coll.group(size_a, 1, quiet, size_a),
        quiet,
        top_k,
        _group_latency(size_a, topo, latency, network_latency),
        size_a > 1,
    )


def hand_off(nbytes: Array | float, stride: IntArray | int, topo: Topology, stages: IntArray | int = 2) -> Array:
    """A pipeline hand-off of `nbytes` to the next of `stages` stages `stride` ranks apart (perf.collectives.
    pipeline_send): TP4 PP4 on 8-GPU nodes crosses the network from its second stage to its third.
    t = S / B + alpha on the link the hop takes (scale-up inside a domain, the network across it)."""
    return coll.pipeline_send(nbytes, stride, topo, stages)
