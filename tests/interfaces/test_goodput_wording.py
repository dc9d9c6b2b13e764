"""predict's goodput row says what it counts: the requests each within every target's limit, which p50 targets met
leave short of 100% ('SLO met' beside '61.7% of requests within the SLO' read as a contradiction)."""

from __future__ import annotations

from chipwise.interfaces.cli.serve_views import _goodput_text


def test_goodput_names_each_limit() -> None:
    text = _goodput_text(0.617, {"ttft_p50_s": 0.080, "tpot_p50_s": 0.015})
    assert text == "61.7% of requests each within 80.0 ms TTFT and 15.0 ms TPOT"


def test_goodput_of_one_target() -> None:
    assert _goodput_text(1.0, {"e2e_p99_s": 2.0}) == "100.0% of requests each within 2.00 s end-to-end"
