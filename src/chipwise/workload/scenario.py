"""Scenarios: the public YAML/JSON contract of DESIGN.md ("kind: train" or "kind: serve"), validated strictly.

A scenario comes from a file (.yaml, .yml, .json) or inline text. Numbers may carry SI suffixes ("15T" tokens,
"4M" batch tokens). Unknown keys are errors, so a typo is reported rather than silently ignored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from chipwise.catalog.strict_yaml import load_json, load_yaml
from chipwise.errors import ChipwiseError

_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}
_NUMBER = re.compile(r"^\s*([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*([kKMBGTP]?)\s*$")


def parse_count(value: Any) -> Any:
    """'15T' -> 1.5e13, '4M' -> 4e6, '15e12' -> 1.5e13; numbers pass through; anything else is left to pydantic."""
    if isinstance(value, str):
        m = _NUMBER.match(value)
        if m:
            return float(m.group(1)) * _SUFFIX.get(m.group(2), 1.0)
    return value


Count = Annotated[float, BeforeValidator(parse_count), Field(gt=0)]
IntCount = Annotated[int, BeforeValidator(parse_count), Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrainScenario(_Strict):
    """A training run: DESIGN.md's scenario contract (kind: train)."""

    kind: Literal["train"] = "train"
    model: str
    hardware: str
    chips: IntCount
    precision: str = "bf16"
    seq_len: IntCount | None = None
    global_batch_tokens: Count | None = None
    global_batch: IntCount | None = None
    tokens: Count | None = None
    plan: dict[str, Any] | None = None
    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None
    utilisation: Annotated[float, Field(gt=0, le=1)] | None = None
    lora: bool = False

    @model_validator(mode="after")
    def _batch(self) -> TrainScenario:
        if self.global_batch is not None and self.global_batch_tokens is not None:
            raise ValueError("give global_batch (sequences) or global_batch_tokens, not both")
        return self


def _fmt(exc: ValidationError, where: str) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    return f"{where}: {loc + ': ' if loc else ''}{msg}. Fix: correct it (the scenario contract is in DESIGN.md)."


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
    path = Path(source)
    looks_like_path = (
        "\n" not in source and ":" not in source and (path.suffix in (".yaml", ".yml", ".json") or path.exists())
    )
    if looks_like_path:
        if not path.exists():
            raise ChipwiseError(f"scenario file '{source}' does not exist. Fix: check the path.")
        text, where = path.read_text(encoding="utf-8"), str(path)
    else:
        text, where = source, INLINE
    try:
        data = _parse(text)
    except yaml.YAMLError as exc:  # JSON that does not parse is read as YAML, whose error names the line
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ChipwiseError(f"{where} is not valid YAML or JSON{line}: {problem}. Fix: correct it.") from None
    except ValueError as exc:  # a JSON object that repeats a key
        raise ChipwiseError(f"{where}: {exc}. Fix: give each key once.") from None
    if not isinstance(data, dict):
        raise ChipwiseError(f"{where} must be a mapping with a 'kind' (train or serve). Fix: see DESIGN.md.")
    return data, where


def load_scenario(source: str) -> Any:
    """A validated TrainScenario or ServeScenario from a path or inline text."""
    data, where = read_scenario_text(source)
    kind = data.get("kind", "train")
    try:
        if kind == "train":
            return TrainScenario.model_validate(data)
        if kind == "serve":
            from chipwise.workload.serving import ServeScenario

            serve = ServeScenario.model_validate(data)
            return serve.relative_to(Path(where).parent) if where != INLINE else serve
    except ValidationError as exc:
        raise ChipwiseError(_fmt(exc, where)) from None
    raise ChipwiseError(f"{where}: kind '{kind}' is not train or serve. Fix: set kind: train or kind: serve.")
