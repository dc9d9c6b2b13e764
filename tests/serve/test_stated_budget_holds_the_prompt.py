"""A stated max_tokens under which the engine cannot run the longest prompt whole is refused in one line with its
fix (serve.build.check_stated_budget): vLLM refuses max_num_batched_tokens below max_model_len without chunked
prefill, TensorRT-LLM rejects a prompt longer than max_num_tokens without chunked context, and Neuron compiles its
context encoding up to the stated length. They had run such prompts whole in silence, vLLM's and TensorRT-LLM's
buffers sized for the prompt and Neuron's for the budget alone (its KV cache overstated). A budget chipwise chose
itself (stated_prompt 0) still grows its buffers to what runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.model import ModelSpec

#: 120,000-token prompts and 64-token answers
PROMPT, LONGEST = 120_000, 120_064
#: Llama-3.1-8B's working bytes a token at TP1, (6 x 4,096 + 3 x 14,336) x 2 B, and its fp32 logits of one sequence
PER_TOKEN, LOGITS = (6 * 4096 + 3 * 14336) * 2, 128_256 * 4


def _gpu(
    catalog: Catalog, hw: Hardware, model: ModelSpec, engine: str, max_tokens: int, stated: int, chunked: bool
) -> ReplicaSetup:
    plan = ReplicaPlan(tp=1, max_batch=1, max_tokens=max_tokens, chunked_prefill=chunked)
    return setup_replica(
        catalog, model, hw.system("h100-sxm"), engine, plan, float(PROMPT), 64.0, LONGEST, stated_prompt=stated
    )


def test_vllm_refuses_a_stated_budget_under_its_longest_request(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """vLLM without chunked prefill needs max_num_batched_tokens >= max_model_len: 8,192 under 120,064 is refused,
    naming both fixes; 120,064 itself passes, its buffers 120,064 x 135,168 B + 513,024 B (15.11 GiB, the figure
    predict had read for the refused plan)."""
    with pytest.raises(InfeasibleError) as err:
        _gpu(catalog, hw, llama8b, "vllm", 8192, PROMPT, chunked=False)
    text = str(err.value)
    assert "max_tokens 8,192 is below the 120,064-token longest request (max_model_len)" in text
    assert text.endswith("Fix: raise max_tokens to at least 120,064 or enable chunked_prefill.")
    assert "\n" not in text
    ok = _gpu(catalog, hw, llama8b, "vllm", LONGEST, PROMPT, chunked=False)
    assert ok.memory.activations == pytest.approx(LONGEST * PER_TOKEN + LOGITS, rel=1e-12)
    assert ok.memory.activations / 2**30 == pytest.approx(15.115, abs=5e-4)


def test_tensorrt_llm_refuses_a_stated_budget_under_its_longest_prompt(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """TensorRT-LLM rejects a prompt longer than max_num_tokens without chunked context: the bar is the 120,000-token
    prompt, not the request; 120,000 passes."""
    with pytest.raises(InfeasibleError, match=r"Fix: raise max_tokens to at least 120,000 or enable chunked_prefill\."):
        _gpu(catalog, hw, llama8b, "trtllm", 8192, PROMPT, chunked=False)
    assert _gpu(catalog, hw, llama8b, "trtllm", PROMPT, PROMPT, chunked=False).kv_tokens > 0


def test_a_chunked_or_chosen_budget_is_not_refused(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """Chunked, 8,192 tokens carry the prompt in 15 iterations (buffers of 8,192 tokens); unstated, the budget chipwise
    chose grows its buffers to the 120,064 tokens that run whole, as before (the same cache as a stated 120,064)."""
    chunked = _gpu(catalog, hw, llama8b, "vllm", 8192, PROMPT, chunked=True)
    assert chunked.memory.activations == pytest.approx(8192 * PER_TOKEN + LOGITS, rel=1e-12)
    chosen = _gpu(catalog, hw, llama8b, "vllm", 8192, 0, chunked=False)
    assert chosen.kv_tokens == _gpu(catalog, hw, llama8b, "vllm", LONGEST, PROMPT, chunked=False).kv_tokens


def _trn2(catalog: Catalog, hw: Hardware, model: ModelSpec, engine: str, max_tokens: int, stated: int) -> ReplicaSetup:
    plan = ReplicaPlan(tp=4, max_batch=1, max_tokens=max_tokens, chunked_prefill=False)
    return setup_replica(
        catalog, model, hw.system("trn2.48xlarge"), engine, plan, 32_000.0, 64.0, 32_064, stated_prompt=stated
    )


def test_neuron_refuses_a_compiled_context_shorter_than_the_prompt(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """NxD compiles its context-encoding graph up to max_tokens: a 32,000-token prompt under 8,192 had run whole with
    a 566,848-token cache (buffers of 8,192 tokens); it is refused, and a stated 32,000 (the compiled length the
    prompt needs, the budget chipwise chooses for it) holds the 520,640 tokens predict reads without max_tokens."""
    with pytest.raises(InfeasibleError) as err:
        _trn2(catalog, hw, llama8b, "neuron", 8192, 32_000)
    text = str(err.value)
    assert "max_tokens 8,192 is below the 32,000-token longest prompt: neuron compiles its context encoding" in text
    assert text.endswith("Fix: raise max_tokens to at least 32,000.")
    assert _trn2(catalog, hw, llama8b, "neuron", 32_000, 32_000).kv_tokens == 520_640
    assert _trn2(catalog, hw, llama8b, "neuron", 8192, 0).kv_tokens == 566_848  # unstated: sized as it was


def test_an_engine_that_raises_its_own_budget_is_not_refused(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """optimum-neuron raises its token budget to the model length it serves (budget_covers_sequence): a stated 8,192
    does not stop a 32,000-token prompt there."""
    assert _trn2(catalog, hw, llama8b, "optimum-neuron", 8192, 32_000).kv_tokens > 0


def test_predict_refuses_a_stated_vllm_budget_under_the_longest_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The scenario the tester ran: vLLM without chunked prefill and a stated 8,192-token budget for 120,000-token
    prompts had run them whole, reporting max_tokens 8,192 beside buffers sized for 120,064."""
    from cli_run import run_error

    f = tmp_path / "mt.yaml"
    f.write_text(
        "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\nengine: vllm\ninput_tokens: 120000\n"
        "output_tokens: 64\nconcurrency: 1\nrequests: 4\nplan: {tp: 1, chunked_prefill: false, max_tokens: 8192}\n"
    )
    assert run_error(capsys, ["predict", str(f)]).endswith(
        "Fix: raise max_tokens to at least 120,064 or enable chunked_prefill."
    )
