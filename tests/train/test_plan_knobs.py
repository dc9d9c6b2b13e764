"""A plan's knobs as the search reads them: other names (mb, vp, sequence_parallel) held as the knobs they name,
text refused for flags, values that are not whole finite numbers refused in one line, and a partial plan refused in
the words its complete form would be: interleaving the batch cannot split, an ep past the ranks, a pipeline deeper
than the layers allow, each named."""

from __future__ import annotations

import math
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.train.plans import (
    check_partial_plan,
    check_plan,
    enumerate_plans,
    left_to_search,
    normalise,
)
from chipwise.train.search import search_plans
from chipwise.workload import load_model
from chipwise.workload.plan_knobs import given_knobs
from chipwise.workload.training import TrainingJob


def _search(catalog: Catalog, model: str, chips: int, plan: dict[str, Any], batch: int = 128) -> Any:
    from chipwise.hardware import hardware

    spec = load_model(catalog, model)
    job = TrainingJob(spec, 8192, batch)
    return search_plans(spec, job, hardware(catalog).system("h100-sxm"), chips, fixed=plan)


@pytest.mark.parametrize(
    ("alias", "knob", "value"),
    [("mb", "mb", 1), ("vp", "vpp", 1), ("mb", "mb", 4), ("vp", "vpp", 2)],
)
def test_other_names_hold_their_knob(catalog: Catalog, alias: str, knob: str, value: int) -> None:
    """{tp: 8, pp: 4, mb: 1, vp: 1} on 64 H100 had run TP8 PP4v4 mb2: the search read only microbatch and vpp."""
    search = _search(catalog, "llama-3.1-70b", 64, {"tp": 8, "pp": 4, alias: value})
    assert set(getattr(search.result.plans, knob).tolist()) == {value}


def test_sequence_parallel_false_turns_sp_off(catalog: Catalog) -> None:
    search = _search(catalog, "llama-3.1-70b", 64, {"tp": 8, "sequence_parallel": False})
    assert not search.result.plans.sp.any()
    assert search.result.plans.plan(search.best)["sp"] is False


def test_a_knob_given_twice_is_refused() -> None:
    with pytest.raises(ChipwiseError, match=r"plan gives microbatch twice, as microbatch and mb\. Fix: keep one"):
        given_knobs({"microbatch": 2, "mb": 1})


def test_offload_is_refused_as_not_modelled() -> None:
    """Offload, a knob of other tools that DESIGN.md lists, is named as not modelled (it had been told only the keys
    chipwise takes, as a typo is)."""
    with pytest.raises(ChipwiseError, match=r"plan.offload: chipwise does not model offloading optimizer state") as e:
        given_knobs({"tp": 2, "offload": True})
    assert "Fix: drop offload" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("mode", ["Full", "FULL", "Selective", "none"])
def test_recompute_in_any_case(catalog: Catalog, mode: str) -> None:
    """{recompute: Full} had failed in RECOMPUTE_MODES.index (ValueError) though normalise lower-cased it."""
    search = _search(catalog, "llama-3.1-8b", 8, {"recompute": mode})
    assert {search.result.plans.plan(i)["recompute"] for i in range(len(search.result.plans))} == {mode.lower()}


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"tp": math.nan}, r"^plan\.tp must be a whole number, got nan\. Fix: give an integer\.$"),
        ({"pp": math.inf}, r"^plan\.pp must be a whole number, got inf\. Fix: give an integer\.$"),
        ({"mb": -math.inf}, r"^plan\.mb must be a whole number, got -inf\."),
        ({"zero": 1.5}, r"^plan\.zero must be a whole number, got 1\.5\."),
        ({"sp": "no", "tp": 2}, r"^plan\.sp: 'no' is not true or false\. Fix: give true or false\.$"),
        ({"hsdp": "false", "zero": 3}, r"^plan\.hsdp: 'false' is not true or false\."),
        ({"sequence_parallel": "yes"}, r"^plan\.sequence_parallel: 'yes' is not true or false\."),
        ({"sp": 2}, r"^plan\.sp: 2 is not true or false\."),
        ({"hsdp": 0.0}, r"^plan\.hsdp: 0\.0 is not true or false\."),
    ],
)
def test_bad_values_are_one_line(catalog: Catalog, plan: dict[str, Any], message: str) -> None:
    """NaN and infinity had reached int() (ValueError, OverflowError); text flags had read as true (bool('no'))."""
    with pytest.raises(ChipwiseError, match=message):
        _search(catalog, "llama-3.1-8b", 8, plan)
    with pytest.raises(ChipwiseError, match=message):
        normalise(plan)


def test_flags_read_as_given(catalog: Catalog) -> None:
    assert normalise({"tp": 4, "sp": False})["sp"] == 0
    assert normalise(normalise({"tp": 4, "zero": 3, "hsdp": True})) == normalise({"tp": 4, "zero": 3, "hsdp": 1})
    assert normalise({"zero": 3, "hsdp": True})["hsdp"] == 1
    search = _search(catalog, "llama-3.1-70b", 64, {"zero": 3, "hsdp": False})
    assert not search.result.plans.hsdp.any()


