"""An option plan serve's second look adds (another shape of a chip whose check grew) keeps its chip's price status:
MI355X's, a catalog estimate, had lost its § there."""

from __future__ import annotations

import chipwise.api as cw


def test_a_second_look_keeps_its_chips_estimated_price() -> None:
    got = cw.plan_serve(
        "llama-3.1-70b",
        rate=100,
        input_tokens=1024,
        output_tokens=256,
        slo={"ttft_p99": 2.0, "tpot_p99": 0.05},
        precision="fp8",
        hardware=["mi355x"],
        disaggregated=False,
    )
    ranked = {r["plan"]["max_batch"] for r in got["results"] if r["hardware"] == "mi355x"}
    checked = [v for v in got["verified"] if v["hardware"] == "mi355x"]
    assert len(checked) >= 2 and len(ranked) >= 2  # the first check grew: another batch limit was looked at
    assert all(v["price_estimated"] == ["mi355x"] for v in checked)
