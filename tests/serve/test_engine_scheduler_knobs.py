"""A serving scenario's engine-specific scheduler settings apply only on the engine that has them: SGLang's polling
interval, TensorRT-LLM's batch waiting, CUDA-graph capture and mixed batching on Neuron's compiled graphs had been
taken on any engine and changed the result silently."""

from __future__ import annotations

import pytest

from cli_run import run_error, run_json

H100 = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100, chips: 1, precision: bf16, engine: ENGINE, "
    "input_tokens: 1024, output_tokens: 256, arrival_rate: 10, requests: 200, plan: {tp: 1, KNOBS}}"
)
TRN2 = (
    "{kind: serve, model: llama-3.1-8b, hardware: trn2, chips: 1, precision: bf16, engine: ENGINE, "
    "input_tokens: 1024, output_tokens: 256, arrival_rate: 1, requests: 100, plan: {KNOBS}}"
)


def _scenario(base: str, engine: str, knobs: str) -> str:
    return base.replace("ENGINE", engine).replace("KNOBS", knobs)


@pytest.mark.parametrize(
    ("base", "engine", "knobs", "needle"),
    [
        # recv_interval: 30 on vllm had moved TTFT p50 from 71 to 252 ms at 10 req/s (2,000 requests)
        (H100, "vllm", "recv_interval: 30", "plan.recv_interval: 30 is SGLang's --scheduler-recv-interval; vllm has"),
        (H100, "trtllm", "recv_interval: 30", "trtllm has no such setting. Fix: use engine: sglang"),
        (TRN2, "neuron", "recv_interval: 10", "neuron has no such setting. Fix: use engine: sglang"),
        # batch waiting on vllm had read a TTFT p50 of 501 ms
        (H100, "vllm", "batch_wait_iters: 50, batch_wait_ratio: 1.0", "plan.batch_wait_iters: 50 is TensorRT-LLM's"),
        (H100, "sglang", "batch_wait_ratio: 0.8", "sglang has no such setting. Fix: use engine: trtllm"),
        # the C++ executor of a TensorRT engine build has no batch waiting (PyExecutor._waiting_requests)
        (H100, "trtllm-engine", "batch_wait_iters: 40", "trtllm-engine has no such setting. Fix: use engine: trtllm"),
        (TRN2, "neuron", "graph_batch: 8", "plan.graph_batch sizes CUDA graphs; neuron runs compiled Neuron graphs"),
        (TRN2, "vllm-neuron", "graph_batch: 8", "vllm-neuron runs compiled Neuron graphs"),
        (TRN2, "neuron", "mixed_batching: true", "plan.mixed_batching: true; neuron runs its context encodings"),
        (TRN2, "optimum-neuron", "mixed_batching: true", "Fix: leave mixed_batching out."),
    ],
)
def test_a_setting_the_engine_does_not_have_is_refused(
    capsys: pytest.CaptureFixture[str], base: str, engine: str, knobs: str, needle: str
) -> None:
    assert needle in run_error(capsys, ["predict", _scenario(base, engine, knobs)])


@pytest.mark.parametrize(
    ("base", "engine", "knobs", "key", "value"),
    [
        (H100, "sglang", "recv_interval: 30", "recv_interval", 30),
        (H100, "trtllm", "batch_wait_iters: 40, batch_wait_ratio: 0.8", "batch_wait_ratio", 0.8),
        (H100, "vllm", "graph_batch: 512", "tp", 1),
        (TRN2, "neuron", "mixed_batching: false", "mixed_batching", False),
        # every engine's own values, as a prediction's plan reports them and `chipwise sensitivity` writes them back
        (H100, "vllm", "recv_interval: 1, batch_wait_iters: 0, batch_wait_ratio: 0", "recv_interval", 1),
        (TRN2, "neuron", "recv_interval: 1, batch_wait_iters: 0", "batch_wait_iters", 0),
    ],
)
def test_the_engine_that_has_the_setting_takes_it(
    capsys: pytest.CaptureFixture[str], base: str, engine: str, knobs: str, key: str, value: object
) -> None:
    data = run_json(capsys, ["predict", _scenario(base, engine, knobs), "--json"])
    assert data["plan"][key] == value
