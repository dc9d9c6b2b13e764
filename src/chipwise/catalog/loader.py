"""Load the built-in catalog, merge users' YAML files over it, apply `--set` overrides, validate it all.

The built-in data is parsed once per process; a user's files and `--set` figures are merged over a copy and the
result is validated exactly as strictly as the built-in data. Errors are one line naming the file, the entry
and the field.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import yaml
from pydantic import BaseModel, ValidationError

from chipwise.catalog.fields import Fields, fields_of, figure_paths, item_name, mode_order_problem, range_problem
from chipwise.catalog.schema import (
    PRICING_MODES,
    ChipEntry,
    FabricEntry,
    Figure,
    ModelIndexEntry,
    PriceEntry,
    SystemEntry,
)
from chipwise.catalog.strict_yaml import load_yaml
from chipwise.catalog.units import SI_UNIT, UNITS, from_si, parse_quantity, quantity, to_si, units_of
from chipwise.errors import ChipwiseError, UnknownNameError, read_text, user_file

SECTIONS: tuple[str, ...] = (
    "sources",
    "chips",
    "systems",
    "prices",
    "fabrics",
    "efficiency",
    "engines",
    "datacenter",
    "reliability",
    "models",
)
BUILTIN = "built-in catalog"
#: the most ids an error about an unknown one lists in full (more: it names the section to look in)
MAX_LISTED = 20


@dataclass(frozen=True, eq=False)
class Catalog:
    """The validated catalog. Data only: the hardware layer builds typed SI objects from it."""

    chips: dict[str, ChipEntry]
    systems: dict[str, SystemEntry]
    prices: list[PriceEntry]
    fabrics: dict[str, FabricEntry]
    efficiency: dict[str, dict[str, Any]]
    engines: dict[str, dict[str, Any]]
    datacenter: dict[str, Any]
    reliability: dict[str, Any]
    models: dict[str, ModelIndexEntry]
    sources: dict[str, str]
    origins: dict[str, str] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    #: built-in prices a --catalog file's prices replaced (_replace_prices): out of every lookup, kept as the history
    #: a built-in commitment was listed against (economics.pricing._rescaled)
    replaced: tuple[PriceEntry, ...] = ()

    def price_origin(self, entry: PriceEntry) -> str:
        """Where a price comes from: a --catalog file's path, '--set', or the built-in catalog (a replaced one too)."""
        i = next((i for i, p in enumerate(self.prices) if p is entry), None)
        return BUILTIN if i is None else self.origins.get(f"prices.{i}", BUILTIN)

    def source_text(self, key: str) -> str:
        """A source key's citation, or the key itself when it is already a citation."""
        return self.sources.get(key, key)

    def model_config(self, preset: str) -> dict[str, Any]:
        """The Hugging Face config.json of a model preset."""
        entry = self.models[preset]
        origin = self.origins.get(f"models.{preset}", BUILTIN)
        if origin == BUILTIN:
            return dict(_builtin_model_config(entry.file))
        return _read_json(Path(origin).parent / entry.file)


def _data_dir() -> Path:
    return Path(str(resources.files("chipwise.catalog") / "data"))


def _read_yaml(path: Path) -> dict[str, Any]:
    text = read_text(user_file(path, "catalog file", "check the path"), "catalog file", "save it as UTF-8 YAML")
    try:
        data = load_yaml(text, fast=True)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ChipwiseError(
            f"catalog file '{path}' is not valid YAML{where}: {problem}. Fix: correct the YAML syntax there."
        ) from None
    if data is None:  # empty, or comments only: a truncated or unsaved override had silently changed nothing
        raise ChipwiseError(
            f"catalog file '{path}' is empty. Fix: give it sections ({', '.join(SECTIONS)}); see "
            "docs/catalog-format.md."
        )
    if not isinstance(data, dict):
        raise ChipwiseError(
            f"catalog file '{path}' must be a mapping with sections ({', '.join(SECTIONS)}). "
            "Fix: see docs/catalog-format.md."
        )
    unknown = [k for k in data if k not in SECTIONS and k != "meta"]
    if unknown:
        raise ChipwiseError(
            f"catalog file '{path}' has unknown section '{unknown[0]}'. Fix: use only {', '.join(SECTIONS)}."
        )
    return data


def _read_json(path: Path) -> dict[str, Any]:
    text = read_text(path, "model config", "save it as UTF-8 JSON (a Hugging Face config.json)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ChipwiseError(
            f"'{path}' is not valid JSON (line {exc.lineno}: {exc.msg}). Fix: correct the JSON syntax."
        ) from None
    if not isinstance(data, dict):
        raise ChipwiseError(f"'{path}' must hold a JSON object. Fix: give a Hugging Face config.json.")
    return data


@functools.cache
def _builtin_model_config(file: str) -> Mapping[str, Any]:
    return _read_json(_data_dir() / "models" / file)


@functools.cache
def _builtin_raw() -> dict[str, Any]:
    data_dir = _data_dir()
    merged: dict[str, Any] = {}
    for name in sorted(p.name for p in data_dir.glob("*.yaml")):
        _merge_file(merged, _read_yaml(data_dir / name), origins={}, origin=BUILTIN, replaced=[])
    index = data_dir / "models" / "index.yaml"
    if index.exists():
        _merge_file(merged, _read_yaml(index), origins={}, origin=BUILTIN, replaced=[])
    return merged


