"""Reliability inputs read from the catalog's `reliability` section, each with its provenance.

(The economics layer has its own equivalent; the two layers sit side by side and do not import each other.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import Figure
from chipwise.errors import ChipwiseError


@dataclass(frozen=True)
class Input:
    """One input in SI units with where it came from."""

    value: float
    key: str
    unit: str = ""
    shown: float | str = ""
    status: str = "estimate"
    source: tuple[str, ...] = ()
    derivation: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "value": self.shown if self.shown != "" else self.value,
            "unit": self.unit,
            "si": self.value,
            "status": self.status,
            "source": list(self.source),
        }
        if self.derivation:
            out["derivation"] = self.derivation
        if self.note:
            out["note"] = self.note
        return out

    def scaled(self, factor: float) -> Input:
        """The same input in another SI unit (e.g. a per-hour rate as per-second)."""
        return replace(self, value=self.value * factor)


def catalog_input(catalog: Catalog, *path: str) -> Input:
    """A required figure of `reliability.<path>`; a one-line error naming it when missing."""
    node: Any = catalog.reliability
    for p in path:
        node = node.get(p) if isinstance(node, dict) else None
    key = ".".join(("reliability", *path))
    if not isinstance(node, Figure) or isinstance(node.value, str):
        raise ChipwiseError(
            f"the catalog has no numeric figure '{key}'. Fix: add it to a catalog file (docs/catalog-format.md)."
        )
    return Input(
        value=node.si,
        key=key,
        unit=node.unit,
        shown=node.value,
        status=node.status,
        source=tuple(node.source),
        derivation=node.derivation,
        note=node.note,
    )


def given(value: float, key: str, unit: str, why: str = "given by the user (override of the catalog figure)") -> Input:
    return Input(value=value, key=key, unit=unit, shown=value, status="estimate", derivation=why)


def derived(value: float, key: str, unit: str, derivation: str, status: str = "estimate") -> Input:
    return Input(value=value, key=key, unit=unit, status=status, derivation=derivation)
