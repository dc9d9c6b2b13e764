"""Loading a scenario, the public YAML/JSON contract of DESIGN.md: its text read from a file (.yaml, .yml, .json) or
given inline, validated strictly as its kind ("kind: train", train_scenario; "kind: serve", serve_scenario), and
each refusal told in one line with its fix. Numbers may carry SI suffixes ("15T" tokens, "4M" batch tokens:
counts). Unknown keys are errors, so a typo is reported rather than silently ignored.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from chipwise.catalog.loader import Catalog
from chipwise.catalog.regions import check_region_provider
from chipwise.catalog.strict_yaml import load_json, load_yaml
from chipwise.errors import ChipwiseError, UnknownNameError, long_number, shown_value
from chipwise.workload.plan_knobs import given_knobs
from chipwise.workload.presets import config_file, names_a_file
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.strict_model import annotation_types
from chipwise.workload.train_scenario import TrainScenario


def _model_at(model: type[BaseModel], path: list[str]) -> type[BaseModel] | None:
    """The pydantic model that holds the keys at `path` under `model` (None where it is not one, e.g. a dict)."""
    for part in path:
        field = model.model_fields.get(part)
        if field is None:
            return None
        found = [a for a in annotation_types(field.annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        if not found:
            return None
        model = found[0]
    return model


#: locations pydantic adds for the branch of a union or a validator, not keys of the scenario
_BRANCH = re.compile(r"^(int|float|str|bool|none|dict\[.*\]|list\[.*\]|[a-z-]+\[.*\]|[A-Z]\w*)$")

_TYPE_FIX = {
    "int_from_float": "give a whole number",
    "int_parsing": "give a whole number",
    "int_type": "give a whole number",
    "float_parsing": "give a number",
    "float_type": "give a number",
    "bool_parsing": "give true or false",
    "bool_type": "give true or false",
    "bool_for_number": "give a number",
    "string_type": "give text, such as a name in quotes",
    "greater_than": "give a positive number",
    "greater_than_equal": "give a number at least the bound",
    "less_than_equal": "give a number at most the bound",
    "finite_number": "give a finite number",
    "literal_error": "use one of the values named",
    "missing": "add it",
}


#: scenario keys that `plan serve` names otherwise: '--rate 20' is 'arrival_rate: 20' (difflib offered 'trace')
CLI_NAMES = {"rate": "arrival_rate"}


def _location(err: Any) -> list[str]:
    """The keys of an error's location, without the branches pydantic adds."""
    return [str(p) for p in err["loc"] if isinstance(p, int) or not _BRANCH.match(str(p))]


def _unknown(err: Any) -> tuple[list[str], list[str]]:
    """(where, keys) of an unknown-key error: pydantic's names one key, at the end of its location; a value that
    validates its own mapping (serve_scenario._length_value) names its keys in the error's context."""
    loc = _location(err)
    named = (err.get("ctx") or {}).get("keys")
    return (loc, [str(k) for k in named]) if named else (loc[:-1], loc[-1:])


def _fmt(exc: ValidationError, where: str, model: type[BaseModel]) -> str:
    # an unknown key first: a typo is the cause of what follows from it ('hardwar' left hardware missing)
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    loc = ".".join(_location(err))
    msg = str(err["msg"]).removeprefix("Value error, ")
    fix = _TYPE_FIX.get(err["type"], "correct it")
    if err["type"] in ("model_type", "dict_type"):  # pydantic's line named a class ('instance of SLO'), and no fix
        msg = f"{shown_value(err.get('input'))} is not a mapping"
        holder = _model_at(model, _location(err))
        of = f" of the {loc} keys: {', '.join(holder.model_fields)}" if holder is not None else ""
        fix = f"give a mapping{of or (', e.g. {tp: 8, pp: 4}' if loc == 'plan' else ' of keys to values')}"
    if err["type"] == "extra_forbidden" and _location(err):
        parent, _ = _unknown(err)
        unknown: list[str] = []  # every unknown key beside it, named at once, not one per run
        for other in errors:
            at, keys = _unknown(other)
            if other["type"] == "extra_forbidden" and at == parent:
                unknown += [k for k in keys if k not in unknown]
        loc = ", ".join(".".join([*parent, k]) for k in unknown)
        msg = "unknown key" + ("s" if len(unknown) > 1 else "")
        holder = _model_at(model, parent)
        if holder is not None:
            scope = ".".join(parent) or model.model_fields["kind"].default
            fix = unknown_keys_fix(unknown, list(holder.model_fields), f"the {scope} keys")
    return framed(where, f"{loc + ': ' if loc else ''}{msg}. Fix: {fix}.")


