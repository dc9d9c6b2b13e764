"""An option plan serve's second look adds (another shape of a chip whose check grew) keeps its chip's price status:
MI355X's, a catalog estimate, had lost its § there (the case is GB300's since stop 93, whose estimate for MI355X's
load now meets the SLO at its first check and takes no second look)."""

from __future__ import annotations

import chipwise.api as cw


def test_a_second_look_keeps_its_chips_estimated_price() -> None:
    got = cw.plan_serve(
        "llama-3.1-70b",
        rate=20,
        input_tokens=8192,
        output_tokens=512,
        slo={"ttft_p99": 2.0, "tpot_p99": 0.04},
        precision="fp8",
        hardware=["gb300"],
        disaggregated=False,
    )
    ranked = {r["plan"]["max_batch"] for r in got["results"] if r["hardware"] == "gb300"}
    checked = [v for v in got["verified"] if v["hardware"] == "gb300"]
    assert len(checked) >= 2 and len(ranked) >= 2  # the first check grew: another batch limit was looked at
    assert all(v["price_estimated"] == ["gb300"] for v in checked)
