"""Collectives on a topology, alpha-beta per tier. Every function broadcasts over arrays of group shapes.

A communication group of `size` ranks whose members are `stride` ranks apart (Megatron order: TP innermost,
then CP, EP/DP, PP; ranks packed consecutively into scale-up domains) spans n_out domains, its smallest part n_in
members, as the slowest such group of the job lies (place_group: a group that fits a domain by size but does not
tile it straddles two somewhere).
Collectives run hierarchically: the scale-up part at the domain's bandwidth, the scale-out part over each
rank's own NIC share (rail-optimised), at the fabric's achievable bus-bandwidth fraction and slowed where the
share of its traffic that crosses an oversubscribed Clos tier's uplinks outruns them (_bw_out).

Costs for a buffer of S bytes per rank (ring algorithms; Thakur, Rabenseifner & Gropp 2005; NCCL's busBw):
    all-reduce      2 (n-1)/n * S / B + 2 (n-1) alpha
    reduce-scatter  (n-1)/n * S / B + (n-1) alpha          (all-gather is the same)
Hierarchically, all-reduce = intra reduce-scatter + inter all-reduce on S/n_in + intra all-gather. An all-reduce's
latency term uses tree-like step counts: inside a domain min(n-1, 2 ceil(log2 n)) for long groups (NVLS and trees,
_steps), on the network a tree's log2i(n_out) each way (_tree_steps), as NCCL's tuning model (src/graph/tuning.cc)
charges its tree; a reduce-scatter or all-gather runs as a ring, n_out - 1 steps on the network and the group's
other size - n_out steps inside the domains where it spans them (_gather_steps): NCCL has no tree for them (a tree is
a reduce and a broadcast, NVIDIA/nccl#1473; its PAT, log-depth, runs one GPU a node only), and its tuning model
charges their ring nRanks - 1 steps, nNodes - 1 of them on the network. On a torus, a ring
along each dimension spanned, sum (n_d - 1) steps; a MoE dispatch (an all-to-all) on a torus pays for the hops its
data travels (_in_domain_steps_and_hops).
On a torus, a group spanning d of the D dimensions (from the lowest its members differ in to the highest) drives
only d/D of the chip's links, or those dimensions' own bandwidths where the catalog gives them (a Trn2
UltraServer's inter-instance ring carries 128 GB/s against 256 on each in-instance dimension). Consecutive chips
fill the torus's dimension 0 first, then 1, from a domain's first chip (_torus_extents): an estimate. A real v4/v5p
slice is near-cubic with wraparound on every axis (v5p-128 is 4 x 4 x 4), so a 64- or 256-chip group there would
drive all of a chip's links, not the 2/3 this gives, and its all-to-all cross fewer hops (max axis 4 or 8, not 16).
On a full mesh
(direct links from each chip to each of the domain's N - 1 others, no switch: AMD's Infinity Fabric, Gaudi's RoCE
ports) a group of m chips drives only the links to its own members, (m - 1) / (N - 1) of the chip's bandwidth: two
MI300X share one 64 GB/s link of seven.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from chipwise.perf.device import Topology
from chipwise.perf.vector import FACTORIZE_MIN_ROWS, factorize, largest_divisor_at_most
from chipwise.types import Array, IntArray


def _as_int(x: IntArray | int) -> IntArray:
    return np.asarray(x, dtype=np.int64)


def split_group(size: IntArray | int, stride: IntArray | int, topo: Topology) -> tuple[IntArray, IntArray]:
    """(n_in, n_out) in equal parts that divide the group, as an HSDP shard group must (data_parallel.shards): n_in
    the largest divisor of the group's size whose shard groups tile a domain, n_out = size / n_in. Ranks are packed
    consecutively (place_group), so a shard of n_in members `stride` apart fills n_in x stride ranks and only one
    that divides the domain's D ranks never straddles two: where stride divides D that is n_in = gcd(size, D /
    stride), the smallest part of the group's worst placement. Two whole NVL72 racks (144 ranks) are 72 x 2, TP8
    DP18 9 x 2, DP12 at stride 8 3 x 4: its 6 x 2 had put the second shard (ranks 48-95) 3 + 3 across two racks,
    its all-gathers over the network every micro-batch. Where stride does not divide D no shard tiles a domain:
    n_in the largest divisor of the size that a domain holds by count, max{d : d | size, d <= D // stride}, its
    straddle priced where the shard group is placed (group). A group no larger than a domain stays whole, n_out = 1:
    HSDP applies only past a domain (train.plans), and a serving replica's group (perf.serving) is placed on its
    own from a domain's first rank. Worked out once per distinct (size, stride)."""
    size, stride = np.broadcast_arrays(_as_int(size), np.maximum(_as_int(stride), 1))
    inverse, first = factorize(size.ravel(), stride.ravel())
    size_of, stride_of = size.ravel()[first], stride.ravel()[first]
    cap = np.maximum(topo.domain_ranks // stride_of, 1)  # members one domain holds
    by_count = np.array(
        [largest_divisor_at_most(max(int(n), 1), cap[i : i + 1])[0] for i, n in enumerate(size_of)], dtype=np.int64
    )
    d = topo.domain_ranks
    tiling = (d % stride_of == 0) & (size_of * stride_of > d) & (stride_of < d)
    n_in = np.where(tiling, np.gcd(np.maximum(size_of, 1), cap), by_count)
    return n_in[inverse].reshape(size.shape), (size_of // n_in)[inverse].reshape(size.shape)


def place_group(
    size: IntArray | int, stride: IntArray | int, topo: Topology, ranks: IntArray | int | None = None
) -> tuple[IntArray, IntArray, IntArray]:
    """(smallest part, largest part, n_out) of the slowest of the groups of `size` members `stride` ranks apart,
    ranks packed consecutively as Megatron orders them: rank r sits in domain floor(r / D), D = topo.domain_ranks,
    and the `stride` groups side by side fill a block of B = size x stride ranks, blocks one after another at
    offsets k B mod D within a domain, multiples of g = gcd(B, D). A block at offset o spans a first part of
    min(B, D - o) ranks, whole domains and a last part; a part of L ranks holds floor(L / stride) or ceil(L /
    stride) members of a group, and one of L < stride ranks a member of only L of the block's groups. A
    synchronous step waits for the slowest group, taken as the one on most domains, then with the smallest part.
    Over every offset (_at_every_offset):
      B divides D            one domain, (size, size, 1)
      D divides B            n_out = B / D, parts floor(D / stride) to ceil(D / stride)
      B < D otherwise        n_out = 2, smallest max(1, g // stride), largest size - smallest
      B = q D + rho > D      n_out = q + 2 where rho >= 2 g and rho > stride (a block at offset D - g: g ranks,
                             q domains, rho - g ranks), else q + 1; smallest max(1, g // stride)
    and members `stride` >= D apart sit one a domain, (1, 1, size). TP16 on NVL72 racks is 8 + 8 (ranks 64-79):
    a 128 MiB all-reduce had been priced in one rack, 0.384 ms; it now reads 0.724 ms. EP128 is 8 + 72 +
    48 on three racks (ranks 640-767), not 64 + 64 on two. A job on whole domains reaches every offset (its m
    domains are a multiple of B / g), so without `ranks` (the job's rank count) that is the assumption: an
    estimate for a job that fills its last domain in part, whose few blocks may miss the worst offset (one
    data-parallel group over 4,096 GB200s, offset 0 alone: 56 racks and 64 ranks, priced as if 8 ranks sat alone
    in a rack). Given `ranks`, only the offsets of its ranks // B blocks count (_at_offsets). Where no group
    straddles, blocks that tile the domain (the common plans), this is the placement it had been; a group that
    filled its last domain in part had been spread evenly instead (146 ranks 49 + 49 + 48, now 72 + 72 + 2)."""
    size, stride = np.broadcast_arrays(np.maximum(_as_int(size), 1), np.maximum(_as_int(stride), 1))
    d = topo.domain_ranks
    small, large, n_out = _at_every_offset(size, stride, d)
    block = size * stride
    if ranks is not None:
        blocks = np.broadcast_to(np.maximum(_as_int(ranks) // block, 1), size.shape)
        few = blocks < d // np.gcd(block, d)  # blocks that miss some offsets
        if np.any(few):
            sizes, strides, counts = size[few], stride[few], blocks[few]
            inverse, first = factorize(sizes, strides, counts)
            worst = _at_offsets(sizes[first], strides[first], d, counts[first])
            small, large, n_out = small.copy(), large.copy(), n_out.copy()
            small[few], large[few], n_out[few] = (w[inverse] for w in worst)
    # a block inside one domain, a group of one, members a domain or more apart: nothing shares a domain unevenly
    fits = (d % block == 0) | (size == 1)
    lone = stride >= d
    small = np.where(fits, size, np.where(lone, 1, small))
    large = np.where(fits, size, np.where(lone, 1, large))
    n_out = np.where(fits, 1, np.where(lone, size, n_out))
    return small.astype(np.int64), large.astype(np.int64), n_out.astype(np.int64)


def _at_every_offset(size: IntArray, stride: IntArray, d: int) -> tuple[IntArray, IntArray, IntArray]:
    """(smallest part, largest part, n_out) of the slowest group over every offset a block of size x stride ranks
    takes in a domain of d ranks, in closed form (place_group's table); stride < d."""
    block = size * stride
    g = np.gcd(block, d)
    q, rho = np.divmod(block, d)
    small = np.maximum(g // stride, 1)
    whole = -(-d // stride)  # the most members a whole domain holds
    n_out = np.where(rho == 0, q, np.where((rho >= 2 * g) & (rho > stride), q + 2, q + 1))
    large = np.where(q == 0, size - small, np.minimum(whole, size - small))
    return np.where(rho == 0, d // stride, small), np.where(rho == 0, whole, large), n_out


def _at_offsets(size: IntArray, stride: IntArray, d: int, blocks: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """(smallest part, largest part, n_out) of the slowest group of the first `blocks` blocks of size x stride ranks,
    at offsets k B mod d, for each (size, stride, blocks): parts of a = min(B, d - o) ranks, whole domains, r ranks;
    n_out one less where both end parts are under a stride and no group reaches both (a + r <= stride). Every
    block of every case in one flat array, each case's worst picked by one sort (a loop over the cases, 7,104 of up
    to 4,096 blocks, had taken about a tenth of `plan train` over 30 chips)."""
    case = np.repeat(np.arange(size.size), blocks)  # each block's case
    k = np.arange(case.size, dtype=np.int64) - np.repeat(np.cumsum(blocks) - blocks, blocks)  # its index in the case
    size, stride = size[case], stride[case]
    block = size * stride
    o = k * block % d
    a = np.minimum(block, d - o)
    mid, r = np.divmod(block - a, d)
    n_out = 1 + mid + (r > 0) - ((a < stride) & (r > 0) & (a + r <= stride))
    least = np.minimum(a, np.minimum(np.where(mid > 0, d, block), np.where(r > 0, r, block)))
    most = np.maximum(a, np.maximum(np.where(mid > 0, d, 0), r))
    small = np.where(n_out == 1, size, np.maximum(least // stride, 1))
    large = np.where(n_out == 1, size, np.minimum(-(-most // stride), size - small))
    order = np.lexsort((-large, small, -n_out, case))  # by case: most domains, then the smallest part, the largest
    worst = order[np.searchsorted(case[order], np.arange(blocks.size))]  # each case's first
    return small[worst], large[worst], n_out[worst]


def _mesh(topo: Topology) -> tuple[int, int] | None:
    """(chips, ranks per chip) of a full-mesh scale-up domain (None: switched, torus or PCIe)."""
    dims = topo.up_dims
    if topo.up_kind != "mesh" or len(dims) != 1 or dims[0] <= 1:
        return None
    return dims[0], topo.cores


def _member_chips(n_in: IntArray, stride: IntArray | int, cores: int) -> Array:
    """Chips that `n_in` ranks `stride` apart span, first to last, `cores` ranks a chip: 8 consecutive Trainium2
    ranks are 2 chips, 8 ranks 4 apart are 8, 2 GPUs 4 apart span 5 (of which they sit on 2)."""
    n = np.maximum(np.asarray(n_in, dtype=np.float64), 1.0)
    return np.asarray(np.floor((n - 1.0) * np.asarray(stride, dtype=np.float64) / cores) + 1.0, dtype=np.float64)


def _link_fraction(n_in: IntArray, topo: Topology, stride: IntArray | int = 1) -> Array:
    """Share of a rank's scale-up bandwidth a group of `n_in` members `stride` ranks apart inside one domain
    drives: on a torus the dimensions its chips span (the torus joins chips, not ranks: TP8 on Trainium2 is 2
    chips of one row, one dimension of links); on a full mesh the links to its own member chips; on a switched
    fabric all of it."""
    mesh = _mesh(topo)
    if mesh is not None:
        size, cores = mesh
        # the chips the members sit on, not the span: GPUs 0 and 4 share one link, not the four to GPUs 1-4 (a TP4 DP2
        # all-reduce had been priced 4 times too fast); each member is a chip of its own once it spans them
        chips = np.minimum(np.maximum(np.asarray(n_in, dtype=np.float64), 1.0), _member_chips(n_in, stride, cores))
        # a lone member sends nothing inside the domain; its one link keeps the rate finite
        return np.asarray(np.clip(np.maximum(chips - 1.0, 1.0) / (size - 1), 0.0, 1.0), dtype=np.float64)
    dims = np.asarray(topo.up_dims, dtype=np.int64)
    if topo.up_kind != "torus" or dims.size <= 1:
        return np.ones(np.shape(n_in))
    low, high = _spanned_dims(n_in, topo, stride)
    cum = np.concatenate(([0.0], np.cumsum(_dim_shares(topo))))
    spanned = cum[high + 1] - cum[low]
    return np.asarray(spanned * np.ones(np.shape(n_in)), dtype=np.float64)


def _dim_shares(topo: Topology) -> Array:
    """Each torus dimension's share of the chip's links: its own bandwidth where the catalog gives one, else an even
    split."""
    dims = len(topo.up_dims)
    share = np.asarray(topo.up_dim_bandwidth, dtype=np.float64) if topo.up_dim_bandwidth else np.ones(dims)
    return np.asarray(share / share.sum(), dtype=np.float64)


def _spanned_dims(n_in: IntArray, topo: Topology, stride: IntArray | int = 1) -> tuple[IntArray, IntArray]:
    """(lowest, highest) torus dimension whose links a group of `n_in` members `stride` ranks apart drives, laid out
    dimension 0 fastest (_torus_extents)."""
    dims = np.asarray(topo.up_dims, dtype=np.int64)
    chips = _member_chips(n_in, stride, topo.cores)
    top = np.minimum(np.searchsorted(np.cumprod(dims), chips, side="left"), dims.size - 1)
    # members a whole number of lower-dimension blocks apart use none of those dimensions' links: data parallelism
    # across the four instances of a Trn2 UltraServer (stride 16 chips) rides the inter-instance ring alone
    block = topo.cores * np.cumprod(dims)[:-1]  # ranks in one block of dimensions 0..k, k < D - 1
    low = np.sum(np.remainder(np.asarray(stride, dtype=np.int64)[..., None], block) == 0, axis=-1)
    return np.asarray(low, dtype=np.int64), np.asarray(np.maximum(top, low), dtype=np.int64)


def _send_fraction(stride: IntArray, topo: Topology) -> Array:
    """Share of a rank's scale-up bandwidth a send to the rank `stride` away drives. On a torus one link: a dimension
    joins a chip to two neighbours, one each way, and a ring collective drives both, a send one; across several
    dimensions it crosses one link of each, paced by the slowest, min over the spanned d of share_d / 2. A v5p
    stage hand-off had taken its dimension's two links, 184 GB/s, where one ICI link reaches 92 (fabrics.yaml
    tpu-ici-v5p: 100 GB/s a link a direction, 92 measured). Elsewhere a pair's _link_fraction: a full mesh's one
    link to that chip, a switched fabric's all. Flows that share links past one hop (every rank sending `stride`
    chips along a ring) are not charged: the dimension-0-first layout (_torus_extents) that would count the hops is
    an estimate, where a framework's device mesh puts neighbouring stages on neighbouring chips."""
    pair = np.full(np.shape(stride), 2)
    if topo.up_kind != "torus":
        return _link_fraction(pair, topo, stride)
    low, high = _spanned_dims(pair, topo, stride)
    dim = np.arange(len(topo.up_dims))
    spanned = (dim >= low[..., None]) & (dim <= high[..., None])
    return np.asarray(np.min(np.where(spanned, _dim_shares(topo) / 2.0, np.inf), axis=-1), dtype=np.float64)


def _torus_extents(n_in: IntArray, stride: IntArray, topo: Topology) -> Array:
    """Distinct coordinates the chips of `n_in` ranks `stride` apart take along each torus dimension (shape
    n_in.shape + (D,)), laid out as _link_fraction lays them: dimension 0 fastest, from a domain's first chip. 32
    consecutive chips of a 16 x 16 x 24 v5p pod are (16, 2, 1); 16 chips 16 apart (1, 16) of a 16 x 16 v5e. Worked
    out once per distinct (n_in, stride)."""
    dims = tuple(int(d) for d in topo.up_dims)
    cores = topo.cores
    n, st = np.broadcast_arrays(np.maximum(_as_int(n_in), 1), np.maximum(_as_int(stride), 1))
    flat_n, flat_st = n.ravel(), st.ravel()
    inverse, first = factorize(flat_n, flat_st)
    extents = np.ones((first.size, len(dims)))
    for row, i in enumerate(first):
        chips = np.unique(np.arange(flat_n[i], dtype=np.int64) * flat_st[i] // cores) % math.prod(dims)
        coords = np.unravel_index(chips, dims, order="F")
        extents[row] = [np.unique(c).size for c in coords]
    return np.asarray(extents[inverse].reshape((*n.shape, len(dims))), dtype=np.float64)


def _in_domain_steps_and_hops(n_in: IntArray, stride: IntArray, topo: Topology, bw_in: Array) -> tuple[Array, Array]:
    """(latency steps of a reduce-scatter inside the scale-up domain, factor on the all-to-all's ring bandwidth term).

    Steps: on a torus, a ring along each dimension the group spans in turn, sum (n_d - 1) over them (jax-ml/
    scaling-book sharding.md, "What happens when we AllGather over multiple axes?": T_min sum |X_i| / 2 for
    bidirectional rings; one direction here, as in the ring formulas above); on a switched or full-mesh domain the
    tree-like steps(n_in) of the scale-out tier, as NCCL picks NVLS/trees for long rings (a 72-GPU NVL72 ring had
    paid 71 steps, 142 us for a 1 KiB all-reduce, more than the same 72 GPUs as 36 x 2 across two racks). The two
    agree at 8 ranks and below.
    Hops: an all-to-all on a torus is bound by the hops data travels, not by the chip's links alone: per rank
    S max_d n_d / (4 W_d), W_d the two links of dimension d (sharding.md, "Our final communication primitive: the
    AllToAll", V max(A, B, C) / (4 N W_ici), W_ici bidirectional; the bisection bound gives the same). The factor
    is that time over the crossbar's (n_in - 1)/n_in S / B_in, at least 1; 1 on a switched or full-mesh domain. It
    takes every dimension spanned to wrap around, as whole dimensions and v4/v5p slices do, and strided members to
    sit next to each other: optimistic for a group covering part of a ring. With the dimension-0-first placement
    (_torus_extents) a partial v4/v5p group is a line rather than the near-cubic slice its scheduler gives it, so
    its hop factor is pessimistic there (64 v5p chips 16 x 4 x 1: x8.1 where 4 x 4 x 4 gives about x3; DeepSeek-V3
    at EP64 on 1,024 v5p reads 18% slower than a cubic slice would); whole pods are exact."""
    nin = np.maximum(np.asarray(n_in, dtype=np.float64), 1.0)
    if topo.up_kind != "torus":
        return _steps(n_in), np.ones(np.shape(nin))
    ext = _torus_extents(n_in, stride, topo)
    # and a ring through the members on each chip (a Trn2 chip's four ranks): TP4 on one chip keeps its 3 steps; never
    # more than the flat ring's n - 1 (members a stride of 3 apart spread over more coordinates than they number)
    steps = np.minimum(np.sum(ext - 1.0, axis=-1) + np.ceil(nin / np.prod(ext, axis=-1)) - 1.0, nin - 1.0)
    dims = len(topo.up_dims)
    share = np.asarray(topo.up_dim_bandwidth, dtype=np.float64) if topo.up_dim_bandwidth else np.ones(dims)
    w_dim = topo.up_bandwidth * topo.up_efficiency * share / share.sum()  # one dimension's links, per rank
    book = np.max(np.where(ext > 1.0, ext / (4.0 * w_dim), 0.0), axis=-1)
    crossbar = (nin - 1.0) / nin / bw_in
    hops = np.where(nin > 1.0, np.maximum(book / np.where(nin > 1.0, crossbar, 1.0), 1.0), 1.0)
    return np.asarray(steps, dtype=np.float64), np.asarray(hops, dtype=np.float64)


def _bw_in(n_in: IntArray, topo: Topology, stride: IntArray | int = 1, send: bool = False) -> Array:
    """Achievable scale-up bandwidth of one rank in a group of `n_in` members `stride` apart (bytes/s, per
    direction): B_in = up_bandwidth x up_efficiency x _link_fraction. The efficiency is the fabric's measured
    busbw fraction (docs/research/efficiency-evidence.md s.4a). A group whose members all sit on one chip (TP4 on
    a Trainium2, 4 cores a chip) talks through the chip's own memory at topo.on_chip_bandwidth instead: it had
    been priced at one NeuronLink dimension's share, as a TP8 group across two chips is. `send`: a pair's one-way send
    (_send_fraction), not a collective's."""
    fraction = _send_fraction(_as_int(stride), topo) if send else _link_fraction(n_in, topo, stride)
    links = topo.up_bandwidth * topo.up_efficiency * fraction
    if topo.on_chip_bandwidth <= 0.0:
        return links
    # every group of the block on one chip: the block tiles the chip's cores (TP3 on a 4-core Trainium has groups at
    # ranks 3-5 and 6-8 across two chips, which had been priced at the on-chip rate)
    block = np.maximum(np.asarray(n_in, dtype=np.int64), 1) * np.maximum(_as_int(stride), 1)
    one_chip = topo.cores % block == 0
    return np.asarray(np.where(one_chip, topo.on_chip_bandwidth, links), dtype=np.float64)


def _bw_out(size: IntArray, stride: IntArray, topo: Topology, ring: IntArray | None = None) -> Array:
    """Achievable scale-out bandwidth of one rank in a group of `size` ranks `stride` apart (bytes/s, per direction):
    B_out = out_bandwidth x out_efficiency / max(1, o_t f_t over the oversubscribed Clos tiers t whose reach R_t (in
    ranks) size x stride exceeds). The efficiency is the fabric's measured busbw fraction
    (docs/research/efficiency-evidence.md s.4b). f_t is the share of a rank's network traffic that leaves its block
    of R_t ranks: the block's uplinks carry R_t b / o_t (b the NIC's achievable rate), and its R_t ranks, all in like
    groups at once, send R_t B_out f_t through them. For a ring of `ring` members (the inter-domain ring of a
    hierarchical collective, one rank a domain) laid out block by block over p = ceil(size x stride / R_t) blocks, p
    of its edges cross: f_t = min(1, p / ring). Without `ring` (an all-to-all, a lone send) all of the traffic is
    taken to cross, f_t = 1: an estimate, as a uniform all-to-all over p blocks sends (p - 1) / p of it across. The
    ring's share had been 1 too: DP385 at stride 8 over 3,072-rank blocks at 7:1 (Grand Teton, Llama 3.1 405B TP8
    PP16) had priced all of its traffic on the uplinks, its all-reduce 7 times slower than DP384's (dp_comm 2.409 s
    against 0.344 s); 2 of its 385 edges cross, f = 0.005, and it now reads 0.344 s."""
    span = size * np.maximum(stride, 1)
    members = np.maximum(np.asarray(size if ring is None else ring, dtype=np.float64), 1.0)
    over = np.ones(np.shape(span))
    for reach, oversub in topo.out_tiers:
        if oversub != 1.0:
            blocks = np.ceil(span / reach)
            share = np.where(blocks > 1.0, 1.0 if ring is None else np.minimum(1.0, blocks / members), 0.0)
            over = np.maximum(over, oversub * share)
    return np.asarray(topo.out_bandwidth * topo.out_efficiency / over, dtype=np.float64)


def _steps(n: IntArray) -> Array:
    """Latency steps of half an all-reduce inside a domain, over a ring, or over a tree once rings get long: n - 1
    for n <= 8, else min(n - 1, 2 ceil(log2 n)). The tree's step count stands for NCCL's NVLS and trees inside a
    domain (_in_domain_steps_and_hops), which it has for all-reduce alone (_gather_steps); the switch at 8 members is
    an estimate. The network's half is _tree_steps."""
    n = np.maximum(n, 1).astype(np.float64)
    tree = 2.0 * np.frexp(n - 1.0)[1]  # 2 ceil(log2 n) for n > 1
    return np.asarray(np.where(n > 8, np.minimum(n - 1.0, tree), n - 1.0), dtype=np.float64)


def _tree_steps(n_out: IntArray) -> Array:
    """Network latency steps of half an all-reduce over `n_out` domains: floor(log2 n_out), the depth NCCL's tuning
    model (src/graph/tuning.cc) charges its tree, 2 ((nRanks / nNodes - 1) intraLat + log2i(nNodes) interLat) for the
    whole all-reduce, whose latency is no more than the ring's 2 (nNodes - 1) network steps for any nNodes, as NCCL
    picks it for the small all-reduces the latency term matters to. It had taken _steps, n_out - 1 to 8 domains and
    2 ceil(log2 n_out) past them, twice the tree's depth: an all-reduce over 512 H100s on 64 p5 nodes had read 254 us
    of latency (2 x (7 x 1 + 12 x 10) us); it now reads 134 us (2 x (7 x 1 + 6 x 10) us)."""
    n = np.maximum(np.asarray(n_out, dtype=np.float64), 1.0)
    return np.asarray(np.frexp(n)[1] - 1.0, dtype=np.float64)  # floor(log2 n)


def _gather_steps(size: IntArray, n_out: IntArray, steps_in: Array, topo: Topology) -> tuple[Array, Array]:
    """(inside a domain, on the network) latency steps of a reduce-scatter or all-gather over `size` ranks on
    `n_out` domains: a ring's, as NCCL's tuning model (src/graph/tuning.cc) charges it, nRanks - 1 steps of which
    nNodes - 1 on the network and nRanks - nNodes inside a switched or full-mesh domain where the group spans domains
    (NVLS, which runs them at one step's latency, only within one node). A group inside one domain keeps steps_in
    (_in_domain_steps_and_hops, NVLS there); a torus's steps_in are rings already. They had taken the all-reduce's
    tree count, 2 ceil(log2 n_out) on the network: an all-gather over 7,282 NVL72 racks (TP4 DP131072 on GB200) had
    read 0.14 ms of latency; it then read 36.4 ms (7,281 x 5 us, and 17 x 1 us on NVLink). Inside the domains they
    had then taken one domain's ring, N - 1, where the flat ring steps through every domain's members: 512 H100s on
    64 p5 nodes had read 637 us (7 x 1 + 63 x 10); they now read 1,078 us (448 x 1 + 63 x 10), and 4,608 GB200s on
    64 NVL72 racks 4,859 us (4,544 x 1 + 63 x 5), where they had read 386 us."""
    spans = np.asarray(n_out) > 1
    ring_in = np.maximum(np.asarray(size, dtype=np.float64) - np.asarray(n_out, dtype=np.float64), 0.0)
    inside = np.where(spans & (topo.up_kind != "torus"), ring_in, steps_in)
    return np.asarray(inside, dtype=np.float64), np.maximum(np.asarray(n_out, dtype=np.float64), 1.0) - 1.0


@dataclass(frozen=True)
class Group:
    """A communication group for every plan, with its costs reduced to t = bytes x slope + intercept.

    reduce-scatter / all-gather: slope_rs = (N-1)/N / B_in + (n_out-1)/n_out / (n_in B_ring),
                                 intercept_rs = k_ring alpha_in + (n_out - 1) alpha_out          (rings)
    all-reduce = 2 (S slope_rs + intercept_ar), intercept_ar = k_in alpha_in + log2i(n_out) alpha_out (trees);
    moe_dispatch reads bw_in, bw_out, steps_in and a2a_hops itself.
    N and n_in: the largest and smallest of the group's parts in one domain (place_group; equal where they divide
    it). Each term is the slower part's: the scale-up terms (B_in, k_in, h) the largest part's, the network terms
    the smallest part's, whose ranks each carry a larger shard.
    k_in (steps_in) and h (a2a_hops): _in_domain_steps_and_hops; steps(N) and 1 on a switched domain. k_ring:
    _gather_steps. B_ring: _bw_out for the inter-domain ring of n_out members; bw_out, an all-to-all's, with all of
    its traffic on the uplinks of every oversubscribed tier the group spans.
    """

    size: IntArray
    n_in: IntArray
    n_out: IntArray
    bw_in: Array
    bw_out: Array
    slope_rs: Array
    intercept_rs: Array
    intercept_ar: Array
    steps_in: Array
    a2a_hops: Array


def group(size: IntArray | int, stride: IntArray | int, topo: Topology, ranks: IntArray | int | None = None) -> Group:
    """Place a group of `size` ranks, `stride` apart, on the topology, once; price its collectives cheaply. `ranks`,
    the job's rank count where known, limits the placements to its blocks' (place_group)."""
    size, stride = _as_int(size), np.maximum(_as_int(stride), 1)
    if size.ndim == 1 and size.size > FACTORIZE_MIN_ROWS:
        size, stride, jobs = np.broadcast_arrays(size, stride, _as_int(0 if ranks is None else ranks))
        inverse, first = factorize(size, stride, jobs)
        return PerRow(group(size[first], stride[first], topo, None if ranks is None else jobs[first]), inverse)
    if not np.any(size > 1):  # nothing to communicate (e.g. no expert parallelism in any plan)
        zero, one = np.zeros(np.shape(size)), np.ones(np.shape(size), dtype=np.int64)
        up, out = zero + topo.up_bandwidth, zero + topo.out_bandwidth
        return Group(size, one, one, up, out, zero, zero, zero, zero, zero + 1.0)
    n_in, big, n_out = place_group(size, stride, topo, ranks)
    bw_in, bw_out = _bw_in(big, topo, stride), _bw_out(size, stride, topo)
    bw_ring = _bw_out(size, stride, topo, n_out)
    active = size > 1
    nin, nout = n_in.astype(np.float64), n_out.astype(np.float64)
    nbig = big.astype(np.float64)
    steps_in, hops = _in_domain_steps_and_hops(big, stride, topo, bw_in)
    slope_rs = (nbig - 1.0) / nbig / bw_in + (nout - 1.0) / nout / (nin * bw_ring)
    ring_in, ring_out = _gather_steps(size, n_out, steps_in, topo)
    intercept_rs = ring_in * topo.up_latency + ring_out * topo.out_latency
    intercept_ar = steps_in * topo.up_latency + _tree_steps(n_out) * topo.out_latency
    zero = np.zeros(np.shape(size))
    return Group(
        size=size,
        n_in=n_in,
        n_out=n_out,
        bw_in=bw_in,
        bw_out=bw_out,
        slope_rs=np.where(active, slope_rs, zero),
        intercept_rs=np.where(active, intercept_rs, zero),
        intercept_ar=np.where(active, intercept_ar, zero),
        steps_in=np.where(active, steps_in, zero),
        a2a_hops=np.where(active, hops, zero + 1.0),
    )


class PerRow(Group):
    """A group placed once per distinct row (its size, stride and ranks) and read for every row, row i being
    distinct's row inverse[i]: each field gathered on first use (a data-parallel step reads three of the ten;
    gathering all of them had taken a quarter of the training search's time)."""

    _distinct: Group
    _inverse: IntArray

    def __init__(self, distinct: Group, inverse: IntArray) -> None:
        object.__setattr__(self, "_distinct", distinct)
        object.__setattr__(self, "_inverse", inverse)

    def __getattr__(self, name: str) -> Array:
        if name.startswith("_"):
            raise AttributeError(name)
        value = np.asarray(getattr(self._distinct, name))[self._inverse]
        object.__setattr__(self, name, value)
        return value


def _g(size: IntArray | int | Group, stride: IntArray | int, topo: Topology | None) -> Group:
    if isinstance(size, Group):
        return size
    assert topo is not None
    return group(size, stride, topo)


def all_reduce(
    nbytes: Array | float, size: IntArray | int | Group, stride: IntArray | int = 1, topo: Topology | None = None
) -> Array:
    """All-reduce of `nbytes` per rank over a group (given as a Group, or as size, stride and topology):
    t = 2 (S slope_rs + intercept_ar), flat 2 (n-1)/n S / B + 2 (n-1) alpha (Thakur, Rabenseifner & Gropp 2005), a
    tree's step count for long groups (Group)."""
    g = _g(size, stride, topo)
    return np.asarray(2.0 * (np.asarray(nbytes) * g.slope_rs + g.intercept_ar), dtype=np.float64)


def reduce_scatter(
    nbytes: Array | float, size: IntArray | int | Group, stride: IntArray | int = 1, topo: Topology | None = None
) -> Array:
    """Reduce-scatter of a buffer of `nbytes` per rank (the same cost as the all-gather that undoes it):
    t = S slope_rs + intercept_rs, flat (n-1)/n S / B + (n-1) alpha (Thakur, Rabenseifner & Gropp 2005)."""
    g = _g(size, stride, topo)
    return np.asarray(np.asarray(nbytes) * g.slope_rs + g.intercept_rs, dtype=np.float64)


all_gather = reduce_scatter


def p2p(
    nbytes: Array | float,
    stride: IntArray | int,
    topo: Topology,
    members: IntArray | int = 2,
    ranks: IntArray | int | None = None,
) -> Array:
    """Point-to-point send of `nbytes` to the rank `stride` ranks away, in a ring of `members` ranks (the `stride`
    rings side by side filling a block of B = stride x members ranks, blocks packed one after another as
    place_group packs them), all its members sending at once: the slowest hop, which paces the step. Every ring
    stays inside one scale-up domain only if the blocks tile it, D % B == 0; else a block straddles two domains at
    some offset and a ring of it has a hop across the network, though the stride be small. A TP8 CP4 ring on
    NVL72 racks (B = 32 of 72: ranks 64-95 over two racks) had been priced on NVLink for fitting by size.
    t = S / B_in + alpha_up inside a domain, S / B_out + alpha_out across it, B_out slowed by the Clos tiers a
    two-member group at this stride crosses (_bw_out; the alpha-beta model of Thakur, Rabenseifner & Gropp 2005 for
    one message). `ranks`, the job's, counts only its own blocks (place_group): TP8 CP4 DP2 on 64 GB200s is ranks
    0-63 of one rack, where every offset had put its ring across two (cp_comm 2.7 s of a 33 s step, not 0)."""
    stride = np.maximum(_as_int(stride), 1)
    inside = place_group(np.maximum(_as_int(members), 1), stride, topo, ranks)[2] == 1
    t_up, t_out = _send_times(nbytes, stride, topo)
    return np.asarray(np.where(inside, t_up, t_out), dtype=np.float64)


def pipeline_send(nbytes: Array | float, stride: IntArray | int, topo: Topology, stages: IntArray | int) -> Array:
    """A pipeline hand-off of `nbytes` to the next of `stages` stages `stride` ranks apart, averaged over the two a
    stage exchanges with its neighbours (activations on, gradients back) at the stage that pays the most. The
    pipeline is one block of stride x stages ranks from a domain's first rank (a training job's every rank, or one
    serving replica), so all stages in one domain hand off on the scale-up fabric. A stage of `stride` ranks
    straddles a domain's edge unless the stride divides the domain's D ranks; one that does sends both ways across
    the network, as does every stage where a domain holds one at most; else a stage at a domain's edge has one
    neighbour across the network, one beside it. TP1 PP16 on 8-GPU nodes: stage 7 swaps with stage 8 over the NIC
    (it had all been priced on NVLink, the stride 1 being under the 8). TP4 CP4 PP16 on NVL72 racks: stage 4
    (ranks 64-79) is 8 + 8 over two racks, both its hand-offs on the network (they had been half on NVLink).
    t = t_up inside one domain, t_out with one stage a domain or a stage across an edge, else (t_up + t_out) / 2,
    each S / B + alpha (p2p's, with B_out slowed by the ranks whose hand-off crosses an oversubscribed tier's block
    edge, _bw_hand_off); the average at a domain's edge is an estimate."""
    stride = np.maximum(_as_int(stride), 1)
    inside = stride * np.maximum(_as_int(stages), 1) <= topo.domain_ranks
    t_up, t_out = _send_times(nbytes, stride, topo, stages)
    beside = (topo.domain_ranks // stride >= 2) & (topo.domain_ranks % stride == 0)
    edge = np.where(beside, 0.5 * (t_up + t_out), t_out)
    return np.asarray(np.where(inside, t_up, edge), dtype=np.float64)


def _send_times(
    nbytes: Array | float, stride: IntArray, topo: Topology, stages: IntArray | int | None = None
) -> tuple[Array, Array]:
    """(on the scale-up fabric, over the network) of a send of `nbytes` to the rank `stride` ranks away; `stages`, a
    pipeline's, where every rank of its stride x stages hands off at once (_bw_hand_off)."""
    s = np.asarray(nbytes, dtype=np.float64)
    # the links a send at that stride drives (_send_fraction): on a full mesh the one link to that chip, on a torus
    # one link of the dimensions between the two (a Trn2 UltraServer's inter-instance ring), on a switched fabric all
    pair = np.full(np.shape(stride), 2)
    t_up = s / _bw_in(pair, topo, stride, send=True) + topo.up_latency
    # and the Clos tiers a two-member group at that stride crosses (_bw_out): a pipeline hand-off between pods of a 7:1
    # fabric had run at the NIC's full rate, 7 times faster than the all-gather between the same two ranks
    bw_out = _bw_out(pair, stride, topo) if stages is None else _bw_hand_off(stride, stages, topo)
    t_out = s / bw_out + topo.out_latency
    return np.asarray(t_up, dtype=np.float64), np.asarray(t_out, dtype=np.float64)


def _bw_hand_off(stride: IntArray, stages: IntArray | int, topo: Topology) -> Array:
    """Achievable scale-out bandwidth of a pipeline hand-off (bytes/s, per direction) among `stages` stages `stride`
    ranks apart, laid out from rank 0 over L = stride x stages ranks: _bw_out's B_out / max(1, o_t f_t), f_t the share
    of a block's R_t ranks whose hand-off leaves it, all handing off at once. Rank r sends to r + stride, so at a block
    edge E the ranks r in [E - stride, E) cross it while r + stride < L: min(stride, L - R_t) of them at the busiest
    edge (stride where an edge lies at least a stage from the pipeline's end), f_t = min(1, max(0, min(stride, L -
    R_t)) / R_t). A two-member group's crossing (_bw_out) had charged all or nothing by the pair's span alone, 2 x
    stride against R_t: 16 stages 1,536 ranks apart on Grand Teton (3,072-GPU pods at 7:1) send stage 1 to 2 across
    the pod edge, half of a pod's ranks at once on its uplinks of 3,072 b / 7, and had read 0.845 ms a 32 MiB
    hand-off, the NIC's rate, as at stride 1,024; they now read 2.942 ms (f = 1/2, x 3.5) and 1.963 ms at
    stride 1,024 (f = 1/3, x 7/3: stage 2 to 3 crosses too); 2,048 apart, where 2 x stride passed the pod and all had
    been charged (5.878 ms), 3.921 ms (f = 2/3). An estimate: both ways of a stage's hand-offs are taken
    to run at different times (1F1B alternates them), and a schedule that orders the stages inside the pods (Meta's
    Llama 3 puts PP inside DP) is not modelled."""
    stride = np.maximum(np.asarray(stride, dtype=np.float64), 1.0)
    span = stride * np.maximum(np.asarray(stages, dtype=np.float64), 1.0)
    over = np.ones(np.shape(span))
    for reach, oversub in topo.out_tiers:
        if oversub != 1.0:
            share = np.minimum(1.0, np.clip(span - reach, 0.0, stride) / reach)
            over = np.maximum(over, oversub * share)
    return np.asarray(topo.out_bandwidth * topo.out_efficiency / over, dtype=np.float64)


def between(senders: int, receivers: int, topo: Topology) -> float:
    """Scale-up bandwidth (bytes/s, achievable) from `senders` ranks to `receivers` other ranks of one domain, each
    end sharing the data evenly: the smaller end's links on a switched fabric or a torus; on a full mesh the
    direct links joining the two sets, senders x receivers links of a chip's N - 1.
    B = up_bandwidth up_efficiency min(senders, receivers); on a mesh B = up_bandwidth up_efficiency cores
    min(ceil(s / cores) ceil(r / cores) / (N - 1), min(s, r) / cores). An estimate: no measured transfer between
    two sets of ranks stands behind it."""
    rate = topo.up_bandwidth * topo.up_efficiency
    mesh = _mesh(topo)
    if mesh is not None:
        size, cores = mesh  # a chip's links serve its ranks together
        links = math.ceil(senders / cores) * math.ceil(receivers / cores) / (size - 1)
        return rate * cores * min(links, min(senders, receivers) / cores)
    return rate * min(senders, receivers)


def moe_dispatch(token_bytes: Array | float, top_k: int, size: IntArray | int | Group, topo: Topology) -> Array:
    """Send each of a rank's tokens (`token_bytes` in all) to its top_k experts spread over `size` consecutive
    ranks: once per remote scale-up domain over the network, then fanned out inside the domain (node-limited,
    deduplicated dispatch as in DeepEP and DeepSeek-V3). With experts uniformly spread over D domains a token
    reaches (D - 1)(1 - (1 - 1/D)^k) remote domains on average; its k copies cross the scale-up fabric, as an
    all-to-all does: on a torus over the hops of the group's a2a_hops (_in_domain_steps_and_hops)."""
    g = _g(size, 1, topo)
    s = np.asarray(token_bytes, dtype=np.float64)
    d = g.n_out.astype(np.float64)
    remote = np.where(d > 1, (d - 1.0) * (1.0 - (1.0 - 1.0 / np.maximum(d, 1.0)) ** top_k), 0.0)
    local = top_k * (1.0 - 1.0 / np.maximum(g.size, 1))
    t_in = s * local * g.a2a_hops / g.bw_in + g.steps_in * topo.up_latency
    t_out = s * remote / g.bw_out + (g.n_out - 1) * topo.out_latency
    return np.asarray(np.where(g.size > 1, t_in + t_out, 0.0), dtype=np.float64)
