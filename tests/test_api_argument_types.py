"""A Python caller's argument of the wrong type, or out of its range, is one ChipwiseError naming the keyword
argument and a fix that fits it: catalog_show(None) and catalog_engine(5) had raised AttributeError ('strip'),
tco(compare=None) AttributeError ('lower', inside UnknownNameError), sensitivity(only=5) TypeError; top=0, a negative
global_batch_tokens and an SLO target of None had been told of rows, a run's tokens and a JSON 'null'."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError

#: the API as a caller without type checking calls it (the wrong types are the point)
untyped: Any = cw

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "train-llama70b-trn2.yaml"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: untyped.catalog_show(None),
         "ident None is not text. Fix: give e.g. 'trn3' or 'efficiency.trainium2'."),
        (lambda: untyped.catalog_show(5), "ident 5 is not text. Fix: give e.g. 'trn3' or 'efficiency.trainium2'."),
        (lambda: untyped.catalog_show(["trn3"]),
         "ident ['trn3'] is not text. Fix: give e.g. 'trn3' or 'efficiency.trainium2'."),
        (lambda: untyped.catalog_engine(None), "engine None is not text. Fix: give e.g. 'vllm'."),
        (lambda: untyped.catalog_engine(5), "engine 5 is not text. Fix: give e.g. 'vllm'."),
        (lambda: untyped.catalog_engine("vllm", chip=5), "chip 5 is not text. Fix: give e.g. 'gb200'."),
        (lambda: cw.tco("h100-sxm", compare=None), "compare None is not text. Fix: give e.g. 'reserved-1y'."),
        (lambda: cw.tco("h100-sxm", compare=5), "compare 5 is not text. Fix: give e.g. 'reserved-1y'."),
        (lambda: untyped.sensitivity(SCENARIO, only=5),
         "only 5 is not text or a list of texts. Fix: give e.g. ['hbm', 'flops']."),
        (lambda: untyped.sensitivity(SCENARIO, only=[5]), "only 5 is not text. Fix: give e.g. 'hbm'."),
    ],
    ids=["show-none", "show-int", "show-list", "engine-none", "engine-int", "chip-int", "compare-none", "compare-int",
         "only-int", "only-list-of-int"],
)  # fmt: skip
def test_a_wrong_type_is_one_line_naming_the_keyword(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(ChipwiseError) as raised:
        call()
    assert str(raised.value) == message


def test_the_text_options_still_answer() -> None:
    """The checks refuse types, not names: trn2's dense BF16, 667 TFLOP/s, and vllm on the hopper family."""
    assert cw.catalog_show("trn2")["figures"]["flops.bf16"]["value"] == 667.0
    assert cw.catalog_engine("vllm", chip="h100-sxm")["chip_family"] == "hopper"
    assert cw.tco("h100-sxm", compare="reserved-1y")["compare"] == "reserved-1y"


def test_only_none_filters_nothing_as_the_default() -> None:
    """only=None as only=(): no filter (list(None) had raised a TypeError); one text as a list of one."""
    assert cw._only(None) == [] and cw._only(()) == []
    assert cw._only("hbm") == ["hbm"] and cw._only(("hbm", "flops")) == ["hbm", "flops"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"top": 0}, "top 0 is not a whole number of rows of at least 1. Fix: give e.g. 20, or None for every row."),
        ({"global_batch_tokens": -1},
         "global_batch_tokens -1 is not a positive finite number. Fix: give e.g. '4M' or 4194304."),
        ({"seq_len": -1}, "seq_len -1 is not a positive finite whole number. Fix: give e.g. 8192 or '8k'."),
        ({"top_plans": 0}, "top_plans 0 is not a positive finite whole number. Fix: give e.g. 3."),
    ],
    ids=["top", "global_batch_tokens", "seq_len", "top_plans"],
)  # fmt: skip
def test_a_count_out_of_range_is_offered_one_that_fits(options: dict[str, Any], message: str) -> None:
    """top=0 had read 'is not a whole number of rows' (0 is one); a batch of -1 tokens had been offered 15e12, a
    whole run's tokens, and a sequence of -1 tokens 64, a chip count."""
    with pytest.raises(ChipwiseError) as raised:
        cw.plan_train("llama-3.1-8b", chips=8, hardware="h100-sxm", **options)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda slo: cw.plan_serve("llama-3.1-8b", rate=2, slo=slo, hardware="h100-sxm"),
         "slo['ttft_p99'] None is not a time. Fix: give seconds as a number (2) or a time with a unit ('2s'), or "
         "leave the key out."),
        (lambda slo: cw.plan_fleet("llama-3.1-8b", "examples/chat-mix.yaml", slo=slo),
         "slo['ttft_p99'] None is not a time. Fix: give seconds as a number (2) or a time with a unit ('2s'), or "
         "leave the key out."),
        (lambda slo: cw.plan_lifecycle("llama-3.1-8b", 1e12, 5, slo={"tpot_p99": True}),
         "slo['tpot_p99'] True is not a time. Fix: give seconds as a number (0.05) or a time with a unit ('50ms'), "
         "or leave the key out."),
    ],
    ids=["plan_serve", "plan_fleet", "plan_lifecycle"],
)  # fmt: skip
def test_an_slo_target_of_none_is_named_as_python_writes_it(call: Callable[[Any], Any], message: str) -> None:
    """slo={'ttft_p99': None} had read 'SLO ttft_p99 = null', a JSON word the caller never wrote."""
    with pytest.raises(ChipwiseError) as raised:
        call({"ttft_p99": None})
    assert str(raised.value) == message


def test_an_unknown_slo_key_before_a_none_is_named_first() -> None:
    """The keys are read in order: an unknown one first is the reader's line."""
    with pytest.raises(ChipwiseError, match=r"^unknown SLO key 'ttft'\. "):
        untyped.plan_serve("llama-3.1-8b", rate=2, slo={"ttft": 2, "tpot_p99": None}, hardware="h100-sxm")
