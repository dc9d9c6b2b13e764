"""Catalog figures as terms of a calculation: read the datacenter and reliability sections by path, and report
each value with its provenance.

Every economic or reliability input chipwise uses is a catalog figure (value, unit, status, source or
derivation) or an explicit user override; `Term` carries the SI value together with that record so results can
say where each number came from (`--sources`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.overrides import SET_ON_COMMAND_LINE, set_on_command_line
from chipwise.catalog.schema import Figure
from chipwise.errors import ChipwiseError


@dataclass(frozen=True)
class Term:
    """One input in SI units with its provenance (catalog key, status, sources, derivation or note)."""

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
        """The JSON form: value as the catalog states it (with unit), SI value, status and provenance."""
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
        out.update(self.extra)
        return out


def node(catalog: Catalog, section: str, *path: str) -> Any:
    """The raw node at `section.path` (a Figure, a mapping or None)."""
    tree: Any = catalog.datacenter if section == "datacenter" else catalog.reliability
    for p in path:
        if not isinstance(tree, dict) or p not in tree:
            return None
        tree = tree[p]
    return tree


def figure(catalog: Catalog, section: str, *path: str) -> Figure:
    """A required catalog figure; a one-line error naming the missing key otherwise."""
    fig = node(catalog, section, *path)
    if not isinstance(fig, Figure) or isinstance(fig.value, str):
        key = ".".join((section, *path))
        raise ChipwiseError(
            f"the catalog has no numeric figure '{key}'. Fix: add it to a catalog file (docs/catalog-format.md)."
        )
    return fig


def term(catalog: Catalog, section: str, *path: str) -> Term:
    """A catalog figure as a Term (SI value plus provenance, and the file or --set it came from where not the
    built-in catalog: extra['origin'])."""
    fig = figure(catalog, section, *path)
    t = from_figure(fig, ".".join((section, *path)))
    origin = catalog.origins.get(f"{section}.{path[0]}") if path else None
    return replace(t, extra={"origin": origin}) if origin else t


def fix_at_origin(t: Term, example: str) -> tuple[str, str]:
    """(where an out-of-range figure came from, the example its fix gives): '0.04 in my.yaml', the file to correct,
    or the --set to give (the bounds messages had called a file's figure 'a catalog file figure', or quoted its
    derivation, and offered a --set)."""
    suffix = "" if t.unit in ("", "1") else t.unit
    origin = str(t.extra.get("origin") or "")
    if origin and origin != "--set" and not set_on_command_line(t.derivation):
        return f"; {t.key} in {origin}", f"{example}{suffix} in {origin}"
    return f"; {t.key}: {t.derivation or SET_ON_COMMAND_LINE}", f"--set {t.key}={example}{suffix}"


def from_figure(fig: Figure, key: str) -> Term:
    return Term(
        value=fig.si,
        key=key,
        unit=fig.unit,
        shown=fig.value,
        status=fig.status,
        source=tuple(fig.source),
        derivation=fig.derivation,
        note=fig.note,
    )


def override(value: float, key: str, unit: str, shown: float | None = None, why: str = "") -> Term:
    """A user-given value (command-line option or keyword argument) in place of the catalog figure."""
    return Term(
        value=value,
        key=key,
        unit=unit,
        shown=value if shown is None else shown,
        status="estimate",
        derivation=why or "given by the user (override of the catalog figure)",
    )


def derived(value: float, key: str, unit: str, derivation: str, status: str = "estimate") -> Term:
    """A value chipwise computes from other figures; `derivation` says how."""
    return Term(value=value, key=key, unit=unit, status=status, derivation=derivation)
