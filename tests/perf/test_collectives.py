"""Collectives by formula: ring all-reduce, hierarchical all-reduce, all-to-all, torus and full-mesh bandwidth, and
hand-offs that cross a scale-up domain's edge; a group that no divisor splits well spans the fewest domains, and a
point-to-point send crosses the Clos tiers a collective between the same two ranks crosses (hand-built topologies)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import Topology, device_of, topology_of
from chipwise.perf.serving import hand_off
from chipwise.serve.engine import engine_profile, serving_device
from chipwise.serve.iteration import ACT_BYTES, Shapes, token_costs
from chipwise.workload.presets import load_model

SWITCHED = Topology(
    domain_ranks=8,
    up_kind="switched",
    up_dims=(8,),
    up_bandwidth=450e9,
    up_latency=1e-6,
    up_efficiency=0.8,
    out_bandwidth=50e9,
    out_latency=10e-6,
    out_efficiency=0.9,
    out_tiers=((1024, 1.0), (4096, 2.0)),
)


def test_ring_all_reduce_inside_one_domain() -> None:
    """2 (n-1)/n S / (B eta) + 2 (n-1) alpha, n = 8, S = 1 GB."""
    s = 1e9
    expected = 2 * 7 / 8 * s / (450e9 * 0.8) + 2 * 7 * 1e-6
    assert float(coll.all_reduce(s, 8, 1, SWITCHED)) == pytest.approx(expected)


def test_hierarchical_all_reduce_across_domains() -> None:
    """64 ranks, stride 1: 8 per domain x 8 domains. Intra ring all-reduce plus inter all-reduce on S/8, whose latency
    is a tree's, log2i(8) = 3 network steps each way (re-pinned: NCCL's tuning.cc; 2 x 7 ring steps had been paid)."""
    s = 1e9
    intra = 2 * 7 / 8 * s / (450e9 * 0.8) + 2 * 7 * 1e-6
    inter = 2 * 7 / 8 * (s / 8) / (50e9 * 0.9) + 2 * 3 * 10e-6
    assert float(coll.all_reduce(s, 64, 1, SWITCHED)) == pytest.approx(intra + inter)


def test_oversubscribed_tier_slows_large_groups() -> None:
    small = float(coll.all_reduce(1e9, 512, 8, SWITCHED))  # spans 4096 ranks: within the non-blocking reach? no
    big = float(coll.all_reduce(1e9, 1024, 8, SWITCHED))  # spans 8192 ranks, beyond the 2:1 tier
    assert big > small


def test_reduce_scatter_is_half_an_all_reduce_in_bandwidth() -> None:
    s = 4e9
    ar = float(coll.all_reduce(s, 8, 1, SWITCHED)) - 2 * 7 * 1e-6
    rs = float(coll.reduce_scatter(s, 8, 1, SWITCHED)) - 7 * 1e-6
    assert rs == pytest.approx(ar / 2)


def test_single_rank_groups_cost_nothing() -> None:
    assert float(coll.all_reduce(1e9, 1, 1, SWITCHED)) == 0.0
    assert float(coll.moe_dispatch(1e9, 2, 1, SWITCHED)) == 0.0


def test_torus_group_spanning_one_dimension_gets_part_of_the_links() -> None:
    torus = Topology(
        domain_ranks=64,
        up_kind="torus",
        up_dims=(4, 4, 4),
        up_bandwidth=600e9,
        up_latency=1e-6,
        up_efficiency=1.0,
        out_bandwidth=6e9,
        out_latency=25e-6,
        out_efficiency=0.7,
    )
    one_dim = float(coll.all_reduce(1e9, 4, 1, torus)) - 6e-6
    three_dims = float(coll.all_reduce(1e9, 64, 1, torus)) - 2 * (3 + 3 + 3) * 1e-6  # a ring along each dimension
    assert one_dim == pytest.approx(2 * 3 / 4 * 1e9 / (600e9 / 3))
    assert three_dims == pytest.approx(2 * 63 / 64 * 1e9 / 600e9)


def test_a_torus_joins_chips_not_ranks(catalog: Catalog) -> None:
    """A trn2.48xlarge is a 4 x 4 torus of chips of four ranks each: 8 ranks are 2 chips of one row, one dimension
    of links, not two (TP8 had been priced at the whole chip's links, and a 2-chip all-reduce faster than a 1-chip
    one); 32 ranks (8 chips, two rows) span both, and so do 8 ranks 4 apart."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    topo = topology_of(hardware(catalog).system("trn2"))
    assert topo.up_dims == (4, 4) and topo.domain_ranks == 64
    fractions = coll._link_fraction(np.array([2, 4, 8, 16, 32, 64]), topo)
    assert fractions.tolist() == [0.5, 0.5, 0.5, 0.5, 1.0, 1.0]
    # eight ranks four apart (a context-parallel ring beside TP4) are eight chips, two rows
    assert coll._link_fraction(np.array([2, 4, 8]), topo, 4).tolist() == [0.5, 0.5, 1.0]
    one_chip, two_chips = (float(coll.all_reduce(64e6, n, 1, topo)) for n in (4, 8))
    assert two_chips > one_chip


