"""A price the user set is taken as given in plan lifecycle's training options (and plan hetero's table), as in every
other table (economics.pricing.catalog_estimate): they had marked a --set price a catalog estimate."""

from __future__ import annotations

from chipwise.economics.pricing import USER_PROVIDER
from chipwise.planner.lifecycle import _training_options


def _result(status: str, provider: str) -> dict[str, object]:
    return {
        "hardware": "h100-sxm",
        "plan": {},
        "cost_usd": 1.0,
        "price_source": {"status": status, "provider": provider, "derivation": "how"},
    }


def test_lifecycle_marks_only_the_catalogs_estimates() -> None:
    options = _training_options({"results": [_result("estimate", USER_PROVIDER), _result("estimate", "neocloud")]})
    assert [o["price_estimated"] for o in options] == [False, True]
