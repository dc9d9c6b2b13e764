"""Data-parallel groups: who shares the expert parameters, and what their gradient collectives cost."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.data_parallel import dp_time, shards
from chipwise.train.plans import from_dicts


def test_tensor_split_experts_are_shared_by_the_data_parallel_ranks_tp_apart(hw: Hardware) -> None:
    """Mixtral-style experts tensor-split over TP8 with no expert parallelism, DP16 on 128 H100s: each expert slice
    is replicated over the 16 data-parallel ranks, 8 apart (Megatron's expert-DP, world / (pp ep etp)), as with EP8;
    it had been 128 consecutive ranks, so ZeRO split the expert state 128 ways and the gradients mostly stayed on
    NVLink. At 8 ranks a node, the 16-rank group is all network: 2 x (15/16 x 2E / B_out + 8 alpha_out) for the
    reduce-scatter and all-gather of E expert parameters, the dense group being the same."""
    system = hw.system("p5.48xlarge")
    topo = topology_of(system)
    plans = from_dicts([{"tp": 8, "pp": 1, "dp": 16, "ep": ep, "zero": 1, "recompute": "full"} for ep in (1, 8)])
    sh = shards(plans, topo)
    assert sh.expert.tolist() == [16, 16] and sh.zero_expert.tolist() == [16, 16]
    assert sh.expert_stride.tolist() == [8, 8]
    e, zero = 5.64e9, np.zeros(1)
    exposed, _ = dp_time(
        zero,
        np.array([e]),
        plans.take(np.array([0])),
        topo,
        device_of(system),
        np.ones(1),
        zero,
        zero,
        zero,
        32,
        True,
        2.0,
        "bf16",
    )
    b_out, alpha = topo.out_bandwidth * topo.out_efficiency, topo.out_latency
    expected = 2 * (15 / 16 * 2 * e / b_out + 8 * alpha) + 2 * 8 * alpha
    assert float(exposed[0]) == pytest.approx(expected)
