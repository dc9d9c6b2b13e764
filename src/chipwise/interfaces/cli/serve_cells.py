"""Cells both serving views write (serve_views' prediction, plan_serve_views' ranking and check): latency
percentiles, the router's name, the caveat of a split between two engines, and the chips a row rents."""

from __future__ import annotations

from typing import Any

from chipwise.interfaces import format as fmt
from chipwise.serve.plan import count_text
from chipwise.workload.serve_scenario import DEFAULT_ROUTER

PERCENTILES = ("p50", "p90", "p99")


#: how the check's footnote names each router (--router)
ROUTER_NAMES = {"least_loaded": "least-loaded", "power_of_two": "power-of-two-choices", "round_robin": "round-robin"}


def router_name(report: dict[str, Any]) -> str:
    """The name the report's router goes by (ROUTER_NAMES; the default router where the report names none)."""
    return ROUTER_NAMES[report.get("router", DEFAULT_ROUTER)]


def latency_stats(d: dict[str, float], unit: tuple[float, str] | None = None) -> str:
    """The p50 / p90 / p99 of `d` in one unit, the largest's ('118 / 318 / 950 ms'), or bare in a given `unit`,
    a column's ('118/318/950'): fmt.latencies."""
    return fmt.latencies([d.get(k) for k in PERCENTILES], unit, sep=" / " if unit is None else "/")


def handover_caveat(engines: str) -> str:
    """A caveat for a split whose pools run two engines ('neuron>trtllm'): no shipping pair hands a KV cache over."""
    ends = engines.split(">")
    if len(ends) != 2 or ends[0] == ends[1]:
        return ""
    return f" [yellow](from {ends[0]} to {ends[1]}: no shipping engine pair hands a KV cache over; assumed one does)[/]"


def rented_mark(row: dict[str, Any]) -> str:
    """' [n]': the chips a row rents, where its provider's units hold more than it uses (else '')."""
    billed = row.get("billed_chips")
    return f" [{count_text(billed)}]" if billed is not None and billed > row["chips"] + 1e-9 else ""
