"""`--set ID.FIELD=VALUE`: a what-if figure applied to the raw catalog before it is validated.

The loader reads and merges the catalog's files and hands the raw result here (apply_sets), before validating
it. Each override is resolved to the entry and field it names (a chip, system, fabric, efficiency family or engine
by id or alias, qualified by its section where a name is ambiguous; the datacenter and reliability sections by
name), its value read in SI, in a unit that measures what the field does, or as a scale of the figure (`x1.1`),
checked against the field's range, and stored with a derivation saying it was set on the command line; a chip
figure its systems carry too (FOLLOWED) moves theirs with it. Every refusal is one line naming the override and
the fix.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from chipwise.catalog.fields import Fields, fields_of, is_figure, item_name, range_problem
from chipwise.catalog.schema import PRICING_MODES, as_sources
from chipwise.catalog.units import SI_UNIT, UNITS, from_si, parse_quantity, quantity, to_si, units_of
from chipwise.errors import ChipwiseError, UnknownNameError

#: the most ids an error about an unknown one lists in full (more: it names the section to look in)
MAX_LISTED = 20


def apply_sets(
    raw: dict[str, Any],
    builtin: Mapping[str, Any],
    sets: Sequence[str],
    origins: dict[str, str],
    filed: Mapping[str, str],
) -> None:
    """Apply the `--set` overrides, in order, to `raw` (the catalog being built: the built-in one, `builtin`, with
    the --catalog files merged over it), then move the systems' figures that follow a chip figure a file or a --set
    changed (FOLLOWED). `filed`: the system figures the files give, by qualified name, which stand."""
    given: dict[str, str] = {}
    was_builtin, chips_before = _followed(builtin), _followed(raw)
    for assignment in sets:
        if "=" in assignment and _SCALE.match(assignment.split("=", 1)[1].strip()):
            figure = _resolve_target(raw, builtin, assignment.split("=", 1)[0].strip()).qualified
            if figure in given and _rhs(given[figure]) == _rhs(assignment):
                continue  # the same scale again: applied once (twice had scaled the scaled figure)
        _once(given, apply_set(raw, builtin, assignment, origins), assignment)
    # after every --set, so that a system figure a --set gives wins over a chip's whatever the flags' order; a
    # file's change first (from the built-in figure to the file's), then the --set's (from the file's on), as a
    # --set of the file's figure would
    for (chip, name), was in was_builtin.items():
        if chips_before.get((chip, name), was) != was:
            by = f"{origins[f'chips.{chip}']}'s {chip}.{name}"
            _follow_chip(raw, chip, name, was, chips_before[chip, name], by, {**filed, **given})
    for figure, assignment in given.items():
        section, key, name = [*figure.split(".", 2), "", ""][:3]
        if section == "chips" and (key, name) in chips_before:
            now = _si(raw["chips"][key][name])
            _follow_chip(raw, key, name, chips_before[key, name], now, f"--set {assignment}", given)


def _followed(raw: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """Each chip's FOLLOWED figures in SI, by (chip, figure)."""
    return {
        (str(key), name): _si(fig)
        for key, body in (raw.get("chips") or {}).items()
        if isinstance(body, dict)
        for name in FOLLOWED
        if isinstance(fig := body.get(name), dict) and is_figure(fig) and not isinstance(fig["value"], str)
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
    if not is_figure(figure) or isinstance(figure["value"], str):
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


def _fields(raw: Mapping[str, Any], builtin: Mapping[str, Any], target: _Target) -> Fields:
    return fields_of(raw, builtin, target.section, target.key)


def _resolve_target(raw: Mapping[str, Any], builtin: Mapping[str, Any], lhs: str) -> _Target:
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
    fits = [t for t in cands if _fields(raw, builtin, t).takes(t.path)]
    entries = {(t.section, t.key) for t in fits}
    if len(entries) > 1:
        both = " and ".join(f"of {t.entry}" for t in fits)
        forms = " or ".join(f"--set {t.qualified}=..." for t in fits)
        raise ChipwiseError(f"--set {lhs}: '{lhs}' names a figure {both}. Fix: say which: {forms}.")
    if fits:
        return fits[0]
    _no_such_figure(raw, builtin, lhs, cands)


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


def _lister(section: str, key: str, prices: bool = False) -> str | None:
    """The command that lists an entry's figures (and, with `prices`, a chip's or system's prices): catalog show for a
    chip, system or fabric, catalog engine for an engine (None for other sections)."""
    if section in ("chips", "systems", "fabrics"):
        return f"'chipwise catalog show {key}' lists its figures" + (" and prices" if prices else "")
    return f"'chipwise catalog engine {key}' lists its figures" if section == "engines" else None


def _no_such_figure(raw: Mapping[str, Any], builtin: Mapping[str, Any], lhs: str, cands: Sequence[_Target]) -> NoReturn:
    """One line for a field no entry `lhs` can name has: the figures it was likely meant to be, and where to see
    them."""
    first: dict[tuple[str, str], _Target] = {}
    for t in cands:  # the longest name of each entry (p5.48xlarge.x, not its alias p5 with field '48xlarge.x')
        first.setdefault((t.section, t.key), t)
    entries = list(first.values())
    several = len(entries) > 1
    offers: dict[str, str] = {}
    for t in entries:
        fields = _fields(raw, builtin, t)
        every = list(fields.known)
        known = [p for p in every if not p.startswith("chips.")] or every
        # not a figure that is itself a list item (scaleup.dim_bandwidth.2): apply_set sets figures in mappings only
        entry = (raw.get(t.section) or {}).get(t.key) if t.key else raw.get(t.section)
        known = [p for p in known if not isinstance(_node_at(entry, p.split(".")[:-1], create=False), list)]
        for close in _near_figures(t.path, known + (PRICE_TARGETS if fields.prices else [])):
            offers.setdefault(f"{t.section}.{t.key}.{close}" if several else f"{t.ident}.{close}", "")
    did = f" Did you mean {', '.join(repr(o) for o in list(offers)[:3])}?" if offers else ""
    where = " or ".join(f"{t.key} ({ENTRY_KIND[t.section]})" if t.key else t.section for t in entries)
    shown = next((t for t in entries if t.section in ("chips", "systems", "fabrics")), entries[0])
    priced = any(_fields(raw, builtin, t).prices for t in entries)
    if (listed := _lister(shown.section, shown.key, priced)) is not None:
        see = listed
    else:
        paths = list(_fields(raw, builtin, entries[0]).known)
        if entries[0].section in TREE_SECTIONS:  # their groups: pue.*, capex.*, ...
            names = sorted({p.split(".")[0] + (".*" if "." in p else "") for p in paths})
        else:
            names = sorted({re.sub(r"^matmul\..*", "matmul.PRECISION", p) for p in paths})
        see = f"one of {', '.join(names)}" if len(names) <= MAX_LISTED * 2 else "docs/catalog-format.md names them"
    price = ", or price[.MODE] for its hourly price in USD" if priced else ""
    raise ChipwiseError(
        f"--set {lhs}: unknown figure of {where}: '{entries[0].path}'.{did} Fix: name a figure it has{price} ({see})."
    )


#: what `--set` takes for a chip's or a system's rental price besides its figures (apply_set, _set_price): price, at
#: on-demand, or price.MODE
PRICE_TARGETS: list[str] = ["price", *(f"price.{mode}" for mode in PRICING_MODES)]
#: the shortest typed field or leading word that is matched by containment (a 'p' is in most names)
_SHORTEST_RELATED = 3


def _near_figures(typed: str, known: Sequence[str]) -> list[str]:
    """The figures `typed` was likely meant to be, best first: the close spellings (prce -> price), then those that
    contain it (hbm -> hbm_capacity) or share its leading word (hbm_gib -> hbm_capacity; price_usd_per_hour ->
    price), which a spelling's similarity misses."""
    close = difflib.get_close_matches(typed, known, n=3, cutoff=0.6)
    head = _leading_word(typed)
    related = [
        k
        for k in known
        if (len(typed) >= _SHORTEST_RELATED and typed in k)
        or (len(head) >= _SHORTEST_RELATED and _leading_word(k) == head)
    ]
    return list(dict.fromkeys([*close, *related]))


def _leading_word(path: str) -> str:
    """A field's first word, before its first '_' or '.' (hbm of hbm_capacity, price of price.spot)."""
    return re.split(r"[_.]", path, maxsplit=1)[0]


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
    figure (a scale-up bandwidth, a torus's per-dimension ones, a hybrid's link between two of the chip) and a
    system's scale-out bandwidth move in proportion (trn1n's twice the chip's share stays twice); a power, and a
    hybrid rack's scale-out bandwidth, by the chip's change times its chips of this type (the rest is host, fans,
    the other members' NICs). A moved figure is an `estimate` whose derivation says how it moved (it had kept its
    `spec` status: dgx-h100's 11 kW after --set h100-sxm.tdp=800W had read as NVIDIA's figure), its sources those of
    the catalog's figure it moved from."""
    if was <= 0 or now == was:
        return
    for sid, system in (raw.get("systems") or {}).items():
        if not isinstance(system, dict):
            continue
        members = system.get("members") or {}
        count = members.get(chip, 0) if members else system.get("chips", 1) if system.get("chip") == chip else 0
        if not count:
            continue
        for path in _follower_paths(system, chip, name):
            if f"systems.{sid}.{path}" in given:
                continue
            parts = path.split(".")
            node = _node_at(system, parts[:-1], create=False)
            old_fig = _node_at(node, parts[-1:], create=False)
            if not is_figure(old_fig) or isinstance(old_fig["value"], str):
                continue
            additive = name == "tdp" or bool(members and name == "scaleout_bandwidth")
            # a hybrid's link below the chip's port is capped by its switch (trn4-trn4 at the NVLink 5 900 GB/s)
            capped = path.startswith("links.") and _si(old_fig) < was
            moved = _moved(old_fig, chip, name, was, now, float(count) if additive else None, by, capped)
            if isinstance(node, list):  # a torus dimension's figure (scaleup.dim_bandwidth.0)
                node[int(parts[-1])] = moved
            else:
                node[parts[-1]] = moved


def _follower_paths(system: Mapping[str, Any], chip: str, name: str) -> list[str]:
    """The figures of a system of `chip` that follow the chip's FOLLOWED figure `name`: its power, its scale-out
    bandwidth, or its scale-up bandwidth: a hybrid's link between two of the chip, the system's own total, or where
    a torus gives only per-dimension figures, each of them (a --catalog file's trn2.scaleup_bandwidth had left the
    Trn2 UltraServer's 256/256/128 GB/s where they were, a TP16 step's exposed communication at 50.5 s, as a --set
    moved it to 100.8 s)."""
    if name == "tdp":
        return ["power"]
    if name == "scaleout_bandwidth":
        return ["scaleout.bandwidth"]
    if system.get("members"):
        return [f"links.{chip}-{chip}.bandwidth"]
    up = system.get("scaleup")
    dims = up.get("dim_bandwidth") if isinstance(up, dict) else None
    if isinstance(up, dict) and up.get("bandwidth") is None and isinstance(dims, list) and dims:
        return [f"scaleup.dim_bandwidth.{i}" for i in range(len(dims))]
    return ["scaleup.bandwidth"]


def _moved(
    old: Mapping[str, Any],
    chip: str,
    name: str,
    was: float,
    now: float,
    count: float | None,
    by: str,
    capped: bool = False,
) -> dict[str, Any]:
    """A system figure `old` moved with its chip's `name` from `was` to `now` (SI): by the change times `count` chips
    (additive), to the lower of it and the chip's new figure where `capped` (a link held below the chip's port by its
    switch), or else in proportion; an estimate whose derivation gives the step."""
    unit = str(old["unit"])
    shown = "W" if name == "tdp" else "GB/s"
    a, b = (f"{from_si(x, shown):,.6g}" for x in (was, now))
    if capped:
        new = min(_si(old), now)
        how = f"the lower of {old['value']} {unit} (its switch's) and the chip's {b} {shown}"
    elif count is not None:
        new = tdp_moved_power(_si(old), count, now - was)
        how = f"{old['value']} {unit} + {count:g} x ({b} - {a}) {shown}"
    else:
        new = _si(old) * now / was
        how = f"{old['value']} {unit} x {b} / {a} {shown}"
    said = old.get("derivation") or "; ".join(str(s) for s in as_sources(old.get("source")))
    catalog = f"; the catalog's {old['value']} {unit} ({old['status']}{': ' + said if said else ''})"
    return {
        **old,
        "value": from_si(new, unit),
        "status": "estimate",
        "derivation": f"{chip} {FOLLOWED[name]} moved by {by}: {how}{catalog}",
        "note": f"what-if: follows {by}; catalog value was {old['value']} {unit}",
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


#: quantities whose figures given with a unit are still held near the catalog's: a grid's intensity in gCO2e/kWh
#: where kg was meant is 1000x off, and the catalog's grids span 116x (eu-north-1's 8 to af-south-1's 928
#: gCO2e/kWh), so a figure past 300x of the one it replaces is no grid's but a unit slip (0.379gCO2e/kWh, the fix a
#: bare 0.379 had been given, priced us-east-1's carbon at 0.148 kg where 148 kg was meant)
_UNIT_SLIP_BAND: dict[str, float] = {"carbon_intensity": 300.0}


def _unit_for(lhs: str, rhs: str, value: float, unit: str, ref: Mapping[str, Any], leaf: str) -> str:
    """The unit a `--set` value is stored in: the one given, which must measure what the field does, or for a bare
    number SI (refused where it is over 100x off the catalog's figure: surely a missing unit; a figure with a unit
    whose quantity is in _UNIT_SLIP_BAND, past that band: surely a wrong one); a chip's launch_year, a calendar year,
    is not reached (DISPLAY_ONLY)."""
    ref_unit = str(ref.get("unit", ""))
    wanted = quantity(ref_unit) if ref_unit in UNITS else "ratio"
    if unit and quantity(unit) != wanted:
        raise ChipwiseError(
            f"--set {lhs}={rhs}: {leaf} is a {wanted}, not a {quantity(unit)} ('{unit}'). Fix: give it in one of "
            f"{', '.join(units_of(wanted))}."
        )
    si_unit = SI_UNIT.get(wanted, "")
    was = to_si(float(ref["value"]), ref_unit) if not isinstance(ref.get("value"), str) else 0.0
    band = _UNIT_SLIP_BAND.get(wanted) if unit else 1e2
    ratio = to_si(value, unit or si_unit) / was if was > 0 else 1.0
    if band is None or ref_unit == "1" or value <= 0 or 1 / band <= ratio <= band:
        return unit or si_unit
    # a bare number is in SI units: 6.7 for a bandwidth of 4.8 TB/s is 6.7 B/s, 1.2 for a 1000 W TDP 1.2 W; the fix
    # names the unit that puts the number nearest the catalog's (1.2 -> 1.2kW; 0.379 for a grid -> 0.379kgCO2e/kWh,
    # where the nearest had been gCO2e/kWh, 1000x off, before kgCO2e/kWh was a unit)
    meant = min(units_of(wanted), key=lambda u: abs(math.log(to_si(value, u) / was)), default=ref_unit)
    given = f"{value:g} {unit} is" if unit else f"a bare number is in {si_unit},"
    fix = (
        f"give its unit, e.g. {lhs}={f'{value:g}' if unit else rhs}{meant}"
        if meant != unit
        else f"give a figure near the catalog's, e.g. {lhs}={ref['value']}{ref_unit}"
    )
    raise ChipwiseError(
        f"--set {lhs}={rhs}: {given} {ratio:.2g} x the catalog's {ref['value']} {ref_unit}"
        + (f", past {band:g}x of it: surely a unit slip" if unit else "")
        + f". Fix: {fix}."
    )


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

#: datacenter figures no prediction reads (reference data), and what to set instead: a --set of one is refused with
#: one line, as the reliability reference figures are (google_cfe_fraction.us-central1=0.5 had come out the same,
#: though the catalog then called it "used for market-based carbon accounting")
REFERENCE_ONLY: dict[str, str] = {
    "google_cfe_fraction.*": "drop it; market-based carbon accounting is not modelled: carbon is location-based, "
    "--set datacenter.grid_intensity.REGION=G/kWh to model a cleaner supply.",
    "opex.tpu_ocs_power_fraction": "drop it; a TPU pod's optical switches are in its host share: --set "
    "SYSTEM.host_power_fraction (e.g. tpu-v5p-pod.host_power_fraction=0.25).",
    "capex.tpu_ocs_cost_fraction": "drop it; a TPU pod's optical switches are in its price (or unit_price).",
}


def _reference_fix(section: str, path: str) -> str | None:
    """What to do instead of a --set of a reliability or datacenter figure no prediction reads (reference data), or
    None where one is read."""
    if section == "reliability" and path not in RELIABILITY_READ:
        return RELIABILITY_INSTEAD.get(path, "drop it (predict --sources lists the figures a run reads).")
    if section == "datacenter":
        return next((fix for pattern, fix in REFERENCE_ONLY.items() if fnmatch.fnmatchcase(path, pattern)), None)
    return None


def _refuse_unread(raw: Mapping[str, Any], target: _Target, lhs: str) -> None:
    """One line for a --set of a figure no prediction reads (the run would come out the same): a chip's
    DISPLAY_ONLY figure, a fabric tier's latency or radix, reliability or datacenter reference data, or the host
    share of a system that has a power figure."""
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
    fix = _reference_fix(section, target.path)
    if fix:
        raise ChipwiseError(
            f"--set {lhs}: no prediction reads this {section} figure, which is reference data (the run would come "
            f"out the same). Fix: {fix}"
        )
    power = raw[section][key].get("power") if section == "systems" and target.path == "host_power_fraction" else None
    if power is not None and is_figure(power):
        # economics.power takes such a system's host from its power: the fraction would move nothing
        raise ChipwiseError(
            f"--set {lhs}: {key} has a power figure ({power['value']} {power['unit']}), from which its host share is "
            "taken; host_power_fraction is read only for a system with none (the run would come out the same). Fix: "
            f"set its power instead, e.g. --set {key}.power=9kW."
        )


def _read_value(
    raw: Mapping[str, Any], target: _Target, lhs: str, rhs: str, ref: Mapping[str, Any] | None
) -> tuple[float, str]:
    """The value and unit `--set LHS=RHS` gives (a scale: the figure's own unit, times the factor), or one line: a
    price scaled, a value that is no number or is in no unit of the field's (`ref`: its catalog figure), one that
    is not finite or is negative."""
    path = target.path.split(".")
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
    return value, unit


#: the provider of a price a --set gives: it wins over every catalog price of its system or chip, and may price any
#: system (the loader holds a system's other prices to its own provider)
USER_PROVIDER = "user"


def _set_price(
    raw: dict[str, Any], target: _Target, lhs: str, assignment: str, value: float, unit: str, origins: dict[str, str]
) -> str:
    """Add a chip's or a system's price given by --set (ID.price[.MODE]) to the catalog's prices, the user's,
    which win over the catalog's; return its qualified name with its mode."""
    section, key, path = target.section, target.key, target.path.split(".")
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
            "provider": USER_PROVIDER,
            "mode": mode,
            "value": value,
            "status": "estimate",
            "derivation": f"{SET_ON_COMMAND_LINE}: --set {assignment}",
            "region": "",
        },
    )
    origins[f"prices.{len(prices) - 1}"] = "--set"  # appended: the files' prices keep their indices
    return f"{section}.{key}.price.{mode}"


