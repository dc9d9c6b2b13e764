"""Helpers for the vectorised model: evaluate expensive per-plan work once per distinct combination of the knobs
it depends on, then broadcast back. Plan arrays hold a million rows but only a handful of distinct (tp, cp, mb)
combinations, so this turns O(rows x work) into O(rows) gathers plus O(combinations x work)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from chipwise.types import IntArray

#: Below this many rows factorising costs more than it saves.
FACTORIZE_MIN_ROWS = 4096


def _codes(col: IntArray) -> tuple[IntArray, int]:
    """Dense codes 0..k-1 of a non-negative integer column, in O(n) (no sort), and k."""
    top = int(col.max()) + 1 if col.size else 1
    if top > 4 * col.size + 1_000_000:  # huge values: fall back to a sort
        uniq, inv = np.unique(col, return_inverse=True)
        return inv.astype(np.int64), int(uniq.size)
    present = np.bincount(col, minlength=top) > 0
    lut = np.cumsum(present, dtype=np.int64) - 1
    return lut[col], int(present.sum())


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


def per_value(fn: Callable[[IntArray], IntArray], col: IntArray) -> IntArray:
    """fn(col) for an elementwise integer function, worked out once per value through a lookup table where the
    values are small against the column (np.gcd and np.lcm take some 16 ms for a million rows, a gather 1 ms)."""
    col = np.asarray(col, dtype=np.int64)
    if col.ndim != 1 or not col.size or int(col.min()) < 0 or int(col.max()) >= col.size:
        return fn(col)
    return fn(np.arange(int(col.max()) + 1, dtype=np.int64))[col]


def divisors(n: int) -> list[int]:
    """The divisors of n, ascending, from its prime factors: trial division stops at the square root of what is
    left, so a batch of many small factors (2^k sequences) takes a few steps, not sqrt(n) (a 1e15-token batch's
    count had hung the search; TrainingJob bounds the batch, so a prime one takes at most some 1e5)."""
    divs, rest, p = [1], n, 2
    while p * p <= rest:
        k = 0
        while rest % p == 0:
            rest //= p
            k += 1
        divs += [d * p**e for e in range(1, k + 1) for d in divs]
        p += 1 if p == 2 else 2
    if rest > 1:
        divs += [d * rest for d in divs]
    return sorted(divs)


def largest_divisor_at_most(n: int, limits: IntArray) -> IntArray:
    """For each limit, the largest divisor of n that is <= limit (0 when none, as for every limit where n < 1)."""
    if n < 1:
        return np.zeros_like(limits)
    divs = np.asarray(divisors(n), dtype=np.int64)
    idx = np.searchsorted(divs, limits, side="right") - 1
    return np.where(idx >= 0, divs[np.maximum(idx, 0)], 0)
