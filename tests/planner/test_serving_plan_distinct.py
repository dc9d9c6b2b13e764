"""plan serve ranks and simulates each option once: Llama 3.1 70B at 30 req/s on trn2 had listed TP32 b104 x32 twice,
its second look at the next batch limit (b128, more than its KV cache holds) coming back as the option checked."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.planner.serving_plan as sp
import chipwise.planner.serving_shortlist as sv
from chipwise.catalog import Catalog
from chipwise.planner import serving_choice
from chipwise.workload.load import Load


def _plan(catalog: Catalog, **kw: Any) -> dict[str, Any]:
    return sp.plan_serving(
        catalog, "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=20.0), 1024, 256, {"ttft_p99": 2.0},
        precision="fp8", **kw,
    )  # fmt: skip


def test_an_option_asked_for_twice_is_ranked_once(catalog: Catalog) -> None:
    got = _plan(catalog, verify=0, speculative="none,none")
    keys = [sv._option_key(r) for r in got["results"]]
    assert len(keys) == len(set(keys)) == 2  # one colocated fleet and one split, each once


def test_a_second_look_that_finds_a_ranked_option_again_is_not_simulated_again(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = serving_choice.choose_any  # what the shortlist calls

    def unfixed(*args: Any, fixed: dict[str, int] | None = None, **kw: Any) -> Any:
        """Every other shape looked at comes back as the option ranked, as trn2's b128 came back as its b104."""
        return real(*args, **kw)

    monkeypatch.setattr(sv, "choose_any", unfixed)

    def grown(*args: Any) -> tuple[list[dict[str, Any]], int]:
        row = args[5][0]  # the check of the cheapest option grew its fleet, and missed the SLO
        check = {"rank": 1, "disaggregated": False, "chips": row["chips"] + 1, "keeps_up": True, "slo_met": False}
        return [{**check, "cost_usd_per_hour": row["cost_usd_per_hour"] * 2}], 1

    checked: list[dict[str, Any]] = []
    monkeypatch.setattr(sp, "verify_options", grown)
    monkeypatch.setattr(sv, "check_option", lambda *a: checked.append(a[5]))
    got = _plan(catalog, verify=1, disaggregated=False)
    assert len(got["results"]) == 1 and checked == []
