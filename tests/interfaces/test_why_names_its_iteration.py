"""plan serve's 'Why' line gives the length of the iteration its shares are of: Llama-3.1-8B with 120,000-token
prompts on H100s had read 'its steady decode iteration (4.32 ms a token) goes to attention ... 61%', the mean TPOT
beside the shares of a 19.4 ms iteration carrying the prompts' chunks."""

from __future__ import annotations

from typing import Any

from chipwise.interfaces import format as fmt

BREAKDOWN = {"attention": 0.0119, "gemm": 0.0046, "tp_comm": 0.0016, "overhead": 0.0008, "memory_bound": 0.0005}


def _why(**best: Any) -> str:
    row = {
        "hardware": "h100-sxm", "chips": 16.0, "cost_usd_per_hour": 110.08, "slo_met": True, "keeps_up": True,
        "tpot_s": {"mean": 0.00432}, "breakdown": BREAKDOWN, **best,
    }  # fmt: skip
    return fmt.plan_serve_why({"best": row, "verified": [row], "load": {"kind": "rate"}})


def test_one_pool_names_its_iteration_prompts_and_all() -> None:
    """The parts sum to 11.9 + 4.6 + 1.6 + 0.8 + 0.5 = 19.4 ms; attention is 11.9 / 19.4 = 61% of it."""
    assert _why(disaggregated=False) == (
        "Why h100-sxm: 16 chips at $110.08/h ($6.88 per chip-hour) carry the load; its steady iteration (19.4 ms, a "
        "decode step with its share of the prompts) goes to attention (KV-cache reads, prefill) 61%, weight GEMMs "
        "(attention and MLP) 24%, tensor-parallel all-reduce 8%"
    )


def test_a_split_names_its_decode_pools_iteration() -> None:
    assert "; its decode pool's steady iteration (19.4 ms) goes to attention" in _why(disaggregated=True)
