"""Collectives inside a scale-up domain, by hand: a full mesh's strided groups use the links to the chips they sit on,
latency steps inside a switched domain or a torus are never more than across the slow tier, and an all-to-all on a
torus pays for the hops its data travels (jax-ml/scaling-book sharding.md)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import Topology, topology_of

GIB = 2.0**30
KIB = 1024.0


@pytest.fixture(scope="module")
def topo(hw: Hardware) -> dict[str, Topology]:
    names = ("mi300x-8x", "gaudi3-8x", "dgx-h100", "gb200-nvl72", "tpu-v5p-pod", "tpu-v4-pod", "tpu-v5e-256")
    return {n: topology_of(hw.system(n)) for n in names}


@pytest.mark.parametrize(("system", "link"), [("mi300x-8x", 64e9 * 0.7), ("gaudi3-8x", 75e9 * 0.98)])
def test_a_strided_pair_on_a_full_mesh_shares_one_link(topo: dict[str, Topology], system: str, link: float) -> None:
    """GPUs 0 and 4 (TP4 DP2) share one direct link at any stride: 64 GB/s x 0.7 on MI300X, 3 x 200 GbE x 0.98 on
    Gaudi 3. The span of 5 chips had given them 4 links (179 GB/s, the 1 GiB all-reduce 6.0 ms for 24.0)."""
    t = topo[system]
    for stride in (1, 2, 4):
        assert float(coll.group(2, stride, t).bw_in) == pytest.approx(link)
        assert float(coll.all_reduce(GIB, 2, stride, t)) == pytest.approx(GIB / link + 2 * t.up_latency)
        assert float(coll.p2p(GIB, stride, t)) == pytest.approx(GIB / link + t.up_latency)


def test_four_gpus_two_apart_on_a_full_mesh_drive_three_links(topo: dict[str, Topology]) -> None:
    """GPUs {0, 2, 4, 6} of an MI300X node: 3 of 7 links, 3 x 64 x 0.7 = 134.4 GB/s, as at stride 1 (268.8 before)."""
    assert float(coll.group(4, 2, topo["mi300x-8x"]).bw_in) == pytest.approx(134.4e9)


def test_a_switched_domain_takes_tree_steps(topo: dict[str, Topology]) -> None:
    """1 KiB all-reduce: 8 H100s 2 (7/8 S / 369 GB/s + 7 x 1 us), as before; 72 GB200s on NVL72 2 (71/72 S / 684 GB/s +
    14 x 1 us), steps(72) = 2 ceil(log2 72) = 14 (a 71-step ring: 142 us)."""
    h100, nvl = topo["dgx-h100"], topo["gb200-nvl72"]
    assert float(coll.all_reduce(KIB, 8, 1, h100)) == pytest.approx(2 * (7 / 8 * KIB / 369e9 + 7e-6))
    assert float(coll.all_reduce(KIB, 72, 1, nvl)) == pytest.approx(2 * (71 / 72 * KIB / 684e9 + 14e-6))
    assert float(coll.all_reduce(KIB, 72, 1, nvl)) == pytest.approx(28.0e-6, abs=0.1e-6)


def test_a_torus_takes_a_ring_along_each_dimension(topo: dict[str, Topology]) -> None:
    """A whole 16 x 16 x 24 v5p pod: 15 + 15 + 23 = 53 steps of 1 us a reduce-scatter (6,143 before):
    2 (6143/6144 S / 552 GB/s + 53 us) = 3.996 ms for 1 GiB, not 16.18."""
    expected = 2 * (6143 / 6144 * GIB / (600e9 * 0.92) + 53e-6)
    assert float(coll.all_reduce(GIB, 6144, 1, topo["tpu-v5p-pod"])) == pytest.approx(expected)
    assert expected == pytest.approx(3.996e-3, abs=1e-6)


def test_torus_steps_never_exceed_the_flat_ring(topo: dict[str, Topology]) -> None:
    """12 v5e chips 3 apart span 12 of one ring's 16 coordinates and 3 of the other's: 11 + 2 = 13 steps by the
    per-dimension count, more than the flat ring's 11 (a reviewer's sweep found such strides on every torus). Their
    36-rank blocks do not tile the 256-chip pod, so the slowest group is 1 + 11 across two (place_group): its 11
    take the flat ring's 10 steps (12 had taken 11)."""
    group = coll.group(np.array([12]), np.array([3]), topo["tpu-v5e-256"])
    assert float(group.steps_in[0]) == 10.0


@pytest.mark.parametrize("system", ["gb200-nvl72", "tpu-v5p-pod", "tpu-v4-pod", "tpu-v5e-256"])
def test_a_group_inside_the_fast_domain_is_never_slower_than_split_across_the_slow_tier(
    topo: dict[str, Topology], system: str
) -> None:
    """A whole domain's ranks, against the same number as two halves in two domains over the network (stride 2):
    NVL72 72 against 36 x 2, a v5p pod's 6,144 against 3,072 x 2 (the pod had been 12.3 ms at 1 KiB, the split 6.2)."""
    t = topo[system]
    sizes = np.array([KIB, 2.0**20, GIB])
    inside = coll.all_reduce(sizes, coll.group(t.domain_ranks, 1, t))
    split = coll.all_reduce(sizes, coll.group(t.domain_ranks, 2, t))
    assert int(coll.group(t.domain_ranks, 2, t).n_out) == 2
    assert np.all(inside < split)
    a2a_inside = coll.moe_dispatch(sizes, 2, coll.group(t.domain_ranks, 1, t), t)
    assert np.all(a2a_inside < coll.moe_dispatch(sizes, 2, coll.group(t.domain_ranks, 2, t), t))


@pytest.mark.parametrize("chips", [16, 256])
def test_an_all_to_all_on_a_torus_pays_for_its_hops(topo: dict[str, Topology], chips: int) -> None:
    """sharding.md's AllToAll, S max(axis) / (4 W_bidi): 16 v5e chips in one 16-ring, or a whole 16 x 16 pod, take
    1 GiB x 16 / (4 x 2 x 50 GB/s x 0.855) = 50.2 ms, plus 15 or 30 steps of 1 us; priced on a crossbar they had
    taken 11.8 and 6.3 ms. A MoE dispatch of k copies pays k times that: S k 16 / (4 x 85.5 GB/s)."""
    t = topo["tpu-v5e-256"]
    w_dim = 2 * 50e9 * 0.855
    steps = {16: 15, 256: 30}[chips]
    bw = GIB * 16 / (4 * w_dim)
    assert float(coll.moe_dispatch(GIB, 1, chips, t)) == pytest.approx(bw + steps * 1e-6)
    assert bw == pytest.approx(50.23e-3, abs=0.01e-3)
    assert float(coll.moe_dispatch(1e6, 2, chips, t)) == pytest.approx(1e6 * 2 * 16 / (4 * w_dim) + steps * 1e-6)


def test_a_switched_all_to_all_keeps_the_crossbar_bandwidth(topo: dict[str, Topology]) -> None:
    """On NVLink every pair has the whole bandwidth: (n-1)/n S / B for one copy of each token, no hop factor; 14
    tree steps (71 before)."""
    nvl = topo["gb200-nvl72"]
    assert float(coll.moe_dispatch(GIB, 1, 72, nvl)) == pytest.approx(71 / 72 * GIB / 684e9 + 14e-6)
