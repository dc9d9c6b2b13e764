"""Checkpoints: their size, the time to write and restore them, and the optimal interval between them.

    size          = parameters x bytes per parameter      (14 B in mixed precision: bf16 weights + fp32 master +
                                                            two fp32 Adam moments, Rajbhandari et al. 2020 less
                                                            gradients; 12 B in fp32, no bf16 copy)
    bandwidth     = min(storage aggregate bandwidth, hosts x per-host write bandwidth)     (Llama 3 storage)
    write, restore = size / bandwidth

Both bandwidths are the store's sustained rate (2 TB/s): the per-host figure (0.977 GB/s) is an assumed fair
share of it, not a client's limit, the job taken to share the store with a whole Llama 3-sized cluster (2,048
hosts), so a job of 2,048 hosts or more gets the whole 2 TB/s. (The 7 TB/s peak's share, 3.4 GB/s, had stood
beside the sustained cap.) One client alone has measured 94 GiB/s (a p5en reading a checkpoint from FSx for
Lustre), so a small job with the store to itself may checkpoint up to ~100x faster than shown.

Optimal interval between checkpoints of cost delta (seconds of stopped training) on a job whose mean time
between interruptions is M:

    Young (1974):  tau = sqrt(2 delta M)
    Daly (2006):   tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta,  delta < 2M
                   tau = M,                                                                         delta >= 2M
"""

from __future__ import annotations

import numpy as np

from chipwise.types import Array, ArrayLike


def checkpoint_bytes(params: ArrayLike, bytes_per_param: float = 14.0) -> Array:
    """Bytes of model and optimizer state in one checkpoint."""
    return np.asarray(params, dtype=np.float64) * bytes_per_param


def storage_bandwidth(aggregate: float, per_host: float, hosts: ArrayLike) -> Array:
    """Bytes/s a job's hosts can write to (or read from) shared storage at once."""
    return np.minimum(aggregate, per_host * np.asarray(hosts, dtype=np.float64))


def transfer_time(size_bytes: ArrayLike, bandwidth: ArrayLike) -> Array:
    """Seconds to move `size_bytes` at `bandwidth` bytes/s."""
    return np.asarray(size_bytes, dtype=np.float64) / np.asarray(bandwidth, dtype=np.float64)


def daly_interval(delta: ArrayLike, mtbf: ArrayLike) -> Array:
    """Daly's higher-order optimal compute time between checkpoints, seconds (M when delta >= 2M; infinite, never
    checkpoint, when M is: no failures)."""
    d = np.asarray(delta, dtype=np.float64)
    m = np.asarray(mtbf, dtype=np.float64)
    x = d / (2.0 * m)
    with np.errstate(invalid="ignore"):  # 0 x inf where M is infinite and delta 0, replaced below
        tau = np.sqrt(2.0 * d * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - d
    return np.where(np.isinf(m), np.inf, np.where(d < 2.0 * m, tau, m))
