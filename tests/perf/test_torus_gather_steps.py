"""A reduce-scatter or all-gather over a group that spans several TPU slices keeps, inside each slice, the torus's
ring along each dimension, sum (n_d - 1) steps: the flat ring's N - 1 is for a switched or full-mesh domain alone
(_gather_steps)."""

from __future__ import annotations

import pytest

from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import topology_of

#: ICI 1 us a step, DCN 25 us a step (fabrics.yaml tpu-ici-v4 / -v5p, tpu-dcn)
ICI, DCN = 1e-6, 25e-6


def test_a_gather_over_two_v5p_slices_rings_each_dimension_inside_a_slice(hw: Hardware) -> None:
    """DP12288, one rank a chip, over two 16 x 16 x 24 v5p slices (6,144 chips each): inside a slice a ring along each
    dimension, 15 + 15 + 23 = 53 ICI steps, and one DCN step, 53 + 25 = 78 us. The flat ring would be 6,143 ICI steps,
    6.168 ms."""
    topo = topology_of(hw.system("tpu-v5p-pod"))
    g = coll.group(12288, 1, topo)
    assert (int(g.n_in), int(g.n_out)) == (6144, 2)
    assert float(g.intercept_rs) == pytest.approx(53 * ICI + 1 * DCN)
    assert float(coll.all_gather(0.0, 12288, 1, topo)) == pytest.approx(78e-6)
    assert float(coll.reduce_scatter(0.0, 12288, 1, topo)) == pytest.approx(78e-6)


def test_a_strided_data_parallel_group_over_two_v4_pods_keeps_its_torus_steps(hw: Hardware) -> None:
    """DP1024 at stride 8 (TP8 inside) over two 16 x 16 x 16 v4 pods: 512 members a pod, on chips 0, 8, 16, ...: 2
    coordinates along dimension 0, 16 along 1, 512 / 32 = 16 along 2, 1 + 15 + 15 = 31 ICI steps and one DCN step,
    56 us (511 + 25 = 536 us as a flat ring). An all-reduce over it keeps the same 31 in-slice steps, 2 x 56 us."""
    topo = topology_of(hw.system("tpu-v4-pod"))
    g = coll.group(1024, 8, topo)
    assert (int(g.n_in), int(g.n_out)) == (512, 2)
    assert float(g.intercept_rs) == pytest.approx(31 * ICI + 1 * DCN)
    assert float(coll.all_gather(0.0, 1024, 8, topo)) == pytest.approx(56e-6)
    assert float(coll.all_reduce(0.0, 1024, 8, topo)) == pytest.approx(2 * 56e-6)
