"""The serving search's Pareto front (`pareto`), vectorised, against a brute-force reading of its definition."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.serve.search import pareto

# few distinct values, so that ties in latency and in throughput are common; inf and nan latencies (a shape that
# does not fit) and non-positive throughputs are not on the front
_LATENCY = st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.0, math.inf, math.nan])
_THROUGHPUT = st.sampled_from([-1.0, 0.0, 1.0, 2.0, 2.0, 3.0, 5.0])


def _front(throughput: list[float], latency: list[float]) -> list[int]:
    """Every pair compared: a point is on the front when its latency is finite, its throughput positive, and its
    throughput exceeds that of every such point before it by (latency, index), in order of (latency, index)."""
    ok = [i for i in range(len(latency)) if math.isfinite(latency[i]) and throughput[i] > 0]
    ahead = sorted(ok, key=lambda i: (latency[i], i))
    return [i for k, i in enumerate(ahead) if all(throughput[j] < throughput[i] for j in ahead[:k])]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_THROUGHPUT, _LATENCY), max_size=40))
def test_pareto_matches_every_pair_compared(points: list[tuple[float, float]]) -> None:
    tp = [p[0] for p in points]
    lat = [p[1] for p in points]
    got = pareto(np.asarray(tp, dtype=np.float64), np.asarray(lat, dtype=np.float64))
    assert got.dtype == np.int64
    assert got.tolist() == _front(tp, lat)


def test_pareto_by_hand() -> None:
    """Latencies 3, 1, 2, inf, 1 and throughputs 9, 4, 4, 99, 6: by latency the points run 1 (4), 4 (6), 2 (4, no
    better than 6), 0 (9); point 3 does not fit. Front: 1, 4, 0."""
    tp = np.array([9.0, 4.0, 4.0, 99.0, 6.0])
    lat = np.array([3.0, 1.0, 2.0, np.inf, 1.0])
    assert pareto(tp, lat).tolist() == [1, 4, 0]
    assert pareto(np.array([]), np.array([])).tolist() == []
