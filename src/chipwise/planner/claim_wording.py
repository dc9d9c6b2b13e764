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


def holds_from_ratio(claimed: float) -> float:
    """The least ratio that reads as a claimed 'Nx': chipwise reads every claimed ratio at one decimal, as vendors
    print them ('4.4x'), so 4.4x holds from 4.35, 4x from 3.95 (docs/claims.md, how a claimed figure is read; the
    checks had used 4.35 for '4.4x', 3.9 for '4x the memory' and 4.0 for '4x energy efficiency')."""
    return round(claimed - 0.05, 9)


def holds_from_share(claimed: float) -> float:
    """The least share that reads as a claimed 'P%' at whole percents: 50% holds from 49.5%, 40% from 39.5%."""
    return round(claimed - 0.005, 9)


def at_most(v: float, decimals: int) -> float:
    """`v` cut down to `decimals` decimals: a figure printed as 'needs <= X' that, given, still does it (3a's
    $5.5958 had printed '<= $5.60', and $5.60 missed 50%)."""
    scale = 10.0**decimals
    return math.floor(v * scale) / scale


def whole_percent(v: float) -> str:
    """A share in whole percents, '42%' ('<0.1%' below a thousandth), or '-' where there is none (NaN)."""
    if not math.isfinite(v):
        return "-"
    return "<0.1%" if 0 <= v < 1e-3 else f"{100 * v:.0f}%"


def saving_text(v: float) -> str:
    """A saving as 'saves 42%', a negative one as 'costs 12% more'."""
    return f"saves {whole_percent(v)}" if v >= 0 else f"costs {whole_percent(-v)} more"


def estimates_text(named: dict[str, list[str]]) -> str:
    """'trn3's TDP and host share; h200's unit price' for the estimated figures of each part a verdict turns on (the
    parts with none left out), or ''."""
    return "; ".join(f"{name}'s {_and(figs)}" for name, figs in named.items() if figs)


def _and(items: Sequence[str]) -> str:
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


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
