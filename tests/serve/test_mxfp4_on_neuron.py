"""gpt-oss's MXFP4 experts on AWS Neuron: on a chip without FP4 units (trn1, inf2, trn2) the Neuron engines load them
dequantised to bf16, as the published trn2 run (TI015) holds them, so 'auto' is bf16 there and mxfp4 asked for is
refused in one line; Trainium3 has MXFP4 units and keeps them, and vLLM on Hopper keeps MXFP4 experts in memory."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.serve.quant import as_loaded, float8_fallback, holds_mxfp4

GPT_OSS_TRN2: dict[str, Any] = {
    "kind": "serve",
    "model": "gpt-oss-120b",
    "hardware": "trn2",
    "engine": "vllm",
    "chips": 1,
    "input_tokens": 512,
    "output_tokens": 128,
    "concurrency": 1,
    "requests": 10,
    "plan": {"tp": 4},
}


@pytest.mark.parametrize(
    ("chip", "engine", "held"),
    [
        ("trn2", "vllm-neuron", "bf16"),
        ("trn2", "neuron", "bf16"),
        ("trn1", "optimum-neuron", "bf16"),
        ("inf2", "vllm-neuron", "bf16"),
        ("trn3", "vllm-neuron", "mxfp4"),  # MXFP4 units (at its MXFP8 rate)
        ("h100-sxm", "vllm", "mxfp4"),  # no FP4 units, yet vLLM's bf16 x mxfp4 MoE kernels hold the experts as shipped
        ("h100-sxm", "trtllm", "mxfp4"),
    ],
)
def test_which_engines_hold_mxfp4_experts_as_shipped(hw: Hardware, chip: str, engine: str, held: str) -> None:
    c = hw.system(chip).chip
    assert as_loaded("mxfp4", engine, c) == held
    assert holds_mxfp4(engine, c) is (held == "mxfp4")
    assert as_loaded("fp8", engine, c) == "fp8"  # only MXFP4 experts are dequantised as they load


def test_auto_on_one_trn2_is_the_dequantised_checkpoint_which_does_not_fit() -> None:
    """It had been accepted as mxfp4 weights with 724,960 tokens of KV cache; dequantised, gpt-oss-120b's 117B
    parameters take 54.4 GiB a rank at TP4, past the 24 GiB of a Trainium2 NeuronCore pair."""
    with pytest.raises(ChipwiseError) as err:
        cw.predict(GPT_OSS_TRN2)
    assert str(err.value).startswith("gpt-oss-120b (bf16) does not fit TP4 on trn2: 54.4 GiB of weights")


def test_mxfp4_asked_for_on_trn2_is_refused_in_one_line() -> None:
    with pytest.raises(ChipwiseError) as err:
        cw.predict({**GPT_OSS_TRN2, "precision": "mxfp4"})
    assert str(err.value) == (
        "vllm-neuron cannot serve mxfp4 weights on trn2: the chip has no FP4 units, and the engine dequantises MXFP4 "
        "experts to bf16 as it loads them. Fix: give the precision bf16 or auto (the checkpoint as the engine loads "
        "it), or pick a chip whose engine keeps MXFP4 experts (trn3, or a GPU)."
    )


def test_auto_on_four_trn2_is_the_bf16_deployment_ti015_ran() -> None:
    """TI015's deployment (TP16 on four trn2): auto reads as its bf16 weights, the same KV cache as bf16 stated."""
    four = {**GPT_OSS_TRN2, "chips": 4, "plan": {"tp": 16}}
    auto, bf16 = cw.predict(four), cw.predict({**four, "precision": "bf16"})
    assert auto["precision"] == bf16["precision"] == "bf16"
    assert auto["plan"]["kv_cache_tokens_per_replica"] == bf16["plan"]["kv_cache_tokens_per_replica"]


def test_trn3_and_hopper_keep_mxfp4(hw: Hardware) -> None:
    assert cw.predict({**GPT_OSS_TRN2, "hardware": "trn3"})["precision"] == "mxfp4"
    assert float8_fallback("vllm-neuron", hw.system("trn3").chip, "mxfp4", "bf16") is None
    h100 = {**GPT_OSS_TRN2, "hardware": "h100-sxm", "plan": {"tp": 1}}
    assert cw.predict(h100)["precision"] == "mxfp4"
    assert "precision_note" not in cw.predict(h100)


def test_the_dequantised_checkpoint_is_noted() -> None:
    """The header had read 'bf16 weights' with no word of why on a model released in MXFP4."""
    four = cw.predict({**GPT_OSS_TRN2, "chips": 4, "plan": {"tp": 16}})
    assert four["precision_note"] == (
        "the checkpoint's MXFP4 experts are dequantised to bf16 as vllm-neuron loads them on trn2"
    )


def test_plan_serve_ranks_neuron_chips_at_the_dequantised_precision() -> None:
    """plan serve had resolved 'auto' to mxfp4 before each engine saw it: trn1 and trn2 were 'not ranked' with the
    mxfp4 refusal, where a Neuron engine serves the bf16 it loads."""
    found = cw.plan_serve("gpt-oss-120b", rate=2, input_tokens=1024, output_tokens=256, hardware=["trn1"], verify=1)
    assert found["results"][0]["hardware"] == "trn1" and not [s for s in found["skipped"] if s["hardware"] != "splits"]
    # the header's precision is the checkpoint's (mxfp4): the chip that holds bf16 says so
    assert found["precision"] == "mxfp4" and list(found["precision_notes"]) == ["trn1"]
    assert found["precision_notes"]["trn1"].startswith("the checkpoint's MXFP4 experts are dequantised to bf16 as")
    assert found["precision_notes"]["trn1"].endswith(" loads them on trn1")
