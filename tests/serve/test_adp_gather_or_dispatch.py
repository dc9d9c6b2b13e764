"""Attention DP with the experts over fewer ranks than the attention (ep < tp) gathers every rank's tokens before
a MoE block and reduce-scatters after it; with every token on every rank no dispatch is left to make. TP8 EP4 ADP of
DeepSeek-V3 on 8 H200 had paid the gather (2.7 ms a decode step) and an expert dispatch (2.5 ms) beside it."""

from __future__ import annotations

import chipwise.api as cw


def _breakdown(ep: int) -> dict[str, float]:
    scenario = {
        "kind": "serve", "model": "deepseek-v3", "hardware": "h200", "chips": 8, "engine": "trtllm",
        "input_tokens": 1024, "output_tokens": 1024, "concurrency": 256, "requests": 300,
        "plan": {"tp": 8, "ep": ep, "attention_dp": True, "max_batch": 256},
    }  # fmt: skip
    out: dict[str, float] = cw.predict(scenario)["breakdown"]
    return out


def test_experts_narrower_than_the_attention_gather_and_dispatch_nothing() -> None:
    wide, half, quarter = _breakdown(8), _breakdown(4), _breakdown(2)
    assert wide["ep_comm"] > 0 and wide["tp_comm"] < 0.2 * wide["ep_comm"]  # ep = tp: the exchange carries them
    for narrow in (half, quarter):
        assert narrow["ep_comm"] == 0.0  # it had read 2.45 ms (EP4) and 2.02 ms (EP2)
        assert narrow["tp_comm"] > 10 * wide["tp_comm"]  # the gather and reduce-scatter, an all-reduce's volume
