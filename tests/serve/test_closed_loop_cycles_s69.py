"""A closed loop's throughput window counts whole request cycles (output tokens over a request's), a run of fewer
than six requests a user is flagged short, and a model that does not fit names what its memory terms add up to."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.serve.build import ReplicaSetup
from chipwise.serve.sim.metrics import summarise
from chipwise.serve.sim.run import Deployment, simulate

I, O = 512, 128  # noqa: E741 - prompt and output tokens, as in the docs


def test_requests_are_counted_in_whole_cycles(h100_setup: ReplicaSetup) -> None:
    """One user, 20 requests, the window opening just before the first request finishes (a ramp of 0.99 of its
    latency): counting the finishes in it counted 19 in the 18 cycles it spans, about 5% over 1 / e2e. Counted as the
    window's output tokens over a request's, requests/s is the output's rate over O and within 0.05% of 1 / e2e, and
    the prompts' rate I times it."""
    pools = (h100_setup.pool(1),)
    ones = np.ones(20, dtype=np.int64)
    one = simulate(Deployment(pools), ones[:1] * I, ones[:1] * O, ones[:1] * 0, None, 1)
    e2e = float(one.requests["finish"][0])
    ramp = 0.99 * e2e
    s = summarise(simulate(Deployment(pools), ones * I, ones * O, ones * 0, None, 1, ramp_s=ramp), 1, ramp_s=ramp)
    assert s["window_s"][0] == ramp
    assert s["requests_per_s"] == pytest.approx(s["output_tokens_per_s"] / O, rel=1e-12)
    assert s["requests_per_s"] == pytest.approx(1 / e2e, rel=5e-4)
    assert s["input_tokens_per_s"] == pytest.approx(I * s["requests_per_s"], rel=1e-12)
    assert s["goodput"]["requests_per_s"] == pytest.approx(s["requests_per_s"], rel=1e-12)  # no targets: all good


def test_a_closed_loop_of_five_requests_a_user_is_flagged_short() -> None:
    """The review's 300 requests of 64 users (4.7 each; Llama-3.1-8B, one H100, vLLM): lambda W read 59.9 against
    64 in the system, unflagged at four requests a user; flagged now, with six a user (384) advised."""
    import chipwise.api as cw

    r = cw.predict(
        {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100", "chips": 1, "precision": "bf16",
         "engine": "vllm", "input_tokens": 1024, "output_tokens": 1024, "concurrency": 64, "requests": 300,
         "plan": {"tp": 1}}
    )  # fmt: skip
    assert r["short_run"] == {"users": 64, "requests_for_steady_state": 384}
    assert r["requests_per_s"] == pytest.approx(r["output_tokens_per_s"] / 1024, rel=1e-12)


def test_a_model_that_does_not_fit_names_the_memory_its_terms_add_up_to() -> None:
    """DeepSeek-R1 fp8 on eight H100s at TP8: the message read "78.3 GiB of weights and 1.0 GiB of buffers per rank
    of 80 GiB", which fits, and named the batch (b4096) though the weights alone do not fit. With the runtime's
    4.0 GiB reserve the terms add up to 83.3 GiB of the 79.6 GiB an H100 has (CUDA's figure), and no batch is
    blamed; an engine share (plan.memory_fraction) cannot help, so it is not offered."""
    import chipwise.api as cw
    from chipwise.errors import InfeasibleError

    with pytest.raises(InfeasibleError) as err:
        cw.predict(
            {"kind": "serve", "model": "deepseek-r1", "hardware": "h100", "chips": 8, "precision": "fp8",
             "engine": "sglang", "input_tokens": 1024, "output_tokens": 1024, "concurrency": 8, "requests": 100,
             "plan": {"tp": 8}}
        )  # fmt: skip
    text = str(err.value)
    assert "does not fit TP8 on h100-sxm: 78.3 GiB of weights, 1.0 GiB of activation buffers and 4.0 GiB" in text
    assert "83.3 GiB of its 79.6 GiB" in text and "b4096" not in text and "max_batch" not in text
    assert "\n" not in text
