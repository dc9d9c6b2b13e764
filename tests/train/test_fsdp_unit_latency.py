"""FSDP (ZeRO-3) gathers and reduce-scatters every layer as a collective of its own, each paying the group's latency:
one latency for a rank's whole weights had priced 131,072-way FSDP almost free."""

from __future__ import annotations

import numpy as np
import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.device import device_of, topology_of
from chipwise.train.data_parallel import dp_time
from chipwise.train.plans import from_dicts
from chipwise.workload import load_model

B_IN, B_OUT = 450e9 * 0.82, 50e9 * 0.8  # p5.48xlarge: NVLink 4 and EFA at their busbw fractions
A_IN, A_OUT = 1e-6, 10e-6


def _exposed(catalog: Catalog, hw: Hardware, plan: dict[str, object]) -> float:
    """Llama-3.1-8B's data-parallel time on p5 hosts over 32 layers, one micro-batch, nothing to hide behind."""
    system = hw.system("p5.48xlarge")
    d = float(load_model(catalog, "llama-3.1-8b").dense_params)
    z = np.zeros(1)
    plans = from_dicts([{"tp": 1, "microbatch": 1, "recompute": "none", **plan}])
    topo, dev = topology_of(system), device_of(system)
    t, _ = dp_time(np.array([d]), z, plans, topo, dev, np.ones(1), z, z, z, 32, True, 2.0, "bf16")
    return float(t[0])


def test_fsdp_pays_the_latency_of_every_layer_by_hand(catalog: Catalog, hw: Hardware) -> None:
    """DP16 over two p5 hosts: a reduce-scatter or all-gather of S bytes is S (7/8 / B_in + 1/2 / (8 B_out)) and a
    latency of 14 NVLink steps and one network step, 24 us (re-pinned from one node's 7 NVLink steps, 17 us: NCCL's
    tuning.cc steps the ring through every member, nRanks - nNodes of them inside the nodes). ZeRO-3 at 32 layers: 2
    gathers and a reduce-scatter of each layer, 3 x 32 latencies (3 had been charged), and the first layer's gather,
    1/32 of the bytes and a latency; ZeRO-1 one reduce-scatter and one gather a step, as before."""
    d = float(load_model(catalog, "llama-3.1-8b").dense_params)
    lat = 14 * A_IN + A_OUT
    one = 2 * d * (7 / 8 / B_IN + 1 / 2 / (8 * B_OUT)) + lat
    fsdp = 3 * one + 3 * 31 * lat + (one - lat) / 32 + lat
    assert _exposed(catalog, hw, {"pp": 1, "dp": 16, "zero": 3}) == pytest.approx(fsdp, rel=1e-9)
    assert _exposed(catalog, hw, {"pp": 1, "dp": 16, "zero": 1}) == pytest.approx(2 * one, rel=1e-9)


def test_fsdp_with_a_pipeline_gathers_each_layer_of_its_stage_once_a_step(catalog: Catalog, hw: Hardware) -> None:
    """PP4 DP16: a stage holds 8 of the 32 layers, gathered once a step and reduce-scattered once (torchtitan's FSDP
    with pipelining): 8 latencies each, where one had been charged."""
    d = float(load_model(catalog, "llama-3.1-8b").dense_params)
    lat = 14 * A_IN + A_OUT
    one = 2 * d * (7 / 8 / B_IN + 1 / 2 / (8 * B_OUT)) + lat
    assert _exposed(catalog, hw, {"pp": 4, "dp": 16, "zero": 3}) == pytest.approx(2 * (one + 7 * lat), rel=1e-9)


def test_131072_way_fsdp_of_llama_405b_on_gb200_pays_378_ring_latencies(catalog: Catalog, hw: Hardware) -> None:
    """TP4 DP131072 on 524,288 GB200, one micro-batch of 2.85 s: 126 layers' 3 collectives over 7,282 racks, each
    7,281 network steps of 5 us and 131,072 - 7,282 = 123,790 NVLink steps of 1 us (160.2 ms), 60.55 s of latency
    beside the 3 x 0.589 s of bytes; the 0.9276 overlap hides 2.64 s of it and the first layer's gather shows: 59.84 s
    exposed. It had read 0.0047 s (one latency for all 126 layers), and plan train chose this plan at 2.92 s a step;
    then 12.93 s, with one rack's 17 NVLink steps a ring (re-pinned: NCCL's tuning.cc, nRanks - nNodes of them)."""
    system = hw.system("gb200-nvl72")
    topo, dev = topology_of(system), device_of(system)
    plans = from_dicts([{"tp": 4, "pp": 1, "dp": 131072, "microbatch": 1, "zero": 3, "recompute": "none"}])
    dense = np.array([1.01463347e11])  # Llama 3.1 405B's parameters on one TP4 rank (train.memory.local_params)
    z, t_mb = np.zeros(1), np.array([2.8483])
    t, _ = dp_time(dense, z, plans, topo, dev, np.ones(1), z, z, t_mb, 126, True, 2.0, "bf16", ranks=np.array([524288]))
    lat = 7281 * 5e-6 + 123790 * 1e-6
    nbytes = 2.0 * float(dense[0]) * float(coll.group(131072, 4, topo, 524288).slope_rs)
    assert nbytes == pytest.approx(0.5886, abs=1e-4)
    expected = 3 * nbytes + 378 * lat - 0.9276 * 2.8483 + nbytes / 126 + lat
    assert float(t[0]) == pytest.approx(expected, rel=1e-9)
    assert float(t[0]) == pytest.approx(59.84, abs=0.01)


def test_plan_train_on_a_million_chips_no_longer_picks_131072_way_fsdp() -> None:
    """Llama 3.1 405B, 15T tokens, 1M chips of GB200 or H200: every pick had been plain FSDP over 131,072 ranks."""
    report = cw.plan_train("llama-3.1-405b", 1_000_000, ["gb200", "h200"], tokens=15e12)
    plans = [r["plan"] for r in report["results"]]
    assert len(plans) == 2
    assert not any(p["zero"] == 3 and not p["hsdp"] and p["dp"] == 131072 for p in plans)
