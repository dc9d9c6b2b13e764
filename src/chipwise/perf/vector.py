"""Helpers for the vectorised model: evaluate expensive per-plan work once per distinct combination of the knobs
it depends on, then broadcast back. Plan arrays hold a million rows but only a handful of distinct (tp, cp, mb)
combinations, so this turns O(rows x work) into O(rows) gathers plus O(combinations x work)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

#: Below this many rows factorising costs more than it saves.
FACTORIZE_MIN_ROWS = 4096


def _codes(col: IntArray) -> tuple[IntArray, int]:
    """Dense codes 0..k-1 of a non-negative integer column, in O(n) (no sort), and k."""
    top = int(col.max()) + 1 if col.size else 1
    if top > 4 * col.size + 1_000_000:  # huge values: fall back to a sort
        uniq, inv = np.unique(col, return_inverse=True)
        return inv.astype(np.int64), int(uniq.size)
    present = np.bincount(col, minlength=top) > 0
    lut = np.cumsum(present) - 1
    return lut[col].astype(np.int64), int(present.sum())


def factorize(*cols: IntArray) -> tuple[IntArray, IntArray]:
    """(inverse, representatives): row i has the same values in every column as row representatives[inverse[i]]."""
    key = np.zeros(cols[0].shape, dtype=np.int64)
    for col in cols:
        codes, k = _codes(np.asarray(col, dtype=np.int64))
        key = key * k + codes
    inverse, count = _codes(key)
    first = np.full(count, -1, dtype=np.int64)
    first[inverse[::-1]] = np.arange(inverse.size - 1, -1, -1, dtype=np.int64)  # the first row of each combination
    return inverse, first
