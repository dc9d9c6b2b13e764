"""Which hardware a request names: 'all', a comma-separated string or a list of chip or system ids."""

from __future__ import annotations

from collections.abc import Sequence

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware.build import hardware


def hardware_ids(catalog: Catalog, spec: str | Sequence[str]) -> list[str]:
    """The ids a --hardware option (or an API/web `hardware` field) names; 'all' is every chip in the catalog.
    The ids themselves are checked where they are looked up (one line with a did-you-mean). Ids of one system
    (a chip id and its default system's, an alias) are ranked once, under the first given."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    ids = [h.strip() for h in items if h.strip()]
    if [h.lower() for h in ids] == ["all"]:
        return list(catalog.chips)
    if not ids:
        raise ChipwiseError("hardware is empty. Fix: give chip or system ids (h100-sxm,trn2) or 'all'.")
    if "all" in (h.lower() for h in ids):  # not a chip: it had read "unknown chip or system 'all'"
        raise ChipwiseError(
            f"hardware '{','.join(ids)}' lists 'all' among ids: 'all' stands alone. Fix: give 'all' for every chip, "
            "or a list of ids (h100-sxm,trn2)."
        )
    # a repeated id is ranked once, and so is a system named twice: h100-sxm,p5.48xlarge had ranked one fleet twice
    seen: dict[str, str] = {}
    for h in ids:
        seen.setdefault(_system_of(catalog, h), h)
    return list(seen.values())


def _system_of(catalog: Catalog, name: str) -> str:
    """The id of the system a chip or system id names; an unknown name as it is (refused where it is looked up)."""
    try:
        return hardware(catalog).system(name).id
    except ChipwiseError:
        return name
