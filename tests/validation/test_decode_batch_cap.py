"""InferenceX's disaggregated TensorRT-LLM recipes cap each decode rank's batch (harness.DecodeBatch)."""

from __future__ import annotations

from pathlib import Path

from chipwise.catalog import Catalog
from chipwise.validation.groundtruth import read_inference
from chipwise.validation.serving_case import prepare

_DISAGG = Path(__file__).resolve().parents[2] / "docs" / "research" / "heldout_inferencex_disagg.csv"


def test_inferencex_trtllm_decode_workers_hold_their_recipes_batch_and_the_other_users_wait(
    catalog: Catalog,
) -> None:
    """D104: DeepSeek-R1 NVFP4 on B300, 3 prefill workers (TP2) and 2 decode workers (TP8 EP8 attention DP), 4,611
    users at 1k/1k. Its recipe (ctx3_gen2_dep8_batch256_eplb0_mtp0.yaml) gives each decode rank max_batch_size 256:
    2,048 slots a worker, 4,096 in all, so 515 users wait for a slot (measured TTFT p50 3.58 s). The users stay in
    the closed loop and the prefill pool keeps the users' share; a row without a recipe (SGLang) keeps it too."""
    rows = {r.id: r for r in read_inference(_DISAGG, known_chips=frozenset(catalog.chips))}
    case = prepare(catalog, rows["D104"])
    prefill, decode = case.setup.pools
    assert decode.setup.plan.max_batch == 256 * 8
    assert prefill.setup.plan.max_batch == -(-4611 // 2)  # the users' share of a decode worker, as before
    assert case.job.load.concurrency == 4611
    assert any("hold 256 sequences per attention-DP rank" in n for n in case.notes)
    sglang = prepare(catalog, rows["D001"])  # Dynamo + SGLang: no decode cap read
    assert not any("per attention-DP rank (" in n for n in sglang.notes)


def test_gb300_fp8_decode_workers_hold_their_recipes_batch(catalog: Catalog) -> None:
    """D304: DeepSeek-R1 FP8 on GB300, 3 prefill workers (TP4) and 2 decode workers (TP8 EP8 attention DP), 8,602
    users at 1k/1k. Its recipe (gb300-fp8 ctx3_gen2_dep8_batch512_eplb0_mtp0_8602.yaml) gives each decode rank
    max_batch_size 512: 4,096 slots a worker."""
    rows = {r.id: r for r in read_inference(_DISAGG, known_chips=frozenset(catalog.chips))}
    case = prepare(catalog, rows["D304"])
    _, decode = case.setup.pools
    assert decode.setup.plan.max_batch == 512 * 8
    assert any("hold 512 sequences per attention-DP rank" in n for n in case.notes)
