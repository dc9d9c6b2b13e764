"""Load the built-in catalog, merge users' YAML files over it, apply `--set` overrides, validate it all.

The built-in data is parsed once per process; a user's files and `--set` figures are merged over a copy and the
result is validated exactly as strictly as the built-in data. Errors are one line naming the file, the entry
and the field.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import yaml
from pydantic import ValidationError

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
from chipwise.catalog.units import SI_UNIT, parse_quantity, quantity, to_si
from chipwise.errors import ChipwiseError, UnknownNameError, user_file

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
    try:
        text = user_file(path, "catalog file", "check the path").read_text(encoding="utf-8")
    except OSError as exc:
        raise ChipwiseError(f"cannot read catalog file '{path}': {exc.strerror}. Fix: check the path.") from None
    try:
        data = load_yaml(text, fast=True)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ChipwiseError(
            f"catalog file '{path}' is not valid YAML{where}: {problem}. Fix: correct the YAML syntax there."
        ) from None
    if data is None:
        return {}
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ChipwiseError(f"cannot read '{path}': {exc.strerror}. Fix: check the path.") from None
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
        _merge_file(merged, _read_yaml(data_dir / name), origins={}, origin=BUILTIN)
    index = data_dir / "models" / "index.yaml"
    if index.exists():
        _merge_file(merged, _read_yaml(index), origins={}, origin=BUILTIN)
    return merged


def _is_figure(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and "status" in node


def _deep_merge(base: dict[str, Any], new: Mapping[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and not _is_figure(value):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)


def _merge_file(merged: dict[str, Any], data: Mapping[str, Any], origins: dict[str, str], origin: str) -> None:
    for section, body in data.items():
        if section == "meta":
            continue
        if section == "prices":
            if not isinstance(body, list):
                raise ChipwiseError(
                    f"{origin}: 'prices' must be a list of price entries. Fix: see docs/catalog-format.md."
                )
            start = len(merged.setdefault("prices", []))
            merged["prices"].extend(copy.deepcopy(body))
            for i in range(len(body)):
                origins[f"prices.{start + i}"] = origin
            continue
        if not isinstance(body, dict):
            raise ChipwiseError(f"{origin}: section '{section}' must be a mapping of ids to entries.")
        target = merged.setdefault(section, {})
        for raw_key, value in body.items():
            key = str(raw_key)
            if isinstance(value, dict) and isinstance(target.get(key), dict) and not _is_figure(value):
                _deep_merge(target[key], value)
            else:
                target[key] = copy.deepcopy(value)
            origins[f"{section}.{key}"] = origin


def _fmt_validation(exc: ValidationError, where: str) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"] if p not in ("function-after",))
    msg = str(err["msg"]).removeprefix("Value error, ")
    field_txt = f".{loc}" if loc else ""
    return f"{where}{field_txt}: {msg}. Fix: correct that figure (format: docs/catalog-format.md)."


def _validate(raw: dict[str, Any], origins: dict[str, str], overrides: tuple[str, ...]) -> Catalog:
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
    families = trees["efficiency"]
    for cid, chip in chips.items():
        if systems and chip.default_system not in systems:
            _unknown(where("chips", cid), "default_system", chip.default_system, systems, "systems")
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
    if not files and not sets:
        return _builtin_catalog()
    raw = copy.deepcopy(_builtin_raw())
    origins: dict[str, str] = {}
    for f in files:
        path = Path(f)
        _merge_file(raw, _read_yaml(path), origins, str(path))
    for assignment in sets:
        apply_set(raw, assignment, origins)
    return _validate(raw, origins, tuple(sets))


def _namespaces(raw: Mapping[str, Any]) -> dict[str, str]:
    """Every id that `--set` can address, mapped to its section."""
    ids: dict[str, str] = {}
    for section in ("chips", "systems", "fabrics", "efficiency", "engines"):
        for key in raw.get(section) or {}:
            ids.setdefault(str(key), section)
    for section in ("datacenter", "reliability"):
        ids[section] = section
    return ids


def _resolve_target(raw: Mapping[str, Any], lhs: str) -> tuple[str, str, list[str]]:
    ids = _namespaces(raw)
    aliases = {
        alias: (section, key)
        for section in ("chips", "systems")
        for key, body in (raw.get(section) or {}).items()
        for alias in (body.get("aliases") or [])
    }
    best: tuple[str, str] | None = None
    for ident in sorted(list(ids) + list(aliases), key=len, reverse=True):
        if lhs.startswith(ident + "."):
            best = (ids[ident], ident) if ident in ids else aliases[ident]
            rest = lhs[len(ident) + 1 :]
            break
    if best is None:
        head = lhs.split(".", maxsplit=1)[0]
        raise UnknownNameError(
            "catalog id", head, ids, hint="write --set ID.FIELD=VALUE with a chip, system or fabric id"
        )
    section, key = best
    return section, key, rest.split(".")


def _follow_tdp(raw: dict[str, Any], chip: str, delta_w: float, assignment: str) -> None:
    """A chip's TDP what-if moves the rated power of the systems built of it by as much a chip: a system's power
    less its chips' TDP is its host, network and fans (economics.power), which a capped chip does not change (a
    350 W H100 had kept its 1,120 W a chip, the host share growing by the watts taken off the GPU)."""
    for system in (raw.get("systems") or {}).values():
        power = system.get("power") if isinstance(system, dict) else None
        if not isinstance(power, dict) or system.get("chip") != chip or not _is_figure(power):
            continue
        watts = to_si(float(power["value"]), str(power["unit"])) + delta_w * float(system.get("chips", 1))
        system["power"] = {
            **power,
            "value": max(watts, 0.0),
            "unit": "W",
            "derivation": f"{power.get('derivation', '')}; {chip} TDP moved by --set {assignment}".lstrip("; "),
        }


def apply_set(raw: dict[str, Any], assignment: str, origins: dict[str, str]) -> None:
    """Apply one `ID.FIELD=VALUE` override (VALUE in SI unless it carries a unit) to the raw catalog."""
    if "=" not in assignment:
        raise ChipwiseError(
            f"--set '{assignment}' has no '='. Fix: write --set ID.FIELD=VALUE, e.g. trn3.hbm_bandwidth=6e12."
        )
    lhs, rhs = (s.strip() for s in assignment.split("=", 1))
    section, key, path = _resolve_target(raw, lhs)
    value, unit = parse_quantity(rhs)
    if not math.isfinite(value):  # 'nan' and 'inf' read as floats; NaN had ranked a chip at 'nan tok/s'
        raise ChipwiseError(f"--set {lhs}: value {rhs} is not a finite number. Fix: give a finite number.")
    if value < 0:
        raise ChipwiseError(f"--set {lhs}: value {rhs} is negative. Fix: give a non-negative number.")
    entry = raw[section][key] if section in ("chips", "systems", "fabrics", "efficiency", "engines") else raw[section]
    if path and path[0] == "price" and section in ("chips", "systems"):
        mode = path[1] if len(path) > 1 else "on-demand"
        if mode not in PRICING_MODES:
            raise ChipwiseError(
                f"--set {lhs}: unknown pricing mode '{mode}'. Fix: use one of {', '.join(PRICING_MODES)}."
            )
        if unit not in ("", "USD/h"):
            raise ChipwiseError(f"--set {lhs}: a price is in USD/h. Fix: give the hourly price, e.g. {lhs}=2.5.")
        raw.setdefault("prices", []).insert(
            0,
            {
                ("chip" if section == "chips" else "system"): key,
                "provider": "user",  # economics.pricing.USER_PROVIDER: wins over the catalog's prices
                "mode": mode,
                "value": value,
                "status": "estimate",
                "derivation": f"set on the command line: --set {assignment}",
                "region": "",
            },
        )
        origins["prices.0"] = "--set"
        return
    node: Any = entry
    for part in path[:-1]:
        if not isinstance(node, dict):
            break
        node = node.setdefault(part, {})
    leaf = path[-1] if path else ""
    current = node.get(leaf) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not leaf or (current is not None and not _is_figure(current)):
        raise ChipwiseError(f"--set {lhs}: '{'.'.join(path)}' is not a figure of {key}. Fix: name a numeric field.")
    if current is None and section in ("chips", "systems"):
        known = [k for k, v in node.items() if _is_figure(v)]
        raise UnknownNameError(f"figure of {key}", ".".join(path), known, hint="name a figure that the entry has")
    if not unit:
        wanted = quantity(current["unit"]) if current is not None else "ratio"
        unit = SI_UNIT.get(wanted, "")
        was = to_si(float(current["value"]), str(current["unit"])) if current is not None else 0.0
        if current is not None and unit and was > 0 and value > 0 and not 1e-3 <= value / was <= 1e3:
            # a bare number is in SI units: 6.7 for a bandwidth of 4.8 TB/s is 6.7 B/s, surely a missing unit
            raise ChipwiseError(
                f"--set {lhs}={rhs}: a bare number is in {unit}, {value / was:.2g} x the catalog's "
                f"{current['value']} {current['unit']}. Fix: give its unit, e.g. {lhs}={rhs}{current['unit']}."
            )
    node[leaf] = {
        "value": value,
        "unit": unit,
        "status": "estimate",
        "derivation": f"set on the command line: --set {assignment}",
        "note": f"what-if override; catalog value was {current['value']} {current['unit']}"
        if current
        else "what-if override",
    }
    if section == "chips" and path == ["tdp"] and current is not None:
        _follow_tdp(raw, key, value - to_si(float(current["value"]), str(current["unit"])), assignment)
    if section == "engines" and len(path) == 1:
        # an engine's figure holds on every chip family: the families that fit their own (engines.E.chips.F) would
        # otherwise keep theirs, and the what-if change nothing there
        for family in (entry.get("chips") or {}).values():
            if isinstance(family, dict) and leaf in family:
                family[leaf] = node[leaf]
    origins[f"{section}.{key}"] = origins.get(f"{section}.{key}", "--set")
