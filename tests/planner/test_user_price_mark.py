"""A price the user set (--set ID.price=..., provider 'user') is the user's, not a catalog estimate: plan serve had
marked it '§ priced by an estimate' under its own WHAT-IF line, and plan lifecycle's training options (and plan
hetero's table) had marked it too. One rule (economics.pricing.catalog_estimate) for plan serve, the fleet, plan
train's table and its plot, and plan lifecycle's training options."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog.loader import load_catalog
from chipwise.catalog.overrides import USER_PROVIDER
from chipwise.economics.pricing import catalog_estimate
from chipwise.planner.lifecycle import _training_options
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import load_of


@pytest.mark.parametrize(
    ("record", "marked"),
    [
        ({"status": "estimate", "provider": "aws"}, True),  # no published offer: §
        ({"status": "estimate", "provider": "user"}, False),  # --set: the user's own figure
        ({"status": "published", "provider": "aws"}, False),
        ({"basis": "owned", "status": "estimate", "tco": {}}, True),  # an owned cost on estimated inputs
        ({}, False),
        (None, False),
    ],
)
def test_catalog_estimate_marks_only_a_catalog_estimate(record: dict[str, Any] | None, marked: bool) -> None:
    assert catalog_estimate(record) is marked


def test_plan_serve_leaves_a_set_price_unmarked() -> None:
    """h100-sxm at $2.00 by --set: no § (it had read price_estimated ['h100-sxm']); gaudi3's catalog estimate keeps
    its §. Ranked by the estimate alone (verify=0): the marks are the ranking's."""
    cat = load_catalog((), ["h100-sxm.price=2"])
    load = load_of(5, None, False, flag="")
    report = plan_serving(cat, "llama-3.1-8b", ["h100-sxm", "gaudi3"], load, 1024, 256, verify=0, disaggregated=False)
    marks = {r["hardware"]: r["price_estimated"] for r in report["results"]}
    assert marks == {"h100-sxm": [], "gaudi3": ["gaudi3"]}
    assert list(report["price_estimates"]) == ["gaudi3"]
    h100 = next(r for r in report["results"] if r["hardware"] == "h100-sxm")
    assert h100["cost_usd_per_hour"] == pytest.approx(2.0)  # 1 chip at the price set


def _result(status: str, provider: str) -> dict[str, object]:
    return {
        "hardware": "h100-sxm",
        "plan": {},
        "cost_usd": 1.0,
        "price_source": {"status": status, "provider": provider, "derivation": "how"},
    }


def test_lifecycle_marks_only_the_catalogs_estimates() -> None:
    """plan lifecycle's training options take a --set price as given and mark a catalog estimate alone."""
    options = _training_options({"results": [_result("estimate", USER_PROVIDER), _result("estimate", "neocloud")]})
    assert [o["price_estimated"] for o in options] == [False, True]
