"""predict on a replayed trace says where its busiest window offers well above the mean rate its offered load quotes
(serving_predict.trace_bursts, from fleet_workload.burst_note): a bursty trace had read 'offered load 53.6% of the
18.9 req/s the deployment sustains' beside a TTFT p99 of 99 s with no word of its bursts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chipwise.api as cw
from chipwise.planner.fleet_workload import burst_note

SCENARIO: dict[str, Any] = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1,
                            "precision": "bf16"}  # fmt: skip
SAID = ": the offered load is the trace's mean, and the latencies its replay, bursts included"


def _trace(path: Path, times: list[float]) -> str:
    path.write_text("arrival_s,input_tokens,output_tokens\n" + "".join(f"{t},512,64\n" for t in times), "utf-8")
    return str(path)


def test_a_bursty_trace_is_noted_beside_the_load(tmp_path: Path) -> None:
    """200 requests in the first 10 s (20 req/s), then 100 a second apart to t = 109 s: 299 gaps over 109 s, a mean
    of 2.74 req/s."""
    path = _trace(tmp_path / "burst.csv", [i * 0.05 for i in range(200)] + [10.0 + i for i in range(100)])
    load = cw.predict({**SCENARIO, "trace": path})["load"]
    note = burst_note(path)
    assert note is not None and "its mean 2.74" in note
    assert load["burst_note"] == note.partition(": ")[0] + SAID
    assert load["burst_note"].startswith("the trace's busiest ")


def test_a_steady_trace_or_one_whose_times_are_not_replayed_has_none(tmp_path: Path) -> None:
    steady = _trace(tmp_path / "steady.csv", [i * 0.5 for i in range(200)])
    assert "burst_note" not in cw.predict({**SCENARIO, "trace": steady})["load"]
    bursty = _trace(tmp_path / "burst.csv", [i * 0.05 for i in range(200)] + [10.0 + i for i in range(100)])
    # arrival_rate given: the trace gives the lengths alone, its times are not replayed
    assert "burst_note" not in cw.predict({**SCENARIO, "trace": bursty, "arrival_rate": 2.0})["load"]


def test_the_web_pages_caveats_carry_it() -> None:
    from chipwise.interfaces.cli.serve_views import caveats

    note = "the trace's busiest 10 s offers 20 req/s, 7.3x its mean 2.74" + SAID
    assert caveats({"load": {"burst_note": note}}) == [("bursts", note)]
