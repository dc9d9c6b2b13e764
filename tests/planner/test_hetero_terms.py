"""plan hetero gives every term of the mix's step, adding up to it, and its verdict names the largest that cost the
mix throughput: 256 GB200 beside 512 Trainium1 (70B) had named a bubble of 8% and hand-offs of 1% of a 6.57 s step
whose largest cost, trn1's 1.60 s step overhead (24%), went unsaid. (The step is 6.62 s since the first part's
stages pay their chip's fixed cost per micro-batch: the order is now gb200 -> trn1.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.interfaces.cli.app import run
from chipwise.planner.hetero import plan_hetero_training
from chipwise.train.hetero import Part, enumerate_hetero, hetero_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


@pytest.fixture(scope="module")
def gb200_trn1(catalog: Catalog) -> dict[str, Any]:
    return plan_hetero_training(catalog, "llama-3.1-70b", {"gb200": 256, "trn1": 512}, tokens=1e12)


def test_every_plans_terms_add_up_to_its_step(catalog: Catalog, hw: Hardware) -> None:
    """Over every candidate pipeline of an 8B model on 32 H100 and 64 trn2: compute + bubble + hand-offs + DP +
    optimizer + step overhead is the step, and the DP and optimizer terms are the part's whose take longer."""
    model = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(model, 4096, 256, "bf16")
    a, b = Part(hw.system("h100-sxm"), 32), Part(hw.system("trn2"), 64)
    res = hetero_step(model, job, a, b, enumerate_hetero(model, job, a, b), (47e9, 12.5e9), 10e-6)
    ok = res.feasible
    assert ok.sum() > 10
    terms = res.compute + res.bubble + res.hand_offs + res.dp_comm + res.optimizer + res.step_overhead
    np.testing.assert_allclose(terms[ok], res.step_time[ok], rtol=1e-12)
    m, stages = res.microbatches, res.plans.pp_a + res.plans.pp_b
    np.testing.assert_allclose(res.compute / m, res.bubble / (stages - 1), rtol=1e-12)  # both slowest-stage slots
    overhead = max(a.dev.eff.step_overhead_s, b.dev.eff.step_overhead_s)
    assert np.all(res.step_overhead == overhead)


def test_the_json_terms_add_up_to_the_mix_step(gb200_trn1: dict[str, Any]) -> None:
    """By hand: 8 micro-batches at the 543.9 ms GB200 stage (74 layers of 7.35 ms: 4.352 s), the bubble one such
    slot, 8 hand-offs of 6.73 ms (53.8 ms), trn1's 1.595 s step overhead (the catalog's, against GB200's 65.7 ms),
    and the rest, 78.8 ms, trn1's data-parallel reduction and update: 6.623 s."""
    m = gb200_trn1["mixed"]
    terms, owner = m["step_terms_s"], m["step_term_hardware"]
    assert m["step_time_s"] == pytest.approx(6.6232, abs=1e-4)
    assert sum(terms.values()) == pytest.approx(m["step_time_s"], rel=1e-12)
    stage = m["stage_time_s"]["gb200"]
    assert terms["compute"] == pytest.approx(8 * stage, rel=1e-12) and terms["bubble"] == pytest.approx(stage)
    assert terms["hand_offs"] == pytest.approx(8 * m["hand_off_s"], rel=1e-12)
    assert m["step_overhead_s"] == {"trn1": 1.595, "gb200": 0.0657}
    assert terms["step_overhead"] == 1.595 and owner["step_overhead"] == "trn1"
    assert owner["compute"] == "gb200" and owner["dp_comm"] == owner["optimizer"] == "trn1"
    assert terms["dp_comm"] + terms["optimizer"] == pytest.approx(0.0788, abs=2e-4)


def test_the_verdict_names_the_step_overhead_first(gb200_trn1: dict[str, Any]) -> None:
    """The reason gives the step's compute share (66%) and then its other terms largest first: trn1's fixed step
    cost (24%) before the bubble (8%), trn1's data-parallel traffic (1.2%) and the hand-offs (0.8%)."""
    reason = gb200_trn1["reason"]
    assert "of the mix's 6.62 s step, 66% is its slowest stage's compute (gb200, 8 micro-batches)" in reason
    overhead = "trn1's fixed cost per step (1.59 s against 66 ms on gb200; the mix pays the larger) takes 24%"
    bubble = "the pipeline bubble (1 of 9 micro-batch slots: 8 micro-batches over 2 stages) idles 8% of its step"
    traffic, hands = "trn1's exposed data-parallel gradient traffic takes 1%", "the hand-offs take 1%"
    places = [reason.index(text) for text in (overhead, bubble, traffic, hands)]
    assert places == sorted(places)
    assert "trn1's optimizer update" not in reason  # 0.7 ms, under half a percent of the step


def test_the_table_gives_the_step_terms(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan", "hetero", "--model", "llama-3.1-70b", "--fleet", "gb200=256,trn1=512", "--tokens", "1T"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "mixed step 6.62 s: gb200 stage compute 4.35 s, trn1 step overhead 1.59 s, pipeline bubble 543.9 ms, trn1 "
        "data-parallel traffic 78.3 ms, hand-offs 53.8 ms, trn1 optimizer 568 us"
    ) in out
