"""`chipwise sweep show` writes a serving point's latencies as `chipwise predict` does (format.latency, three
significant figures): h200 at 20 req/s had read TTFT p99 176.5 ms in the sweep and 176 ms in predict."""

from __future__ import annotations

from rich.console import Console

from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.sweep_cmd import _rows_table


def test_sweep_table_rounds_latencies_as_predict_does() -> None:
    row = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h200", "chips": 1, "what_if": "baseline",
           "scenario": {"arrival_rate": 20}, "plan": {"tp": 1, "max_batch": 256, "replicas": 1},
           "output_tokens_per_s": 2540.0, "ttft_p99_s": 0.17647, "tpot_p99_s": 0.0012345, "slo_met": True,
           "cost_usd_per_mtok": 0.5}  # fmt: skip
    console = Console(width=200, record=True)
    console.print(_rows_table("s", [row], ["arrival_rate"]))
    cells = console.export_text().split()
    assert fmt.latency(0.17647) == "176 ms" and fmt.latency(0.0012345) == "1.23 ms"
    assert "176" in cells and "176.5" not in cells  # '176 ms', split on the space
    assert "1.23" in cells and "1.2" not in cells
