"""Which hardware a request names: 'all', a comma-separated string or a list of chip or system ids."""

from __future__ import annotations

from collections.abc import Sequence

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError


def hardware_ids(catalog: Catalog, spec: str | Sequence[str]) -> list[str]:
    """The ids a --hardware option (or an API/web `hardware` field) names; 'all' is every chip in the catalog.
    The ids themselves are checked where they are looked up (one line with a did-you-mean)."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    ids = [h.strip() for h in items if h.strip()]
    if [h.lower() for h in ids] == ["all"]:
        return list(catalog.chips)
    if not ids:
        raise ChipwiseError("hardware is empty. Fix: give chip or system ids (h100-sxm,trn2) or 'all'.")
    return list(dict.fromkeys(ids))  # a repeated id is ranked once
