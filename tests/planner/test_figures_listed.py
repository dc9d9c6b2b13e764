"""The figures a prediction lists are those it reads, named as `--set` takes them: a serving run's attention
figure (read through a forward-only floor, and saying so where the floor binds) and a fabric's tier reach (which
decides where its oversubscription starts)."""

from __future__ import annotations

from typing import Any

import chipwise.api as cw
from chipwise.perf.serving import SERVING_ATTENTION_FLOOR

#: one long prompt a second on one chip: its prefill is about half attention
SERVE: dict[str, Any] = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "b300",
    "chips": 1,
    "precision": "bf16",
    "input_tokens": 16000,
    "output_tokens": 16,
    "arrival_rate": 0.2,
    "requests": 40,
    "plan": {"tp": 1, "max_batch": 8},
}


def _prefill(r: dict[str, Any]) -> float:
    return float(r["ttft_s"]["p50"])


def test_a_serving_runs_attention_figure_is_listed_and_moves_its_prefill() -> None:
    """Blackwell Ultra's fitted attention (0.65, above the floor) is read: half of it slows the prompt, and the
    listing had left it out (sensitivity never moved it)."""
    base = cw.predict(SERVE)
    figure = base["figures"]["efficiency.blackwell-ultra.attention"]
    assert figure["value"] > SERVING_ATTENTION_FLOOR and "read_as" not in figure
    halved = cw.predict(SERVE, sets=["efficiency.blackwell-ultra.attention=x0.5"])
    assert _prefill(halved) > 1.02 * _prefill(base)


def test_a_fit_below_the_floor_is_listed_as_read_at_the_floor() -> None:
    """Hopper's fit (0.30) prices training's forward and backward passes; serving reads 0.6, and says so."""
    hopper = {**SERVE, "hardware": "h100-sxm"}
    base = cw.predict(hopper)
    figure = base["figures"]["efficiency.hopper.attention"]
    assert figure["value"] < SERVING_ATTENTION_FLOOR
    assert f"serving reads {SERVING_ATTENTION_FLOOR:g}" in figure["read_as"]
    lower = cw.predict(hopper, sets=["efficiency.hopper.attention=0.1"])
    assert _prefill(lower) == _prefill(base)  # what the note says: below the floor, the figure moves nothing


def test_a_fabrics_tier_reach_is_listed_under_the_name_set_takes() -> None:
    """4,096 H100s as TP8 PP2 DP256 cross the RoCE fabric's 3,072-chip pod: the pipeline's stage hand-off leaves the
    pod at 1/7 of the NIC (a data-parallel ring sends only 2 of its 512 edges across, which no longer moves the
    step); a pod of 8,192 holds them all. The tier's chips had gone unlisted though they move the step."""
    train = {
        "kind": "train",
        "model": "llama-3.1-8b",
        "hardware": "grand-teton-h100-96gb",
        "chips": 4096,
        "seq_len": 8192,
        "global_batch": 4096,
        "plan": {"tp": 8, "pp": 2, "dp": 256, "cp": 1, "microbatch": 1, "zero": 1, "recompute": "none"},
    }
    base = cw.predict(train)
    tiers = sorted(name for name in base["figures"] if ".tiers." in name)
    assert "roce-400g.tiers.1.chips" in tiers and "roce-400g.tiers.1.oversubscription" in tiers
    assert base["figures"]["roce-400g.tiers.1.chips"]["value"] == 3072
    wider = cw.predict(train, sets=["roce-400g.tiers.1.chips=8192"])
    assert wider["step_time_s"] < base["step_time_s"]
