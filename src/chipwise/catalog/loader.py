"""Load the built-in catalog, merge users' YAML files over it, apply `--set` overrides (catalog.overrides),
validate it all.

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

from chipwise.catalog.fields import (
    bare_values,
    fields_of,
    figure_paths,
    is_figure,
    mode_order_problem,
    range_problem,
)
from chipwise.catalog.overrides import ENTRY_KIND, MAX_LISTED, USER_PROVIDER, apply_sets
from chipwise.catalog.regions import PRICE_REGIONS
from chipwise.catalog.schema import (
    STATUS_STRENGTH,
    ChipEntry,
    FabricEntry,
    Figure,
    ModelIndexEntry,
    PriceEntry,
    SystemEntry,
)
from chipwise.catalog.strict_yaml import RepeatedKeyError, load_json, load_yaml
from chipwise.catalog.units import quantity, units_of
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
    #: what the layers below build from this catalog once (hardware.build.hardware, workload.presets' presets), kept
    #: on it so that it goes with it: functools caches keyed on the catalog had kept every catalog built from files
    #: or --sets alive (about 2.4 MB each: the web server grew some 200 MB a sensitivity request)
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

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
        origin = self.origins.get(f"models.{preset}.file", BUILTIN)
        if origin == BUILTIN:
            return dict(_builtin_model_config(entry.file))
        return read_json_config(user_model_config(preset, entry.file, origin))


def user_model_config(preset: str, file: str, origin: str) -> Path:
    """The config.json a catalog file's (`origin`'s) preset names in `file`, beside that file: the file itself, or a
    checkpoint folder's, else one line (config_path)."""
    # a checkpoint folder as on the command line: 'ck/mymodel' had read "cannot read ...: Is a directory"
    path = Path(origin).parent / file
    fix = f"give models.{preset}.file as a config.json, or a checkpoint folder holding one, beside {origin}"
    return config_path(path, str(path), fix)


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


def read_json_config(path: Path) -> dict[str, Any]:
    """A model's config.json as an object, or one line: bad syntax, a key given twice (json keeps the last value
    silently: a preset's file giving num_hidden_layers 32 then 64 had read as a 15 B model, where a path named on
    the command line was refused), or not an object."""
    text = read_text(path, "model config", "save it as UTF-8 JSON (a Hugging Face config.json)")
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise ChipwiseError(
            f"'{path}' is not valid JSON (line {exc.lineno}: {exc.msg}). Fix: correct the JSON syntax."
        ) from None
    except RepeatedKeyError as exc:
        raise ChipwiseError(f"'{path}' gives the key '{exc.key}' twice. Fix: give each key once.") from None
    if not isinstance(data, dict):
        raise ChipwiseError(f"'{path}' must hold a JSON object. Fix: give a Hugging Face config.json.")
    return data


def config_path(path: Path, name: str, fix: str) -> Path:
    """The config.json `path` names, a path on the command line and a catalog file's `file` alike: the file itself,
    or a checkpoint folder's config.json; else one line naming `name` as given, with `fix`."""
    if path.is_dir():
        if not (path / "config.json").is_file():  # a Hugging Face checkpoint's folder holds its config.json
            raise ChipwiseError(f"model config '{name}' is a folder with no config.json in it. Fix: {fix}.")
        path = path / "config.json"
    return user_file(path, "model config", fix)


@functools.cache
def _builtin_model_config(file: str) -> Mapping[str, Any]:
    return read_json_config(_data_dir() / "models" / file)


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


def _whole(value: Any) -> bool:
    """Whether a file's node replaces the one it overrides whole: not a mapping, or a figure, or one short of its
    status (merged into the built-in figure, {value: 2, unit: ms} had taken that figure's status and source)."""
    return not isinstance(value, dict) or is_figure(value) or "value" in value


