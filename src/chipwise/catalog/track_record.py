"""How far chipwise's predictions have been from published measurements, per metric, by the serving engine and the
chip family a run was priced with: the record `scripts/write_accuracy.py` writes to data/track_record.json from
`chipwise validate` on the published runs (../shared/data and the held-out files in docs/research), which a
prediction quotes beside its figures.

A record answers "how close has chipwise come on runs like mine": half of the published runs of its scope were
predicted within `median_ape_pct`, four in five within `p80_ape_pct`, and the median signed error says which way
the model leans there. The narrowest scope with at least `min_runs` measurements is quoted: the engine on the chip
family, then any engine on the family (the chip's figures are the family's), then the engine on any chip, then any
engine on the vendor's chips, then every run of the kind.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from chipwise.catalog.loader import load_catalog

#: a scope's engine or chip family that stands for all of them
ANY = "*"
#: a scope's chips that are all of one vendor's: VENDOR + "nvidia"
VENDOR = "vendor:"
RECORD_FILE = "track_record.json"
#: the metrics a record is kept for, per kind of run (a training step time is read as its throughput)
METRICS = {
    "serve": ("output_tokens_per_s_per_chip", "tpot_s", "ttft_s"),
    "train": ("tokens_per_s_per_chip",),
}


#: a chip's (family, vendor)
Scope = tuple[str, str]


@dataclass(frozen=True)
class Record:
    """One metric's errors over the published runs of one scope (error = 100 (predicted - measured) / measured)."""

    kind: str
    metric: str
    engine: str
    family: str
    n: int
    held_out: int
    median_ape_pct: float
    p80_ape_pct: float
    median_error_pct: float

    @property
    def scope(self) -> str:
        return scope_label(self.kind, self.engine, self.family)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "scope": self.scope}


@functools.cache
def _load() -> dict[str, Any]:
    path = resources.files("chipwise.catalog") / "data" / RECORD_FILE
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def record_file() -> dict[str, Any]:
    """The whole record as written (generation date, files, minimum runs, groups, staleness guard rows)."""
    return _load()


def scope_label(kind: str, engine: str, family: str) -> str:
    """'vllm on hopper', 'vllm, any chip', 'any engine on hopper', 'any engine on amd chips', 'all serving runs';
    training has no engine: 'hopper', 'aws chips', 'all training runs'."""
    if family == ANY and engine == ANY:
        return "all serving runs" if kind == "serve" else "all training runs"
    chips = chips_label(family)
    if kind == "train":
        return chips
    name = "any engine" if engine == ANY else f"the {engine} profile" if engine == "default" else engine
    return f"{name}, any chip" if family == ANY else f"{name} on {chips}"


def chips_label(family: str) -> str:
    """A scope's chips as outputs name them: a family ('hopper'), a vendor's ('amd chips'), or '*'. A family that
    bears one of its chips' names but holds others too lists them ('trainium1 (trn1, inf2)'): the bare name read as
    that one chip (trn1's alias 'trainium1') while most of the family's runs were inf2's."""
    if family.startswith(VENDOR):
        return f"{family.removeprefix(VENDOR)} chips"
    chips = _family_chips().get(family, {})
    if len(chips) > 1 and any(family.lower() in names for names in chips.values()):
        return f"{family} ({', '.join(chips)})"
    return family


@functools.cache
def _family_chips() -> dict[str, dict[str, frozenset[str]]]:
    """{family: {chip id: the chip's id and aliases, lower case}} of the built-in catalog, whose families the record
    was written with."""
    out: dict[str, dict[str, frozenset[str]]] = {}
    for cid, chip in load_catalog().chips.items():
        out.setdefault(chip.family, {})[cid] = frozenset(n.lower() for n in (cid, *chip.aliases))
    return out


def vendor_scope(vendor: str) -> str:
    """The chip scope of all of a vendor's chips."""
    return VENDOR + vendor


@functools.cache
def _groups(kind: str, metric: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The record's scopes of one metric, by (engine, chip family)."""
    return {(g["engine"], g["family"]): g for g in _load().get(kind, {}).get(metric, [])}


def lookup(kind: str, metric: str, family: str, vendor: str, engine: str = ANY) -> Record | None:
    """The narrowest scope's record for `metric` of a `kind` run on a chip `family` of `vendor` (and serving
    `engine`); None where the record holds nothing for the metric."""
    groups = _groups(kind, metric)
    scopes = [(engine, family), (ANY, family), *([(engine, ANY)] if engine != ANY else []), (ANY, vendor_scope(vendor))]
    for key in [*dict.fromkeys(scopes), (ANY, ANY)]:
        g = groups.get(key)
        if g is not None:
            return Record(kind=kind, metric=metric, **g)
    return None


def track_record(
    kind: str, chip: Scope, engine: str = ANY, metrics: dict[str, tuple[Scope, str]] | None = None
) -> dict[str, Any]:
    """{metric: record JSON} for every metric of `kind` on a chip (its family and vendor); `metrics` may give a
    metric its own (chip, engine), as a disaggregated deployment's TTFT is its prefill pool's and its TPOT its
    decode pool's. Each record names the scope it was `asked` for, which a wider one stands in for where the
    published runs of the asked one are too few (a new or projected chip family, an engine seldom measured)."""
    out: dict[str, Any] = {}
    for metric in METRICS[kind]:
        (family, vendor), eng = (metrics or {}).get(metric, (chip, engine))
        rec = lookup(kind, metric, family, vendor, eng)
        if rec is not None:
            out[metric] = {**rec.as_json(), "asked": scope_label(kind, eng if kind == "serve" else ANY, family)}
    return out