def test_enumerate_reads_the_names_validation_passes(catalog: Catalog) -> None:
    """enumerate_plans takes fixed knobs from callers other than the search (validation): the same reading."""
    spec = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(spec, 8192, 64)
    plans = enumerate_plans(spec, job, 8, 8, {"tp": 2, "mb": 2, "recompute": "Full", "sequence_parallel": False})
    assert set(plans.mb.tolist()) == {2} and set(plans.recompute.tolist()) == {2} and not plans.sp.any()


@pytest.mark.parametrize(
    ("plan", "ranks"),
    [({"cp": 3}, 6), ({"cp": 3, "tp": 1, "pp": 1, "dp": 2}, 6)],
)
def test_a_cp_not_dividing_the_sequence_is_refused_partial_or_complete(
    catalog: Catalog, plan: dict[str, Any], ranks: int
) -> None:
    """{cp: 3} on 6 H100 at 8,192 tokens had been priced while the complete plan was refused."""
    spec = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(spec, 8192, 128)
    with pytest.raises(ChipwiseError, match=r"^invalid plan: cp=3 does not divide seq_len 8192\. Fix: use a cp"):
        check_partial_plan(plan, spec, job, ranks)


def test_a_partial_pipeline_is_refused_as_a_complete_one(catalog: Catalog) -> None:
    spec = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(spec, 8192, 128)
    with pytest.raises(ChipwiseError, match=r"^invalid plan: vpp > 1 needs pipeline parallelism"):
        check_partial_plan({"pp": 1, "vpp": 2}, spec, job, 64)
    with pytest.raises(ChipwiseError, match=r"^invalid plan: pp x vpp = 40 exceeds the 34 pipeline stages"):
        check_partial_plan({"pp": 20, "vp": 2}, spec, job, 64)


def test_what_a_plan_leaves_to_the_search(catalog: Catalog) -> None:
    dense, moe = load_model(catalog, "llama-3.1-70b"), load_model(catalog, "mixtral-8x7b")
    # four keys had read as 'given': {tp, pp, mb, vp} leaves dp, cp, zero and recompute
    assert left_to_search({"tp": 8, "pp": 4, "mb": 1, "vp": 1}, dense) == ["dp", "cp", "zero", "recompute"]
    complete = {"tp": 8, "pp": 4, "dp": 2, "vpp": 1, "microbatch": 1, "zero": 1, "recompute": "selective"}
    assert left_to_search(complete, dense) == []  # cp: tp x pp x dp is the rank count
    assert left_to_search({**complete, "pp": 1, "dp": 8, "vpp": None}, dense) == []  # one stage: vpp 1
    assert left_to_search(complete, moe) == ["ep"]
    assert left_to_search({**complete, "zero": 3}, dense) == ["hsdp"]


@pytest.mark.parametrize("plan", [{"zero": 1, "hsdp": True}, {"tp": 8, "pp": 1, "dp": 128, "zero": 2, "hsdp": True}])
def test_hsdp_below_zero_3_is_refused_by_name(catalog: Catalog, plan: dict[str, Any]) -> None:
    """{zero: 1, hsdp: true} had found 'no valid parallel plan ... with {'zero': 1, 'hsdp': True}', pointing at the
    chip count and the batch; hybrid sharding is a ZeRO-3 layout."""
    with pytest.raises(ChipwiseError) as exc:
        _search(catalog, "llama-3.1-70b", 1024, plan)
    assert str(exc.value) == (
        "invalid plan: hsdp needs zero 3 (hybrid FSDP shards ZeRO-3's state within the scale-up domain), got "
        f"zero {plan['zero']}. Fix: set zero to 3 or hsdp to false."
    )
    assert _search(catalog, "llama-3.1-8b", 64, {"hsdp": True}).result.plans.zero.min() == 3  # zero left open


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
    with pytest.raises(ChipwiseError, match=r"^invalid plan: ep=16 must divide tp x dp x cp = 8"):
        check_partial_plan({"ep": 16, "tp": 1, "dp": 2, "cp": 4}, spec, job, 64)
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


