"""SLO targets count by the seconds the scenario reads (workload.slo.SLO), not as written: grid {slo.ttft_p99_s: [2,
"2s", "2000ms"]} had hashed as three points, run three times and reported as a three-way tie."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chipwise.sweep import load_sweep
from chipwise.sweep.spec import Variant, point_id

WriteSweep = Callable[..., Path]

SERVE = """\
name: slo
base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: bf16, input_tokens: 512,
       output_tokens: 128, arrival_rate: 2, requests: 50}
grid:
  slo.ttft_p99_s: [2, "2s", "2000ms", 2.0, "3s"]
  slo.tpot_p99_s: [0.05, "50ms", "50000us"]
"""


def test_one_target_written_with_units_or_without_is_one_point(write_sweep: WriteSweep) -> None:
    spec = load_sweep(write_sweep(SERVE))
    points = list(spec.points())
    assert len(spec) == 15
    ids = {p.id for p in points}
    assert len(ids) == 2  # TTFT 2 s or 3 s; TPOT 50 ms however written
    by_ttft = {p.id: p.axes["slo.ttft_p99_s"] for p in points}
    assert sorted({v for v in by_ttft.values() if v == "3s"}) == ["3s"]
    assert len({i for i, v in by_ttft.items() if v != "3s"}) == 1


def test_an_id_reads_targets_as_seconds_and_keeps_what_reads_none() -> None:
    variant = Variant("baseline", (), (), "0" * 16)
    base = {"kind": "serve", "model": "llama-3.1-8b"}

    def pid(slo: object) -> str:
        return point_id({**base, "slo": slo}, variant)

    assert pid({"ttft_p99_s": "2000ms", "tpot_p99_s": "50ms"}) == pid({"ttft_p99_s": 2, "tpot_p99_s": 0.05})
    assert pid({"ttft_p99_s": "800us"}) == pid({"ttft_p99_s": 0.0008})
    assert pid({"ttft_p99_s": "2s"}) != pid({"ttft_p99_s": "3s"})
    # a value the SLO refuses (a bare TPOT of 50 s, a unit it does not know) keeps its own id: the point's error says
    assert pid({"tpot_p99_s": 50}) != pid({"tpot_p99_s": "50ms"})
    assert pid({"ttft_p99_s": "2min"}) != pid({"ttft_p99_s": 2})
    assert pid(None) == pid(None)
