"""YAML and JSON read strictly: a mapping that repeats a key is an error (PyYAML and json keep the last value
silently, so a scenario or catalog file that sets a key twice would run on whichever came last)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor


class _NoRepeats(yaml.SafeLoader):
    """The safe loader, refusing a repeated key in any mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # the base constructor names an unhashable key
            if key in seen and key != "<<":
                raise ConstructorError(
                    "while reading a mapping", node.start_mark, f"found duplicate key '{key}'", key_node.start_mark
                )
            seen.add(key)
        return dict(SafeConstructor.construct_mapping(self, node, deep=deep))


_C_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastNoRepeats(_C_BASE):  # type: ignore[misc]
    """The same on PyYAML's C parser where it has one (the catalog's large files): its error marks can fall a line
    late at the end of a text, so small files are read by the Python parser."""

    construct_mapping = _NoRepeats.construct_mapping


def load_yaml(text: str, fast: bool = False) -> Any:
    """The YAML document in `text`; yaml.YAMLError (with its problem and mark) on bad syntax or a repeated key."""
    return yaml.load(text, Loader=_FastNoRepeats if fast else _NoRepeats)


class RepeatedKeyError(ValueError):
    """A JSON object gives a key twice (json keeps the last one silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"found duplicate key '{key}'")
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKeyError(key)
        out[key] = value
    return out


def load_json(text: str | bytes) -> Any:
    """The JSON document in `text`; RepeatedKeyError (a ValueError) on a repeated key (json.JSONDecodeError on bad
    syntax)."""
    return json.loads(text, object_pairs_hook=_pairs)
