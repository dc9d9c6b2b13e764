"""A split's wait for the decode pool counts where its TTFT's waits are read (format.waiting_share): predict's
near-capacity sentence on the page as in the terminal, and plan serve's advice for a missed TTFT, which had read the
wait to start alone; and the page's goodput row is worded as predict's (serve_views._goodput_text)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.serve_views import _load_text
from chipwise.interfaces.web.routes import POST_ROUTES, Settings
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load

from .test_format import _report
from .test_web import needs_node
from .test_web_page_figures import _draw_serve

#: a mean TTFT of 100 ms: 10 ms waiting to start, 80 ms for the decode pool (90.0% waiting; 10.0% to start alone)
WAITS = {"ttft_s": {"mean": 0.1, "p99": 0.2}, "ttft_wait_s": {"mean": 0.01}, "ttft_decode_wait_s": {"mean": 0.08}}


def test_plan_serves_advice_counts_the_decode_wait() -> None:
    """0.6 s waiting for the decode pool and 0.1 s to start, of a 0.9 s mean TTFT: 77.8% waiting, mostly for decode
    slots; it had read 'mostly its prompts' own iterations (the wait to start 11.1% of the mean)'."""
    report: dict[str, Any] = _report(False, True)
    report["slo"] = {"ttft_p99": 1.0, "tpot_p99": 0.05}
    report["best"].update(
        {"ttft_s": {"mean": 0.9, "p99": 1.6}, "ttft_wait_s": {"mean": 0.1}, "ttft_decode_wait_s": {"mean": 0.6}}
    )
    text = fmt.plan_serve_verdict(report)[0]
    assert text.endswith(
        "its TTFT is mostly the waits to start and for the decode pool (77.8% of the mean): more decode replicas help"
    )
    report["best"]["ttft_decode_wait_s"] = {"mean": 0.2}  # 0.3 / 0.9: the prompts' own iterations
    assert (
        "(the waits to start and for the decode pool 33.3% of the mean): a faster prefill"
        in (fmt.plan_serve_verdict(report)[0])
    )


def test_a_checked_split_reports_its_decode_wait(catalog: Catalog) -> None:
    """plan serve's checked splits carry ttft_decode_wait_s, which _ttft_miss reads (it had not been reported);
    a deployment of one pool has no such wait."""
    report = plan_serving(catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=4.0), 8000, 64, "ttft_p99=1.5s")
    split = [c for c in report["verified"] if c["disaggregated"]]
    whole = [c for c in report["verified"] if not c["disaggregated"]]
    assert split and whole
    assert all(c["ttft_decode_wait_s"]["mean"] >= 0.0 for c in split)
    assert not any("ttft_decode_wait_s" in c for c in whole)


def test_the_terminal_reads_both_waits_near_capacity() -> None:
    assert fmt.waiting_share(WAITS) == pytest.approx(0.9)
    load = {"utilisation": 0.95, "capacity_requests_per_s": 10.0}
    text = _load_text(load, fmt.waiting_share(WAITS), fmt.waits_named(WAITS))
    assert text == (
        "95.0% of the 10 req/s the deployment sustains: near capacity, 90.0% of the mean TTFT is the waits to start "
        "and for the decode pool"
    )


@needs_node
def test_the_page_reads_both_waits_near_capacity_and_words_goodput_as_predict() -> None:
    """A real split's answer at 95% of capacity (its waits set as WAITS): the page had read 10.0% 'the wait to
    start'; and p50 targets' goodput, '61.7% of requests within the SLO', now '... each within 80.0 ms TTFT and
    15.0 ms TPOT' as predict prints it."""
    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "tpu-v6e", "precision": "bf16",
                "input_tokens": 512, "output_tokens": 64, "arrival_rate": 1, "requests": 60,
                "slo": {"ttft_p50_s": 0.08, "tpot_p50_s": 0.015},
                "plan": {"disaggregated": True, "prefill": {"hardware": "tpu-v6e", "replicas": 1, "tp": 1},
                         "decode": {"hardware": "gcp-a3-megagpu-8g", "replicas": 1, "tp": 1}}}  # fmt: skip
    answer: dict[str, Any] = copy.deepcopy(POST_ROUTES["/api/predict"](scenario, Settings()))
    answer["load"]["utilisation"] = 0.95
    for key, stats in WAITS.items():
        answer[key].update(stats)
    answer["goodput"]["fraction"] = 0.617
    shown = _draw_serve(answer)
    assert shown["offered load"].endswith(
        " (near capacity: 90.0% of the mean TTFT is the waits to start and for the decode pool)"
    )
    assert shown["goodput"] == "61.7% of requests each within 80.0 ms TTFT and 15.0 ms TPOT"