@pytest.mark.parametrize(
    ("model", "chips", "batch", "plan", "message"),
    [
        (
            "llama-3.1-8b",
            64,
            100,
            {"dp": 8},
            "invalid plan: global batch 100 sequences is not a multiple of dp = 8, at any micro-batch. Fix: change the "
            "batch or dp.",
        ),
        (
            "llama-3.1-8b",
            64,
            100,
            {"dp": 8, "tp": 8, "pp": 1},
            "invalid plan: global batch 100 sequences is not a multiple of dp x microbatch = 8. Fix: change the batch, "
            "dp or micro-batch size.",
        ),
        (
            "phi-4",
            64,
            3,
            {"dp": 4, "microbatch": 1},
            "invalid plan: global batch 3 sequences is not a multiple of dp x microbatch = 4. Fix: change the batch, "
            "dp or micro-batch size.",
        ),
        (
            "llama-3.1-8b",
            16,
            1,
            {"tp": 2, "vpp": 2},
            "invalid plan: interleaved pipelines need micro-batches to be a multiple of pp (any of 2 to 8 here), and "
            "the global batch of 1 sequences splits into no such count. Fix: change vpp, pp or the batch.",
        ),
        (
            "llama-3.1-8b",
            8,
            64,
            {"tp": 8, "vpp": 4},
            "invalid plan: vpp 4 needs pp > 1, and the 8 ranks over the fixed tp x dp x cp = 8 leave room for pp 1 "
            "only. Fix: set vpp to 1, or free ranks for a pipeline.",
        ),
    ],
)
def test_a_partial_plan_the_batch_cannot_split_is_refused_by_name(
    catalog: Catalog, model: str, chips: int, batch: int, plan: dict[str, Any], message: str
) -> None:
    """The tester's partial plans ({dp: 8} of 100 sequences, {dp: 4, microbatch: 1} of 3, {tp: 2, vpp: 2} of 1) had
    found no plan, in a generic line quoting a Python dict ("with {'dp': 8}"), where the complete plan is refused by
    name: they now read as the complete one does."""
    with pytest.raises(ChipwiseError) as err:
        _search(catalog, model, chips, plan, batch)
    assert str(err.value) == message


def test_the_generic_no_plan_line_gives_the_plan_as_written(catalog: Catalog) -> None:
    """What still finds no plan quotes the knobs as a scenario gives them: Mixtral's ep 8 with vpp 2 on 8 H100 (a
    pipeline leaves 4 ranks a stage) had read "with {'ep': 8, 'cp': 1, 'vpp': 2}"."""
    with pytest.raises(ChipwiseError) as err:
        _search(catalog, "mixtral-8x7b", 8, {"ep": 8, "cp": 1, "vpp": 2, "sp": True}, 8)
    assert str(err.value).startswith(
        "no valid parallel plan for mixtral-8x7b on 8 x h100-sxm with ep 8, cp 1, vpp 2, sp true (global batch 8 "
        "sequences)."
    )


def test_zero_2_with_an_interleaved_partial_plan_is_refused(catalog: Catalog) -> None:
    """vpp above 1 asks for a pipeline, which ZeRO-2 cannot run with: {vpp: 2, zero: 2} had found no plan."""
    with pytest.raises(ChipwiseError, match=r"^invalid plan: zero 2 with vpp 2 \(interleaving needs pp > 1\): no fra"):
        _search(catalog, "llama-3.1-8b", 64, {"vpp": 2, "zero": 2})


def test_hsdp_with_a_pipeline_asks_for_zero_3(catalog: Catalog) -> None:
    """hsdp is ZeRO-3's: given with a pipeline it had found no plan (ZeRO-3 with pp > 1 is searched only where the
    plan asks for it, and hsdp had not counted as asking)."""
    found = _search(catalog, "llama-3.1-8b", 64, {"hsdp": True, "pp": 2, "tp": 2})
    assert set(found.result.plans.zero) == {3} and found.result.plans.hsdp.all()


@pytest.mark.parametrize(
    ("seq", "plan", "message"),
    [
        (
            4097,
            {"tp": 2, "pp": 1, "dp": 4},
            r"^invalid plan: sequence parallelism splits the 4,097 tokens over tp 2, which does not divide them\. Fix: "
            r"use a tp that divides them, set sp to false, or change seq_len\.$",
        ),
        (
            8190,
            {"cp": 2},
            r"^invalid plan: cp=2 needs seq_len 8,190 to split into 2 x cp = 4 equal chunks \(load-balanced causal "
            r"context parallelism gives each rank two\), and it does not\. Fix: use a cp with seq_len a multiple of "
            r"2 x cp\.$",
        ),
        (
            8196,
            {"tp": 4, "pp": 1, "dp": 1, "cp": 2},
            r"^invalid plan: sequence parallelism splits each rank.s 4,098 tokens \(seq_len 8,196 over cp 2\) over "
            r"tp 4",
        ),
    ],
)
def test_sequence_and_context_parallelism_need_a_sequence_they_split(
    catalog: Catalog, seq: int, plan: dict[str, Any], message: str
) -> None:
    """Megatron scatters each rank's seq_len / cp tokens evenly over the tp ranks under sequence parallelism, and
    load-balanced causal CP cuts a sequence into 2 cp chunks: seq_len 4,097 at TP2 with sp, and 8,190 at cp 2, had
    been priced. With sp false the tp stands; the search skips such plans."""
    spec = load_model(catalog, "llama-3.1-8b")
    job = TrainingJob(spec, seq, 64)
    with pytest.raises(ChipwiseError, match=message):
        check_partial_plan(plan, spec, job, 8)
    if seq == 4097:
        check_partial_plan({**plan, "sp": False}, spec, job, 8)
        assert set(enumerate_plans(spec, job, 64, 8).tp) == {1}  # 4,097 is odd: every tp > 1 with sp is skipped
        assert set(enumerate_plans(spec, job, 64, 8, {"sp": False}).tp) == {1, 2, 4, 8}
    if seq == 8190:
        assert set(enumerate_plans(spec, job, 64, 8).cp) == {1}
