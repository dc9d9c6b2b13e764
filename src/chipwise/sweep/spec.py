"""Sweep files: parse and validate strictly, expand to points with stable ids (docs/sweep.md).

A sweep is a base scenario (DESIGN.md's contract), a grid of axes (cartesian product), optional zipped axes (that
vary together), named what-if catalog variants (`--set` overrides and/or catalog files), and catalog files for every
point. A point is one scenario under one variant; its id hashes the canonical scenario and the variant (name,
overrides and the *contents* of its catalog files), so the same point gets the same id on every run and machine.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from chipwise.catalog.strict_yaml import load_yaml
from chipwise.errors import ChipwiseError, user_file
from chipwise.workload.counts import parse_count
from chipwise.workload.presets import config_file
from chipwise.workload.scenario import model_from
from chipwise.workload.serve_scenario import ServeScenario, path_from
from chipwise.workload.slo import SLO
from chipwise.workload.train_scenario import TrainScenario

KEYS: tuple[str, ...] = ("name", "base", "grid", "zip", "what_if", "catalog")
FORMAT = "the format is in docs/sweep.md"


@dataclass(frozen=True)
class Variant:
    """A named what-if: catalog files (absolute paths, the sweep's own first) and `ID.FIELD=VALUE` overrides."""

    name: str
    files: tuple[str, ...]
    sets: tuple[str, ...]
    digest: str  # hash of the name, the overrides and the files' contents


@dataclass(frozen=True)
class Point:
    """One scenario under one what-if variant."""

    id: str
    variant: Variant
    scenario: dict[str, Any]
    axes: dict[str, Any]  # the axis values that made this point (for messages and tables)


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: expands lazily to its points."""

    name: str
    source: str
    kind: str
    base: dict[str, Any]
    grid: dict[str, list[Any]]
    zips: tuple[dict[str, list[Any]], ...]
    variants: tuple[Variant, ...]
    raw: dict[str, Any] = field(repr=False)
    files: dict[str, str] = field(default_factory=dict, repr=False)  # a scenario's file path -> its contents' hash

    def __len__(self) -> int:
        n = len(self.variants)
        for values in self.grid.values():
            n *= len(values)
        for group in self.zips:
            n *= len(next(iter(group.values())))
        return n

    def combos(self) -> Iterator[dict[str, Any]]:
        """The axis assignments of the grid and zip groups (without the what-if), in file order."""
        grid_axes = [[(k, v) for v in values] for k, values in self.grid.items()]
        zip_axes = [
            [tuple((k, values[i]) for k, values in group.items()) for i in range(len(next(iter(group.values()))))]
            for group in self.zips
        ]
        for grid_part in itertools.product(*grid_axes):
            for zip_part in itertools.product(*zip_axes):
                axes = dict(grid_part)
                for row in zip_part:
                    axes.update(row)
                yield axes

    def points(self) -> Iterator[Point]:
        """Every point: what-if variants outermost (so consecutive points share a catalog), then the grid."""
        for variant in self.variants:
            for axes in self.combos():
                scenario = scenario_of(self.base, axes)
                yield Point(point_id(scenario, variant, self.files), variant, scenario, axes)


def scenario_of(base: Mapping[str, Any], axes: Mapping[str, Any]) -> dict[str, Any]:
    """The base scenario with each axis value set (dotted keys set nested fields: plan.tp)."""
    out = copy.deepcopy(dict(base))
    for key, value in axes.items():
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            child = node.get(part)
            if child is None:  # absent or null: the axis starts it (a value that is no mapping: load_sweep refused it)
                child = node[part] = {}
            node = child
        node[leaf] = copy.deepcopy(value)
    return dict(out)


def canonical(value: Any) -> Any:
    """A form of scenario data that hashes the same however it was written: 15e12, '15T', 1.5e13 and 15000000000000
    are one number; mappings are sorted by the JSON encoder."""
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        parsed = parse_count(value)  # a numeral string in a name field ('7B') is no valid scenario anyway
        return canonical(parsed) if isinstance(parsed, float) else value
    if isinstance(value, int | float):
        f = float(value)
        return int(f) if math.isfinite(f) and f.is_integer() and abs(f) < 2**53 else f
    return value


def _slo_seconds(key: str, value: Any) -> Any:
    """An SLO target in seconds as the scenario reads it (workload.slo.SLO: 2, '2s' and '2000ms' are 2.0), to 15
    significant digits, past which a unit's scale leaves only rounding ('50000us' reads 0.049999999999999996, '50ms'
    0.05); as given where it reads none (an unknown key, a bad value: the sweep's check refuses those, or the point's
    error says)."""
    try:
        seconds = getattr(SLO.model_validate({key: value}), key)
    except (ValidationError, AttributeError):
        return value
    return float(f"{seconds:.15g}") if isinstance(seconds, float) else seconds


def _as_read(scenario: Mapping[str, Any]) -> Mapping[str, Any]:
    """The scenario with its SLO targets in seconds, the times a scenario reads with units (duration_s takes a
    number only): grid {slo.ttft_p99_s: [2, "2s", "2000ms"]} had hashed as three points, run three times and
    reported as a three-way tie; it now reads one point, run once."""
    slo = scenario.get("slo")
    if not isinstance(slo, Mapping):
        return scenario
    return {**scenario, "slo": {k: _slo_seconds(str(k), v) for k, v in slo.items()}}


def point_id(scenario: Mapping[str, Any], variant: Variant, files: Mapping[str, str] | None = None) -> str:
    """16 hex digits of SHA-256 over the canonical scenario, its SLO targets in seconds (_as_read), and the what-if
    variant; a file the scenario names (`files`: path -> contents' hash) counts by its contents, not by where it
    lies."""
    named = {k: f"file:{files[v]}" for k, v in scenario.items() if files and isinstance(v, str) and v in files}
    text = json.dumps(
        {"scenario": canonical({**_as_read(scenario), **named}), "what_if": variant.digest},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _is_trace(key: str, value: Any) -> bool:
    """Whether a scenario value names a trace file: `trace`, or an `input_tokens` string that is not a count."""
    if not isinstance(value, str) or not value.strip():  # an empty one is the scenario's own error
        return False
    return key == "trace" or (key == "input_tokens" and not isinstance(parse_count(value), float))


def _from(folder: Path, key: str, value: Any) -> Any:
    """A trace or model config path taken from the sweep file's folder, as a scenario file's are from its own
    (other values as they are)."""
    if _is_trace(key, value):
        return path_from(folder, value)
    return model_from(folder, value) if key == "model" and isinstance(value, str) else value


def _scenario_files(where: str, values: dict[str, list[Any]]) -> dict[str, str]:
    """The contents' hash of each trace and model config file the sweep names (a trace that is missing is one
    line now, as predict refuses it, not an error stored with every point that reads it)."""
    out: dict[str, str] = {}
    for key, vs in values.items():
        for v in vs:
            if _is_trace(key, v):
                if not Path(v).is_file():
                    raise _fail(
                        where,
                        f"trace file '{v}' does not exist",
                        "check the path (a relative one is from the sweep file's folder)",
                    )
                out[v] = _file_digest(Path(v))
            elif key == "model" and isinstance(v, str) and (config := config_file(Path(v))) is not None:
                out[v] = _file_digest(config)
    return out


def _fail(where: str, problem: str, fix: str) -> ChipwiseError:
    return ChipwiseError(f"{where}: {problem}. Fix: {fix}.")


def _read(path: Path) -> dict[str, Any]:
    user_file(path, "sweep file", "check the path")
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise _fail(str(path), f"not valid YAML{at}: {problem}", "correct the YAML syntax there") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ChipwiseError(f"cannot read sweep file '{path}': {exc}. Fix: check the file.") from None
    if not isinstance(data, dict):
        raise _fail(str(path), "a sweep file must be a mapping with 'base' and 'grid'", FORMAT)
    return data


def _scenario_fields(kind: str) -> set[str]:
    """The scenario keys of a kind (train or serve)."""
    return set((TrainScenario if kind == "train" else ServeScenario).model_fields)


def _axes(where: str, section: str, body: Any, fields: set[str]) -> dict[str, list[Any]]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise _fail(where, f"'{section}' must be a mapping of axis -> list of values", FORMAT)
    out: dict[str, list[Any]] = {}
    for raw_key, values in body.items():
        key = str(raw_key)
        head = key.split(".", 1)[0]
        if head == "kind":
            raise _fail(where, f"{section} axis 'kind' cannot vary", "run one sweep per kind (train or serve)")
        if head not in fields:
            close = difflib.get_close_matches(head, sorted(fields), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise _fail(
                where,
                f"{section} axis '{key}' is not a scenario key{hint}",
                "use a scenario key (docs/guide.md), dotted for nested ones like plan.tp",
            )
        if not isinstance(values, list):
            raise _fail(where, f"{section} axis '{key}' must be a list of values", f"write {key}: [value, ...]")
        if not values:
            raise _fail(where, f"{section} axis '{key}' is empty", "list at least one value, or remove the axis")
        out[key] = values
    return out


def _zips(where: str, body: Any, fields: set[str]) -> tuple[dict[str, list[Any]], ...]:
    """The zip groups; an empty one is an error, as an empty grid axis is (`zip: []` and `zip: [{}]` had run as if
    not there)."""
    groups = body if isinstance(body, list) else [body]
    if isinstance(body, list) and not body:
        raise _fail(where, "'zip' is empty", "give zip a mapping of axis -> values (or a list of them), or remove it")
    out: list[dict[str, list[Any]]] = []
    for i, group in enumerate(groups):
        axes = _axes(where, "zip", group, fields)
        if not axes:
            if group is None:
                continue
            raise _fail(where, f"zip group {i + 1} is empty", "give it axes, or remove it")
        lengths = {k: len(v) for k, v in axes.items()}
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{k}: {n}" for k, n in lengths.items())
            raise _fail(
                where, f"zip axes must have equal lengths (have {listed})", "give each zipped axis as many values"
            )
        out.append(axes)
    return tuple(out)


def _check_overlaps(where: str, axes: Sequence[tuple[str, str]]) -> None:
    """One line where two axes, each (section, key), set one field; naming each one's section (it had read "axes
    'plan.tp' and 'plan.tp' set the same field" of a grid axis and a zip axis)."""
    seen: list[tuple[str, str]] = []
    for section, key in axes:
        for was, other in seen:
            if key == other or key.startswith(other + ".") or other.startswith(key + "."):
                raise _fail(
                    where, f"{was} axis '{other}' and {section} axis '{key}' set the same field", "keep one of them"
                )
        seen.append((section, key))