def _is_figure(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and "status" in node


def _deep_merge(base: dict[str, Any], new: Mapping[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and not _is_figure(value):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)


def _merge_file(
    merged: dict[str, Any], data: Mapping[str, Any], origins: dict[str, str], origin: str, replaced: list[Any]
) -> None:
    for section, body in data.items():
        if section == "meta":
            continue
        if section == "prices":
            if not isinstance(body, list):
                raise ChipwiseError(
                    f"{origin}: 'prices' must be a list of price entries. Fix: see docs/catalog-format.md."
                )
            prices = merged.setdefault("prices", [])
            if origin != BUILTIN:
                _replace_prices(prices, origins, body, origin, replaced)
            start = len(prices)
            prices.extend(copy.deepcopy(body))
            for i in range(len(body)):
                origins[f"prices.{start + i}"] = origin
            continue
        if not isinstance(body, dict):
            raise ChipwiseError(_section_shape(origin, section, body))
        target = merged.setdefault(section, {})
        for raw_key, value in body.items():
            key = str(raw_key)
            if isinstance(value, dict) and isinstance(target.get(key), dict) and not _is_figure(value):
                _deep_merge(target[key], value)
            else:
                target[key] = copy.deepcopy(value)
            origins[f"{section}.{key}"] = origin


#: what makes two prices the same offer, besides the region: a user file's price replaces the built-in ones of its
#: offer in its region, or in every region of its provider where it names none
OFFER_KEY: tuple[str, ...] = ("system", "chip", "provider", "mode")


def _offer(entry: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(entry.get(f) or "") for f in OFFER_KEY)


def _price_date(entry: Mapping[str, Any]) -> str:
    return "" if entry.get("date") is None else str(entry["date"])


def _replace_prices(
    prices: list[Any], origins: dict[str, str], body: Sequence[Any], origin: str, replaced: list[Any]
) -> None:
    """Move to `replaced` the built-in prices a user file's prices (`body`) replace: those of the same offer
    (OFFER_KEY, in the file price's region, or in any region where it names none) dated on or after the file's
    oldest price of it. The newest price wins (economics.pricing), so a negotiated rate dated before the catalog's
    list price had lost to it in silence, and one without a region to the catalog's regional price; the older
    built-in prices stay as its history (what an `as_of` date before the file's reads). A file's price needs a date,
    which places it in that history (an undated one had wiped it). A built-in commitment is carried from the
    built-in on-demand rate of its day, replaced or not, to the one in use (pricing._rescaled). Built-in entries are
    those without an origin (user files' are `prices.INDEX`)."""
    since: dict[tuple[tuple[str, ...], str], str] = {}
    for entry in body:
        if not isinstance(entry, dict):
            continue  # validation names it
        date = _price_date(entry)
        if not date:
            label = entry.get("system") or entry.get("chip") or "?"
            raise ChipwiseError(
                f"{origin}: price for {label} ({entry.get('provider')} {entry.get('mode')}) has no date. Fix: give "
                "the date of the quote (date: '2026-01'): a file's price replaces the catalog's prices of its offer "
                "from that date on, and the older ones stay its history."
            )
        key = (_offer(entry), str(entry.get("region") or ""))
        since[key] = min(since.get(key, date), date)
    kept = []
    for i, entry in enumerate(prices):
        was = origins.pop(f"prices.{i}", None)
        if was is None and isinstance(entry, dict):
            offer = _offer(entry)
            dates = [since[k] for k in ((offer, str(entry.get("region") or "")), (offer, "")) if k in since]
            if dates and _price_date(entry) >= min(dates):
                replaced.append(entry)
                continue
        kept.append((entry, was))
    prices[:] = [entry for entry, _ in kept]
    origins.update({f"prices.{i}": was for i, (_, was) in enumerate(kept) if was is not None})


#: what each mapping section maps, and an example of its form, for the message about a section of another shape
_SECTION_SHAPES: dict[str, tuple[str, str]] = {
    "sources": ("source keys to citations", "sources: {KEY: 'citation'}"),
    "datacenter": ("fields", "datacenter: {pue: {aws: {...}}}"),
    "reliability": ("fields", "reliability: {FIELD: {...}}"),
}


def _section_shape(origin: str, section: str, body: Any) -> str:
    """The one line for a section that is not a mapping (a list of entries with an `id:` each, say): its form, with
    the first listed entry's id in the example where it has one."""
    first = body[0] if isinstance(body, list) and body else None
    ident = first.get("id") if isinstance(first, dict) else None
    what, example = _SECTION_SHAPES.get(section, ("ids to entries", f"{section}: {{{ident or 'ID'}: {{...}}}}"))
    keyed = isinstance(body, list) and section not in _SECTION_SHAPES
    listed = ", each entry under its id, not a list item" if keyed else ""
    return (
        f"{origin}: section '{section}' must be a mapping of {what}, not {_kind_of(body)}. Fix: write "
        f"{example}{listed} (docs/catalog-format.md)."
    )


def _kind_of(node: Any) -> str:
    """What a YAML node is, in a message: a list, a number, text, ..."""
    if node is None:
        return "empty"
    if isinstance(node, list):
        return "a list"
    if isinstance(node, bool):
        return "true/false"
    if isinstance(node, int | float):
        return "a number"
    return "text" if isinstance(node, str) else type(node).__name__


def _fmt_validation(exc: ValidationError, where: str) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"] if p not in ("function-after",))
    msg = str(err["msg"]).removeprefix("Value error, ")
    field_txt = f".{loc}" if loc else ""
    return f"{where}{field_txt}: {msg}. Fix: correct that figure (format: docs/catalog-format.md)."


def _validate(
    raw: dict[str, Any], origins: dict[str, str], overrides: tuple[str, ...], replaced: Sequence[Any] = ()
) -> Catalog:
    def where(section: str, key: str) -> str:
        origin = origins.get(f"{section}.{key}", BUILTIN)
        return f"{origin}: {section}.{key}"

    def build(section: str, model: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, body in (raw.get(section) or {}).items():
            if not isinstance(body, dict):
                raise ChipwiseError(
                    f"{where(section, key)}: an entry must be a mapping of fields. Fix: see docs/catalog-format.md."
                )
            try:
                out[key] = model.model_validate(body)
            except ValidationError as exc:
                raise ChipwiseError(_fmt_validation(exc, where(section, key))) from None
        return out

    # names first: a partial override under another case's id (H100-SXM:) is no override of h100-sxm but a new
    # entry, and had been told 'family: Field required' for it, not that the id is taken
    _check_names({section: raw.get(section) or {} for section in ("chips", "systems")}, origins)
    chips: dict[str, ChipEntry] = build("chips", ChipEntry)
    systems: dict[str, SystemEntry] = build("systems", SystemEntry)
    fabrics: dict[str, FabricEntry] = build("fabrics", FabricEntry)
    models: dict[str, ModelIndexEntry] = build("models", ModelIndexEntry)
    prices: list[PriceEntry] = []
    for i, body in enumerate(raw.get("prices") or []):
        try:
            prices.append(PriceEntry.model_validate(body))
        except ValidationError as exc:
            label = body.get("system") or body.get("chip") or i if isinstance(body, dict) else i
            raise ChipwiseError(
                _fmt_validation(exc, f"{origins.get(f'prices.{i}', BUILTIN)}: price for {label}")
            ) from None
    trees = {}
    for section in ("efficiency", "engines", "datacenter", "reliability"):
        body = raw.get(section) or {}
        trees[section] = _validate_tree(body, section, origins)
    for sid, system in systems.items():
        if system.chip not in chips and not system.members:
            raise ChipwiseError(
                f"{where('systems', sid)}: chip '{system.chip}' is not in the catalog. "
                "Fix: add the chip or correct the id."
            )
        for member in system.members:
            if member not in chips:
                _unknown(where("systems", sid), "member chip", member, chips, "chips")
        for fab in (system.scaleout.fabric, system.scaleup.fabric):
            if fab and fabrics and fab not in fabrics:
                _unknown(where("systems", sid), "fabric", fab, fabrics, "fabrics")
    _check_trees(raw, trees, origins)
    _check_entry_ranges({"chips": chips, "systems": systems}, origins)
    families = trees["efficiency"]
    for cid, chip in chips.items():
        if systems and chip.default_system not in systems:
            _unknown(where("chips", cid), "default_system", chip.default_system, systems, "systems")
        home = systems.get(chip.default_system)
        if home is not None and home.chip != cid:
            # naming the chip builds its default system: one of another chip had run 'mychip' as 8 x h100-sxm
            own = sorted(sid for sid, s in systems.items() if s.chip == cid)
            hybrid = " (a hybrid's member types other than its `chip` run on their own systems)" if home.members else ""
            fix = f"use one of {', '.join(own)}" if own else f"add a system with `chip: {cid}` and name it"
            raise ChipwiseError(
                f"{where('chips', cid)}: default_system '{chip.default_system}' is a system of {home.chip}, not of "
                f"{cid}{hybrid}: naming {cid} would run {home.chips} x {home.chip}. Fix: {fix} "
                "(docs/catalog-format.md)."
            )
        if families and chip.family not in families:
            # a chip of no efficiency family took the default's fractions: 'hoper' had priced a Hopper at 54% MFU
            _unknown(where("chips", cid), "family", chip.family, families, "efficiency")
    for price in prices:
        if price.system and price.system not in systems:
            raise ChipwiseError(f"price entry names unknown system '{price.system}'. Fix: correct the system id.")
        if price.chip and price.chip not in chips:
            raise ChipwiseError(f"price entry names unknown chip '{price.chip}'. Fix: correct the chip id.")
    sources = {str(k): str(v) for k, v in (raw.get("sources") or {}).items()}
    return Catalog(
        chips=chips,
        systems=systems,
        prices=prices,
        fabrics=fabrics,
        efficiency=trees["efficiency"],
        engines=trees["engines"],
        datacenter=trees["datacenter"],
        reliability=trees["reliability"],
        models=models,
        sources=sources,
        origins=dict(origins),
        overrides=overrides,
        replaced=tuple(PriceEntry.model_validate(p) for p in replaced),
    )


def _unknown(where: str, field: str, name: str, known: Iterable[str], section: str) -> NoReturn:
    """One line for an entry's field naming an id its catalog section does not hold: the ids it was likely meant
    to be, and the fix (one of the section's ids, listed where they are few, or an entry added to the section)."""
    ids = sorted(set(known))
    close = UnknownNameError(field, name, ids).suggestions
    suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    use = f"use one of {', '.join(ids)}" if len(ids) <= MAX_LISTED else f"use an id of the catalog's {section}"
    raise ChipwiseError(
        f"{where}: {field} '{name}' is not in the catalog's {section} section.{suggestion} Fix: {use}, or add "
        f"'{name}' to {section} (docs/catalog-format.md)."
    )


def _check_trees(raw: Mapping[str, Any], trees: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """The efficiency, engines and datacenter sections hold only the fields the model reads (an unknown one was
    silently ignored), each in its range (a fraction of peak above 1, a PUE below 1 were taken as given), as the
    reliability section's figures are (a storage bandwidth of 0); a 3-year commitment's price ratio is at most a
    1-year one's."""

    def origin(section: str, first: str) -> str:
        return origins.get(f"{section}.{first}", BUILTIN)

    for section in ("efficiency", "engines", "datacenter"):
        body = raw.get(section) or {}
        entries = [(str(k), v) for k, v in body.items()] if section != "datacenter" else [("", body)]
        for key, entry in entries:
            fields = fields_of(raw, _builtin_raw(), section, key)
            for path in figure_paths(entry):
                full = f"{key}.{path}" if key else path
                if fields.takes(path):
                    continue
                parent = path.rpartition(".")[0]
                near = [k for k in fields.known if k.rpartition(".")[0] == parent] or list(fields.known)
                close = difflib.get_close_matches(path, near, n=3, cutoff=0.6)
                did = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise ChipwiseError(
                    f"{origin(section, full.split('.')[0])}: {section}.{full}: unknown field '{path}'.{did} Fix: use "
                    f"a field the model reads (docs/catalog-format.md), or drop it."
                )
    for section in ("efficiency", "engines", "datacenter", "reliability"):
        for path, fig in tree_figures(trees.get(section) or {}):
            if isinstance(fig.value, str):
                continue
            problem = range_problem(section, path, fig.si)
            if problem:
                raise ChipwiseError(
                    f"{origin(section, path.split('.')[0])}: {problem}. Fix: give a value in that range."
                )
    _check_quantities(trees, origins)
    ratios = (trees.get("datacenter") or {}).get("pricing_mode_ratio") or {}
    problem = mode_order_problem({m: f.si for m, f in ratios.items() if isinstance(f, Figure)})
    if problem:
        raise ChipwiseError(
            f"{origin('datacenter', 'pricing_mode_ratio')}: {problem}. Fix: give reserved-3y at most reserved-1y."
        )


@functools.cache
def _builtin_quantities() -> dict[str, str]:
    """What each built-in figure of the tree sections measures, by section-qualified path."""
    cat = _builtin_catalog()
    return {
        f"{section}.{path}": quantity(fig.unit)
        for section in ("efficiency", "engines", "datacenter", "reliability")
        for path, fig in tree_figures(getattr(cat, section))
        if not isinstance(fig.value, str)
    }


def _check_quantities(trees: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """A figure a file or --set gives measures what the built-in one does (or, for a new efficiency family or
    engine, the default's): a failure rate in '1' had been read per second (3,600 times the rate per hour meant), a
    facility cost in 'USD' per W (1,000 times the cost per kW), a life in 'GB' taken as years."""
    if all(origin == BUILTIN for origin in origins.values()):
        return  # the built-in catalog itself (whose quantities are the reference)
    builtin = _builtin_quantities()
    for section in ("efficiency", "engines", "datacenter", "reliability"):
        for path, fig in tree_figures(trees.get(section) or {}):
            first = path.split(".")[0]
            origin = origins.get(f"{section}.{first}", BUILTIN)
            if origin == BUILTIN or isinstance(fig.value, str):
                continue
            default = f"{section}.default.{path.partition('.')[2]}" if section in ("efficiency", "engines") else ""
            wanted = builtin.get(f"{section}.{path}") or builtin.get(default)
            if wanted is not None and quantity(fig.unit) != wanted:
                units = ", ".join(units_of(wanted)) or "'1'"
                raise ChipwiseError(
                    f"{origin}: {section}.{path} is in '{fig.unit}' ({quantity(fig.unit)}), where the figure is a "
                    f"{wanted}. Fix: give it in one of {units}."
                )


def _check_entry_ranges(sections: Mapping[str, Mapping[str, Any]], origins: Mapping[str, str]) -> None:
    """The chips' and systems' figures that have a range (fields.RANGES: a power above 0) are in it, in a catalog
    file as with `--set` (a TDP of 0 had been taken, and energy priced host-only)."""
    for section, entries in sections.items():
        for key, entry in entries.items():
            for path, fig in tree_figures(entry):
                if isinstance(fig.value, str):
                    continue
                problem = range_problem(section, f"{key}.{path}", fig.si)
                if problem:
                    origin = origins.get(f"{section}.{key}", BUILTIN)
                    raise ChipwiseError(f"{origin}: {problem}. Fix: give a value in that range.")


def _check_names(sections: Mapping[str, Mapping[str, Any]], origins: Mapping[str, str]) -> None:
    """Every chip and system id and alias names one entry (hardware.Hardware looks them up in one space, in any
    case): a user file's alias that was another entry's name had been taken in silence, either dead (the first
    claim won) or taking that name over ('p5' as a new chip's alias had run a p5 scenario on that chip). A file
    that re-declares an entry under its own id overrides it (one entry, one claim). The built-in entries claim
    their names first, so the line blames the user file's entry. Run on the raw entries, before their schema (an
    alias list that is no list of names is the schema's to refuse)."""
    entries = [(section, str(key), entry) for section, body in sections.items() for key, entry in body.items()]
    entries.sort(key=lambda e: origins.get(f"{e[0]}.{e[1]}", BUILTIN) != BUILTIN)  # stable: built-in first
    owner: dict[str, tuple[str, str]] = {}
    for section, key, entry in entries:
        aliases = entry.get("aliases") if isinstance(entry, dict) else None
        aliases = [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []
        for name in (key, *aliases):
            held = owner.setdefault(name.lower(), (section, key))
            if held == (section, key):
                continue
            other_section, other = held
            what = "id" if name == key else "alias"
            theirs = "id" if name.lower() == other.lower() else "alias"
            fix = (
                f"give {ENTRY_KIND[section]} '{key}' another id"
                if what == "id"
                else f"drop '{name}' from {key}'s aliases or rename it"
            )
            raise ChipwiseError(
                f"{origins.get(f'{section}.{key}', BUILTIN)}: {section}.{key}: {what} '{name}' is already the "
                f"{theirs} of {ENTRY_KIND[other_section]} '{other}' "
                f"({origins.get(f'{other_section}.{other}', BUILTIN)}). Fix: {fix}; to change {other} itself, give "
                f"its figures under {other_section}.{other} (docs/catalog-format.md)."
            )


def tree_figures(node: Any, prefix: str = "") -> list[tuple[str, Figure]]:
    """Every validated figure of a tree (or of a validated entry: a chip, a system) by dotted path."""
    if isinstance(node, Figure):
        return [(prefix, node)]
    if isinstance(node, BaseModel):
        node = {name: getattr(node, name) for name in type(node).model_fields}
    if isinstance(node, dict):
        return [x for k, v in node.items() for x in tree_figures(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(node, list):
        return [x for i, v in enumerate(node) for x in tree_figures(v, f"{prefix}.{i}" if prefix else str(i))]
    return []


def _validate_tree(node: Any, path: str, origins: dict[str, str]) -> Any:
    """Validate a free-form tree whose numeric leaves are figures (datacenter, reliability, efficiency)."""
    if _is_figure(node):
        try:
            return Figure.model_validate(node)
        except ValidationError as exc:
            top = ".".join(path.split(".")[:2])
            raise ChipwiseError(_fmt_validation(exc, f"{origins.get(top, BUILTIN)}: {path}")) from None
    if isinstance(node, dict):
        return {str(k): _validate_tree(v, f"{path}.{k}", origins) for k, v in node.items()}
    if isinstance(node, list):
        return [_validate_tree(v, f"{path}.{i}", origins) for i, v in enumerate(node)]
    return node


@functools.cache
def _builtin_catalog() -> Catalog:
    return _validate(copy.deepcopy(_builtin_raw()), {}, ())


def load_catalog(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> Catalog:
    """The built-in catalog, with users' YAML files merged over it (in order) and `--set` overrides applied. One file
    or one override may be given alone (a string was read letter by letter: "--set 'h' has no '='")."""
    files = (files,) if isinstance(files, str | Path) else files
    sets = (sets,) if isinstance(sets, str) else sets
    # a Python caller's other types (the API's files=[5], sets=[5]) are one line, not a TypeError from deep inside
    if not (isinstance(files, Sequence) and all(isinstance(f, str | Path) for f in files)):
        raise ChipwiseError(f"files {files!r} is not catalog file paths. Fix: give e.g. ['my-chips.yaml'].")
    if not (isinstance(sets, Sequence) and all(isinstance(a, str) for a in sets)):
        raise ChipwiseError(f"sets {sets!r} is not ID.FIELD=VALUE what-ifs. Fix: give e.g. ['trn2.tdp=600W'].")
    if not files and not sets:
        return _builtin_catalog()
    raw = copy.deepcopy(_builtin_raw())
    origins: dict[str, str] = {}
    replaced: list[Any] = []
    # the system figures a file gives (a new system's, all of them): a chip figure a file changes moves the rest
    filed: dict[str, str] = {}
    for f in files:
        path = Path(f)
        data = _read_yaml(path)
        _merge_file(raw, data, origins, str(path), replaced)
        if isinstance(systems := data.get("systems"), dict):
            filed.update(
                {f"systems.{sid}.{fig}": str(path) for sid, body in systems.items() for fig in figure_paths(body)}
            )
    given: dict[str, str] = {}
    builtin, chips_before = _followed(_builtin_raw()), _followed(raw)
    for assignment in sets:
        if "=" in assignment and _SCALE.match(assignment.split("=", 1)[1].strip()):
            figure = _resolve_target(raw, assignment.split("=", 1)[0].strip()).qualified
            if figure in given and _rhs(given[figure]) == _rhs(assignment):
                continue  # the same scale again: applied once (twice had scaled the scaled figure)
        _once(given, apply_set(raw, assignment, origins), assignment)
    # after every --set, so that a system figure a --set gives wins over a chip's whatever the flags' order; a
    # file's change first (from the built-in figure to the file's), then the --set's (from the file's on), as a
    # --set of the file's figure would
    for (chip, name), was in builtin.items():
        if chips_before.get((chip, name), was) != was:
            by = f"{origins[f'chips.{chip}']}'s {chip}.{name}"
            _follow_chip(raw, chip, name, was, chips_before[chip, name], by, {**filed, **given})
    for figure, assignment in given.items():
        section, key, name = [*figure.split(".", 2), "", ""][:3]
        if section == "chips" and (key, name) in chips_before:
            now = _si(raw["chips"][key][name])
            _follow_chip(raw, key, name, chips_before[key, name], now, f"--set {assignment}", given)
    return _validate(raw, origins, tuple(sets), replaced)


def _followed(raw: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """Each chip's FOLLOWED figures in SI, by (chip, figure)."""
    return {
        (str(key), name): _si(fig)
        for key, body in (raw.get("chips") or {}).items()
        if isinstance(body, dict)
        for name in FOLLOWED
        if isinstance(fig := body.get(name), dict) and _is_figure(fig) and not isinstance(fig["value"], str)
    }


def _si(fig: Mapping[str, Any]) -> float:
    return to_si(float(fig["value"]), str(fig["unit"]))


def _once(given: dict[str, str], figure: str, assignment: str) -> None:
    """Record that `--set ASSIGNMENT` set `figure` (its qualified name); one line where an earlier `--set` set it
    to another value (the last had won without a word). The same value twice (1200W and 1.2kW) changes nothing,
    and is taken."""
    earlier = given.setdefault(figure, assignment)
    first, second = (_rhs(a) for a in (earlier, assignment))
    if first != second if isinstance(first, str) or isinstance(second, str) else not math.isclose(first, second):
        raise ChipwiseError(
            f"--set gives {figure} twice: '{earlier}' and '{assignment}'. Fix: give one --set for it, with the value "
            "meant."
        )


def _rhs(assignment: str) -> float | str:
    """The value of an `ID.FIELD=VALUE` override in SI (apply_set has read it: a bare number is SI already); a
    scale (`x1.1`) as written, which only the same scale equals."""
    rhs = assignment.split("=", 1)[1].strip()
    if _SCALE.match(rhs):
        return f"x{_factor(rhs)!r}"
    value, unit = parse_quantity(rhs)
    return to_si(value, unit) if unit else value


#: `--set ID.FIELD=x1.1`: the figure as the catalog (or a --catalog file) gives it, times a factor
_SCALE = re.compile(r"^x\s*((?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$")


def _scaled(raw: Mapping[str, Any], target: _Target, lhs: str, rhs: str) -> tuple[float, str] | None:
    """A scale's value and unit (the figure's own), None where `rhs` is not a scale; one line where the entry has
    no such figure to scale."""
    if _SCALE.match(rhs) is None:
        return None
    entry = raw[target.section][target.key] if target.key else raw.get(target.section) or {}
    figure = _node_at(entry, target.path.split("."), create=False)
    if figure is None and target.section == "engines":  # an engine that takes the default engine's figure
        figure = _node_at(raw["engines"].get("default") or {}, target.path.split("."), create=False)
    if not _is_figure(figure) or isinstance(figure["value"], str):
        raise ChipwiseError(
            f"--set {lhs}={rhs}: {target.entry} gives no {target.path} to scale. Fix: give the value itself, e.g. "
            f"{lhs}=VALUE with its unit."
        )
    return float(figure["value"]) * _factor(rhs), str(figure["unit"])


def _factor(rhs: str) -> float:
    """The factor of a scale (`x1.1` -> 1.1)."""
    match = _SCALE.match(rhs)
    assert match is not None  # only a scale is asked for its factor
    return float(match.group(1))


#: the sections whose entries `--set` reaches by id (ID.FIELD), in the order a qualified name may name them
#: (SECTION.ID.FIELD); datacenter and reliability are reached by their own name (datacenter.pue.aws)
ENTRY_SECTIONS: tuple[str, ...] = ("chips", "systems", "fabrics", "efficiency", "engines")
TREE_SECTIONS: tuple[str, ...] = ("datacenter", "reliability")
#: what an entry of each section is called in a message
ENTRY_KIND = {
    "chips": "chip",
    "systems": "system",
    "fabrics": "fabric",
    "efficiency": "efficiency family",
    "engines": "engine",
    "datacenter": "datacenter section",
    "reliability": "reliability section",
}


@dataclass(frozen=True)
class _Target:
    """Where an `--set` lands: `section`, entry `key` ('' for datacenter and reliability), field `path`, and the
    name the user gave the entry (`ident`: an id or an alias)."""

    section: str
    key: str
    path: str
    ident: str

    @property
    def entry(self) -> str:
        return f"{ENTRY_KIND[self.section]} '{self.key}'" if self.key else f"the {self.section} section"

    @property
    def qualified(self) -> str:
        return f"{self.section}.{self.key}.{self.path}" if self.key else f"{self.section}.{self.path}"


def _names(raw: Mapping[str, Any], section: str) -> dict[str, str]:
    """Every name of `section`'s entries (ids; a chip's and a system's aliases too) -> its id."""
    names: dict[str, str] = {}
    for key, body in (raw.get(section) or {}).items():
        names.setdefault(str(key), str(key))
        if section in ("chips", "systems") and isinstance(body, dict):
            for alias in body.get("aliases") or []:
                names.setdefault(str(alias), str(key))
    return names


def _candidates(raw: Mapping[str, Any], lhs: str, sections: Sequence[str]) -> list[_Target]:
    """Every reading of `lhs` as NAME.FIELD with NAME an entry of one of `sections`, longest name first."""
    out: list[_Target] = []
    for section in sections:
        if section in TREE_SECTIONS:
            if lhs.startswith(section + "."):
                out.append(_Target(section, "", lhs[len(section) + 1 :], section))
            continue
        for name, key in _names(raw, section).items():
            if lhs.startswith(name + ".") and len(lhs) > len(name) + 1:
                out.append(_Target(section, key, lhs[len(name) + 1 :], name))
    return sorted(out, key=lambda t: len(t.ident), reverse=True)


def _fields(raw: Mapping[str, Any], target: _Target) -> Fields:
    return fields_of(raw, _builtin_raw(), target.section, target.key)


def _resolve_target(raw: Mapping[str, Any], lhs: str) -> _Target:
    """The entry and field `--set LHS=...` names. A name may be an entry of several sections (trainium2 is a chip's
    alias and an efficiency family; tpu-v5e a chip and a family): the field decides (a chip figure goes to the chip,
    an efficiency figure to the family); a field both take is refused, naming the qualified forms
    (chips.ID.FIELD, efficiency.ID.FIELD, ...) that say which is meant."""
    head = lhs.split(".", maxsplit=1)[0]
    _no_field(raw, lhs)
    if head in ENTRY_SECTIONS:
        cands = _candidates(raw, lhs[len(head) + 1 :], (head,))
        if not cands:
            raise UnknownNameError(
                ENTRY_KIND[head],
                lhs[len(head) + 1 :].split(".", maxsplit=1)[0],
                _names(raw, head),
                hint=f"write --set {head}.ID.FIELD=VALUE with an id of the catalog's {head}",
            )
    else:
        cands = _candidates(raw, lhs, (*ENTRY_SECTIONS, *TREE_SECTIONS))
    if not cands:
        ids = {n for section in ENTRY_SECTIONS for n in _names(raw, section)} | set(TREE_SECTIONS)
        raise UnknownNameError(
            "catalog id",
            head,
            ids,
            hint="write --set ID.FIELD=VALUE with a chip, system, fabric, efficiency family or engine id, or "
            "datacenter.FIELD",
        )
    fits = [t for t in cands if _fields(raw, t).takes(t.path)]
    entries = {(t.section, t.key) for t in fits}
    if len(entries) > 1:
        both = " and ".join(f"of {t.entry}" for t in fits)
        forms = " or ".join(f"--set {t.qualified}=..." for t in fits)
        raise ChipwiseError(f"--set {lhs}: '{lhs}' names a figure {both}. Fix: say which: {forms}.")
    if fits:
        return fits[0]
    _no_such_figure(raw, lhs, cands)


def _no_field(raw: Mapping[str, Any], lhs: str) -> None:
    """One line for an `--set` naming an entry but no figure of it (h100-sxm=5, chips.h100-sxm.=5): it had been
    called an unknown id, offering that very id."""
    name = lhs.removesuffix(".")
    head, _, rest = name.partition(".")
    qualified = head in ENTRY_SECTIONS and bool(rest)
    sections = (head,) if qualified else (*ENTRY_SECTIONS, *TREE_SECTIONS)
    name = rest if qualified else name
    for section in sections:
        tree = section in TREE_SECTIONS
        key = "" if tree else _names(raw, section).get(name)
        if (name != section) if tree else key is None:
            continue
        entry = _Target(section, key or "", "", name).entry
        see = _lister(section, key or "") or "docs/catalog-format.md names them"
        raise ChipwiseError(
            f"--set {lhs}: names {entry} but no figure of it. Fix: write --set {lhs.removesuffix('.')}."
            f"{'PATH' if tree else 'FIELD'}=VALUE ({see})."
        )


def _lister(section: str, key: str) -> str | None:
    """The command that lists an entry's figures: catalog show for a chip, system or fabric, catalog engine for an
    engine (None for other sections)."""
    if section in ("chips", "systems", "fabrics"):
        return f"'chipwise catalog show {key}' lists its figures"
    return f"'chipwise catalog engine {key}' lists its figures" if section == "engines" else None


def _no_such_figure(raw: Mapping[str, Any], lhs: str, cands: Sequence[_Target]) -> NoReturn:
    """One line for a field no entry `lhs` can name has: the figures it was likely meant to be, and where to see
    them."""
    entries = list({(t.section, t.key): t for t in cands}.values())
    several = len(entries) > 1
    offers: dict[str, str] = {}
    for t in entries:
        known = [p for p in _fields(raw, t).known if not p.startswith("chips.")] or list(_fields(raw, t).known)
        # not a figure that is itself a list item (scaleup.dim_bandwidth.2): apply_set sets figures in mappings only
        entry = (raw.get(t.section) or {}).get(t.key) if t.key else raw.get(t.section)
        known = [p for p in known if not isinstance(_node_at(entry, p.split(".")[:-1], create=False), list)]
        for close in difflib.get_close_matches(t.path, known, n=3, cutoff=0.6):
            offers.setdefault(f"{t.section}.{t.key}.{close}" if several else f"{t.ident}.{close}", "")
    did = f" Did you mean {', '.join(repr(o) for o in list(offers)[:3])}?" if offers else ""
    where = " or ".join(f"{t.key} ({ENTRY_KIND[t.section]})" if t.key else t.section for t in entries)
    shown = next((t for t in entries if t.section in ("chips", "systems", "fabrics")), entries[0])
    if (listed := _lister(shown.section, shown.key)) is not None:
        see = listed
    else:
        paths = list(_fields(raw, entries[0]).known)
        if entries[0].section in TREE_SECTIONS:  # their groups: pue.*, capex.*, ...
            names = sorted({p.split(".")[0] + (".*" if "." in p else "") for p in paths})
        else:
            names = sorted({re.sub(r"^matmul\..*", "matmul.PRECISION", p) for p in paths})
        see = f"one of {', '.join(names)}" if len(names) <= MAX_LISTED * 2 else "docs/catalog-format.md names them"
    raise ChipwiseError(
        f"--set {lhs}: unknown figure of {where}: '{entries[0].path}'.{did} Fix: name a figure it has ({see})."
    )


def tdp_moved_power(system_w: float, chips: float, delta_w: float) -> float:
    """A system's rated power once its chips' TDP moves by `delta_w` each: it moves by as much a chip, for a
    system's power less its chips' TDP is its host, network and fans (economics.power), which a capped chip does not
    change (a 350 W H100 had kept its 1,120 W a chip, the host share growing by the watts taken off the GPU). The
    rule `--set CHIP.tdp` applies (_follow_chip), and the one `chipwise claims` solves for a TDP with."""
    return max(system_w + delta_w * chips, 0.0)


#: the chip figures whose --set moves figures of the systems built of the chip: a system's rated power (by the
#: TDP's change a chip, tdp_moved_power), its scale-out bandwidth (the model reads only the system's: the chip's is
#: its share, shown in `catalog list`) and the scale-up bandwidth it gives itself (the model reads it over the
#: chip's: --set trn2.scaleup_bandwidth had left trn2.48xlarge at its 512 GB/s)
FOLLOWED: dict[str, str] = {
    "tdp": "TDP",
    "scaleup_bandwidth": "scale-up bandwidth",
    "scaleout_bandwidth": "scale-out bandwidth",
}


def _follow_chip(
    raw: dict[str, Any], chip: str, name: str, was: float, now: float, by: str, given: Mapping[str, str]
) -> None:
    """A chip figure's what-if (from `was` to `now` in SI, made `by` a --set or a --catalog file) moves the
    matching figures of each system of that chip, but those `given` names (a system figure a --set or a file gives:
    the user's value stands, whatever the flags' order; a file's new system's). A per-chip
    figure (a scale-up bandwidth, a hybrid's link between two of the chip) and a system's scale-out bandwidth move
    in proportion (trn1n's twice the chip's share stays twice); a power, and a hybrid rack's scale-out bandwidth,
    by the chip's change times its chips of this type (the rest is host, fans, the other members' NICs)."""
    if was <= 0 or now == was:
        return
    for sid, system in (raw.get("systems") or {}).items():
        if not isinstance(system, dict):
            continue
        members = system.get("members") or {}
        count = members.get(chip, 0) if members else system.get("chips", 1) if system.get("chip") == chip else 0
        if not count:
            continue
        path = {
            "tdp": "power",
            "scaleout_bandwidth": "scaleout.bandwidth",
            "scaleup_bandwidth": f"links.{chip}-{chip}.bandwidth" if members else "scaleup.bandwidth",
        }[name]
        parts = path.split(".")
        node = _node_at(system, parts[:-1], create=False)
        old_fig = node.get(parts[-1]) if isinstance(node, dict) else None
        if not isinstance(old_fig, dict) or not _is_figure(old_fig) or isinstance(old_fig["value"], str):
            continue
        if f"systems.{sid}.{path}" in given:
            continue
        old = _si(old_fig)
        additive = name == "tdp" or (members and name == "scaleout_bandwidth")
        new = tdp_moved_power(old, float(count), now - was) if additive else old * now / was
        moved = f"{chip} {FOLLOWED[name]} moved by {by}"
        node[parts[-1]] = {
            **old_fig,
            "value": from_si(new, str(old_fig["unit"])),
            "derivation": f"{old_fig.get('derivation', '')}; {moved}".lstrip("; "),
            "note": f"what-if: follows {by}; catalog value was {old_fig['value']} {old_fig['unit']}",
        }


def _node_at(entry: Any, parts: Sequence[str], create: bool) -> Any:
    """The node `parts` lead to in a raw entry: mappings by key, lists by index or by a link's pair of chip types
    (tiers.0, links.trn4-gb300); with `create`, a missing mapping on the way is added (a new key of an open map)."""
    node = entry
    for part in parts:
        if isinstance(node, dict):
            if part not in node and create:
                node[part] = {}
            node = node.get(part)
        elif isinstance(node, list):
            node = next((v for i, v in enumerate(node) if item_name(v, i) == part), None)
        else:
            return None
    return node


def _unit_for(lhs: str, rhs: str, value: float, unit: str, ref: Mapping[str, Any], leaf: str) -> str:
    """The unit a `--set` value is stored in: the one given, which must measure what the field does, or for a bare
    number SI (refused where it is over 100x off the catalog's figure: surely a missing unit); a chip's
    launch_year, a calendar year, is not reached (DISPLAY_ONLY)."""
    ref_unit = str(ref.get("unit", ""))
    wanted = quantity(ref_unit) if ref_unit in UNITS else "ratio"
    if unit:
        if quantity(unit) != wanted:
            raise ChipwiseError(
                f"--set {lhs}={rhs}: {leaf} is a {wanted}, not a {quantity(unit)} ('{unit}'). Fix: give it in one of "
                f"{', '.join(units_of(wanted))}."
            )
        return unit
    si_unit = SI_UNIT.get(wanted, "")
    was = to_si(float(ref["value"]), ref_unit) if not isinstance(ref.get("value"), str) else 0.0
    if ref_unit != "1" and was > 0 and value > 0 and not 1e-2 <= value / was <= 1e2:
        # a bare number is in SI units: 6.7 for a bandwidth of 4.8 TB/s is 6.7 B/s, 1.2 for a 1000 W TDP 1.2 W;
        # the fix names the unit that puts the number nearest the catalog's (1.2 -> 1.2kW)
        meant = min(units_of(wanted), key=lambda u: abs(math.log(to_si(value, u) / was)), default=ref_unit)
        raise ChipwiseError(
            f"--set {lhs}={rhs}: a bare number is in {si_unit}, {value / was:.2g} x the catalog's "
            f"{ref['value']} {ref_unit}. Fix: give its unit, e.g. {lhs}={rhs}{meant}."
        )
    return si_unit


#: how a figure given by --set says where it came from (its derivation starts so)
SET_ON_COMMAND_LINE = "set on the command line"


def set_on_command_line(derivation: str) -> bool:
    """Whether a figure with this derivation was given by --set."""
    return derivation.startswith(SET_ON_COMMAND_LINE)


#: chip figures only shown, which a --set is refused for (a what-if no prediction reads had been taken in silence,
#: its output the same to the byte), with what to do instead
DISPLAY_ONLY: dict[str, str] = {
    "sram": "drop it, or record the figure in a --catalog file (docs/catalog-format.md).",
    "launch_year": "drop it, or record the year in a --catalog file (docs/catalog-format.md).",
}

#: the reliability figures a prediction reads (reliability.goodput.reliability_inputs); the rest of the section is
#: reference data (published runs, goodputs, per-job and SDC rates, save times), which a --set is refused for as
#: chips' DISPLAY_ONLY fields are: detection_time_s=6000s had been announced as a WHAT-IF and moved nothing
RELIABILITY_READ: frozenset[str] = frozenset(
    {
        "failures.gpu_failure_rate_per_chip_hour",
        "failures.network_failure_rate_per_chip_hour",
        "failures.software_failure_rate_per_chip_hour",
        "failures.host_failure_rate_per_host_hour",
        "failures.planned_interruptions_per_job_hour",
        "failures.planned_interruptions_per_host_hour",
        "checkpoint.bytes_per_parameter",
        "checkpoint.storage_aggregate_bandwidth",
        "checkpoint.storage_write_bandwidth_per_node",
        "checkpoint.restart_overhead_s",
        "checkpoint.in_memory_recovery_s",
        "spares.spare_fraction",
    }
)
#: what to do instead, where a reference figure has a way in
RELIABILITY_INSTEAD: dict[str, str] = {
    "checkpoint.detection_time_s": "drop it; a hang-detection time is added to each failure's downtime in Python, "
    "by chipwise.reliability.reliability_inputs(catalog, system, detection_s=600).",
}


def apply_set(raw: dict[str, Any], assignment: str, origins: dict[str, str]) -> str:
    """Apply one `ID.FIELD=VALUE` override (VALUE in SI unless it carries a unit) to the raw catalog; return the
    qualified name of the figure it set (chips.trn3.tdp; a price's with its mode: chips.h100-sxm.price.on-demand)."""
    if "=" not in assignment:
        raise ChipwiseError(
            f"--set '{assignment}' has no '='. Fix: write --set ID.FIELD=VALUE, e.g. trn3.hbm_bandwidth=6e12."
        )
    lhs, rhs = (s.strip() for s in assignment.split("=", 1))
    target = _resolve_target(raw, lhs)
    section, key, path = target.section, target.key, target.path.split(".")
    if section == "chips" and target.path in DISPLAY_ONLY:
        raise ChipwiseError(
            f"--set {lhs}: {key}'s {target.path} is only shown (catalog show, catalog list); no prediction reads it "
            f"(the run would come out the same). Fix: {DISPLAY_ONLY[target.path]}"
        )
    if section == "fabrics" and re.fullmatch(r"tiers\.[^.]+\.(latency|radix)", target.path):
        # the fabric's per-step latency already counts the switch hops (fabrics.yaml: "plus switch hops"), and a
        # tier's reach is its chips: the per-hop latency and the radix document how the tiers are built
        raise ChipwiseError(
            f"--set {lhs}: a tier's {path[-1]} is only shown (catalog show); no prediction reads it (the fabric's "
            f"latency, per collective step, counts the switch hops). Fix: set {key}.latency, or the tier's "
            f"{key}.{'.'.join(path[:-1])}.oversubscription or .chips."
        )
    if section == "reliability" and target.path not in RELIABILITY_READ:
        fix = RELIABILITY_INSTEAD.get(target.path, "drop it (predict --sources lists the figures a run reads).")
        raise ChipwiseError(
            f"--set {lhs}: no prediction reads this reliability figure, which is reference data (the run would come "
            f"out the same). Fix: {fix}"
        )
    fields = _fields(raw, target)
    ref = fields.reference(target.path)
    if path[0] == "price" and _SCALE.match(rhs):
        raise ChipwiseError(
            f"--set {lhs}={rhs}: a price is not scaled (a scenario's cost moves with it one for one). Fix: give the "
            f"hourly price, e.g. {lhs}=2.5."
        )
    scaled = _scaled(raw, target, lhs, rhs)
    try:
        value, unit = scaled or parse_quantity(rhs)
    except ChipwiseError as exc:
        wanted = quantity(str(ref["unit"])) if ref is not None and ref.get("unit") in UNITS else ""
        accepted = f" Fix: give {path[-1]} in one of {', '.join(units_of(wanted))}." if units_of(wanted) else ""
        message = str(exc) if not accepted or "unit" not in str(exc) else str(exc).split(" Fix:")[0] + accepted
        raise ChipwiseError(f"--set {lhs}: {message}") from None
    if not math.isfinite(value):  # 'nan' and 'inf' read as floats; NaN had ranked a chip at 'nan tok/s'
        raise ChipwiseError(f"--set {lhs}: value {rhs} is not a finite number. Fix: give a finite number.")
    if value < 0:
        raise ChipwiseError(f"--set {lhs}: value {rhs} is negative. Fix: give a non-negative number.")
    entry = raw[section][key] if key else raw.setdefault(section, {})
    if path[0] == "price" and section in ("chips", "systems"):
        mode = path[1] if len(path) > 1 else "on-demand"
        if mode not in PRICING_MODES or len(path) > 2:
            raise ChipwiseError(
                f"--set {lhs}: unknown pricing mode '{'.'.join(path[1:])}'. Fix: use one of {', '.join(PRICING_MODES)}."
            )
        if unit not in ("", "USD/h"):
            raise ChipwiseError(f"--set {lhs}: a price is in USD/h. Fix: give the hourly price, e.g. {lhs}=2.5.")
        prices = raw.setdefault("prices", [])
        prices.append(
            {
                ("chip" if section == "chips" else "system"): key,
                "provider": "user",  # economics.pricing.USER_PROVIDER: wins over the catalog's prices
                "mode": mode,
                "value": value,
                "status": "estimate",
                "derivation": f"{SET_ON_COMMAND_LINE}: --set {assignment}",
                "region": "",
            },
        )
        origins[f"prices.{len(prices) - 1}"] = "--set"  # appended: the files' prices keep their indices
        return f"{section}.{key}.price.{mode}"
    assert ref is not None  # _resolve_target returns a field the entry takes
    if isinstance(ref.get("value"), str) or ref.get("unit") == "":
        raise ChipwiseError(
            f"--set {lhs}: '{target.path}' is a text figure ({ref.get('value')}); --set gives numbers. Fix: change it "
            "in a --catalog file (docs/catalog-format.md)."
        )
    unit = _unit_for(lhs, rhs, value, unit, ref, path[-1])
    where = target.path if section in TREE_SECTIONS else f"{key}.{target.path}"
    problem = range_problem(section, where, to_si(value, unit))
    if problem:
        raise ChipwiseError(f"--set {lhs}={rhs}: {problem}. Fix: give a value in that range.")
    node = _node_at(entry, path[:-1], create=True)
    if not isinstance(node, dict):
        raise ChipwiseError(
            f"--set {lhs}: '{target.path}' is not a figure of {target.entry}. Fix: name a numeric field."
        )
    current = node.get(path[-1])
    current = current if _is_figure(current) else None
    note = "what-if override" + (f"; catalog value was {current['value']} {current['unit']}" if current else "")
    if current is not None and set_on_command_line(str(current.get("derivation", ""))):
        note = str(current.get("note", note))  # the same value again (_once): the catalog's value is the first's
    node[path[-1]] = {
        "value": value,
        "unit": unit,
        "status": "estimate",
        "derivation": f"{SET_ON_COMMAND_LINE}: --set {assignment}",
        "note": note,
    }
    if section == "engines" and len(path) == 1:
        # an engine's figure holds on every chip family: the families that fit their own (engines.E.chips.F) would
        # otherwise keep theirs, and the what-if change nothing there
        for family in (entry.get("chips") or {}).values():
            if isinstance(family, dict) and path[0] in family:
                own, family[path[0]] = family[path[0]], dict(node[path[0]])
                if scaled is not None and _is_figure(own) and not isinstance(own["value"], str):
                    # a scale scales the family's own fitted figure, not the engine's default
                    family[path[0]].update(
                        value=float(own["value"]) * _factor(rhs),
                        unit=own["unit"],
                        note=f"what-if override; catalog value was {own['value']} {own['unit']}",
                    )

    top = f"{section}.{key}" if key else f"{section}.{path[0]}"
    origins[top] = origins.get(top, "--set")
    return target.qualified
