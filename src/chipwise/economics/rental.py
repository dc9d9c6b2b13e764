"""Rental units: the chip counts in which a provider rents a system (EC2 instance sizes, Cloud TPU slice shapes).

A replica's chips share one scale-up domain, so they sit in one rented unit: a unit of u chips hosts
floor(u / c) replicas of c chips, and a replica larger than the largest unit spans whole largest units. A fleet
of n replicas is billed for the units that host them, from the largest unit down: at each size, either units of
that size for all that is left, or as many as fill and on to the next size; the cheapest, and of equal ones the
one that runs the most replicas. For the slice and instance ladders of the catalog (1-4-8-16... TPU slices,
1-6-12-chip Inferentia2 instances) that is the fewest chips (checked against a brute force in the tests). A
system without rental units is billed for the whole chips its replicas use. The units rented may host more
replicas than asked for (`rent`'s second array): a plan runs them, since they are paid for.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from chipwise.types import Array as FloatArray


def rent(units: tuple[int, ...], replica_chips: ArrayLike, replicas: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(chips billed, replicas the billed units host) for `replicas` replicas of `replica_chips` chips each (arrays
    broadcast) on a system rented in `units` chips (ascending; empty: whole chips). Infinite replicas stay
    infinite."""
    c, n = np.broadcast_arrays(np.asarray(replica_chips, dtype=np.float64), np.asarray(replicas, dtype=np.float64))
    finite = np.isfinite(n) & np.isfinite(c) & (c > 0)
    left = np.where(finite, n, 0.0)
    cc = np.where(finite, c, 1.0)
    whole = np.ceil(left * cc - 1e-9)  # a quarter of a Trainium2 is not rented on its own
    if not units:
        billed, hosts = whole, np.floor(whole / cc + 1e-9)
    else:
        largest = float(units[-1])
        spans = cc > largest + 1e-9  # larger than the largest unit: each replica spans whole largest units
        billed = np.where(spans, left * np.ceil(cc / largest - 1e-9) * largest, 0.0)
        hosts = np.where(spans, left, 0.0)
        left = np.where(spans, 0.0, left)
        # at each size from the largest down: cover what is left with units of this size, or fill as many as fill
        # and go on; the cheapest of the covers, and of equal ones the one that runs the most replicas (8 replicas
        # of 4 Inferentia2 chips: three 12-chip instances run 9, where two and two 6-chip ones run 8)
        best, best_hosts = np.full(c.shape, np.inf), np.zeros(c.shape)
        for u in reversed(units):
            per = np.floor(u / cc + 1e-9)
            fits = per >= 1
            cover = np.where(fits, np.ceil(left / np.maximum(per, 1.0) - 1e-9), 0.0)
            cost, runs = billed + cover * u, hosts + cover * per
            better = fits & ((cost < best - 1e-9) | ((np.abs(cost - best) <= 1e-9) & (runs > best_hosts)))
            best, best_hosts = np.where(better, cost, best), np.where(better, runs, best_hosts)
            k = np.where(fits, np.floor(left / np.maximum(per, 1.0) + 1e-9), 0.0)
            billed, hosts, left = billed + k * u, hosts + k * per, left - k * per
        billed, hosts = np.where(spans, billed, best), np.where(spans, hosts, best_hosts)
    inf = np.full(c.shape, np.inf)
    return np.where(finite, billed, inf), np.where(finite, hosts, inf)


def unit_for(units: tuple[int, ...], replica_chips: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(chips, replicas) of the unit that rents the fewest chips per replica of `replica_chips` (ties: the smaller
    unit): an instance type of a fleet mix. An Inferentia2 replica of 4 chips: the 12-chip instance running three
    (4 chips a replica), not the 6-chip one running one."""
    c = np.asarray(replica_chips, dtype=np.float64)
    chips, runs = rent(units, c, 1.0)  # the smallest unit that holds one
    for u in units:
        per = np.floor(u / np.maximum(c, 1e-12) + 1e-9)
        better = (per >= 1) & (u * runs < chips * per - 1e-9)
        chips, runs = np.where(better, float(u), chips), np.where(better, per, runs)
    return chips, runs


def billed_one(units: tuple[int, ...], replica_chips: float, replicas: float) -> float:
    """Chips billed for one pool (rent's first array)."""
    return float(rent(units, replica_chips, replicas)[0])


def job_units(units: tuple[int, ...], domain: int, chips: int, joined: bool = False) -> list[tuple[int, int]]:
    """(how many, chips each) of the units a training job of `chips` rents on a system of `domain`-chip scale-up
    domains rented in `units` (empty: billed per chip, no units), largest first: each whole domain in the smallest
    unit that holds it, and the rest in one more, as a replica's chips share one unit. Past the largest unit a domain
    or the rest takes whole largest units, `joined` into one unit (a TPU slice of 4x4x4 cubes: 96 v5p chips rent one
    128-chip 4x4x8 slice) or each one of its own (a 40-chip job on a Trn2 UltraServer rents three 16-chip
    instances). The chips billed are the sum: 100 TPU v5e chips one 128-chip slice, 12 H100s in Capacity Blocks two
    8-GPU instances."""
    if not units:
        return []
    whole, rest = divmod(int(chips), int(domain))
    counts: dict[int, int] = {}
    for need, times in ((domain, whole), (rest, 1 if rest else 0)):
        size, n = _unit_holding(units, need, joined)
        if times:
            counts[size] = counts.get(size, 0) + n * times
    return [(n, c) for c, n in sorted(counts.items(), reverse=True)]


def _unit_holding(units: tuple[int, ...], need: int, joined: bool) -> tuple[int, int]:
    """(chips of a unit, how many) that hold `need` chips sharing one scale-up domain: the smallest unit that holds
    them, or whole largest units, `joined` into one or each a unit."""
    largest = units[-1]
    fits = [u for u in units if u >= need]
    if fits:
        return fits[0], 1
    spans = math.ceil(need / largest)
    return (spans * largest, 1) if joined else (largest, spans)


def filled(units: tuple[int, ...], replica_chips: float, replicas: int, cheaper_than: int = 0) -> int:
    """The replicas a pool of `replicas` runs in the units it rents: the most they host. With `cheaper_than`, a
    pool cut from that many: the most replicas a rental cheaper than theirs hosts, `replicas` or fewer."""
    n = max(1, replicas)
    if cheaper_than:
        ceiling = billed_one(units, replica_chips, cheaper_than)
        while n > 1 and billed_one(units, replica_chips, n) >= ceiling:
            n -= 1
    return int(rent(units, replica_chips, n)[1])


def split_rent(
    units: tuple[int, ...], pre_chips: float, n_pre: int, dec_chips: float, n_dec: int
) -> tuple[float, bool]:
    """(chips billed, whether one unit holds both) for a prefill and a decode pool of one system: each pool in its
    own units, or both in the smallest unit that holds them where that costs no more, their KV caches then moving
    over its scale-up fabric (a TP2 prefill and a TP2 decode replica on TPU v5e share one 2x2 slice, where two
    slices cost 8 chips and hand the caches over the data-centre network)."""
    apart = billed_one(units, pre_chips, n_pre) + billed_one(units, dec_chips, n_dec)
    need = math.ceil(pre_chips * n_pre + dec_chips * n_dec - 1e-9)
    shared = next((u for u in units if u >= need), None)
    if shared is not None and shared <= apart:
        return float(shared), True
    return apart, False
