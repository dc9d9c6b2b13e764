"""The One deployment tab draws the rows `chipwise predict` gives a serving prediction about its inputs: "precision
from" (where the precisions the scenario left to chipwise came from) and "bursts" (a replayed trace's busiest window),
with predict's labels and text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chipwise.api as cw
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.serve_views import caveats
from chipwise.interfaces.web.routes import Settings

from .test_web import needs_node
from .test_web_scatter_and_serving_text import _answer, _draw_serve

#: the tester's request: gpt-oss-120b left at precision auto, no kv_precision
GPT_OSS = {"kind": "serve", "model": "gpt-oss-120b", "hardware": "tpu-v6e", "chips": 8, "arrival_rate": 2,
           "input_tokens": 1024, "output_tokens": 256, "requests": 300}  # fmt: skip


@needs_node
def test_a_precision_left_to_chipwise_says_where_it_came_from() -> None:
    """predict prints 'precision from' with the answer's precision_source; the page had drawn no such row."""
    answer = _answer("/api/predict", GPT_OSS, Settings())
    said = (
        "weights: gpt-oss-120b's checkpoint as released (mxfp4; precision auto); KV cache: bf16, the engine's "
        "default (as the weights, held in bf16; kv_precision sets it)"
    )
    assert answer["precision_source"] == said
    assert _draw_serve(answer)["precision from"] == said
    # both given: predict prints no row, and neither does the page
    given = _answer("/api/predict", {**GPT_OSS, "precision": "bf16", "kv_precision": "bf16"}, Settings())
    assert given.get("precision_source") is None
    assert "precision from" not in _draw_serve(given)


def _bursty_trace(path: Path) -> None:
    """80 requests a second apart (0 to 79 s), then 80 a tenth of a second apart (80.0 to 87.9 s)."""
    times = [float(k) for k in range(80)] + [80 + j / 10 for j in range(80)]
    rows = "".join(f"{t:.1f},512,64\n" for t in times)
    path.write_text("arrival_s,input_tokens,output_tokens\n" + rows, encoding="utf-8")


@needs_node
def test_a_replayed_traces_bursts_are_a_row_as_predict_gives_them(tmp_path: Path) -> None:
    """A trace is not read by /api/predict, but a prediction of one drawn on the page carries predict's 'bursts'
    row (serve_views.caveats): the trace spans 87.9 s, so its window is a quarter of that, 21.975 s; its mean is
    159 / 87.9 = 1.81 req/s, and the window from 66 s holds 14 + 80 = 94 arrivals, 4.28 req/s, 2.4x the mean."""
    trace = tmp_path / "burst.csv"
    _bursty_trace(trace)
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "trace": str(trace)}
    result: dict[str, Any] = json.loads(json.dumps(fmt.jsonable(cw.predict(scenario)), allow_nan=False))
    said = (
        "the trace's busiest 22 s offers 4.28 req/s, 2.4x its mean 1.81: the offered load is the trace's mean, "
        "and the latencies its replay, bursts included"
    )
    assert result["load"]["burst_note"] == said
    result["caveats"] = caveats(result)  # as /api/predict adds them to a serving prediction
    assert _draw_serve(result)["bursts"] == said
