"""Every stage of a mixed pipeline pays what plan train's stages pay past their layers: its chip type's fixed cost
per micro-batch (the first part's had been left out, so a trn1 stage of 8 layers read 8 x 65.49 ms, none of trn1's
52.8 ms) and, inside a part of several stages, the hand-offs to the next (train.step.pipeline_hand_off)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.train.hetero import HeteroPlans, Part, hetero_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

#: trainium1's fixed cost per micro-batch in the catalog (efficiency.yaml), seconds
TRN1_MICROBATCH_S = 0.0528


def _one(tp_a: int, pp_a: int, tp_b: int, pp_b: int, dp: int) -> HeteroPlans:
    return HeteroPlans(*(np.array([v], dtype=np.int64) for v in (tp_a, pp_a, tp_b, pp_b, dp, 1, 1)))


@pytest.fixture(scope="module")
def parts(hw: Hardware) -> tuple[Part, Part]:
    return Part(hw.system("trn1"), 128), Part(hw.system("gb200"), 64)


def test_the_first_part_pays_its_fixed_cost_per_micro_batch(catalog: Catalog, parts: tuple[Part, Part]) -> None:
    """trn1 TP16 PP1 first: its stage is its layers at one layer's time each plus trn1's 52.8 ms a micro-batch."""
    trn1, gb200 = parts
    assert trn1.dev.eff.microbatch_overhead_s == TRN1_MICROBATCH_S
    model = load_model(catalog, "llama-3.1-70b")
    res = hetero_step(model, TrainingJob(model, 4096, 64, "bf16"), trn1, gb200, _one(16, 1, 4, 1, 8), (5e9, 47e9), 2e-5)
    la, tau = int(res.layers_a[0]), float(res.layer_a[0])
    assert float(res.stage_a[0]) == pytest.approx(la * tau + TRN1_MICROBATCH_S, rel=1e-12)


def test_a_part_of_two_stages_pays_its_hand_offs(catalog: Catalog, parts: tuple[Part, Part]) -> None:
    """trn1 TP16 PP2 DP4 first: its two stages sit 64 ranks apart, past a trn1.32xlarge's 32, so each hands its
    micro-batch on over EFA. By hand, each of the 16 ranks sends 1/16 of 4,096 tokens x 8,192 x 2 bytes (4.19 MB) at
    a rank's 3.125 GB/s x 0.8 in 1.678 ms + 10 us, forward and back: 3.375 ms a micro-batch, beside the 52.8 ms."""
    trn1, gb200 = parts
    model = load_model(catalog, "llama-3.1-70b")
    res = hetero_step(model, TrainingJob(model, 4096, 64, "bf16"), trn1, gb200, _one(16, 2, 4, 1, 4), (5e9, 47e9), 2e-5)
    hand_off = 2.0 * (4096 * 8192 * 2 / 16 / (3.125e9 * 0.8) + 10e-6)
    assert hand_off == pytest.approx(3.3754e-3, rel=1e-4)
    la, tau = int(res.layers_a[0]), float(res.layer_a[0])
    expected = math.ceil(la / 2) * tau + TRN1_MICROBATCH_S + hand_off
    assert float(res.stage_a[0]) == pytest.approx(expected, rel=1e-9)


def test_the_split_balances_with_the_first_parts_overhead(catalog: Catalog, parts: tuple[Part, Part]) -> None:
    """The layers go where the two stages come out closest with each stage's extra time counted: with trn1 first the
    slower stage is within one trn1 layer of the other, and no other split of the layers makes the slower stage
    faster."""
    trn1, gb200 = parts
    model = load_model(catalog, "llama-3.1-70b")
    res = hetero_step(model, TrainingJob(model, 4096, 64, "bf16"), trn1, gb200, _one(16, 1, 4, 1, 8), (5e9, 47e9), 2e-5)
    la, ta, tb = int(res.layers_a[0]), float(res.layer_a[0]), float(res.layer_b[0])
    s_a, s_b = float(res.stage_a[0]), float(res.stage_b[0])
    extra_b = s_b - (model.layers - la) * tb  # gb200's LM head and fixed cost per micro-batch
    assert abs(s_a - s_b) <= ta + 1e-9
    for other in (la - 1, la + 1):
        assert max(other * ta + TRN1_MICROBATCH_S, (model.layers - other) * tb + extra_b) >= max(s_a, s_b) - 1e-12
