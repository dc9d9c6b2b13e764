"""The gradient collectives and the optimizer step follow the training precision: fp32 training reduces fp32
gradients (4 B, as memory.py holds them; they had been reduced at 2 B, half their traffic) and its Adam step has
no 16-bit copy to write (28 B a parameter; 30 had been charged at every precision)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.compute import memory_time
from chipwise.perf.device import device_of, topology_of
from chipwise.train.data_parallel import dp_time, grad_bytes, optimizer_traffic
from chipwise.train.plans import from_dicts


@pytest.mark.parametrize(("precision", "grad"), [("fp32", 4.0), ("tf32", 4.0), ("bf16", 2.0), ("fp8", 2.0)])
def test_gradient_bytes_by_precision(precision: str, grad: float) -> None:
    assert grad_bytes(precision) == grad


@pytest.mark.parametrize(
    ("precision", "weight_bytes", "traffic"),
    [
        ("fp32", 4.0, 28.0),  # read grad 4, read and write the fp32 parameter, m and v 24; no copy to write
        ("tf32", 4.0, 28.0),
        ("bf16", 2.0, 30.0),  # + write the bf16 working weight
        ("fp8", 1.0, 29.0),  # + write the fp8 working weight (fp8 parameter gather)
    ],
)
def test_optimizer_traffic_by_precision(precision: str, weight_bytes: float, traffic: float) -> None:
    assert optimizer_traffic(precision, weight_bytes) == traffic


def test_zero0_all_reduces_fp32_gradients_at_four_bytes(hw: Hardware) -> None:
    """Llama 3.2 1B's 1.236e9 parameters, ZeRO-0 DP16 on two p5 hosts, nothing hidden (empty overlap windows): the
    exposed DP time is the all-reduce, 2 x the reduce-scatter of 4 B a gradient in fp32 (2 B in bf16), and the
    optimizer moves 28 B a parameter (30 in bf16)."""
    system = hw.system("p5.48xlarge")
    topo, dev = topology_of(system), device_of(system)
    plans = from_dicts([{"tp": 1, "pp": 1, "dp": 16, "zero": 0, "recompute": "none"}])
    dense, none, one = np.array([1.236e9]), np.zeros(1), np.ones(1)
    group = coll.group(plans.dp * plans.cp, plans.tp, topo)
    out = {}
    for precision, wb in (("fp32", 4.0), ("bf16", 2.0)):
        exposed, opt = dp_time(dense, none, plans, topo, dev, one, none, none, none, 16, True, wb, precision)
        out[precision] = float(exposed[0])
        assert out[precision] == pytest.approx(
            2.0 * float(coll.reduce_scatter(dense * grad_bytes(precision), group)[0])
        )
        assert float(opt[0]) == pytest.approx(float(memory_time(1.236e9 * optimizer_traffic(precision, wb), dev, 4.0)))
    # twice the bytes: about twice the time (the collectives' latency is the same)
    assert 1.9 < out["fp32"] / out["bf16"] <= 2.0