def test_a_strided_torus_group_drives_only_the_dimensions_its_members_differ_in(catalog: Catalog) -> None:
    """Data parallelism over the four instances of a Trn2 UltraServer (4 x 4 x 4 chips of four ranks; TP64 inside
    each instance, so members 64 ranks = 16 chips apart) runs on the inter-instance ring alone: one dimension of
    three, not all three (it had been priced at the chip's whole 640 GB/s). Members 16 ranks (4 chips) apart are one
    column: the second dimension only. On a 16 x 16 x 24 TPU v5p pod, 16 chips 16 apart are one column too."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    ultra = topology_of(hardware(catalog).system("trn2-ultraserver"))
    assert ultra.up_dims == (4, 4, 4) and ultra.domain_ranks == 256
    third = 1.0 / 3.0
    strided = coll._link_fraction(np.array([4, 4, 2, 16, 64]), ultra, np.array([64, 16, 128, 16, 1]))
    assert strided.tolist() == pytest.approx([128 / 640, 256 / 640, 128 / 640, 384 / 640, 512 / 640])
    pod = topology_of(hardware(catalog).system("tpu-v5p-pod"))
    assert coll._link_fraction(np.array([16]), pod, 16).tolist() == pytest.approx([third])
    assert coll._link_fraction(np.array([32]), pod, 16).tolist() == pytest.approx([2 * third])  # 2 x 16 chips


#: an 8-GPU full mesh (MI300X's Infinity Fabric): 7 links of 64 GB/s per direction, 448 GB/s a GPU
MESH = replace(SWITCHED, up_kind="mesh", up_bandwidth=448e9, up_latency=1.5e-6, up_efficiency=0.7)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_a_group_on_a_full_mesh_drives_only_the_links_to_its_members(n: int) -> None:
    """n GPUs of an 8-GPU mesh join over n - 1 direct links each: 2 (n-1)/n S / ((n-1) 64 GB/s x 0.7)."""
    s = 1e9
    expected = 2 * (n - 1) / n * s / ((n - 1) * 64e9 * 0.7) + 2 * (n - 1) * 1.5e-6
    assert float(coll.all_reduce(s, n, 1, MESH)) == pytest.approx(expected)
    # on a switched fabric of the same per-GPU rate, every group size drives all of it
    switched = replace(MESH, up_kind="switched")
    assert float(coll.all_reduce(s, n, 1, switched)) == pytest.approx(
        2 * (n - 1) / n * s / (448e9 * 0.7) + 2 * (n - 1) * 1.5e-6
    )


def test_mesh_point_to_point_and_set_to_set_transfers_use_the_direct_links() -> None:
    """A pipeline hand-off between two GPUs runs on their one link; 4 GPUs sending to 4 others on 16 links."""
    assert float(coll.p2p(64e9 * 0.7, 1, MESH)) == pytest.approx(1.0 + 1.5e-6)
    assert coll.between(1, 1, MESH) == pytest.approx(64e9 * 0.7)
    assert coll.between(4, 4, MESH) == pytest.approx(16 * 64e9 * 0.7)
    assert coll.between(4, 4, SWITCHED) == pytest.approx(4 * 450e9 * 0.8)


def test_moe_dispatch_deduplicates_per_domain() -> None:
    """32 ranks over 4 domains, top-8: each token reaches 3 (1 - (3/4)^8) = 2.7 remote domains, not 6 copies."""
    t = float(coll.moe_dispatch(1e6, 8, 32, SWITCHED))
    remote = 3 * (1 - 0.75**8)
    expected = 1e6 * 8 * (31 / 32) / (450e9 * 0.8) + 7e-6 + 1e6 * remote / (50e9 * 0.9) + 3 * 10e-6
    assert t == pytest.approx(expected)


def test_collectives_broadcast_over_arrays() -> None:
    sizes = np.array([1, 2, 8, 64])
    out = coll.all_reduce(1e9, sizes, 1, SWITCHED)
    assert out.shape == (4,)
    assert out[0] == 0.0 and np.all(np.diff(out) > 0)


def test_a_trn2_ultraserver_torus_has_its_own_bandwidth_per_dimension(catalog: Catalog) -> None:
    """trn2-arch: 1,024 GB/s/device inside an instance, 256 between the four (both halved, per direction): x and y
    256 GB/s each, the inter-instance ring 128. A 16-chip TP group inside one instance gets the same 512 GB/s as on
    a trn2.48xlarge (it had 427: the chip's mean 640 split over three dimensions), data parallelism across the four
    instances 128 (it had the chip's whole 640)."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    hw = hardware(catalog)
    ultra, trn2 = (topology_of(hw.system(s)) for s in ("trn2-ultraserver", "trn2.48xlarge"))
    assert ultra.up_dim_bandwidth == (64e9, 64e9, 32e9) and ultra.up_bandwidth == 160e9  # per rank, 4 a chip

    def per_chip(size: int, stride: int, topo: Topology) -> float:
        return float(coll.group(size, stride, topo).bw_in) * 4 / topo.up_efficiency

    assert per_chip(64, 1, ultra) == pytest.approx(512e9) == per_chip(64, 1, trn2)
    assert per_chip(16, 1, ultra) == pytest.approx(256e9)
    assert per_chip(4, 64, ultra) == pytest.approx(128e9)
    assert per_chip(256, 1, ultra) == pytest.approx(640e9)
    # TPU ICI links are alike in every dimension: an even split, as before
    assert topology_of(hw.system("tpu-v5p-pod")).up_dim_bandwidth == ()


def test_a_group_of_whole_non_power_of_two_domains_fills_each(catalog: Catalog) -> None:
    """An NVL72 holds 72 GPUs: 144 consecutive ranks are two whole racks, 216 three, and a TP8 model's 18 data-parallel
    replicas (stride 8) are 9 a rack in two racks. They had been split by the largest power of two not above the
    members a rack holds, 64 or 8: (16, 9), (8, 27) and (2, 9). A group that fills its last domain in part spans
    ceil(size / cap) domains as that many equal parts: 12 at stride 8 (9 + 3) is 6 x 2, not 4 x 3 (three racks
    for a 96-rank job); 12 on 8-GPU servers (8 + 4) is 6 x 2. Power-of-two groups split as before."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    hw = hardware(catalog)
    nvl72, nvl36 = (topology_of(hw.system(s)) for s in ("gb200-nvl72", "p6e-gb200-ultraserver-36"))

    def split(size: list[int], stride: list[int], topo: Topology) -> list[tuple[int, int]]:
        n_in, n_out = coll.split_group(np.array(size), np.array(stride), topo)
        return list(zip(n_in.tolist(), n_out.tolist(), strict=True))

    # shards whose blocks do not tile a domain straddle two under consecutive packing (place_group), so a shard is
    # gcd(size, D / stride) where the stride divides D: 16 at stride 8 had been 8 x 2 (its second shard, ranks
    # 64-127, 1 + 7 members over two racks), now 1 x 16; 128 consecutive 64 x 2 (ranks 64-127 again), now 8 x 16;
    # 12 at stride 8 6 x 2 (ranks 48-95, 3 + 3), now 3 x 4; 12 at stride 4 on NVL36 and 12 on 8-GPU servers alike
    assert split([144, 216, 18, 27, 72, 16, 128, 12], [1, 1, 8, 8, 1, 8, 1, 8], nvl72) == [
        (72, 2), (72, 3), (9, 2), (9, 3), (72, 1), (1, 16), (8, 16), (3, 4)
    ]  # fmt: skip
    assert split([72, 18, 12], [1, 4, 4], nvl36) == [(36, 2), (9, 2), (3, 4)]
    assert split([64, 12, 4, 16, 2], [1, 1, 1, 2, 16], SWITCHED) == [(8, 8), (4, 3), (4, 1), (4, 4), (1, 2)]
    # FSDP all-gather of a Llama-3.1-70B TP8 shard over 18 replicas: 8/9 S / B_in + 1/2 S / (9 B_out), 0.0438 s; its
    # ring steps through all 18 members, 16 on NVLink (re-pinned: tuning.cc's nRanks - nNodes, where one rack's 8 had)
    s = 70.55e9 / 8 * 2
    b_in, b_out = 900e9 * 0.76, 50e9 * 0.94
    expected = 8 / 9 * s / b_in + 1 / 2 * s / (9 * b_out) + 16 * 1e-6 + 1 * 5e-6
    assert float(coll.all_gather(s, 18, 8, nvl72)) == pytest.approx(expected)
    assert expected == pytest.approx(0.0438, abs=5e-5)


@pytest.mark.parametrize(
    ("system", "stride", "links"),
    [
        ("trn2-ultraserver", 64, 0.5),
        ("trn2-ultraserver", 4, 0.5),
        ("trn2.48xlarge", 4, 0.5),
        ("tpu-v5p-pod", 1, 0.5),
        ("mi300x-8x", 1, 1.0),
        ("p5.48xlarge", 1, 1.0),
        ("p5.48xlarge", 8, 1.0),
    ],
)
def test_a_send_between_two_ranks_is_their_two_member_all_gather(
    catalog: Catalog, system: str, stride: int, links: float
) -> None:
    """Each of two ranks sending S to the other is an all-gather of 2S over the pair on a switched fabric or a full
    mesh; on a torus the send drives one of the two links of each dimension between them, where the pair's all-gather
    (a ring along the dimension) drives both: half its bandwidth. (It had the chip's every link, 2 to 5 times too
    fast, then the dimension's two links.)"""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    topo = topology_of(hardware(catalog).system(system))
    gather = float(coll.all_gather(2e9, 2, stride, topo)) - topo.up_latency
    assert float(coll.p2p(1e9, stride, topo)) == pytest.approx(gather / links + topo.up_latency)


def test_a_send_across_trn2_ultraserver_instances_rides_the_inter_instance_ring(catalog: Catalog) -> None:
    """1 GB to the rank 64 away (the next instance): one of the z ring's two links, 64 GB/s of the chip's 640, a
    tenth of the 160 GB/s per rank; 0.0078 s at all of it, then 0.0391 s at both z links."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    topo = topology_of(hardware(catalog).system("trn2-ultraserver"))
    expected = 1e9 / (160e9 * topo.up_efficiency / 10) + topo.up_latency
    assert float(coll.p2p(1e9, 64, topo)) == pytest.approx(expected)
    assert expected == pytest.approx(0.0781, abs=1e-4)


@pytest.mark.parametrize("stride", [1, 16, 256])
def test_a_send_on_a_tpu_torus_takes_one_ici_link(catalog: Catalog, stride: int) -> None:
    """1 GB to the chip `stride` away on a v5p pod (16 x 16 x 24, one x, y or z hop): one ICI link, 100 GB/s a
    direction x 0.92 = 92 GB/s (fabrics.yaml tpu-ici-v5p), 10.87 ms + 1 us. It had been the dimension's two links,
    184 GB/s, 5.43 ms."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    topo = topology_of(hardware(catalog).system("tpu-v5p-pod"))
    assert float(coll.p2p(1e9, stride, topo)) == pytest.approx(1e9 / 92e9 + 1e-6, rel=1e-9)
    assert float(coll.pipeline_send(1e9, stride, topo, 2)) == pytest.approx(0.010871, abs=1e-6)


def test_a_send_across_two_torus_dimensions_is_paced_by_the_slower_link(catalog: Catalog) -> None:
    """Two pipeline stages of 68 ranks on a Trn2 UltraServer (17 chips, one domain of 256 ranks): chip 0 hands off to
    chip 17, one x and one z hop. The send crosses one x link (128 GB/s a chip) and one z link (64 GB/s), paced by
    the z link: 16 GB/s a rank of four cores x 0.8 efficiency, 78.1 ms for 1 GB (it had driven x, y and z together,
    640 GB/s a chip, 160 a rank: 7.8 ms)."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    topo = topology_of(hardware(catalog).system("trn2-ultraserver"))
    expected = 1e9 / (16e9 * topo.up_efficiency) + topo.up_latency
    assert float(coll.pipeline_send(1e9, 68, topo, 2)) == pytest.approx(expected)
    assert expected == pytest.approx(0.0781, abs=1e-4)


# Hand-offs that cross a scale-up domain's edge: a pipeline's stage at a domain's edge exchanges with one neighbour over
# the network, whatever the stride; a ring waits for its slowest hop.


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
    """Llama 405B's TP4 CP4 PP16 on 256 GB200s: stages of 16 ranks, four and a half a rack, so stage 4 straddles
    two racks and exchanges over the network on both sides; TP8 PP32 (stages of 8, nine a rack) keeps the edge's
    one side."""
    topo = topology_of(hw.system("gb200-nvl72"))
    up = S / (topo.up_bandwidth * topo.up_efficiency) + topo.up_latency  # a switched NVLink domain: all its links
    out = S / (topo.out_bandwidth * topo.out_efficiency) + topo.out_latency
    # 16 does not divide 72: stage 4 (ranks 64-79) is 8 + 8 over two racks, both its hand-offs on the network (the
    # edge's average, (up + out) / 2, had taken four whole stages a rack)
    assert float(coll.pipeline_send(S, 16, topo, 16)) == pytest.approx(out, rel=1e-12)
    assert float(coll.pipeline_send(S, 8, topo, 32)) == pytest.approx((up + out) / 2, rel=1e-12)  # 9 stages a rack
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
    """146 consecutive ranks on NVL72 racks are 72 + 72 + 2 on three racks (they had been spread evenly, 49 + 49 +
    48, 0.0553 s, which consecutive packing cannot give): all-reduce of 16 GB = 2 (71/72 S / B_in + 2/3 S / (2
    B_out) + 14 alpha_in + 1 alpha_out), 0.2731 s, the two ranks of the third rack carrying the reduced buffer over
    their two NICs. Parts that divided the group had made it 73 racks of 2, 0.359 s on the network."""
    s = 16e9
    b_in, b_out = 900e9 * 0.76, 50e9 * 0.94
    # a tree over three racks climbs log2i(3) = 1 network step (re-pinned: NCCL's tuning.cc; the ring's 2 had been paid)
    expected = 2 * (71 / 72 * s / b_in + 2 / 3 * s / (2 * b_out) + 14 * 1e-6 + 1 * 5e-6)
    assert expected == pytest.approx(0.2731, abs=5e-5)
    assert float(coll.all_reduce(s, 146, 1, NVL72)) == pytest.approx(expected)
    # 12 at stride 8 (96 ranks) is 3 + 9 members at its worst offset, 19 at stride 8 (152) 1 + 9 + 9, and 5 (which
    # does not divide 72) 1 + 4 (ranks 70-74): they had read 6 + 6, 7 + 6 + 6 and 5 in one rack
    small, big, n_out = coll.place_group(np.array([146, 144, 12, 19, 5]), np.array([1, 1, 8, 8, 1]), NVL72)
    assert (small.tolist(), big.tolist(), n_out.tolist()) == ([2, 72, 3, 1, 1], [72, 72, 9, 9, 4], [3, 2, 2, 3, 2])
    # an HSDP shard group still divides the group it shards
    assert tuple(int(x) for x in coll.split_group(146, 1, NVL72)) == (2, 73)


def test_uneven_parts_price_the_network_by_the_smallest_and_the_domain_by_the_largest() -> None:
    """TP8 DP19 on NVL72 (stride 8, 152 ranks: 72 + 72 + 8): 9 + 9 + 1 on three racks (it had been spread evenly,
    7 + 6 + 6). Reduce-scatter of 1 GB: 8/9 S / B_in + 2/3 S / (1 B_out) + 16 alpha_in + 2 alpha_out, its ring
    through all 19 members, 19 - 3 steps on NVLink (re-pinned: NCCL's tuning.cc; the largest part's 8 had been paid).
    A MoE dispatch of S bytes of tokens to k = 2 experts each sends k (1 - 1/19) S over NVLink at the largest part's
    8 alpha_in, and k (1 - (2/3)^k) = 10/9 S to the two other racks at 2 alpha_out."""
    s = 1e9
    b_in, b_out = 900e9 * 0.76, 50e9 * 0.94
    g = coll.group(19, 8, NVL72)
    assert (int(g.n_in), int(g.n_out)) == (1, 3)
    expected = 8 / 9 * s / b_in + 2 / 3 * s / (1 * b_out) + 16 * 1e-6 + 2 * 5e-6
    assert float(coll.reduce_scatter(s, g)) == pytest.approx(expected)
    dispatch = 36 / 19 * s / b_in + 10 / 9 * s / b_out + 8 * 1e-6 + 2 * 5e-6
    assert float(coll.moe_dispatch(s, 2, g, NVL72)) == pytest.approx(dispatch)


def test_a_send_across_an_oversubscribed_tier_pays_it_as_the_pair_collective_does() -> None:
    """On SWITCHED's 8-GPU servers, 1 GB to the rank 4,096 away crosses the 2:1 tier (span 8,192 > 4,096):
    1e9 / (50e9 x 0.9 / 2) + 10 us = 0.04445 s, the two-member all-gather of 2 GB between the same ranks; it had been
    0.02223 s at the NIC's full rate. 1,024 away stays under it."""
    over = 1e9 / (50e9 * 0.9 / 2) + 10e-6
    assert over == pytest.approx(0.04445, abs=1e-5)
    assert float(coll.pipeline_send(1e9, 4096, SWITCHED, 2)) == pytest.approx(over)
    assert float(coll.p2p(1e9, 4096, SWITCHED)) == pytest.approx(over)
    assert float(coll.p2p(1e9, 4096, SWITCHED)) == pytest.approx(float(coll.all_gather(2e9, 2, 4096, SWITCHED)))
    assert float(coll.p2p(1e9, 1024, SWITCHED)) == pytest.approx(1e9 / (50e9 * 0.9) + 10e-6)


def test_a_group_on_one_trainium_chip_talks_through_its_memory_not_neuronlink(catalog: Catalog) -> None:
    """TP4 on a Trainium2 (4 cores a chip) all-reduces through the chip's own HBM: 2.9 TB/s x the family's memory
    efficiency / (2 x 4 cores) a rank, whatever NeuronLink carries (it had been priced at one NeuronLink
    dimension's share, 51 GB/s a rank, as TP8 across two chips is). TP8 still crosses NeuronLink; a GPU has one
    rank a chip and no such path."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    system = hardware(catalog).system("trn2")
    topo = topology_of(system)
    rate = system.chip.hbm_bandwidth * system.chip.efficiency.memory / 8
    assert topo.on_chip_bandwidth == pytest.approx(rate)
    assert coll._bw_in(np.array([2, 4, 8]), topo).tolist() == pytest.approx(
        [rate, rate, topo.up_bandwidth * topo.up_efficiency * 0.5]
    )
    s = 64e6
    expected = 2 * 3 / 4 * s / rate + 2 * 3 * topo.up_latency
    assert float(coll.all_reduce(s, 4, 1, topo)) == pytest.approx(expected)
    faster_links = replace(topo, up_bandwidth=10 * topo.up_bandwidth)
    assert float(coll.all_reduce(s, 4, 1, faster_links)) == pytest.approx(expected)  # NeuronLink is not on its path
    assert float(coll.all_reduce(s, 8, 1, faster_links)) < float(coll.all_reduce(s, 8, 1, topo))
    assert topology_of(hardware(catalog).system("p5.48xlarge")).on_chip_bandwidth == 0.0


def test_a_group_that_does_not_tile_a_chip_crosses_neuronlink(catalog: Catalog) -> None:
    """TP3 on a 4-core Trainium3: groups at ranks 3-5 and 6-8 span two chips, so the step waits on NeuronLink (every
    TP3 group had been priced at the on-chip rate); TP2 and TP4 tile the chip and stay on it."""
    from chipwise.hardware import hardware
    from chipwise.perf.device import topology_of

    topo = topology_of(hardware(catalog).system("trn3"))
    on_chip, link = topo.on_chip_bandwidth, float(coll._bw_in(np.array([8]), topo)[0])
    assert coll._bw_in(np.array([2, 4, 3]), topo).tolist() == pytest.approx([on_chip, on_chip, link])
    assert coll._bw_in(np.array([2]), topo, 3).tolist() == pytest.approx([link])  # ranks 0 and 3: one chip; 1 and 4 two
