"""Review 68 (helper M2): a group that no divisor splits well spans the fewest domains, and point-to-point sends
cross the Clos tiers a collective between the same two ranks crosses. Hand-built topologies: no catalog needed."""

from __future__ import annotations

import numpy as np
import pytest
from tests.perf.test_collectives import SWITCHED as CLOS  # 8-GPU servers, a 2:1 tier past 4,096 ranks

from chipwise.perf import collectives as coll
from chipwise.perf.device import Topology

# an NVL72 rack as one rank sees it: 900 GB/s NVLink at 0.76, 50 GB/s NIC at 0.94, no oversubscribed tier
NVL72 = Topology(
    domain_ranks=72,
    up_kind="switched",
    up_dims=(72,),
    up_bandwidth=900e9,
    up_latency=1e-6,
    up_efficiency=0.76,
    out_bandwidth=50e9,
    out_latency=5e-6,
    out_efficiency=0.94,
)


def test_a_group_two_ranks_past_two_racks_spans_three_racks_not_73() -> None:
    """146 ranks on NVL72 racks are 49 + 49 + 48 on three racks: all-reduce of 16 GB = 2 (48/49 S / B_in + 2/3 S /
    (48 B_out) + 12 alpha_in + 2 alpha_out), 0.0553 s, near 150 ranks' 0.0550 s (50 x 3). Parts that divided the
    group had made it 73 racks of 2, 0.359 s on the network."""
    s = 16e9
    b_in, b_out = 900e9 * 0.76, 50e9 * 0.94
    expected = 2 * (48 / 49 * s / b_in + 2 / 3 * s / (48 * b_out) + 12 * 1e-6 + 2 * 5e-6)
    assert expected == pytest.approx(0.05533, abs=5e-5)
    assert float(coll.all_reduce(s, 146, 1, NVL72)) == pytest.approx(expected)
    assert float(coll.all_reduce(s, 146, 1, NVL72)) < 1.01 * float(coll.all_reduce(s, 150, 1, NVL72))
    small, big, n_out = coll.place_group(np.array([146, 144, 12, 19, 5]), np.array([1, 1, 8, 8, 1]), NVL72)
    assert (small.tolist(), big.tolist(), n_out.tolist()) == ([48, 72, 6, 6, 5], [49, 72, 6, 7, 5], [3, 2, 2, 3, 1])
    # an HSDP shard group still divides the group it shards
    assert tuple(int(x) for x in coll.split_group(146, 1, NVL72)) == (2, 73)


def test_uneven_parts_price_the_network_by_the_smallest_and_the_domain_by_the_largest() -> None:
    """TP8 DP19 on NVL72 (stride 8, 9 replicas a rack): 7 + 6 + 6 on three racks. Reduce-scatter of 1 GB:
    6/7 S / B_in + 2/3 S / (6 B_out) + 6 alpha_in + 2 alpha_out. A MoE dispatch of S bytes of tokens to k = 2
    experts each sends k (1 - 1/19) S over NVLink at the largest part's 6 alpha_in, and k (1 - (2/3)^k) = 10/9 S to
    the two other racks at 2 alpha_out."""
    s = 1e9
    b_in, b_out = 900e9 * 0.76, 50e9 * 0.94
    g = coll.group(19, 8, NVL72)
    assert (int(g.n_in), int(g.n_out)) == (6, 3)
    expected = 6 / 7 * s / b_in + 2 / 3 * s / (6 * b_out) + 6 * 1e-6 + 2 * 5e-6
    assert float(coll.reduce_scatter(s, g)) == pytest.approx(expected)
    dispatch = 36 / 19 * s / b_in + 10 / 9 * s / b_out + 6 * 1e-6 + 2 * 5e-6
    assert float(coll.moe_dispatch(s, 2, g, NVL72)) == pytest.approx(dispatch)


def test_a_send_across_an_oversubscribed_tier_pays_it_as_the_pair_collective_does() -> None:
    """1 GB to the rank 4,096 away crosses the 2:1 tier (span 8,192 > 4,096): 1e9 / (50e9 x 0.9 / 2) + 10 us =
    0.04445 s, the two-member all-gather of 2 GB between the same ranks; it had been 0.02223 s at the NIC's full
    rate. 1,024 away stays under it."""
    over = 1e9 / (50e9 * 0.9 / 2) + 10e-6
    assert over == pytest.approx(0.04445, abs=1e-5)
    assert float(coll.pipeline_send(1e9, 4096, CLOS, 2)) == pytest.approx(over)
    assert float(coll.p2p(1e9, 4096, CLOS)) == pytest.approx(over)
    assert float(coll.p2p(1e9, 4096, CLOS)) == pytest.approx(float(coll.all_gather(2e9, 2, 4096, CLOS)))
    assert float(coll.p2p(1e9, 1024, CLOS)) == pytest.approx(1e9 / (50e9 * 0.9) + 10e-6)
