"""The training plot's hover names a point with the marks its label carries (‡ carried efficiencies, † unfitted
prior efficiencies, § an estimated price), as the ranking table and the web page's tooltip do."""

from __future__ import annotations

from typing import Any

from chipwise.interfaces import plots


def _row(hardware: str, system: str, **marks: Any) -> dict[str, Any]:
    return {"hardware": hardware, "system": system, "time_to_train_s": 20 * 86400, "cost_usd": 4e6, **marks}


def test_the_hover_names_the_marks_its_label_carries() -> None:
    """The hover had read '<b>trn2</b> - trn2.48xlarge' beside the label 'trn2 † §'; it reads as the label does."""
    estimate = {"status": "estimate", "provider": "aws"}
    report = {
        "kind": "plan-train",
        "model": "llama-3.1-70b",
        "chips": 4096,
        "tokens": 15e12,
        "results": [
            _row("mi455x", "mi455x-rack", efficiency_carried_from="cdna4"),
            _row("trn2", "trn2.48xlarge", efficiency_unfitted=True, price_source=estimate),
            _row("trn4", "trn4-ultra", projected=True, efficiency_carried_from="trn2", efficiency_unfitted=True),
            _row("h100-sxm", "p5"),
        ],
    }
    points, missing = plots.training_points(report)
    assert missing == []
    assert [p.label for p in points] == ["mi455x ‡", "trn2 † §", "trn4 (projected) ‡ †", "h100-sxm"]
    assert [p.hover.split("<br>")[0] for p in points] == [
        "<b>mi455x</b> ‡ - mi455x-rack",
        "<b>trn2</b> † § - trn2.48xlarge",
        "<b>trn4</b> (projected) ‡ † - trn4-ultra",
        "<b>h100-sxm</b> - p5",
    ]
    # the § is said in words on the cost line as before: 20 days and $4.00M of the whole run
    assert points[1].hover.split("<br>")[2] == "time 20.0 d, cost $4.00M (price estimated)"
