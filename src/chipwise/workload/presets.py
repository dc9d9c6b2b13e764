"""Resolve a model name (a preset id, an alias, or a path to a Hugging Face config.json) to a ModelSpec."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any

from chipwise.catalog.loader import Catalog, config_path, load_catalog, preset_key, read_json_config
from chipwise.errors import ChipwiseError, UnknownNameError, quoted
from chipwise.workload.hf_config import from_hf_config
from chipwise.workload.model import ModelSpec


def _aliases(catalog: Catalog) -> dict[str, str]:
    """Every preset's id and aliases, normalised, to its id; an id wins over another preset's alias (a catalog file's
    preset 'deepseek-r1' had loaded DeepSeek-V3, whose alias that is, and never read the file)."""
    table = {preset_key(pid): pid for pid in catalog.models}
    for pid, entry in catalog.models.items():
        for name in entry.aliases:
            table.setdefault(preset_key(name), pid)
    return table


def preset_id(catalog: Catalog, name: str) -> str | None:
    """The preset id a name or alias refers to, or None."""
    return _aliases(catalog).get(preset_key(name))


def _preset(catalog: Catalog, pid: str) -> ModelSpec:
    """A preset's ModelSpec, read once per catalog and kept on it (Catalog.memo): a functools.cache keyed on the
    catalog had held every catalog of every --set alive."""
    presets: dict[str, ModelSpec] = catalog.memo.setdefault("presets", {})
    if pid not in presets:
        entry = catalog.models[pid]
        presets[pid] = from_hf_config(
            catalog.model_config(pid), name=pid, where=f"preset '{pid}' ({entry.file})", source=entry.source
        )
    return presets[pid]


def _shape(spec: ModelSpec) -> ModelSpec:
    """`spec` without what names it or says where it was read from (name, alias, source, notes) nor the precision
    its checkpoint ships in (an FP8 copy is the same model's weights): what two reads of one model share."""
    return replace(spec, name="", alias="", source="", notes=(), released_format="", quant_method="")


def is_builtin_preset(spec: ModelSpec, pid: str) -> bool:
    """Whether `spec` is the built-in preset `pid`'s model: the preset, by any alias, or a config.json that reads
    the same, and not a model that only shares its name (a checkpoint folder named llama-3.1-8b holding a 64-layer,
    15 B config; a --catalog file's preset of that id with such a config)."""
    return _shape(spec) == _shape(_preset(load_catalog(), pid))


#: a Hugging Face Hub repo id: an org and a name of letters, digits, '_', '.' and '-', neither starting with '.' or
#: '-' (the Hub's own rule); '~/x', '.hidden/x' and '-/x' can only be paths
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def is_hub_id(name: str) -> bool:
    """Whether `name` reads as a bare Hugging Face Hub id 'org/name' (HUB_ID), not a .json. Any other name with a
    slash is a path only: '/mnt/ckpts/llama-3.1-8b' misspelled had been priced as the stock preset."""
    return HUB_ID.fullmatch(name.strip()) is not None and not name.strip().lower().endswith(".json")


def preset_of(catalog: Catalog, name: str) -> str | None:
    """The preset id `name` refers to: a preset id or alias, or a bare Hub id whose name after the org is one
    ('mistralai/Mixtral-8x7B-Instruct-v0.1', no network); else None. The one rule the CLI and the web page share."""
    return preset_id(catalog, name) or (preset_id(catalog, name.split("/")[1]) if is_hub_id(name) else None)


def names_a_file(name: str) -> bool:
    """Whether `name` can only be a path to a config.json (or checkpoint folder), never a preset: a .json, or a
    name with a slash that is not a bare Hub id."""
    return Path(name).suffix.lower() == ".json" or ("/" in name and not is_hub_id(name))


#: False while a web request runs (no_files): a model name is then a preset, never a file on the server
_FILES: ContextVar[bool] = ContextVar("chipwise_model_files", default=True)


@contextmanager
def no_files() -> Iterator[None]:
    """Model names resolve to presets alone within this block, on this thread (the web page's requests: a
    preset-named folder in the server's folder had won over the preset there). The planners take names, and load
    them (a draft model's too) deep inside."""
    token = _FILES.set(False)
    try:
        yield
    finally:
        _FILES.reset(token)


def files_allowed() -> bool:
    """Whether model names may read files here (False within no_files)."""
    return _FILES.get()


def allow_files(allowed: bool) -> None:
    """Set whether model names may read files, for the rest of this thread: a worker process's initializer carries
    its caller's no_files (a ContextVar does not reach a spawned process, whose draft model had been read from a
    preset-named folder in the web server's folder)."""
    _FILES.set(allowed)


def config_file(path: Path) -> Path | None:
    """The config.json `path` names: the file itself, or a checkpoint folder's config.json; None where neither is
    there."""
    try:
        if path.is_file():
            return path
        return path / "config.json" if (path / "config.json").is_file() else None
    except OSError:  # a name no file system takes (over 255 bytes: 'File name too long' had been a traceback)
        return None


def _exists(path: Path) -> bool:
    """Whether `path` is there; a name no file system takes (OSError: too long) is not."""
    try:
        return path.exists()
    except OSError:
        return False


def load_model(catalog: Catalog, name: str) -> ModelSpec:
    """A ModelSpec from a config.json path (or checkpoint folder) that exists, else a preset name or alias, a bare
    Hub id's name after its org included (preset_of). An existing config wins: a local checkpoint at its Hub id's
    path had been shadowed by the built-in preset. Within no_files, no file is read."""
    if not name.strip():  # Path('') is the current folder: an empty name had read ./config.json
        raise ChipwiseError("the model name is empty. Fix: give a preset name (chipwise model list) or a config.json.")
    path = Path(name).expanduser()  # '~/ckpts/x' in a YAML file, where no shell expands it
    files = _FILES.get()
    if files and config_file(path) is not None:
        return _from_path(path, name)
    pid = preset_of(catalog, name)
    if pid is not None:
        # the alias as the user wrote it ('meta-llama/Llama-3.1-8B'), where it names the preset another way; it had
        # been kept lower-cased
        return _preset(catalog, pid) if preset_key(name) == pid else replace(_preset(catalog, pid), alias=name.strip())
    if files and _exists(path):  # a folder with no config.json: its own line
        return _from_path(path, name)
    if files and names_a_file(name):
        where = "" if path.is_absolute() else f" (looked in {Path.cwd()})"
        raise ChipwiseError(
            f"model config {quoted(name)} does not exist{where}. Fix: give a preset name or a path to a config.json."
        )
    hub = is_hub_id(name)
    raise UnknownNameError(
        "model",
        name.split("/")[1] if hub else name,
        catalog.models,
        hint="run 'chipwise model list', or give a path to a Hugging Face config.json"
        + (f" (no file {quoted(name)} in {Path.cwd()})" if hub and files else ""),
    )


def _from_path(path: Path, name: str) -> ModelSpec:
    """A ModelSpec from an existing config.json, or a checkpoint folder holding one."""
    path = config_path(path, name, "give a preset name or a path to a config.json")
    cfg = read_json_config(path)  # one reader for a path and a catalog's preset file alike
    return from_hf_config(
        cfg,
        name=(path.parent.name or path.stem) if path.name == "config.json" else path.stem,
        where=str(path),
        source=str(path),
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
        spec = _preset(catalog, pid)  # the preset itself: a file or folder named like it here had been read instead
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
