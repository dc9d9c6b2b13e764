"""Hand-offs that cross a scale-up domain's edge (review L of stop 63, finding 3): a pipeline's stage at a domain's
edge exchanges with one neighbour over the network, whatever the stride; a ring waits for its slowest hop."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.serving import hand_off
from chipwise.serve.engine import engine_profile, serving_device
from chipwise.serve.iteration import ACT_BYTES, Shapes, token_costs
from chipwise.workload.presets import load_model

S = 64e6  # bytes handed on
UP = S / (450e9 * 0.82) + 1e-6  # H100 NVLink: 174.4 us
OUT = S / (50e9 * 0.8) + 10e-6  # one 400 Gb/s NIC a GPU: 1,610 us
EDGE = (UP + OUT) / 2  # a stage at a node's edge: one neighbour in the node, one across the network


@pytest.mark.parametrize(
    ("stride", "stages", "expected"),
    [
        (1, 8, UP),  # TP1 PP8: one node
        (1, 16, EDGE),  # TP1 PP16: stage 7 hands on to stage 8 on the next node (it had been priced on NVLink)
        (2, 8, EDGE),  # TP2 PP8
        (2, 4, UP),
        (4, 2, UP),
        (4, 4, EDGE),
        (4, 3, EDGE),  # TP1 PP3 DP4 on 12 GPUs: stage 1 (ranks 4-7) beside stage 0, across from stage 2
        (8, 2, OUT),  # TP8 PP2: a stage a node, every hand-off crosses
        (16, 4, OUT),
    ],
)
def test_a_pipeline_that_leaves_the_node_hands_off_over_the_network(
    hw: Hardware, stride: int, stages: int, expected: float
) -> None:
    topo = topology_of(hw.system("h100-sxm"))
    assert float(coll.pipeline_send(S, stride, topo, stages)) == pytest.approx(expected, rel=1e-12)


def test_a_pipeline_on_nvl72_racks_sits_four_16_rank_stages_a_rack(hw: Hardware) -> None:
    """Llama 405B's TP4 CP4 PP16 on 256 GB200s: four stages a rack (as split_group places 16 of 72), so the rack's
    edge stages exchange over the network on one side."""
    topo = topology_of(hw.system("gb200-nvl72"))
    up = S / (topo.up_bandwidth * topo.up_efficiency) + topo.up_latency  # a switched NVLink domain: all its links
    out = S / (topo.out_bandwidth * topo.out_efficiency) + topo.out_latency
    assert float(coll.pipeline_send(S, 16, topo, 16)) == pytest.approx((up + out) / 2, rel=1e-12)
    assert float(coll.pipeline_send(S, 16, topo, 4)) == pytest.approx(up, rel=1e-12)


@pytest.mark.parametrize(("stride", "members", "expected"), [(1, 8, UP), (1, 16, OUT), (4, 4, OUT), (4, 2, UP)])
def test_a_ring_waits_for_its_slowest_hop(hw: Hardware, stride: int, members: int, expected: float) -> None:
    """A context-parallel ring's members all send at once: one hop over the network paces the step."""
    topo = topology_of(hw.system("h100-sxm"))
    assert float(coll.p2p(S, stride, topo, members)) == pytest.approx(expected, rel=1e-12)


def test_it_broadcasts_over_plans(hw: Hardware) -> None:
    topo = topology_of(hw.system("h100-sxm"))
    got = coll.pipeline_send(np.full(4, S), np.array([1, 1, 2, 8]), topo, np.array([8, 16, 4, 2]))
    assert got.tolist() == pytest.approx([UP, EDGE, UP, OUT], rel=1e-12)


def test_a_serving_pipeline_across_nodes_hands_off_over_the_network(catalog: Catalog, hw: Hardware) -> None:
    """A Llama 3.1 8B serving replica of TP4 PP4 spans two 8-GPU nodes, TP4 PP2 one: a token's 8 KiB hand-off costs
    half the network's 10.2 us and half NVLink's 1.02 us in the first, NVLink's in the second (the first had been
    priced on NVLink, its stride 4 < 8). One TP8 hop is the network's, as before."""
    system = hw.system("h100-sxm")
    topo = topology_of(system)
    model = load_model(catalog, "llama-3.1-8b")
    act = model.hidden * ACT_BYTES
    out, up = act / 40e9 + 10e-6, act / (450e9 * 0.82) + 1e-6
    assert float(hand_off(act, 8, topo)) == pytest.approx(out, rel=1e-12)
    eng = engine_profile(catalog, "trtllm", system.chip.family).on_host(system.host_overhead)
    shapes = Shapes.of(np.full(2, 4), np.array([4, 2]))
    dev = serving_device(device_of(system), eng)
    got = token_costs(model, dev, topo, eng, "bf16", shapes, 1.0)["pp_comm"]
    assert got.tolist() == pytest.approx([(out + up) / 2, up], rel=1e-12)
