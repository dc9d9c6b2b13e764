"""Scenarios: the public YAML/JSON contract of DESIGN.md ("kind: train" or "kind: serve"), validated strictly.

A scenario comes from a file (.yaml, .yml, .json) or inline text. Numbers may carry SI suffixes ("15T" tokens,
"4M" batch tokens). Unknown keys are errors, so a typo is reported rather than silently ignored.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from chipwise.catalog.loader import Catalog
from chipwise.catalog.strict_yaml import load_json, load_yaml
from chipwise.errors import ChipwiseError, UnknownNameError, long_number
from chipwise.workload.presets import config_file, names_a_file

if TYPE_CHECKING:  # serve_scenario builds on this module's types: load_scenario imports it where it runs
    from chipwise.workload.serve_scenario import ServeScenario

_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}
_NUMBER = re.compile(r"^\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*([kKMBGTP]?)\s*$")


def count_value(value: Any) -> Any:
    """'15T' -> 1.5e13, '4M' -> 4e6, '15e12' -> 1.5e13; numbers and anything else pass through as they are (for a
    caller that checks the value itself: NaN included)."""
    if isinstance(value, str):
        m = _NUMBER.match(value)
        if m:
            return float(m.group(1)) * _SUFFIX.get(m.group(2), 1.0)
    return value


def parse_count(value: Any) -> Any:
    """A pydantic before-validator: count_value, with NaN refused as not finite (else read as 'should be greater
    than 0'). Outside a model's validation call count_value: this error is pydantic's, and had reached the
    command line as an internal error (plan serve --rate nan)."""
    if isinstance(value, float) and math.isnan(value):
        raise PydanticCustomError("finite_number", "Input should be a finite number")
    return count_value(value)


Count = Annotated[float, BeforeValidator(parse_count), Field(gt=0, allow_inf_nan=False)]
IntCount = Annotated[int, BeforeValidator(parse_count), Field(gt=0)]
_WHOLE, _AMOUNT = TypeAdapter(IntCount), TypeAdapter(Count)

#: The most tokens a training run may train on: 1e18, what a million chips (the largest fleet planned) would train
#: in a year at some 30,000 tokens/s each, and over 20,000 times the largest published pretraining corpora (Qwen3's
#: 36T tokens); 1e40 had priced a run at $2.55e+33 over 2.3e+25 years.
MAX_TRAIN_TOKENS = 1e18
#: the least utilisation of an owned fleet a scenario and the TCO (economics.tco.PLAUSIBLE) take: under 1% a used
#: hour costs over 100x its full-use cost
MIN_UTILISATION = 0.01
#: the names read_count reads the tokens a run trains on under (plan train/hetero --tokens, plan lifecycle
#: --train-tokens, and the API's tokens and train_tokens)
TRAIN_TOKEN_NAMES = ("--tokens", "--train-tokens", "tokens", "train_tokens")


def training_tokens_problem(value: float) -> str | None:
    """Why `value` tokens to train on is past MAX_TRAIN_TOKENS, or None when it is not."""
    if value <= MAX_TRAIN_TOKENS:
        return None
    return (
        f"{value:g} tokens is more than a million chips train on in a year (at most {MAX_TRAIN_TOKENS:g}; the "
        "largest published runs train on tens of trillions)"
    )


def _train_tokens(value: float) -> float:
    """A pydantic after-validator: the tokens a run trains on, within MAX_TRAIN_TOKENS."""
    problem = training_tokens_problem(value)
    if problem is not None:
        raise ValueError(f"{problem}: give the tokens of one run, e.g. 15T")
    return value


TrainTokens = Annotated[Count, AfterValidator(_train_tokens)]


def read_count(value: Any, name: str, whole: bool = False, example: str = "") -> Any:
    """A positive finite count given outside a scenario (a command-line option, an API argument) as a scenario
    reads one: 64, 15e12, '15T', '4M' (a whole number where `whole`); None kept; anything else one line, whose fix
    gives `example` (default a chip or token count: months of service had been told 'e.g. 15e12 or '15T'')."""
    if value is None:
        return None
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            count = (_WHOLE if whole else _AMOUNT).validate_python(value)
        except ValidationError:
            pass
        else:
            return _within(count, name)
    kind, default = ("whole number", "64") if whole else ("number", "15e12 or '15T'")
    example = example or default
    raise ChipwiseError(f"{name} {value!r} is not a positive finite {kind}. Fix: give e.g. {example}.")


def _within(count: Any, name: str) -> Any:
    """The count read under `name`, or one line where it is tokens to train on past MAX_TRAIN_TOKENS."""
    problem = training_tokens_problem(count) if name in TRAIN_TOKEN_NAMES else None
    if problem is not None:
        raise ChipwiseError(f"{name} {problem}. Fix: give the tokens of one training run, e.g. 15T.")
    return count


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        """true and false are not numbers: pydantic reads them as 1 and 0, so 'concurrency: yes' ran one user; and
        a flag is true or false, not "yes" or 1, which pydantic also reads as true."""
        if isinstance(data, dict):
            for key, value in data.items():
                field = cls.model_fields.get(key) if isinstance(key, str) else None
                if field is None:
                    continue
                types = _flatten(field.annotation)
                if isinstance(value, bool) and bool not in types:
                    if int not in types and float not in types:  # 'hardware: true' is not a number either
                        raise PydanticCustomError(
                            "string_type", "{key}: {value} is not text", {"key": key, "value": str(value).lower()}
                        )
                    raise PydanticCustomError(
                        "bool_for_number", "{key}: {value} is not a number", {"key": key, "value": str(value).lower()}
                    )
                if bool in types and value is not None and not isinstance(value, bool):
                    raise PydanticCustomError(
                        "bool_type", "{key}: {value} is not true or false", {"key": key, "value": repr(value)}
                    )
        return data


class TrainScenario(StrictModel):
    """A training run: DESIGN.md's scenario contract (kind: train)."""

    kind: Literal["train"] = "train"
    model: str
    hardware: str
    chips: IntCount
    precision: str = "bf16"
    seq_len: IntCount | None = None
    global_batch_tokens: Count | None = None
    global_batch: IntCount | None = None
    tokens: TrainTokens | None = None
    plan: dict[str, Any] | None = None
    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None
    # 'greater than 0' had been refused again at 0.005 by the TCO
    utilisation: Annotated[float, Field(ge=MIN_UTILISATION, le=1, allow_inf_nan=False)] | None = None
    lora: bool = False

    @model_validator(mode="after")
    def _batch(self) -> TrainScenario:
        if self.global_batch is not None and self.global_batch_tokens is not None:
            raise ValueError("give global_batch (sequences) or global_batch_tokens, not both")
        return self


def _model_at(model: type[BaseModel], path: list[str]) -> type[BaseModel] | None:
    """The pydantic model that holds the keys at `path` under `model` (None where it is not one, e.g. a dict)."""
    for part in path:
        field = model.model_fields.get(part)
        if field is None:
            return None
        found = [a for a in _flatten(field.annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        if not found:
            return None
        model = found[0]
    return model


def _flatten(annotation: Any) -> list[Any]:
    """The types an annotation may take (Optional, unions and Annotated unwrapped)."""
    args = getattr(annotation, "__args__", None)
    if args is None or getattr(annotation, "__origin__", None) in (dict, list, tuple):
        return [getattr(annotation, "__origin__", annotation)]
    return [t for a in args for t in _flatten(a)]


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
        msg = f"{_shown(err.get('input'))} is not a mapping"
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
    return f"{where}: {loc + ': ' if loc else ''}{msg}. Fix: {fix} (scenario keys: docs/guide.md#scenario-keys)."


def _shown(value: Any) -> str:
    """A value as an error line quotes it, cut short where long (a list of thousands had filled the screen)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
    from chipwise.workload.serve_scenario import ServeScenario  # serve_scenario builds on this module's types

    data, where = read_scenario_text(source)
    kind = data.get("kind", "train")
    models: dict[Any, type[TrainScenario] | type[ServeScenario]] = {"train": TrainScenario, "serve": ServeScenario}
    serving = sorted(set(data) & (set(ServeScenario.model_fields) - set(TrainScenario.model_fields)))
    if "kind" not in data and serving:  # read as training, its serving keys were 'unknown'
        raise ChipwiseError(
            f"{where}: kind is missing, and {', '.join(serving)} are serving keys. Fix: add kind: serve (or kind: "
            "train for a training run)."
        )
    if kind not in models:
        raise ChipwiseError(f"{where}: kind '{kind}' is not train or serve. Fix: set kind: train or kind: serve.")
    try:
        scenario = models[kind].model_validate(data)
    except ValidationError as exc:
        raise ChipwiseError(_fmt(exc, where, models[kind])) from None
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
