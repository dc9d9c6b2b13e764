"""Latency steps of collectives that span scale-up domains, as NCCL's tuning model (src/graph/tuning.cc) counts them:
a ring reduce-scatter or all-gather (nRanks - nNodes) intraLat + (nNodes - 1) interLat, a tree all-reduce
2 ((nRanks / nNodes - 1) intraLat + log2i(nNodes) interLat), by hand (zero bytes: latency alone)."""

from __future__ import annotations

import pytest

from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import topology_of

#: NVLink 1 us a step; p5's EFA 10 us, an NVL72 rack's network 5 us (fabrics.yaml)
NVLINK, EFA, NVL72_NET = 1e-6, 10e-6, 5e-6


@pytest.mark.parametrize(
    ("ranks", "stride", "gather", "reduce"),
    [
        (512, 1, 448 * NVLINK + 63 * EFA, 2 * (7 * NVLINK + 6 * EFA)),  # 64 nodes: 1,078 us and 134 us
        (16, 1, 14 * NVLINK + 1 * EFA, 2 * (7 * NVLINK + 1 * EFA)),  # 2 nodes: the tree's one network step, as before
        (32, 1, 28 * NVLINK + 3 * EFA, 2 * (7 * NVLINK + 2 * EFA)),  # 4 nodes: 2 network steps where 3 had been paid
        (64, 8, 63 * EFA, 2 * 6 * EFA),  # one member a node (stride 8): the ring is all on the network
    ],
)
def test_p5_rings_step_through_every_member_and_trees_climb_log2_nodes(
    hw: Hardware, ranks: int, stride: int, gather: float, reduce: float
) -> None:
    """512 H100s on 64 p5 nodes: the all-gather's ring had read 7 x 1 + 63 x 10 = 637 us (one node's ring inside),
    now 1,078 us; the all-reduce's tree 2 x (7 x 1 + 12 x 10) = 254 us (2 ceil(log2 64) for its half), now 134 us."""
    topo = topology_of(hw.system("p5.48xlarge"))
    assert float(coll.all_gather(0.0, ranks, stride, topo)) == pytest.approx(gather, rel=1e-12)
    assert float(coll.reduce_scatter(0.0, ranks, stride, topo)) == pytest.approx(gather, rel=1e-12)
    assert float(coll.all_reduce(0.0, ranks, stride, topo)) == pytest.approx(reduce, rel=1e-12)


def test_a_gather_over_64_nvl72_racks_steps_through_all_4608_gpus(hw: Hardware) -> None:
    """4,608 GB200s on 64 racks: 4,544 NVLink steps and 63 network steps, 4,859 us (it had read 71 + 315 = 386 us);
    the all-reduce keeps NVLS's in-rack count, min(71, 2 ceil(log2 72)) = 14, and climbs a tree of depth 6 on the
    network: 2 x (14 x 1 + 6 x 5) = 88 us (it had read 2 x (14 + 12 x 5) = 148 us)."""
    topo = topology_of(hw.system("gb200-nvl72"))
    assert float(coll.all_gather(0.0, 4608, 1, topo)) == pytest.approx(4544 * NVLINK + 63 * NVL72_NET, rel=1e-12)
    assert float(coll.all_gather(0.0, 4608, 1, topo)) == pytest.approx(4859e-6, rel=1e-9)
    assert float(coll.all_reduce(0.0, 4608, 1, topo)) == pytest.approx(2 * (14 * NVLINK + 6 * NVL72_NET), rel=1e-12)


def test_a_group_inside_one_domain_keeps_its_in_domain_steps(hw: Hardware) -> None:
    """TP8 on one p5 node: a ring of 7 NVLink steps for the gather, 2 x 7 for the all-reduce, nothing on the network."""
    topo = topology_of(hw.system("p5.48xlarge"))
    assert float(coll.all_gather(0.0, 8, 1, topo)) == pytest.approx(7 * NVLINK, rel=1e-12)
    assert float(coll.all_reduce(0.0, 8, 1, topo)) == pytest.approx(14 * NVLINK, rel=1e-12)