def _set_figure(
    entry: dict[str, Any],
    target: _Target,
    lhs: str,
    rhs: str,
    assignment: str,
    value: float,
    unit: str,
    ref: Mapping[str, Any],
) -> None:
    """Store the number `--set LHS=RHS` gives in the entry's figure (`ref`: the catalog's figure of the field, whose
    unit the value's must measure), noting the catalog's value it replaces; one line for a text figure, a value
    out of the field's range, or a path that leads to no figure."""
    section, key, path = target.section, target.key, target.path.split(".")
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
    current = current if is_figure(current) else None
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


def _set_engine_families(engine: Mapping[str, Any], name: str, factor: float | None) -> None:
    """An engine's figure `name`, just set, on every chip family that fits its own (engines.E.chips.F): the
    families would otherwise keep theirs, and the what-if change nothing there. A scale (`factor`) scales each
    family's own fitted figure, not the engine's default."""
    for family in (engine.get("chips") or {}).values():
        if isinstance(family, dict) and name in family:
            own, family[name] = family[name], dict(engine[name])
            if factor is not None and is_figure(own) and not isinstance(own["value"], str):
                family[name].update(
                    value=float(own["value"]) * factor,
                    unit=own["unit"],
                    note=f"what-if override; catalog value was {own['value']} {own['unit']}",
                )