def framed(where: str, line: str) -> str:
    """A scenario's refusal as each reads: where it is (the file, or INLINE), the one line naming the problem and
    its fix, and where its keys are told ('inline scenario: plan.zero must be ... Fix: correct it (scenario keys:
    docs/guide.md#scenario-keys).')."""
    return f"{where}: {line.removesuffix('.')} (scenario keys: docs/guide.md#scenario-keys)."


def unknown_keys_fix(unknown: list[str], known: list[str], scope: str) -> str:
    """The fix for keys a mapping does not take: the key each was likely meant to be ('use 'tokens''; for several,
    "use 'tokens' for 'tokenz'"), else every key `scope` ('the train keys') allows."""
    near = {}
    for key in unknown:
        flag = CLI_NAMES.get(key)  # the command line's name for the key, which difflib reads as another
        close = [flag] if flag in known else difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        if not close:
            return f"use one of {scope}: {', '.join(known)}"
        near[key] = close[0]
    if len(near) == 1:
        return f"use '{next(iter(near.values()))}'"
    return "use " + ", ".join(f"'{meant}' for '{key}'" for key, meant in near.items())


def _parse(text: str) -> Any:
    """JSON where the text is JSON (its numbers as JSON reads them, e.g. 1e3), else YAML, flow style included
    ('{kind: serve, model: llama-3.1-8b}')."""
    if text.lstrip().startswith("{"):
        try:
            return load_json(text)
        except json.JSONDecodeError:
            pass
    return load_yaml(text)


#: what read_scenario_text names a scenario given as text rather than a file
INLINE = "inline scenario"


def read_scenario_text(source: str) -> tuple[dict[str, Any], str]:
    """The raw mapping of a scenario file path or inline YAML/JSON text, and a name for error messages (the file's
    path, or INLINE)."""
    if not source.strip():
        raise ChipwiseError("the scenario is empty. Fix: give a scenario file's path or its YAML/JSON text.")
    path = Path(source)
    one_line = "\n" not in source and ":" not in source  # inline text has a colon, and may be too long for a path
    if one_line and path.is_dir():
        raise ChipwiseError(f"scenario '{source}' is a folder. Fix: give a scenario file in it.")
    looks_like_path = one_line and (path.suffix in (".yaml", ".yml", ".json") or path.exists())
    missing = f"scenario file '{source}' does not exist. Fix: check the path."
    if looks_like_path:
        if not path.exists():
            raise ChipwiseError(missing)
        text, where = _file_text(path), str(path)
    else:
        text, where = source, INLINE
    try:
        data = _parse(text)
    except yaml.YAMLError as exc:  # JSON that does not parse is read as YAML, whose error names the line
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ChipwiseError(f"{where} is not valid YAML or JSON{line}: {problem}. Fix: correct it.") from None
    except ValueError as exc:  # a JSON object that repeats a key, or a number too long to read
        if (long := long_number(exc, where)) is not None:
            raise long from None
        raise ChipwiseError(f"{where}: {exc}. Fix: give each key once.") from None
    if not isinstance(data, dict):
        if where == INLINE and one_line and isinstance(data, str) and not any(c.isspace() for c in source.strip()):
            raise ChipwiseError(missing)  # a word is a file's name, not a scenario: 'sc/base_typo'
        raise ChipwiseError(f"{where} must be a mapping with a 'kind' (train or serve). Fix: see docs/guide.md.")
    return data, where


