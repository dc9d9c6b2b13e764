"""Collectives on a topology, alpha-beta per tier. Every function broadcasts over arrays of group shapes.

A communication group of `size` ranks whose members are `stride` ranks apart (Megatron order: TP innermost,
then CP, EP/DP, PP) has n_in members inside one scale-up domain and spans n_out = size / n_in domains.
Collectives run hierarchically: the scale-up part at the domain's bandwidth, the scale-out part over each
rank's own NIC share (rail-optimised), at the fabric's achievable bus-bandwidth fraction and slowed by the
oversubscription of any Clos tier the group spans beyond.

Costs for a buffer of S bytes per rank (ring algorithms; Thakur, Rabenseifner & Gropp 2005; NCCL's busBw):
    all-reduce      2 (n-1)/n * S / B + 2 (n-1) alpha
    reduce-scatter  (n-1)/n * S / B + (n-1) alpha          (all-gather is the same)
    all-to-all      (n-1)/n * S / B + (n-1) alpha          (S = bytes a rank sends, itself included)
Hierarchically, all-reduce = intra reduce-scatter + inter all-reduce on S/n_in + intra all-gather. For large
n_out the latency term uses tree-like step counts, min(n-1, 2 ceil(log2 n)), as NCCL picks trees there.
On a torus, a group spanning d of the D dimensions drives only d/D of the chip's links.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from chipwise.perf.device import Topology

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


def _as_int(x: IntArray | int) -> IntArray:
    return np.asarray(x, dtype=np.int64)


def split_group(size: IntArray | int, stride: IntArray | int, topo: Topology) -> tuple[IntArray, IntArray]:
    """(n_in, n_out): members of one group inside a scale-up domain, and the number of domains it spans."""
    size = _as_int(size)
    stride = np.maximum(_as_int(stride), 1)
    cap = np.maximum(topo.domain_ranks // stride, 1)
    # the largest power of two not above cap, then the part of the group that fits it
    cap_p2 = np.left_shift(1, np.floor(np.log2(cap)).astype(np.int64))
    n_in = np.where(cap >= size, size, np.gcd(size, cap_p2))
    n_in = np.maximum(n_in, 1)
    return n_in, size // n_in


def _torus_fraction(n_in: IntArray, topo: Topology) -> Array:
    dims = np.asarray(topo.up_dims, dtype=np.int64)
    if topo.up_kind != "torus" or dims.size <= 1:
        return np.ones(np.shape(n_in))
    bounds = np.cumprod(dims)
    spanned = np.searchsorted(bounds, n_in, side="left") + 1
    return np.asarray(np.minimum(spanned, dims.size) / dims.size, dtype=np.float64)


def _bw_in(n_in: IntArray, topo: Topology) -> Array:
    return topo.up_bandwidth * topo.up_efficiency * _torus_fraction(n_in, topo)


def _bw_out(size: IntArray, stride: IntArray, topo: Topology) -> Array:
    span = size * np.maximum(stride, 1)
    over = np.ones(np.shape(span))
    for reach, oversub in topo.out_tiers:
        over = np.where(span > reach, np.maximum(over, oversub), over)
    return np.asarray(topo.out_bandwidth * topo.out_efficiency / over, dtype=np.float64)


def _steps(n: IntArray) -> Array:
    """Latency steps of a ring, or of a tree once rings get long."""
    n = np.maximum(n, 1)
    tree = 2.0 * np.ceil(np.log2(n))
    return np.asarray(np.minimum(n - 1.0, np.where(n > 8, tree, n - 1.0)), dtype=np.float64)


def all_reduce(nbytes: Array | float, size: IntArray | int, stride: IntArray | int, topo: Topology) -> Array:
    size, stride = _as_int(size), _as_int(stride)
    s = np.asarray(nbytes, dtype=np.float64)
    n_in, n_out = split_group(size, stride, topo)
    t_in = 2.0 * (n_in - 1) / n_in * s / _bw_in(n_in, topo) + 2.0 * (n_in - 1) * topo.up_latency
    t_out = (
        2.0 * (n_out - 1) / n_out * (s / n_in) / _bw_out(size, stride, topo) + 2.0 * _steps(n_out) * topo.out_latency
    )
    return np.asarray(np.where(size > 1, t_in + t_out, 0.0), dtype=np.float64)


def reduce_scatter(nbytes: Array | float, size: IntArray | int, stride: IntArray | int, topo: Topology) -> Array:
    """Reduce-scatter of a buffer of `nbytes` per rank (the same cost as the all-gather that undoes it)."""
    size, stride = _as_int(size), _as_int(stride)
    s = np.asarray(nbytes, dtype=np.float64)
    n_in, n_out = split_group(size, stride, topo)
    t_in = (n_in - 1) / n_in * s / _bw_in(n_in, topo) + (n_in - 1) * topo.up_latency
    t_out = (n_out - 1) / n_out * (s / n_in) / _bw_out(size, stride, topo) + _steps(n_out) * topo.out_latency
    return np.asarray(np.where(size > 1, t_in + t_out, 0.0), dtype=np.float64)


all_gather = reduce_scatter


def all_to_all(nbytes: Array | float, size: IntArray | int, stride: IntArray | int, topo: Topology) -> Array:
    """All-to-all where each rank sends `nbytes` in total, spread evenly over the group (itself included)."""
    size, stride = _as_int(size), _as_int(stride)
    s = np.asarray(nbytes, dtype=np.float64)
    n_in, n_out = split_group(size, stride, topo)
    sz = np.maximum(size, 1)
    t_in = s * (n_in - 1) / sz / _bw_in(n_in, topo) + (n_in - 1) * topo.up_latency
    t_out = s * (sz - n_in) / sz / _bw_out(size, stride, topo) + (n_out - 1) * topo.out_latency
    return np.asarray(np.where(size > 1, t_in + t_out, 0.0), dtype=np.float64)


def p2p(nbytes: Array | float, stride: IntArray | int, topo: Topology) -> Array:
    """Point-to-point send of `nbytes` to the rank `stride` ranks away (a pipeline hand-off)."""
    stride = np.maximum(_as_int(stride), 1)
    s = np.asarray(nbytes, dtype=np.float64)
    inside = stride < topo.domain_ranks
    t_up = s / (topo.up_bandwidth * topo.up_efficiency) + topo.up_latency
    t_out = s / (topo.out_bandwidth * topo.out_efficiency) + topo.out_latency
    return np.asarray(np.where(inside, t_up, t_out), dtype=np.float64)


def moe_dispatch(token_bytes: Array | float, top_k: int, size: IntArray | int, topo: Topology) -> Array:
    """Send each of a rank's tokens (`token_bytes` in all) to its top_k experts spread over `size` consecutive
    ranks: once per remote scale-up domain over the network, then fanned out inside the domain (node-limited,
    deduplicated dispatch as in DeepEP and DeepSeek-V3). With experts uniformly spread over D domains a token
    reaches (D - 1)(1 - (1 - 1/D)^k) remote domains on average; its k copies cross the scale-up fabric."""
    size = _as_int(size)
    s = np.asarray(token_bytes, dtype=np.float64)
    n_in, n_out = split_group(size, 1, topo)
    d = n_out.astype(np.float64)
    remote = np.where(d > 1, (d - 1.0) * (1.0 - (1.0 - 1.0 / np.maximum(d, 1.0)) ** top_k), 0.0)
    local = top_k * (1.0 - 1.0 / np.maximum(size, 1))
    t_in = s * local / _bw_in(n_in, topo) + (n_in - 1) * topo.up_latency
    t_out = s * remote / _bw_out(size, np.ones_like(size), topo) + (n_out - 1) * topo.out_latency
    return np.asarray(np.where(size > 1, t_in + t_out, 0.0), dtype=np.float64)
