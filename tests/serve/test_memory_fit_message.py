"""A serving model that does not fit its ranks names what its memory terms (weights, activation buffers, the runtime's
reserve) add up to against the device's memory, blames no batch where the weights alone do not fit, and offers no
engine share that cannot help (serve.build)."""

from __future__ import annotations

import pytest


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