def apply_set(raw: dict[str, Any], builtin: Mapping[str, Any], assignment: str, origins: dict[str, str]) -> str:
    """Apply one `ID.FIELD=VALUE` override (VALUE in SI unless it carries a unit) to the raw catalog (`builtin`: the
    built-in one, whose defaults name the figures an efficiency family, an engine and the datacenter take); return
    the qualified name of the figure it set (chips.trn3.tdp; a price's with its mode:
    chips.h100-sxm.price.on-demand)."""
    if "=" not in assignment:
        raise ChipwiseError(
            f"--set '{assignment}' has no '='. Fix: write --set ID.FIELD=VALUE, e.g. trn3.hbm_bandwidth=6e12."
        )
    lhs, rhs = (s.strip() for s in assignment.split("=", 1))
    target = _resolve_target(raw, builtin, lhs)
    section, key, path = target.section, target.key, target.path.split(".")
    _refuse_unread(raw, target, lhs)
    ref = _fields(raw, builtin, target).reference(target.path)
    value, unit = _read_value(raw, target, lhs, rhs, ref)
    entry = raw[section][key] if key else raw.setdefault(section, {})
    if path[0] == "price" and section in ("chips", "systems"):
        return _set_price(raw, target, lhs, assignment, value, unit, origins)
    assert ref is not None  # _resolve_target returns a field the entry takes
    _set_figure(entry, target, lhs, rhs, assignment, value, unit, ref)
    if section == "engines" and len(path) == 1:
        _set_engine_families(entry, path[0], _factor(rhs) if _SCALE.match(rhs) else None)
    top = f"{section}.{key}" if key else f"{section}.{path[0]}"
    origins[top] = origins.get(top, "--set")
    return target.qualified
