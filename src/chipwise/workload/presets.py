"""Resolve a model name (a preset id, an alias, or a path to a Hugging Face config.json) to a ModelSpec."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, UnknownNameError, read_text, user_file
from chipwise.workload.model import ModelSpec, from_hf_config


def _aliases(catalog: Catalog) -> dict[str, str]:
    table: dict[str, str] = {}
    for pid, entry in catalog.models.items():
        for name in (pid, *entry.aliases):
            table.setdefault(_norm(name), pid)
    return table


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def preset_id(catalog: Catalog, name: str) -> str | None:
    """The preset id a name or alias refers to, or None."""
    return _aliases(catalog).get(_norm(name))


@functools.cache
def _preset(catalog: Catalog, pid: str) -> ModelSpec:
    entry = catalog.models[pid]
    return from_hf_config(
        catalog.model_config(pid), name=pid, where=f"preset '{pid}' ({entry.file})", source=entry.source
    )


def load_model(catalog: Catalog, name: str) -> ModelSpec:
    """A ModelSpec from a preset name or alias, or from a config.json path (no network)."""
    if not name.strip():  # Path('') is the current folder: an empty name had read ./config.json
        raise ChipwiseError("the model name is empty. Fix: give a preset name (chipwise model list) or a config.json.")
    pid = preset_id(catalog, name)
    if pid is not None:
        asked = _norm(name)
        return _preset(catalog, pid) if asked == pid else replace(_preset(catalog, pid), alias=asked)
    path = Path(name)
    if path.suffix == ".json" or path.exists() or "/" in name:
        if path.is_dir():
            if not (path / "config.json").is_file():  # a Hugging Face checkpoint's folder holds its config.json
                raise ChipwiseError(
                    f"model config '{name}' is a folder with no config.json in it. Fix: give a preset name or a "
                    "path to a config.json."
                )
            path = path / "config.json"
        user_file(path, "model config", "give a preset name or a path to a config.json")
        try:
            cfg = json.loads(read_text(path, "model config", "save it as UTF-8 JSON"))
        except json.JSONDecodeError as exc:
            raise ChipwiseError(
                f"'{path}' is not valid JSON (line {exc.lineno}: {exc.msg}). Fix: correct the JSON."
            ) from None
        if not isinstance(cfg, dict):
            raise ChipwiseError(
                f"'{path}' must hold a JSON object (a Hugging Face config.json). Fix: give such a file."
            )
        return from_hf_config(
            cfg,
            name=(path.parent.name or path.stem) if path.name == "config.json" else path.stem,
            where=str(path),
            source=str(path),
        )
    raise UnknownNameError(
        "model",
        name,
        catalog.models,
        hint="run 'chipwise model list', or give a path to a Hugging Face config.json",
    )


#: the sequence length `model show` prices FLOPs per token at, unless the model's context is shorter
DEFAULT_SEQ_LEN = 4096


def model_summary(spec: ModelSpec, seq_len: int | None = None, what: str = "seq_len") -> dict[str, Any]:
    """The figures `chipwise model show` prints and `chipwise.api.model` returns: FLOPs per token priced at
    `seq_len` (None: DEFAULT_SEQ_LEN, or the model's context where shorter), refused past the model's context
    (`what` names the setting in that line)."""
    if seq_len is None:
        seq_len = min(DEFAULT_SEQ_LEN, spec.max_seq_len or DEFAULT_SEQ_LEN)
    spec.check_seq_len(seq_len, what)
    return spec.summary(seq_len)


def preset_summaries(catalog: Catalog) -> list[dict[str, Any]]:
    """One record per model preset: id, name, architecture, attention, parameters, layers, aliases, source."""
    rows = []
    for pid, entry in catalog.models.items():
        spec = load_model(catalog, pid)
        rows.append(
            {
                "id": pid,
                "name": entry.name,
                "architecture": "moe" if spec.is_moe else "dense",
                "attention": spec.attention.kind,
                "params_total": spec.params_total,
                "params_active": spec.params_active,
                "layers": spec.layers,
                "aliases": entry.aliases,
                "source": entry.source,
            }
        )
    return rows
