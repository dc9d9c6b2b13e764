"""How `chipwise claims` words a figure and says where it came from (planner.claims): ratios, percentages and
savings as text, a price with its status, and whether a price or a catalog figure is an estimate of chipwise's or
the catalog's, a published figure or one set on the command line."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from chipwise.catalog.overrides import SET_ON_COMMAND_LINE, USER_PROVIDER, set_on_command_line
from chipwise.economics.pricing import PriceQuote


def times(v: float) -> str:
    """A ratio as '2.00x', or '-' where there is none (NaN)."""
    return f"{v:.2f}x" if math.isfinite(v) else "-"


def times_against(v: float, targets: Sequence[float]) -> str:
    """`v` as times shows it, with as many more decimals as keep it on its side of each target: claim 1d's 1.3986x had
    printed '1.40x' beside 'it would not hold' for 1.4x (a ratio holds at a target or above)."""
    if not math.isfinite(v):
        return "-"
    for digits in range(2, 7):
        text = f"{v:.{digits}f}"
        if all((float(text) >= t) == (v >= t) for t in targets):
            return f"{text}x"
    # within 5e-7 below a target: cut, not rounded, so that it reads below
    return f"{math.floor(v * 1e6) / 1e6:.6f}x"


def whole_percent(v: float) -> str:
    """A share in whole percents, '42%' ('<0.1%' below a thousandth), or '-' where there is none (NaN)."""
    if not math.isfinite(v):
        return "-"
    return "<0.1%" if 0 <= v < 1e-3 else f"{100 * v:.0f}%"


def saving_text(v: float) -> str:
    """A saving as 'saves 42%', a negative one as 'costs 12% more'."""
    return f"saves {whole_percent(v)}" if v >= 0 else f"costs {whole_percent(-v)} more"


def price_is_estimate(record: Any) -> bool:
    """Whether a price (a quote's record) is an estimate of chipwise's or the catalog's: not published, and not set on
    the command line (a price the user gives is taken as given)."""
    if not isinstance(record, dict):
        return True
    return record.get("provider") != USER_PROVIDER and record.get("status") in ("estimate", "projected")


def figure_is_estimate(ref: Any) -> bool:
    """Whether a catalog figure (a provenance record) is an estimate or projection and not set on the command line."""
    if ref is None:
        return True
    return ref.status in ("estimate", "projected") and not set_on_command_line(ref.derivation)


def price_text(q: PriceQuote | None) -> str:
    """'$2.24 [spec]', '$2.73 [estimate]', '$4.80 [set on the command line]', or '-'."""
    if q is None:
        return "-"
    status = SET_ON_COMMAND_LINE if q.provider == USER_PROVIDER else q.status
    return f"${q.usd_per_chip_hour:.2f} [{status}]"


def figure_label(ref: Any, default: str = "estimate") -> str:
    """A catalog figure's status, or 'set on the command line' for one given by --set (whose status is the catalog
    figure's it replaced)."""
    if ref is None:
        return default
    return SET_ON_COMMAND_LINE if set_on_command_line(ref.derivation) else str(ref.status)
