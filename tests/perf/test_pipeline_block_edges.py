"""A pipeline hand-off over an oversubscribed Clos tier pays for the share of a block's ranks whose hand-off crosses
the block's edge, by where the stages' ranks fall (collectives._bw_hand_off), by hand on Grand Teton's 7:1 pods."""

from __future__ import annotations

import pytest

from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import topology_of

#: Grand Teton's RoCE: 400 Gb/s a GPU at 0.8 of it, 6 us a step, 3,072-GPU pods at 7:1 above them (fabrics.yaml)
B, ALPHA = 50e9 * 0.8, 6e-6
S = 32 * 2**20  # Llama 3.1 405B's 8,192 x 16,384 x 2 B activation over TP8


@pytest.mark.parametrize(
    ("stride", "stages", "slowdown"),
    [
        (1536, 16, 7 * 1536 / 3072),  # stage 1 -> 2 crosses the pod edge: half a pod's ranks on 1/7 of its NICs
        (1024, 16, 7 * 1024 / 3072),  # stage 2 -> 3 crosses it: a third of them
        (2048, 16, 7 * 2048 / 3072),  # two thirds (2 x 2,048 passes the pod: all had been charged, x 7)
        (2048, 2, 7 * 1024 / 3072),  # ranks 1,024-2,047 alone send past rank 3,072: a third
        (4096, 16, 7.0),  # a stage a pod or more: every hand-off crosses
        (1536, 2, 1.0),  # two stages fill one pod exactly: nothing leaves it
    ],
)
def test_a_hand_off_pays_for_the_ranks_that_cross_a_pods_edge(
    hw: Hardware, stride: int, stages: int, slowdown: float
) -> None:
    """16 stages 1,536 apart had read 0.845 ms a 32 MiB hand-off, the NIC's full rate, as 1,024 apart did: 2 x the
    stride did not pass a pod, though stage 1's ranks 1,536-3,071 all hand off to the next pod at once. They now
    read 2.942 ms (x 3.5) and 1.963 ms (x 7/3)."""
    topo = topology_of(hw.system("grand-teton-h100-96gb"))
    expected = S * slowdown / B + ALPHA
    assert float(coll.pipeline_send(S, stride, topo, stages)) == pytest.approx(expected, rel=1e-12)


def test_the_pod_edge_figures_of_16_stages(hw: Hardware) -> None:
    """The figures the docstring of collectives._bw_hand_off quotes."""
    topo = topology_of(hw.system("grand-teton-h100-96gb"))
    assert float(coll.pipeline_send(S, 1536, topo, 16)) == pytest.approx(2.942e-3, rel=1e-3)
    assert float(coll.pipeline_send(S, 1024, topo, 16)) == pytest.approx(1.963e-3, rel=1e-3)


def test_a_lone_send_between_pods_keeps_the_whole_oversubscription(hw: Hardware) -> None:
    """p2p (a context-parallel ring's hop) keeps _bw_out's pair: 1,536 apart stays in a pod's reach, 2,048 apart all
    of it on the uplinks."""
    topo = topology_of(hw.system("grand-teton-h100-96gb"))
    assert float(coll.p2p(S, 1536, topo)) == pytest.approx(S / B + ALPHA, rel=1e-12)
    assert float(coll.p2p(S, 2048, topo)) == pytest.approx(7 * S / B + ALPHA, rel=1e-12)
