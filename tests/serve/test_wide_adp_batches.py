"""An attention-DP replica's batch limits reach ADP_RANK_BATCH sequences a rank: TensorRT-LLM and SGLang set their
limits per rank, and DEP72 on a GB200 NVL72 had been searched up to 2,048 sequences (28 a rank), queueing 4,608
users for a minute where 4,608 as its limit answers in a third of a second."""

from __future__ import annotations

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import topology_of
from chipwise.serve.candidates import ADP_RANK_BATCH, BATCHES, enumerate_candidates
from chipwise.workload.presets import load_model


def test_a_wide_attention_dp_replica_searches_batches_a_rank_can_hold(catalog: Catalog, hw: Hardware) -> None:
    model = load_model(catalog, "deepseek-v3")
    topo = topology_of(hw.system("gb200"))
    wide = enumerate_candidates(model, topo, None, {"tp": 72, "ep": 72, "attention_dp": 1})
    assert sorted(set(wide.max_batch.tolist())) == [*BATCHES, 4096, 8192, 16384]  # up to 256 x 72 = 18,432
    assert max(wide.max_batch.tolist()) <= ADP_RANK_BATCH * 72
    plain = enumerate_candidates(model, topo, None, {"tp": 72, "ep": 72, "attention_dp": 0})
    assert max(plain.max_batch.tolist()) == 2048  # tensor-parallel attention: one batch for all the ranks
    eight = enumerate_candidates(model, topo, None, {"tp": 8, "ep": 8, "attention_dp": 1})
    assert max(eight.max_batch.tolist()) == 2048  # 256 a rank x 8
