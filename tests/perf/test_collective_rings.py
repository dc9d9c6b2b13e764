"""A reduce-scatter or all-gather runs as a ring, at a ring's step count (NCCL has no tree for them), and a ring laid
out block by block sends only its edges between blocks over an oversubscribed tier's uplinks."""

from __future__ import annotations

import pytest

from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import topology_of

#: Grand Teton's RoCE: 400 Gb/s a GPU at 0.8 of it, 6 us a step, 3,072-GPU pods at 7:1 above them (fabrics.yaml)
TETON_B = 50e9 * 0.8


def test_a_gather_over_16_nodes_pays_15_ring_steps_and_an_all_reduce_a_trees(hw: Hardware) -> None:
    """DP16 one a node on p5 hosts (10 us a network step): a reduce-scatter or all-gather is a ring of 15 steps,
    150 us (a tree's 2 ceil(log2 16) = 8 steps, 80 us, had been charged); an all-reduce keeps a tree, 2 x 4 steps
    (re-pinned: tuning.cc's tree climbs log2i(16) = 4 network steps each way, where 2 x 8 had been charged)."""
    topo = topology_of(hw.system("p5.48xlarge"))
    assert float(coll.all_gather(0.0, 16, 8, topo)) == pytest.approx(15 * 10e-6)
    assert float(coll.reduce_scatter(0.0, 16, 8, topo)) == pytest.approx(15 * 10e-6)
    assert float(coll.all_reduce(0.0, 16, 8, topo)) == pytest.approx(2 * 4 * 10e-6)


def test_a_gather_across_two_nvl72_racks_runs_a_ring_on_nvlink_too(hw: Hardware) -> None:
    """144 consecutive GB200 ranks, two whole racks: 142 NVLink steps (1 us) and one network step (5 us), 147 us
    (re-pinned: tuning.cc's ring steps through all 144 members, nRanks - nNodes on NVLink, where one rack's 71 had
    read 76 us; before that 19 us, a tree's 14 steps on NVLink); the 72 ranks of one rack keep the in-domain estimate,
    2 ceil(log2 72) = 14 steps, 14 us; an all-reduce over both racks 2 x (14 + 5) us."""
    topo = topology_of(hw.system("gb200-nvl72"))
    assert float(coll.all_gather(0.0, 144, 1, topo)) == pytest.approx(142e-6 + 5e-6)
    assert float(coll.all_gather(0.0, 72, 1, topo)) == pytest.approx(14e-6)
    assert float(coll.all_reduce(0.0, 144, 1, topo)) == pytest.approx(2 * (14e-6 + 5e-6))


def test_a_gather_over_7282_racks_pays_7281_network_steps(hw: Hardware) -> None:
    """Llama 3.1 405B at TP4 DP131072 on GB200 NVL72: the data-parallel group (4 apart) spans 7,282 racks, 14 to 18
    ranks of each: 7,281 network steps of 5 us and 131,072 - 7,282 = 123,790 NVLink steps of 1 us, 160.195 ms
    (re-pinned: tuning.cc's ring steps through every member, where one rack's 17 NVLink steps had read 36.422 ms;
    0.14 ms with a tree's counts). Its all-reduce climbs a tree of log2i(7,282) = 12 network steps (26 had been
    charged, 2 ceil(log2 7,282))."""
    topo = topology_of(hw.system("gb200-nvl72"))
    g = coll.group(131072, 4, topo, 524288)
    assert (int(g.n_in), int(g.n_out)) == (14, 7282)
    assert float(g.intercept_rs) == pytest.approx(7281 * 5e-6 + 123790 * 1e-6)
    assert float(g.intercept_ar) == pytest.approx(10 * 1e-6 + 12 * 5e-6)


@pytest.mark.parametrize("dp", [384, 385, 768])
def test_one_rank_past_a_7_to_1_pod_does_not_slow_the_ring_7_times(hw: Hardware, dp: int) -> None:
    """Data parallelism 8 ranks apart on Grand Teton: DP384 fills one 3,072-GPU pod, DP385 and DP768 span two. Their
    rings cross between pods on 2 of 385 or 768 edges, f = 2 / n of each rank's traffic against 1/7 of its NIC on the
    uplinks: the NIC's rate, slope (n-1)/n / B. DP385 had been charged all of it across, 7 times DP384's."""
    topo = topology_of(hw.system("grand-teton-h100-96gb"))
    g = coll.group(dp, 8, topo)
    assert float(g.slope_rs) == pytest.approx((dp - 1) / dp / TETON_B)


def test_a_ring_over_three_pods_sends_three_of_its_eight_edges_across(hw: Hardware) -> None:
    """8 ranks 1,024 apart on Grand Teton span 8,192 ranks, three pods: 3 of the ring's 8 edges cross, f = 3/8, so
    the uplinks' 1/7 of the NIC paces it at B / (7 x 3/8) = B / 2.625."""
    topo = topology_of(hw.system("grand-teton-h100-96gb"))
    assert float(coll.group(8, 1024, topo).slope_rs) == pytest.approx(7 / 8 / (TETON_B / 2.625))


def test_every_edge_across_and_a_lone_send_keep_the_whole_oversubscription(hw: Hardware) -> None:
    """4 ranks 4,096 apart sit in four pods: every edge crosses, B / 7. A pipeline hand-off between pods (a ring of
    two) and an all-to-all (bw_out) keep all of their traffic on the uplinks, as before."""
    topo = topology_of(hw.system("grand-teton-h100-96gb"))
    g = coll.group(4, 4096, topo)
    assert float(g.slope_rs) == pytest.approx(3 / 4 / (TETON_B / 7))
    assert float(g.bw_out) == pytest.approx(TETON_B / 7)
    assert float(coll.p2p(1e9, 4096, topo)) == pytest.approx(1e9 / (TETON_B / 7) + 6e-6)
