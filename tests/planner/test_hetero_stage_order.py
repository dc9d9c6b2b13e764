"""The mix's stage order is chosen on what each stage pays: the first part's fixed cost per micro-batch had been
left out, so trn1 first won by skipping trn1's 52.8 ms (256 GB200 beside 512 trn1, 70B: trn1 -> gb200 at 8/72
layers, 638,642 tokens/s, unmoved by trn1's overhead; now gb200 -> trn1 at 74/6, 633,277)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.planner.hetero import plan_hetero_training


def test_swapping_the_fleets_order_gives_the_same_mix(catalog: Catalog) -> None:
    """Both stage orders are searched whatever order --fleet names the parts in: the same best mix either way."""
    one = plan_hetero_training(catalog, "llama-3.1-8b", {"gb200": 16, "trn1": 32}, tokens=1e10)["mixed"]
    other = plan_hetero_training(catalog, "llama-3.1-8b", {"trn1": 32, "gb200": 16}, tokens=1e10)["mixed"]
    assert one["plan"] == other["plan"] and one["order"] == other["order"] == ["gb200", "trn1"]
    assert one["tokens_per_s"] == other["tokens_per_s"] and one["stage_time_s"] == other["stage_time_s"]


def test_a_first_trn1_stage_pays_trn1s_fixed_cost_per_micro_batch() -> None:
    """At 0.5 s a micro-batch, trn1 holds the first stage (one layer): its stage time is that layer's plus 0.5 s
    (it had read the layer's alone, and the mix's throughput had not moved with trn1's overhead)."""
    slow = load_catalog(sets=["efficiency.trainium1.microbatch_overhead=0.5"])
    m = plan_hetero_training(slow, "llama-3.1-8b", {"gb200": 16, "trn1": 32}, tokens=1e10)["mixed"]
    first = m["plan"]["stages"][0]
    assert first["hardware"] == "trn1" and first["pp"] == 1
    expected = first["layers"] * m["layer_time_s"]["trn1"] + 0.5
    assert m["stage_time_s"]["trn1"] == pytest.approx(expected, rel=1e-12)
