"""What predict checks of a serving pool and its drafter: a pool runs one chip type (the Trainium4 + GB300 rack had
served as 72 Trainium4); a draft model's heads split over its target's tp, searched or given; the MTP refusal
suggests what runs."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.serving_inputs import check_drafter_tp, drafting_for
from chipwise.planner.serving_predict import predict_serving
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.presets import load_model
from scenario_kinds import serve_scenario

SERVE = (
    '{{"kind": "serve", "model": "{model}", "hardware": "{hardware}", "chips": {chips}, "engine": "vllm", '
    '"input_tokens": 128, "output_tokens": 128, "concurrency": 1, "requests": 5{extra}}}'
)


def test_the_hybrid_rack_is_not_served_as_one_chip_type(catalog: Catalog) -> None:
    """$1,140.48/h had been 72 x Trainium4's $15.84: the GB300 half never ran; training refuses it the same way."""
    sc = serve_scenario(SERVE.format(model="llama-3.1-8b", hardware="trn4-gb300-fusion-rack", chips=72, extra=""))
    with pytest.raises(ChipwiseError) as err:
        predict_serving(catalog, sc)
    assert str(err.value) == (
        "trn4-gb300-fusion-rack holds 36 trn4 and 36 gb300, two chip types; a serving pool runs one. Fix: search "
        "both with 'chipwise plan serve --hardware trn4-gb300-fusion-rack', or split prefill and decode between "
        "them with plan.prefill.hardware and plan.decode.hardware (or name one of trn4, gb300)."
    )


def test_a_draft_models_heads_split_over_the_targets_tp(catalog: Catalog) -> None:
    """Qwen2.5 7B's 28 heads do not split over tp=8 (as a target it is refused); Qwen2.5 72B's 64 do. tp=4 splits
    both; an EAGLE head has its target's heads."""
    target = load_model(catalog, "qwen2.5-72b")
    drafting = drafting_for(catalog, target, "draft:qwen2.5-7b:4@0.7")
    with pytest.raises(ChipwiseError) as err:
        check_drafter_tp(drafting, ReplicaPlan(tp=8))
    assert str(err.value) == (
        "invalid plan for draft model qwen2.5-7b: tp=8 does not divide the 28 attention heads. Fix: use a tp that "
        "divides 28, or another draft model."
    )
    check_drafter_tp(drafting, ReplicaPlan(tp=4))
    check_drafter_tp(drafting_for(catalog, target, "eagle:3@0.7"), ReplicaPlan(tp=8))
    sc = serve_scenario(
        SERVE.format(
            model="qwen2.5-72b", hardware="h100", chips=8,
            extra=', "plan": {"tp": 8, "max_batch": 4}, "speculative": "draft:qwen2.5-7b:4@0.7"',
        )
    )  # fmt: skip
    with pytest.raises(ChipwiseError, match=r"invalid plan for draft model qwen2\.5-7b"):
        predict_serving(catalog, sc)


def test_the_mtp_refusal_suggests_what_runs(catalog: Catalog) -> None:
    """It had offered draft:llama-3.2-1b:4@0.7, refused for Qwen3 (another vocabulary), and eagle:3, refused at the
    prior for any model but Llama 3.1 8B."""
    with pytest.raises(ChipwiseError) as err:
        drafting_for(catalog, load_model(catalog, "qwen3-8b"), "mtp:3")
    assert str(err.value).endswith(
        "Fix: use eagle:3@0.7 or draft:MODEL:3@0.7 with a smaller model of qwen3-8b's family."
    )
    with pytest.raises(ChipwiseError, match=r"Fix: use eagle:2 or draft:MODEL:2@0\.7 with a smaller model of"):
        drafting_for(catalog, load_model(catalog, "llama-3.1-8b"), "mtp:2")


def test_a_searched_tp_splits_the_draft_models_heads(catalog: Catalog) -> None:
    """qwen2.5-7b (28 heads) drafting for qwen2.5-72b on 8 H100 had been searched to tp 8 and then refused by the
    draft check; the search keeps to a tp both models' heads split over: 2 x TP4."""
    sc = serve_scenario(
        "{kind: serve, model: qwen2.5-72b, hardware: h100-sxm, chips: 8, input_tokens: 256, output_tokens: 32, "
        "arrival_rate: 1, requests: 20, speculative: 'draft:qwen2.5-7b:4@0.7'}",
        catalog,
    )
    plan = predict_serving(catalog, sc)["plan"]
    assert (plan["tp"], plan["replicas"]) == (4, 2)
