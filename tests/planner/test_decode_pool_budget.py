"""A disaggregated deployment's decode pool encodes no prompt, so a token budget stated for it is not held to the
longest prompt (planner.serving_pool.build_pool, serve.build.check_stated_budget): a prefill pool's is."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.errors import InfeasibleError

#: vLLM without chunked prefill on H100s, 8,000-token prompts and 128-token answers (8,128-token requests)
HEAD = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, engine: vllm, input_tokens: 8000, output_tokens: 128, "
    "arrival_rate: 1, requests: 40, plan: {disaggregated: true, chunked_prefill: false, "
)
POOL = "{hardware: h100-sxm, replicas: 1, tp: 1"


def test_a_decode_pools_small_budget_runs() -> None:
    """max_tokens 512 on the decode pool, under the 8,128-token requests: the pool only extends sequences whose
    prompts the prefill pool encoded, so the deployment runs with the decode pool's budget at 512 and the prefill
    pool's (chosen) holding the 8,128 tokens."""
    r = cw.predict(HEAD + f"prefill: {POOL}}}, decode: {POOL}, max_tokens: 512}}}}}}")
    decode, prefill = r["plan"]["decode"], r["plan"]["prefill"]
    assert (decode["role"], decode["max_tokens"], decode["chunked_prefill"]) == ("decode", 512, False)
    assert decode["replicas"] == prefill["replicas"] == 1
    assert prefill["max_tokens"] >= 8128


def test_a_prefill_pools_small_budget_is_refused() -> None:
    """The same 512 stated on the prefill pool, which runs each 8,000-token prompt whole: vLLM refuses a budget
    under max_model_len, 8,128."""
    with pytest.raises(InfeasibleError) as err:
        cw.predict(HEAD + f"prefill: {POOL}, max_tokens: 512}}, decode: {POOL}}}}}}}")
    text = str(err.value)
    assert "max_tokens 512 is below the 8,128-token longest request (max_model_len)" in text
    assert text.endswith("Fix: raise max_tokens to at least 8,128 or enable chunked_prefill.")