def _file_text(path: Path) -> str:
    """A scenario file's text, or one line naming the file when it is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ChipwiseError(f"scenario file '{path}' is not UTF-8 text. Fix: save it as UTF-8 YAML or JSON.") from None


def check_provider(catalog: Catalog, provider: str | None) -> None:
    """A provider the catalog prices something for (None: each system's own), or one line naming those there are:
    a mistyped one matched no price, and the cost came out as '-'."""
    known = {p.provider for p in catalog.prices}
    if provider is not None and provider not in known:
        raise UnknownNameError(
            "provider", provider, known, hint=f"use one of {', '.join(sorted(known))}, or drop provider"
        )


def load_scenario(source: str, catalog: Catalog | None = None) -> TrainScenario | ServeScenario:
    """A validated TrainScenario or ServeScenario from a path or inline text; with `catalog`, the names it must hold
    (the provider) are checked too."""
    data, where = read_scenario_text(source)
    kind = data.get("kind", "train")
    models: dict[Any, type[TrainScenario] | type[ServeScenario]] = {"train": TrainScenario, "serve": ServeScenario}
    serving = sorted(set(data) & (set(ServeScenario.model_fields) - set(TrainScenario.model_fields)))
    if "kind" not in data and serving:  # read as training, its serving keys were 'unknown'
        raise ChipwiseError(
            f"{where}: kind is missing, and {', '.join(serving)} are serving keys. Fix: add kind: serve (or kind: "
            "train for a training run)."
        )
    if not isinstance(kind, str) or kind not in models:  # a list or a mapping had raised an internal TypeError
        said = "is empty" if kind is None else f"'{kind}' is not train or serve"
        raise ChipwiseError(f"{where}: kind {said}. Fix: set kind: train or kind: serve.")
    try:
        scenario = models[kind].model_validate(data)
    except ValidationError as exc:
        raise ChipwiseError(_fmt(exc, where, models[kind])) from None
    if isinstance(scenario, TrainScenario):
        try:  # a plan's keys and values, told as the scenario's others are ('plan.zero must be 0, 1, 2 or 3')
            given_knobs(scenario.plan or {})
        except ChipwiseError as exc:
            raise ChipwiseError(framed(where, str(exc))) from None
    try:  # where the chips run beside whom they are rented from (any catalog)
        check_region_provider(scenario.region, scenario.provider)
    except ChipwiseError as exc:
        raise ChipwiseError(framed(where, str(exc))) from None
    if catalog is not None:
        check_provider(catalog, getattr(scenario, "provider", None))
    if where == INLINE:
        return scenario
    folder = Path(where).parent
    scenario = scenario.model_copy(update={"model": model_from(folder, str(data["model"]))})  # validated: a str
    return scenario.relative_to(folder) if isinstance(scenario, ServeScenario) else scenario


def model_from(folder: Path, model: str) -> str:
    """A scenario's model: a config.json (or checkpoint folder) taken from `folder`, the scenario file's, as its
    trace is, where one is there; else the name as given (a preset, or a path from the current directory, which
    scenarios had been read from alone: the same file had worked or not by where chipwise ran). A path (a .json, or
    a slash that is no bare Hub id: presets.names_a_file) found in neither is one line naming both places."""
    there = folder / model  # an absolute `model` stays itself
    if config_file(there) is not None:
        return str(there)
    if names_a_file(model) and not Path(model).exists():
        raise ChipwiseError(
            f"model config '{model}' does not exist (looked in {folder.resolve()} and {Path.cwd()}). Fix: give a "
            "preset name or a path to a config.json (a relative one from the scenario's folder)."
        )
    return model
