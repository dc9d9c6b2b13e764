"""Review 68 (helper M4): the last pipeline rank's memory under interleaving, full recompute's ring exchange, whole
MoE layers on a stage, and the partial-plan errors for interleaving, ep and the pipeline depth."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of, topology_of
from chipwise.train.memory import MemoryBreakdown, local_params, memory_per_rank
from chipwise.train.plans import check_partial_plan, check_plan, from_dicts, stage_group_layers
from chipwise.train.step import train_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

GiB = 2**30


def one(v: int) -> NDArray[np.int64]:
    return np.array([v], dtype=np.int64)


def _memory(
    catalog: Catalog, hw: Hardware, model: str, seq: int, batch: int, plan: dict[str, object]
) -> MemoryBreakdown:
    spec = load_model(catalog, model)
    system = hw.system("h100-sxm")
    job = TrainingJob(spec, seq, batch)
    return memory_per_rank(spec, job, device_of(system), topology_of(system), from_dicts([plan]))


def test_the_last_rank_keeps_its_interleaved_warm_up(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-70B TP4 PP2v40 DP2 CP4 at 128K, full recompute, 16 micro-batches: a layer keeps h/tp = 2,048
    elements a token, 32,768 tokens a rank, 0.125 GiB a layer-micro-batch. The first rank holds 2 x 40 + 1 = 81 of
    them (10.125 GiB) and the transient rebuild (34,304 - 2,048) x 32,768 x 2 B = 1.96875 GiB; the last rank runs
    (40 - 1) x 2 = 78 warm-up chunk forwards of one layer and keeps 79 (9.875 GiB) with the loss's logits,
    32,768 x 128,256 / 4 x 6 B = 5.87109375 GiB. It had been counted with one layer-micro-batch: 78.4 GiB, 'fits'."""
    m = _memory(
        catalog,
        hw,
        "llama-3.1-70b",
        131072,
        32,
        {"tp": 4, "pp": 2, "dp": 2, "cp": 4, "vpp": 40, "microbatch": 1, "zero": 1, "recompute": "full"},
    )
    assert m.activations[0] / GiB == pytest.approx(10.125 + 1.96875, rel=1e-12)
    assert (m.activations[0] + m.logits[0]) / GiB == pytest.approx(9.875 + 5.87109375 + 1.96875, rel=1e-12)
    assert m.total[0] > device_of(hw.system("h100-sxm")).hbm_capacity  # 83.3 GiB: it does not fit


def test_all_forwards_first_keeps_every_micro_batch_s_logits(catalog: Catalog, hw: Hardware) -> None:
    """m = pp = 2 (README's H100 row, TP4 PP2v40 DP256 CP2): Megatron runs all forwards first, so the last rank
    holds both micro-batches of its 40 layers, as the first does, and the loss's fp32 logits of both: 4,096 tokens x
    32,064 vocabulary columns x (4 + 2 + 4) B = 1.2231 GiB."""
    m = _memory(
        catalog,
        hw,
        "llama-3.1-70b",
        8192,
        512,
        {"tp": 4, "pp": 2, "dp": 256, "cp": 2, "vpp": 40, "microbatch": 1, "zero": 1},
    )
    assert m.logits[0] == pytest.approx(4096 * 32064 * 10.0, rel=1e-12)