def _deep_merge(base: dict[str, Any], new: Mapping[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(base.get(key), dict) and not _whole(value):
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
            if section == "sources":
                _check_source_key(target, key, value, origins, origin)
            given = value
            if section == "models":
                _check_model_id(target, key, origin)
                if origin != BUILTIN and isinstance(value, dict) and "file" in value and "source" not in value:
                    # another config is another model: the built-in source had been kept for a file's own config,
                    # and a new preset without one had been refused ('models.g3.source: Field required')
                    given = {**value, "source": f"{value['file']} (given by {origin})"}
                if isinstance(value, dict) and "file" in value:
                    # where its config is read from (Catalog.model_config): a preset renamed keeps reading its own
                    origins[f"models.{key}.file"] = origin
            if isinstance(target.get(key), dict) and not _whole(given):
                _deep_merge(target[key], given)
            else:
                target[key] = copy.deepcopy(given)
            origins[f"{section}.{key}"] = origin


def preset_key(name: str) -> str:
    """A model preset's name as look-ups compare it: in any case, with '_' for '-'."""
    return name.strip().lower().replace("_", "-")


def _check_model_id(presets: Mapping[str, Any], key: str, origin: str) -> None:
    """A new preset id is not another's written another way (preset_key): a file's `Llama-3.1-8B` had taken over the
    built-in llama-3.1-8b in silence."""
    same = [k for k in presets if k != key and preset_key(k) == preset_key(key)]
    if key not in presets and same:
        raise ChipwiseError(
            f"{origin}: models.{key}: the id is preset '{same[0]}' written another way (names are read in any case). "
            f"Fix: write '{same[0]}' to change that preset, or give yours an id of its own."
        )


def _check_source_key(sources: Mapping[str, Any], key: str, text: Any, origins: Mapping[str, str], origin: str) -> None:
    """A source key is defined once: a second text for a key already defined (a user file's KLOCK_H100: my own blog)
    had replaced the first in silence, re-attributing every figure that cites it (the H100's spec figures then cited
    the blog, and predict said no figure differed). The same text again is taken."""
    if key not in sources or str(sources[key]).strip() == str(text).strip():
        return
    earlier = origins.get(f"sources.{key}", BUILTIN)
    raise ChipwiseError(
        f"{origin}: sources.{key}: the key is already a source ({earlier}): '{_clip(str(sources[key]))}'. Fix: give "
        f"your source another key (e.g. {key}_2) and cite that, or drop it to cite the catalog's."
    )


def _clip(text: str, most: int = 100) -> str:
    """A source text for a one-line message: its first `most` characters."""
    return text if len(text) <= most else text[: most - 3] + "..."


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
    raw: dict[str, Any],
    origins: dict[str, str],
    overrides: tuple[str, ...],
    replaced: Sequence[Any] = (),
    base: Catalog | None = None,
) -> Catalog:
    """The catalog `raw` holds, validated; `base`, the built-in catalog that `raw` was copied from, lends its
    validated entries to those that are still its own (_kept)."""

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
            if base is not None and _kept(section, key, body, origins):
                out[key] = getattr(base, section)[key]
                continue
            try:
                out[key] = model.model_validate(body)
            except ValidationError as exc:
                raise ChipwiseError(_fmt_validation(exc, where(section, key))) from None
        return out

    # names first: a partial override under another case's id (H100-SXM:) is no override of h100-sxm but a new
    # entry, and had been told 'family: Field required' for it, not that the id is taken
    _check_names({section: raw.get(section) or {} for section in ("chips", "systems")}, origins)
    _check_model_fields(raw.get("models") or {}, origins)
    _check_model_names(raw.get("models") or {}, origins)
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
        trees[section] = _validated_section(body, section, origins, base)
    for sid, system in systems.items():
        if system.chip not in chips and not system.members:
            raise ChipwiseError(
                f"{where('systems', sid)}: chip '{system.chip}' is not in the catalog. "
                "Fix: add the chip or correct the id."
            )
        for member in system.members:
            if member not in chips:
                _unknown(where("systems", sid), "member chip", member, chips, "chips")
        for link in system.links:  # a system with no members names its link ends freely (the schema checks members')
            for end in link.between:
                if end not in chips:
                    _unknown(where("systems", sid), "link chip", end, chips, "chips")
        for fab in (system.scaleout.fabric, system.scaleup.fabric):
            if fab and fabrics and fab not in fabrics:
                _unknown(where("systems", sid), "fabric", fab, fabrics, "fabrics")
        if fabrics:
            _check_layers(where("systems", sid), system, fabrics)
    _check_trees(raw, trees, origins)
    entries: dict[str, Mapping[str, Any]] = {"chips": chips, "systems": systems}
    if base is not None:  # the built-in catalog's own entries are in range
        entries = {
            section: {k: e for k, e in body.items() if e is not getattr(base, section).get(k)}
            for section, body in entries.items()
        }
    _check_entry_ranges(entries, origins)
    _check_power_covers_chips(systems, chips, entries, origins)
    _check_status_not_firmer(entries.get("systems") or {}, chips, origins)
    _check_model_files(models, origins)
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
    places = {*(trees["datacenter"].get("grid_intensity") or {}), *PRICE_REGIONS}
    for i, price in enumerate(prices):
        if price.system and price.system not in systems:
            raise ChipwiseError(f"price entry names unknown system '{price.system}'. Fix: correct the system id.")
        owner = systems[price.system].provider if price.system else ""
        if price.system and owner not in VENDOR_PROVIDERS and price.provider not in (owner, USER_PROVIDER):
            # a cloud's system is rented from that cloud: a gcp price of p5.48xlarge had been used for a gcp run in
            # us-east-1 (a chip's price, per chip-hour on any of its systems, may be any provider's; a vendor's
            # reference system, a DGX, any cloud's that rents it)
            by = price.provider
            raise ChipwiseError(
                f"{origins.get(f'prices.{i}', BUILTIN)}: price for {price.system}: provider '{by}' does not rent "
                f"{price.system}, a system of {owner}. Fix: give provider: {owner}, or price the chip per chip-hour "
                f"(chip: {systems[price.system].chip}, provider: {by}) or a system of {by}."
            )
        if price.chip and price.chip not in chips:
            raise ChipwiseError(f"price entry names unknown chip '{price.chip}'. Fix: correct the chip id.")
        if price.region and price.region not in places:  # no lookup takes it: a typo had left the quote unused
            close = UnknownNameError("region", price.region, sorted(places)).suggestions
            did = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ChipwiseError(
                f"{origins.get(f'prices.{i}', BUILTIN)}: price for {price.system or price.chip}: region "
                f"'{price.region}' is not a region of the catalog, so no lookup would take the price.{did} Fix: use a "
                "region of datacenter.grid_intensity (e.g. us-east-1), leave region out (the price then holds in "
                "every region of its provider), or add the region's grid_intensity in the same file."
            )
    sources = {str(k): str(v) for k, v in (raw.get("sources") or {}).items()}
    _check_cited_keys(raw, sources, origins)
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


#: the providers of vendors' reference systems (a DGX H100, AMD's MI300X platform): any cloud may rent one
VENDOR_PROVIDERS = ("nvidia", "amd", "intel", "oem")

#: a source that names a key (KLOCK_H100), not a citation: upper case, digits and underscores
SOURCE_KEY = re.compile(r"^[A-Z][A-Z0-9_]+$")


def _reads_as_key(cited: str, sources: Mapping[str, str]) -> bool:
    """Whether an undefined citation is a key mistyped: key-shaped with an underscore or a digit (KLOCK_H10), or a
    near miss of a defined key (EPOC). A plain upper-case word (NVIDIA, JEDEC, MLPERF) is a citation's text: it had
    been refused as an undefined key."""
    if not SOURCE_KEY.match(cited) or cited in sources:
        return False
    return bool(re.search(r"[_0-9]", cited) or difflib.get_close_matches(cited, list(sources), n=1, cutoff=0.8))


def _check_cited_keys(raw: Mapping[str, Any], sources: Mapping[str, str], origins: Mapping[str, str]) -> None:
    """Every source that reads as a key (SOURCE_KEY) is one a `sources` block defines: a misspelt key (KLOCK_H10)
    had been taken as the citation's text, 'KLOCK_H10', and the figure passed as sourced. A citation written out
    (a URL, a title) is taken as it is. The built-in entries are checked with the built-in catalog; with a user's
    files and --sets, only the entries they touch (`origins`)."""
    for section, body in raw.items():
        if section == "sources":
            continue
        entries = enumerate(body) if isinstance(body, list) else (body or {}).items()
        for key, entry in entries:
            if origins and f"{section}.{key}" not in origins:
                continue
            for path, cited in _cited(entry, f"{section}.{key}"):
                if _reads_as_key(cited, sources):
                    close = UnknownNameError("source key", cited, sources).suggestions
                    did = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                    raise ChipwiseError(
                        f"{origins.get(f'{section}.{key}', BUILTIN)}: {path}: '{cited}' reads as a source key, but no "
                        f"`sources` block defines it.{did} Fix: cite a defined key, define {cited} under sources "
                        f"({cited}: 'the citation'), or write the citation itself (docs/catalog-format.md)."
                    )


def _cited(node: Any, path: str) -> list[tuple[str, str]]:
    """Every text a raw node's `source` fields cite (one citation or a list), with the field's dotted path."""
    if isinstance(node, list):
        return [x for i, v in enumerate(node) for x in _cited(v, f"{path}.{i}")]
    if not isinstance(node, dict):
        return []
    out: list[tuple[str, str]] = []
    for k, v in node.items():
        if k == "source" and isinstance(v, str | list):
            out += [(f"{path}.source", c) for c in ([v] if isinstance(v, str) else v) if isinstance(c, str)]
        else:
            out += _cited(v, f"{path}.{k}")
    return out


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


def _check_layers(where: str, system: SystemEntry, fabrics: Mapping[str, FabricEntry]) -> None:
    """A system's scale-up domain runs on a scale-up fabric and its network on a scale-out one (each fabric's
    `layer`), and a domain of more than one chip names its fabric: without one it had run over the system's
    scale-out fabric in silence (8 chips over ib-ndr at InfiniBand's latency, `catalog show` reading 'over '), and
    `scaleout: {fabric: nvlink4}` had been taken. A one-chip domain moves nothing over its fabric and may name none."""
    up, out = system.scaleup, system.scaleout.fabric
    ups = sorted(f for f, e in fabrics.items() if e.layer == "scaleup")
    if not up.fabric and up.size > 1:
        raise ChipwiseError(
            f"{where}.scaleup.fabric: missing: a scale-up domain of {up.size} chips needs its own fabric, not the "
            f"scale-out {out}. Fix: give scaleup.fabric, one of {', '.join(ups)}, or a fabric of your own with "
            "layer: scaleup (docs/catalog-format.md)."
        )
    for key, fab, layer in (("scaleup.fabric", up.fabric, "scaleup"), ("scaleout.fabric", out, "scaleout")):
        if fab and fabrics[fab].layer != layer:
            ids = ups if layer == "scaleup" else sorted(f for f, e in fabrics.items() if e.layer == "scaleout")
            raise ChipwiseError(
                f"{where}.{key}: '{fab}' is a {fabrics[fab].layer} fabric, not a {layer} one. Fix: use one of "
                f"{', '.join(ids)}, or a fabric of your own with layer: {layer} (docs/catalog-format.md)."
            )


def _not_a_figure(value: Any, path: str, ref: Mapping[str, Any] | None) -> str:
    """What is wrong with a leaf of a tree section that no figure holds (bare_values), as the end of its line: empty,
    a scalar where an entry's figures belong, a figure short of its status, or a bare value of a field the model
    reads (with the figure to write instead); '' for a field it does not read (the unknown-field line names it)."""
    if value is None or value == {}:
        return " is empty. Fix: give its figures (docs/catalog-format.md), or drop it."
    if not path:
        return f": {value!r} is not a mapping of figures. Fix: give its figures under it (docs/catalog-format.md)."
    if ref is None:
        return ""
    if isinstance(value, dict):
        return (
            " is a figure with no status. Fix: add status: estimate with a derivation, or spec with a source "
            "(docs/catalog-format.md)."
        )
    shown = int(value) if isinstance(value, bool) else value  # a switch is 0 or 1 (a figure's value is no boolean)
    return (
        f": {value!r} is a bare value, not a figure. Fix: write it as {{value: {shown}, unit: '{ref.get('unit', '')}', "
        "status: estimate, derivation: ...} (docs/catalog-format.md)."
    )


def _check_trees(raw: Mapping[str, Any], trees: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """The efficiency, engines, datacenter and reliability sections hold only the fields the model reads (an unknown
    one was silently ignored), each a figure (a bare `step_overhead: 2` had been ignored, a bare `depreciation_years:
    5` refused as missing) in its range (a fraction of peak above 1, a PUE below 1 were taken as given, a storage
    bandwidth of 0); a 3-year commitment's price ratio is at most a 1-year one's."""

    def origin(section: str, first: str) -> str:
        return origins.get(f"{section}.{first}", BUILTIN)

    for section in ("efficiency", "engines", "datacenter", "reliability"):
        body = raw.get(section) or {}
        entries = [(str(k), v) for k, v in body.items()] if section in ("efficiency", "engines") else [("", body)]
        for key, entry in entries:
            fields = fields_of(raw, _builtin_raw(), section, key)
            bare = bare_values(entry)
            for path, value in bare.items():
                full = ".".join(filter(None, (key, path)))
                wrong = _not_a_figure(value, path, fields.reference(path))
                if wrong:
                    raise ChipwiseError(f"{origin(section, full.split('.')[0])}: {section}.{full}{wrong}")
            for path in [*figure_paths(entry), *(p for p in bare if fields.reference(p) is None)]:
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


def _check_power_covers_chips(
    systems: Mapping[str, SystemEntry],
    chips: Mapping[str, ChipEntry],
    touched: Mapping[str, Mapping[str, Any]],
    origins: Mapping[str, str],
) -> None:
    """A system's power, where the catalog gives one, is at least its chips' TDP (a hybrid rack's: the sum over its
    members, which share the rack's power by their TDP, hardware.build.member_system), so that a host share is left.
    Checked on load for the systems a file or --set touched, or whose chips they did (`touched`: the built-in
    catalog's own are checked once, with it): --set p5.48xlarge.power=1kW had loaded, `catalog show` showing 1 kW and
    `chipwise web` serving, and been refused only where the power was read (economics.power, which now relies on
    this check alone)."""
    moved = set(touched.get("chips") or {})
    for sid, system in systems.items():
        counts = system.members or {system.chip: system.chips}
        if system.power is None or not (sid in (touched.get("systems") or {}) or moved & set(counts)):
            continue
        boards = sum(n * chips[c].tdp.si for c, n in counts.items())
        if system.power.si >= boards:
            continue
        origin = origins.get(f"systems.{sid}") or next(
            (origins[f"chips.{c}"] for c in counts if f"chips.{c}" in origins), BUILTIN
        )
        raise ChipwiseError(
            f"{origin}: {sid} power {system.power.si:,.0f} W is below its {_tdp_terms(system, chips)} = "
            f"{boards:,.0f} W, leaving no host share. Fix: give the system's whole power, at least {boards:,.0f} W "
            f"(e.g. --set {sid}.power={boards / 1e3:g}kW or more), or lower {' or '.join(f'{c}.tdp' for c in counts)}."
        )


#: a chip figure a system figure restates: (path in the system, the system's figure, the value taken from its chips,
#: the chip figures that value comes from)
Restated = tuple[str, Figure, float, list[Figure]]


def _taken_from_chips(system: SystemEntry, chips: Mapping[str, ChipEntry]) -> list[Restated]:
    """The system's bandwidths that may restate its chips' figures, each with the value it would then have: a scale-up
    bandwidth its chip's, a hybrid link's its slower end's (a switched path runs at the slower port), a scale-out
    bandwidth its chips' own summed (trn4-ultraserver's 72 x 200 Gb/s)."""
    out: list[Restated] = []
    if system.scaleup.bandwidth is not None and not system.members:
        own = chips[system.chip].scaleup_bandwidth
        out.append(("scaleup.bandwidth", system.scaleup.bandwidth, own.si, [own]))
    for link in system.links:
        slower = min((chips[c].scaleup_bandwidth for c in link.between), key=lambda f: f.si)
        ends = [chips[c].scaleup_bandwidth for c in link.between if chips[c].scaleup_bandwidth.si == slower.si]
        out.append((f"links.{'-'.join(link.between)}.bandwidth", link.bandwidth, slower.si, ends))
    counts = system.members or {system.chip: system.chips}
    outs = {c: chips[c].scaleout_bandwidth for c in counts}
    if system.scaleout.bandwidth is not None and all(f is not None for f in outs.values()):
        figs = [f for f in outs.values() if f is not None]
        summed = sum(n * f.si for c, n in counts.items() if (f := outs[c]) is not None)
        out.append(("scaleout.bandwidth", system.scaleout.bandwidth, summed, figs))
    return out


def _check_status_not_firmer(
    systems: Mapping[str, SystemEntry], chips: Mapping[str, ChipEntry], origins: Mapping[str, str]
) -> None:
    """A system figure that restates its chips' figures (_taken_from_chips: the same value) is no firmer than the
    weakest of them: trn4-ultraserver's 1.8 TB/s scale-up had read `projected` where the chip's own is an `estimate`.
    A system figure with a source of its own (a vendor's box figure or announcement, from which a chip's may be
    derived) is not checked. Checked for the systems a file or --set gave (a --set chip figure is an estimate: the
    systems restating it keep theirs)."""
    for sid, system in systems.items():
        for path, fig, value, taken in _taken_from_chips(system, chips):
            weakest = min(taken, key=lambda f: STATUS_STRENGTH[f.status])
            firmer = STATUS_STRENGTH[fig.status] > STATUS_STRENGTH[weakest.status]
            if fig.source or not firmer or not math.isclose(fig.si, value, rel_tol=1e-6):
                continue
            raise ChipwiseError(
                f"{origins.get(f'systems.{sid}', BUILTIN)}: {sid}.{path} ({fig.value} {fig.unit}) is '{fig.status}' "
                f"but restates its chips' figure, which is '{weakest.status}': a figure taken from another is no "
                f"firmer than it. Fix: give it status: {weakest.status}, or a source of its own."
            )


def _tdp_terms(system: SystemEntry, chips: Mapping[str, ChipEntry]) -> str:
    """The TDP total a system's power is below, worded as economics.power's line for the system it builds ('8
    h100-sxm chips' TDP, 8 x 700 W'), a hybrid rack's members each named ('members' TDP, 36 x 2,000 W (trn4) + ...')."""
    if not system.members:
        return f"{system.chips} {system.chip} chips' TDP, {system.chips} x {chips[system.chip].tdp.si:,.0f} W"
    return "members' TDP, " + " + ".join(f"{n} x {chips[c].tdp.si:,.0f} W ({c})" for c, n in system.members.items())


def _check_model_files(models: Mapping[str, ModelIndexEntry], origins: Mapping[str, str]) -> None:
    """A catalog file's preset names a config.json, or a folder holding one, that is there (user_model_config; read
    where the model is, as a path on the command line is): a `file:` naming an empty folder had loaded, predict of
    another model passing and `chipwise web` answering 400 to GET /api/models."""
    for key, entry in models.items():
        origin = origins.get(f"models.{key}.file", BUILTIN)
        if origin != BUILTIN:
            user_model_config(key, entry.file, origin)


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


def _check_model_fields(models: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """A preset's entry holds only the fields ModelIndexEntry reads: `alias: [gem9]` had been taken in silence (the
    alias then unknown to `model show`), and `params: 9e9` with it."""
    known = list(ModelIndexEntry.model_fields)
    for key, entry in models.items():
        for name in entry if isinstance(entry, dict) else ():
            if name in known:
                continue
            close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.6)
            did = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ChipwiseError(
                f"{origins.get(f'models.{key}', BUILTIN)}: models.{key}: unknown field '{name}'.{did} Fix: use "
                f"{', '.join(known)} (docs/catalog-format.md), or drop it."
            )


def _aliases_of(entry: Any) -> list[str]:
    """A raw preset entry's aliases that are names (an alias list of another form is the schema's to refuse)."""
    aliases = entry.get("aliases") if isinstance(entry, dict) else None
    return [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []


def _check_model_names(models: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """A catalog file's preset alias names no other preset (preset_key: in any case, '_' for '-'): an alias that
    was another preset's alias or id had been taken in silence and never worked (`aliases: [deepseek-r1]` on a
    Gemma-2 preset: `model show deepseek-r1` printed DeepSeek-V3). Every id claims its name first (a preset's id wins
    over another's alias: a file's preset 'deepseek-r1' is that file's model), then the built-in aliases each
    preset keeps, then the aliases a file gives, which the line blames."""
    builtin = _builtin_raw().get("models") or {}
    owner = {preset_key(str(key)): str(key) for key in models}
    given: list[tuple[str, str]] = []
    for key, entry in models.items():
        own = set(_aliases_of(builtin.get(key)))
        for name in _aliases_of(entry):
            if name in own:
                owner.setdefault(preset_key(name), str(key))
            else:
                given.append((str(key), name))
    for key, name in given:
        other = owner.setdefault(preset_key(name), key)
        if other == key:
            continue
        theirs = "id" if preset_key(name) == preset_key(other) else "alias"
        raise ChipwiseError(
            f"{origins.get(f'models.{key}', BUILTIN)}: models.{key}: alias '{name}' is already the {theirs} of preset "
            f"'{other}' ({origins.get(f'models.{other}', BUILTIN)}). Fix: drop '{name}' from {key}'s aliases or "
            f"rename it; to change {other} itself, give its fields under models.{other} (docs/catalog-format.md)."
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
    if is_figure(node):
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


def _kept(section: str, key: Any, body: Any, origins: Mapping[str, str]) -> bool:
    """Whether an entry of the catalog being built is still the built-in one: no file or --set gave it (`origins`
    names each entry they touch) and no --set's move of a chip's systems changed it. Its validated object is the
    built-in catalog's (validated from the same figures, frozen): `chipwise sensitivity` loads a catalog a figure it
    moves, and each had validated the whole built-in catalog again to change one figure."""
    return f"{section}.{key}" not in origins and body == (_builtin_raw().get(section) or {}).get(key)


def _validated_section(body: Any, section: str, origins: dict[str, str], base: Catalog | None) -> Any:
    """A tree section validated (_validate_tree), the entries still the built-in ones (_kept) taken from `base`."""
    if base is None or not isinstance(body, dict) or is_figure(body):
        return _validate_tree(body, section, origins)
    built = getattr(base, section)
    return {
        str(k): built[k] if _kept(section, k, v, origins) else _validate_tree(v, f"{section}.{k}", origins)
        for k, v in body.items()
    }


#: the leaves a parsed YAML tree holds that need no copy
_IMMUTABLE = (str, int, float, bool, type(None))


def _copy_tree(node: Any) -> Any:
    """A copy of a parsed YAML tree in about a third of copy.deepcopy's time (a deep copy of the built-in catalog had
    been some 20 ms of every load_catalog with files or --sets, which `chipwise sensitivity` calls once a figure it
    moves). Each node an anchor shares is copied apart: a --set names one entry (--set
    engines.vllm.chips.tpu-v4.max_tokens=x1.5 had moved tpu-v5e's, tpu-v5p's, tpu-v6e's and tpu-v7's too, the
    entries engines.yaml gives as *vllm_tpu)."""
    kind = type(node)
    if kind is dict:
        return {key: _copy_tree(value) for key, value in node.items()}
    if kind is list:
        return [_copy_tree(value) for value in node]
    return node if kind in _IMMUTABLE else copy.deepcopy(node)


@functools.cache
def _builtin_catalog() -> Catalog:
    return _validate(_copy_tree(_builtin_raw()), {}, ())


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
    raw = _copy_tree(_builtin_raw())
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
    apply_sets(raw, _builtin_raw(), sets, origins, filed)
    return _validate(raw, origins, tuple(sets), replaced, base=_builtin_catalog())