def _check_parents(where: str, base: Mapping[str, Any], keys: Sequence[str]) -> None:
    """One line where a dotted axis (plan.tp) goes through a base value that is not a mapping (plan: 5): that value,
    which predict refuses, had been replaced by the axis's own mapping and the point run without a word."""
    for key in keys:
        node: Any = base
        *parents, _ = key.split(".")
        for i, part in enumerate(parents):
            node = node.get(part)
            if node is None:
                break
            if not isinstance(node, Mapping):
                at = ".".join(parents[: i + 1])
                raise _fail(
                    where,
                    f"base '{at}' is {node!r}, not a mapping, yet axis {key} sets a field in it",
                    f"make base '{at}' a mapping (e.g. {at}: {{}}) or drop it from base",
                )


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _catalog_path(where: str, sweep_dir: Path, entry: Any, label: str) -> Path:
    if not isinstance(entry, str) or not entry.strip():
        raise _fail(where, f"{label} entry {entry!r} is not a file name", "give a catalog YAML path")
    path = Path(entry).expanduser()
    path = path if path.is_absolute() else sweep_dir / path
    if not path.is_file():
        raise _fail(where, f"{label} file '{entry}' does not exist (looked at {path})", "check the path")
    return path.resolve()


def _variants(where: str, sweep_dir: Path, what_if: Any, catalog: Any) -> tuple[Variant, ...]:
    if isinstance(catalog, str):
        catalog = [catalog]
    if catalog is None:
        catalog = []
    if not isinstance(catalog, list):
        raise _fail(where, "'catalog' must be a list of catalog YAML files", FORMAT)
    shared = [_catalog_path(where, sweep_dir, f, "catalog") for f in catalog]
    if what_if is None:
        what_if = {"baseline": []}
    if not isinstance(what_if, dict) or not what_if:
        raise _fail(where, "'what_if' must be a mapping of name -> list of --set overrides or catalog files", FORMAT)
    out: list[Variant] = []
    for raw_name, body in what_if.items():
        name = str(raw_name)
        if not name.strip():  # a blank name had stood as a blank what-if column in every table
            raise _fail(
                where, "a what_if has no name", 'name each what-if, e.g. fast-hbm: ["h100-sxm.hbm_bandwidth=x1.5"]'
            )
        entries = [body] if isinstance(body, str) else ([] if body is None else body)
        if not isinstance(entries, list):
            raise _fail(where, f"what_if '{name}' must be a list", f'write {name}: ["ID.FIELD=VALUE", my-chips.yaml]')
        files = list(shared)
        sets: list[str] = []
        for entry in entries:
            if isinstance(entry, str) and "=" in entry:
                sets.append(entry.strip())
            else:
                files.append(_catalog_path(where, sweep_dir, entry, f"what_if '{name}'"))
        payload = {"name": name, "sets": sets, "files": [_file_digest(p) for p in files]}
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
        out.append(Variant(name, tuple(str(p) for p in files), tuple(sets), digest))
    return tuple(out)


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file; raise ChipwiseError (one line: the problem and the fix) on bad input."""
    path = Path(path)
    data = _read(path)
    where = str(path)
    for key in data:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise _fail(where, f"unknown key '{key}'{hint}", f"use only {', '.join(KEYS)} ({FORMAT})")
    name = data.get("name", path.stem)
    if not isinstance(name, str | int | float) or not str(name).strip():
        raise _fail(where, "'name' must be a non-empty string", "give the sweep a name, e.g. name: trn-vs-gpu")
    base = data.get("base")
    if not isinstance(base, dict):
        raise _fail(where, "'base' must be a mapping: the scenario every point starts from", FORMAT)
    kind = base.get("kind", "train")
    if kind not in ("train", "serve"):
        raise _fail(where, f"base kind '{kind}' is not train or serve", "set kind: train or kind: serve in base")
    fields = _scenario_fields(str(kind))
    grid = _axes(where, "grid", data.get("grid"), fields)
    zips = _zips(where, data.get("zip"), fields)
    if not grid and not zips:
        raise _fail(where, "grid is empty", "give at least one axis, e.g. grid: {chips: [1024, 4096]}")
    zipped = [("zip" if len(zips) == 1 else f"zip group {i + 1}", k) for i, g in enumerate(zips) for k in g]
    _check_overlaps(where, [*(("grid", k) for k in grid), *zipped])
    _check_parents(where, base, [*grid, *(k for g in zips for k in g)])
    folder = path.resolve().parent  # not the path as typed ('tr/gt.yaml', 'gt.yaml'): one point, one scenario
    base = {str(k): _from(folder, str(k), v) for k, v in base.items()}
    grid = {k: [_from(folder, k, v) for v in vs] for k, vs in grid.items()}
    zips = tuple({k: [_from(folder, k, v) for v in vs] for k, vs in g.items()} for g in zips)
    named = [{k: [v] for k, v in base.items()}, grid, *zips]
    files = {p: h for values in named for p, h in _scenario_files(where, values).items()}
    return SweepSpec(
        name=str(name).strip(),
        source=str(path.resolve()),
        kind=str(kind),
        base=base,
        grid=grid,
        zips=zips,
        variants=_variants(where, folder, data.get("what_if"), data.get("catalog")),
        raw=data,
        files=files,
    )