def test_full_recompute_reruns_the_ring_exchange(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-8B CP64 at 32K: a K/V chunk of 512 tokens x 8 heads x 256 x 2 B = 2,097,152 B, sent 63 times at
    50 GB/s x 0.8 plus 10 us each: 3.9330 ms a layer forward. Without recompute the ring is exposed by
    3 cp - 3.5 attn per layer and micro-batch; full recompute reruns it, 4 cp - 4.5 attn (it had stayed 3 - 3.5)."""
    spec = load_model(catalog, "llama-3.1-8b")
    system = hw.system("h100-sxm")
    job = TrainingJob(spec, 32768, 4)
    base = {"tp": 1, "pp": 1, "dp": 1, "cp": 64, "microbatch": 1, "zero": 1, "sp": False}
    plans = from_dicts([{**base, "recompute": "none"}, {**base, "recompute": "full"}])
    r = train_step(spec, job, device_of(system), topology_of(system), plans, 64)
    cp = 63 * (2_097_152 / (50e9 * 0.8) + 10e-6)
    mbs = 32 * 4  # layers x micro-batches
    attn = (3.0 * cp - r.breakdown["cp_comm"][0] / mbs) / 3.5
    assert 0.0 < attn < cp
    assert r.breakdown["cp_comm"][1] == pytest.approx(mbs * (4.0 * cp - 4.5 * attn), rel=1e-9)  # 1.590 s, not 1.181


def test_a_stage_holds_whole_moe_layers(catalog: Catalog) -> None:
    """DeepSeek-V3's 3 dense and 58 MoE layers at PP16: every stage after the first holds 4 MoE layers, so a rank of
    EP64 holds 4 x 256 x 3 x 7,168 x 2,048 / 64 = 704,643,072 expert parameters (58/61 x 4 of them had given 670 M)."""
    spec = load_model(catalog, "deepseek-v3")
    dense, moe = stage_group_layers(spec, one(16), one(1))  # groups in layer order: the dense ones first
    assert (float(dense[0]), float(moe[0])) == (0.0, 4.0)
    assert [float(k[0]) for k in stage_group_layers(spec, one(1), one(1))] == [3.0, 58.0]
    plan = from_dicts([{"tp": 1, "pp": 16, "dp": 128, "ep": 64, "zero": 1, "recompute": "full"}])
    assert float(local_params(spec, plan)[1][0]) == 704_643_072.0


def test_an_interleaved_partial_plan_the_batch_cannot_split_names_why(catalog: Catalog) -> None:
    """512 sequences split into no multiple of 3 micro-batches: {pp: 3, vpp: 2} had found 'no valid parallel plan'."""
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512)
    with pytest.raises(
        ChipwiseError,
        match=r"^invalid plan: interleaved pipelines need micro-batches to be a "
        r"multiple of pp \(3\), and the global batch of 512 sequences",
    ):
        check_partial_plan({"pp": 3, "vpp": 2}, spec, job, 1024)
    check_partial_plan({"pp": 4, "vpp": 2}, spec, job, 1024)  # 512 = 128 x 4
    check_partial_plan({"pp": 3}, spec, job, 1024)  # vpp 1 is left to the search


def test_a_partial_ep_past_the_ranks_names_ep(catalog: Catalog) -> None:
    spec = load_model(catalog, "qwen3-30b-a3b")
    job = TrainingJob(spec, 4096, 1024)
    with pytest.raises(ChipwiseError, match=r"^invalid plan: ep=128 must divide tp x dp x cp, at most the 64 ranks\."):
        check_partial_plan({"ep": 128}, spec, job, 64)
    with pytest.raises(ChipwiseError, match=r"at most the 64 ranks over pp 2, 32\. Fix: use an ep of at most 32"):
        check_partial_plan({"ep": 64, "pp": 2}, spec, job, 64)
    with pytest.raises(ChipwiseError, match=r"^invalid plan: ep=16 must divide tp x dp x cp = 24"):
        check_partial_plan({"ep": 16, "tp": 1, "dp": 6, "cp": 4}, spec, job, 64)
    check_partial_plan({"ep": 64}, spec, job, 64)


def test_the_pipeline_depth_error_names_its_bound(catalog: Catalog) -> None:
    """80 layers allow 82 stages (the embedding and the loss may take one each): pp 82 is priced, pp 100 refused."""
    spec = load_model(catalog, "llama-3.1-70b")
    job = TrainingJob(spec, 8192, 512)
    with pytest.raises(
        ChipwiseError,
        match=r"pp x vpp = 100 exceeds the 82 pipeline stages 80 layers allow .* "
        r"Fix: use at most 82\.$",
    ):
        check_plan({"tp": 8, "pp": 100, "dp": 1}, spec, job, 1024)
