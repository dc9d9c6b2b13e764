"""A refusal names the model as the user gave it where that is an alias of a preset, as the answers do
(ModelSpec.display, 'deepseek-r1 = deepseek-v3'): the preset id alone had left the user's name unexplained."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError


def _refusal(scenario: str) -> str:
    with pytest.raises(ChipwiseError) as err:
        cw.predict(scenario)
    return str(err.value)


def test_a_training_refusal_names_the_alias() -> None:
    line = _refusal("{kind: train, model: deepseek-r1, hardware: h100-sxm, chips: 64}")
    assert line.startswith("deepseek-r1 = deepseek-v3 does not fit on 64 x h100-sxm: ")


def test_a_serving_refusal_names_the_alias() -> None:
    serve = "{kind: serve, model: MODEL, hardware: h100-sxm, chips: 2, arrival_rate: 1, output_tokens: 10, requests: 9}"
    assert _refusal(serve.replace("MODEL", "llama3.1-405b")) == (
        "llama3.1-405b = llama-3.1-405b (bf16) fits no replica shape on h100-sxm within 2 chips. Fix: use more chips, "
        "or quantise the weights or the KV cache."
    )
    # the preset's own id is named once, as before
    assert _refusal(serve.replace("MODEL", "llama-3.1-405b")).startswith("llama-3.1-405b (bf16) fits no replica")
