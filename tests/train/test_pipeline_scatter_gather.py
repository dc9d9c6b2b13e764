"""Pipeline hand-offs without sequence parallelism: each TP rank sends 1/tp of the activation and the receiver
all-gathers it over the TP group (Megatron-LM's scatter/gather default, DeepSpeed's pipe_partitioned), by hand."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.plans import from_dicts
from chipwise.train.step import StepResult, train_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

S = 2048 * 12288 * 2.0  # GPT-3 175B: one sequence's activation, fp16
SEND = S / 8 / (6.25e9 * 0.59) + 12e-6  # 1/8 of it over a p4de GPU's EFA share: 1.718 ms
GATHER = 7 / 8 * S / (300e9 * 0.77) + 7 * 1e-6  # the receiver's all-gather of it over NVLink, 7 ring steps: 0.198 ms


def _g175(catalog: Catalog, hw: Hardware, sp: bool, tp: int = 8, pp: int = 16, dp: int = 8) -> StepResult:
    """Megatron-LM's README GPT-3 175B run: 1,024 A100-80GB, batch 1,536 of 2,048 tokens, fp16, full recompute."""
    spec = load_model(catalog, "gpt3-175b")
    system = hw.system("a100-80gb")
    job = TrainingJob(spec, 2048, 1536, "fp16")
    plan = {"tp": tp, "pp": pp, "dp": dp, "cp": 1, "microbatch": 1, "zero": 1, "recompute": "full", "vpp": 1}
    return train_step(spec, job, device_of(system), topology_of(system), from_dicts([{**plan, "sp": sp}]), 1024)


def test_without_sequence_parallelism_each_tp_rank_sends_a_slice_and_the_receiver_gathers_it(
    catalog: Catalog, hw: Hardware
) -> None:
    """TP8 PP16 DP8: 192 micro-batches, each a send forward and one back of 1/8 of the 50.3 MB activation over the
    network (stages 64 ranks apart, one a node) and an 8-way NVLink all-gather of it: 2 x 192 x (1.718 + 0.198) ms =
    0.736 s. Every rank had sent the whole 50.3 MB, 13.66 ms a send: pp_comm 5.246 s, a 37.57 s step against the
    32 s measured; it now reads 32.70 s."""
    r = _g175(catalog, hw, sp=False)
    send, gather = SEND, GATHER
    assert send == pytest.approx(1.7182e-3, rel=1e-4) and gather == pytest.approx(1.9765e-4, rel=1e-4)
    assert float(r.breakdown["pp_comm"][0]) == pytest.approx(2 * 192 * (SEND + GATHER), rel=1e-9)
    assert float(r.breakdown["pp_comm"][0]) == pytest.approx(0.7357, rel=1e-3)
    assert float(r.step_time[0]) == pytest.approx(32.70, rel=1e-3)


def test_with_sequence_parallelism_a_rank_sends_its_own_shard_and_gathers_nothing(
    catalog: Catalog, hw: Hardware
) -> None:
    """Sequence parallelism leaves each rank 1/tp of the sequence already: the same 1/8 send, no all-gather."""
    r = _g175(catalog, hw, sp=True)
    assert float(r.breakdown["pp_comm"][0]) == pytest.approx(2 * 192 * SEND, rel=1e-9)


def test_without_tensor_parallelism_the_whole_activation_is_sent(catalog: Catalog, hw: Hardware) -> None:
    """TP1 PP16 DP64 (24 micro-batches of one sequence): one rank holds and sends all of it, nothing to gather."""
    r = _g175(catalog, hw, sp=False, tp=1, dp=64)
    whole = S / (6.25e9 * 0.59) + 12e-6  # stages 64 ranks apart: every hand-off leaves the node
    assert float(r.breakdown["pp_comm"][0]) == pytest.approx(2 * 24 * whole, rel=1e-9)
