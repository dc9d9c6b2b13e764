"""SGLang's CUDA-graph capture size under DP attention is a rank's (--cuda-graph-max-bs, checked against the
busiest rank's batch): DeepSeek-V3 on 16 B200 at DEP16 with 544 sequences holds 34 a rank, well within a capture of
512, and decodes in graphs as 512 sequences (32 a rank) do. Checked against the replica's 544 it had launched
eagerly: TPOT 58.2 -> 150.8 ms for two more sequences a rank."""

from __future__ import annotations

import chipwise.api as cw


def _tpot(users: int) -> float:
    scenario = {
        "kind": "serve", "model": "deepseek-v3", "hardware": "b200", "chips": 16, "engine": "sglang",
        "input_tokens": 1024, "output_tokens": 1024, "concurrency": users, "requests": 600,
        "plan": {"tp": 16, "ep": 16, "attention_dp": True, "max_batch": users},
    }  # fmt: skip
    tpot: float = cw.predict(scenario)["tpot_s"]["p50"]
    return tpot


def test_a_ranks_share_of_the_batch_is_what_its_graphs_capture() -> None:
    within, past = _tpot(512), _tpot(544)
    assert past < 1.15 * within  # it had read 2.6x
