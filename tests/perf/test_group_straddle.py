"""Groups that fit a scale-up domain by size but do not tile it: ranks packed consecutively (rank r in domain
floor(r / D)), some block of a group's ranks straddles two domains, and the synchronous step waits for that slowest
group (perf.collectives.place_group). Numbers by hand on an NVL72 rack and a 288-rank Trainium4 rack."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from chipwise.errors import ChipwiseError
from chipwise.perf import collectives as coll
from chipwise.perf.device import Topology

# an NVL72 rack as one rank sees it: 900 GB/s NVLink at 0.76, 50 GB/s NIC at 0.94 (the catalog's gb200-nvl72)
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
# 72 Trainium4 chips of 4 cores: 288 ranks a domain
TRN4 = replace(
    NVL72, domain_ranks=288, up_bandwidth=450e9, up_efficiency=0.77, out_bandwidth=6.25e9, out_latency=8e-6,
    out_efficiency=0.8,
)  # fmt: skip
B_IN, B_OUT = 900e9 * 0.76, 50e9 * 0.94
S = 8192 * 8192 * 2.0  # a Llama-3.1-70B micro-batch's activations at 8K tokens, bf16: 128 MiB


def _placed(size: int, stride: int, topo: Topology, ranks: int | None = None) -> tuple[int, int, int]:
    small, big, n_out = coll.place_group(size, stride, topo, ranks)
    return int(small), int(big), int(n_out)


def test_tp16_on_nvl72_racks_is_eight_and_eight_over_two() -> None:
    """TP16 on two NVL72 racks: group 4 (ranks 64-79) is 8 + 8. Its all-reduce of 128 MiB, 2 (7/8 S / B_in + 1/2 S /
    (8 B_out) + 7 alpha_in + 1 alpha_out) = 0.724 ms, had been priced in one rack, 2 (15/16 S / B_in + 8 alpha_in)
    = 0.384 ms."""
    assert _placed(16, 1, NVL72) == (8, 8, 2)
    expected = 2 * (7 / 8 * S / B_IN + 1 / 2 * S / (8 * B_OUT) + 7 * 1e-6 + 1 * 5e-6)
    assert expected == pytest.approx(0.724e-3, abs=5e-7)
    assert float(coll.all_reduce(S, 16, 1, NVL72)) == pytest.approx(expected, rel=1e-12)


def test_tp8_on_nvl72_tiles_the_rack_and_keeps_its_price() -> None:
    """72 % 8 == 0: nine TP8 groups a rack, none straddles: 2 (7/8 S / B_in + 7 alpha_in) = 0.357 ms, as before."""
    assert _placed(8, 1, NVL72) == (8, 8, 1)
    expected = 2 * (7 / 8 * S / B_IN + 7 * 1e-6)
    assert float(coll.all_reduce(S, 8, 1, NVL72)) == pytest.approx(expected, rel=1e-12)
    assert _placed(18, 8, NVL72) == (9, 9, 2)  # TP8 DP18: two whole racks, 9 + 9, as before


def test_64_members_4_apart_straddle_a_288_rank_domain() -> None:
    """An HSDP shard of 64 at stride 4 fills 256 ranks; one fits a 288-rank Trainium4 rack, the next (ranks
    256-511) is 32 + 224 ranks: 8 + 56 members over two racks (place_group had read 64 in one). split_group now
    shards such a group in 8s (32 ranks, nine a rack)."""
    assert _placed(64, 4, TRN4) == (8, 56, 2)
    assert tuple(int(x) for x in coll.split_group(4096, 4, TRN4)) == (8, 512)


def test_a_group_within_a_domain_s_size_is_not_split() -> None:
    """split_group keeps a group no larger than a domain whole (a serving replica's TP32 on a rack: its latency
    stays the rack's), and splits one past a domain into shards that tile it: DP18 at stride 8 is 9 x 2."""
    assert tuple(int(x) for x in coll.split_group(32, 1, NVL72)) == (32, 1)
    assert tuple(int(x) for x in coll.split_group(18, 8, NVL72)) == (9, 2)
    assert tuple(int(x) for x in coll.split_group(16, 8, NVL72)) == (1, 16)  # 8 x 2 had straddled (ranks 64-127)


def test_ep128_on_nvl72_spans_three_racks() -> None:
    """128 consecutive ranks on 72-rank racks: group 1 (ranks 128-255) is 16 + 72 + 40, group 5 (640-767) 8 + 72 +
    48; they had been priced 64 + 64 on two racks. A job of two groups reaches only the first straddle."""
    assert _placed(128, 1, NVL72) == (8, 72, 3)
    assert _placed(128, 1, NVL72, ranks=256) == (16, 72, 3)
    assert _placed(128, 1, NVL72, ranks=128) == (56, 72, 2)  # ranks 0-127: 72 + 56


def test_a_lone_job_inside_one_domain_cannot_straddle() -> None:
    """A 16-rank job on one rack is ranks 0-15: one block at offset 0, nothing crosses."""
    assert _placed(16, 1, NVL72, ranks=16) == (16, 16, 1)
    assert _placed(16, 1, NVL72, ranks=144) == (8, 8, 2)  # nine blocks reach offset 64


def _brute(size: int, stride: int, d: int, blocks: int) -> tuple[int, int]:
    """(smallest part, n_out) of the slowest group of `blocks` consecutive blocks, counted rank by rank."""
    worst = (0, 0)
    for k, j in itertools.product(range(blocks), range(stride)):
        first = k * size * stride + j
        domains = np.bincount((first + stride * np.arange(size)) // d)
        parts = domains[domains > 0]
        worst = max(worst, (parts.size, -int(parts.min())))
    return -worst[1], worst[0]


@pytest.mark.parametrize("d", [8, 72, 288])
def test_the_closed_form_is_the_worst_group_counted_rank_by_rank(d: int) -> None:
    """On a job of whole domains (every offset reached) and on a job of a few blocks, place_group's slowest group
    is the one counted rank by rank: most domains, then the smallest part."""
    topo = Topology(d, "switched", (d,), 1.0, 0.0, 1.0, 1.0, 0.0, 1.0)
    for size, stride in itertools.product((2, 3, 5, 9, 16, 40, 64, 128), (1, 2, 4, 8, 12)):
        block = size * stride
        whole = block * d // np.gcd(block, d)  # the fewest whole domains its blocks fill
        small, _, n_out = _placed(size, stride, topo)
        assert (small, n_out) == _brute(size, stride, d, whole // block), (size, stride)
        for blocks in (1, 2, 3):
            small, _, n_out = _placed(size, stride, topo, ranks=blocks * block)
            assert (small, n_out) == _brute(size, stride, d, blocks), (size, stride, blocks)


def test_many_jobs_of_few_blocks_placed_in_one_call_read_as_each_alone() -> None:
    """Plans whose jobs hold different numbers of blocks (1 to 8 on a 72-rank rack, where a block of 16 reaches 9
    offsets) are placed in one vectorised call, each as a call of its own gives it and as counted rank by rank."""
    cases = list(itertools.product((2, 3, 5, 9, 16, 40), (1, 2, 4, 8, 12), (1, 2, 3, 5, 8)))
    size, stride, blocks = (np.array(c) for c in zip(*cases, strict=True))
    small, big, n_out = coll.place_group(size, stride, NVL72, ranks=size * stride * blocks)
    for i, (sz, st, b) in enumerate(cases):
        assert (int(small[i]), int(big[i]), int(n_out[i])) == _placed(sz, st, NVL72, ranks=sz * st * b), cases[i]
        assert (int(small[i]), int(n_out[i])) == _brute(sz, st, 72, b), cases[i]


def test_a_group_is_never_faster_than_its_lone_placement() -> None:
    """The slowest group over every offset never costs less than a lone block from a domain's first rank (the only
    placement of a job of one block), and costs the same where the blocks tile the domain."""
    sizes, strides = (np.array(x) for x in zip(*itertools.product(range(2, 80), (1, 2, 4, 8, 16)), strict=True))
    worst = coll.all_reduce(S, coll.group(sizes, strides, NVL72))
    lone = coll.all_reduce(S, coll.group(sizes, strides, NVL72, ranks=sizes * strides))
    assert np.all(worst >= lone * (1 - 1e-12))
    tiles = 72 % (sizes * strides) == 0
    assert worst[tiles] == pytest.approx(lone[tiles], rel=1e-12)
    assert np.count_nonzero(worst > lone * 1.01) > 100  # and the straddles are priced


UP = S / B_IN + 1e-6
OUT = S / B_OUT + 5e-6


@pytest.mark.parametrize(("stride", "members", "expected"), [(4, 2, UP), (8, 9, UP), (8, 4, OUT), (16, 2, OUT)])
def test_a_ring_whose_blocks_straddle_a_rack_waits_on_the_network(stride: int, members: int, expected: float) -> None:
    """A context-parallel ring of `members` ranks `stride` apart: TP8 CP4 rings fill 32 ranks, the third (64-95)
    over two racks, its hop there on the network (it had been priced on NVLink, 32 <= 72); TP8 CP9 fills a rack."""
    assert float(coll.p2p(S, stride, NVL72, members)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("stride", "stages", "expected"), [(8, 9, UP), (24, 6, (UP + OUT) / 2), (16, 8, OUT), (32, 4, OUT)]
)
def test_a_stage_across_a_rack_edge_hands_off_over_the_network_both_ways(
    stride: int, stages: int, expected: float
) -> None:
    """A pipeline from a rack's first rank: PP9 of 8-rank stages fills the rack; 24-rank stages sit three a rack,
    the edge stages with one neighbour across (the average); 16-rank stages put stage 4 (ranks 64-79) and 32-rank
    stages stage 2 (64-95) across the edge, both their hand-offs on the network (they had read the average)."""
    assert float(coll.pipeline_send(S, stride, NVL72, stages)) == pytest.approx(expected, rel=1e-12)


def test_a_plans_own_ranks_place_its_groups_not_the_fleets() -> None:
    """TP16 x DP4 is ranks 0-63 of one NVL72 rack however many chips are rented: on 80 GB200s its groups had been
    placed as if a fifth TP16 block sat at ranks 64-79 across two racks (step 32.2 -> 42.0 s); and a TP8 CP4 DP2
    plan on 64 is one rack, its context-parallel ring on NVLink (it had paid the network, cp_comm 2.7 s)."""
    import chipwise.api as cw

    base = {"kind": "train", "model": "llama-3.1-70b", "hardware": "gb200-nvl72", "global_batch": 512}
    plan = {"tp": 16, "dp": 4, "pp": 1, "cp": 1, "microbatch": 1}
    runs = [cw.predict({**base, "chips": n, "plan": plan}) for n in (64, 72, 80)]
    steps = [r["step_time_s"] for r in runs]
    assert steps[1] == pytest.approx(steps[0], rel=1e-12) and steps[2] == pytest.approx(steps[0], rel=1e-12)
    # one rack's TP16 (11.0 s a step): with every offset counted, as without the plan's ranks, 20.8 s
    assert runs[0]["breakdown"]["tp_comm"] == pytest.approx(11.008, rel=1e-3)
    # HSDP of 16 members 8 apart on 128 GB200s had been priced (its reduction hidden behind the backward), but a
    # rack's 9 data-parallel ranks share no factor with 16: it would shard over one rank, and is refused
    hsdp = {"tp": 8, "dp": 16, "pp": 1, "cp": 1, "zero": 3, "hsdp": True}
    with pytest.raises(ChipwiseError, match="so it would shard over one rank"):
        cw.predict({**base, "model": "llama-3.1-8b", "global_batch": 256, "chips": 128, "plan": hsdp})
    ring = cw.predict({**base, "chips": 64, "seq_len": 8192, "plan": {"tp": 8, "cp": 4, "dp": 2, "pp": 1}})
    assert ring["breakdown"]["cp_comm"] == 0.0  # hidden behind attention, as on NVLink it is
