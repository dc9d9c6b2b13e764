"""A catalog file's `models:` entries: an alias names one preset, an entry holds only the fields the catalog reads,
a new preset's `file` given without a `source` is cited as that file, and `file` may name a checkpoint folder, as a
path on the command line may."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.workload import load_model
from chipwise.workload.presets import preset_summaries
from cli_run import run_error

#: a 3-layer Llama: 2 x 1000 x 256 embeddings + 3 x (4 x 256^2 + 3 x 256 x 512 + 2 x 256) + 256 parameters
TINY = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 3,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000}  # fmt: skip
TINY_PARAMS = 2 * 1000 * 256 + 3 * (4 * 256**2 + 3 * 256 * 512 + 2 * 256) + 256


def _catalog_file(tmp_path: Path, models: str) -> Path:
    (tmp_path / "mine.json").write_text(json.dumps(TINY))
    path = tmp_path / "c.yaml"
    path.write_text(f"models:\n{models}")
    return path


def test_an_alias_another_preset_holds_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`aliases: [deepseek-r1]` on a file's preset had been listed and never worked: `model show deepseek-r1`
    printed DeepSeek-V3 (671 B), exit 0."""
    path = _catalog_file(tmp_path, "  g2: {name: G2, file: mine.json, source: x, aliases: [deepseek-r1, l3]}\n")
    with pytest.raises(ChipwiseError, match=r"models\.g2: alias 'deepseek-r1' is already the alias of preset "):
        load_catalog(files=[path])
    err = run_error(capsys, ["model", "show", "deepseek-r1", "--catalog", str(path)])
    assert err.startswith(f"error: {path}: models.g2: alias 'deepseek-r1'") and "preset 'deepseek-v3'" in err


@pytest.mark.parametrize("alias", ["llama-3.1-8b", "Llama_3.1_8B"])
def test_an_alias_that_is_another_presets_id_is_refused(tmp_path: Path, alias: str) -> None:
    """An alias equal to a preset's id (in any case, '_' for '-') had been dead: the id won."""
    path = _catalog_file(tmp_path, f"  g2: {{name: G2, file: mine.json, source: x, aliases: [{alias}]}}\n")
    with pytest.raises(ChipwiseError, match=rf"alias '{alias}' is already the id of preset 'llama-3\.1-8b'"):
        load_catalog(files=[path])


def test_two_of_a_files_presets_may_not_share_an_alias(tmp_path: Path) -> None:
    models = "  a: {name: A, file: mine.json, source: x, aliases: [t]}\n"
    models += "  b: {name: B, file: mine.json, source: x, aliases: [T]}\n"
    with pytest.raises(ChipwiseError, match=r"models\.b: alias 'T' is already the alias of preset 'a'"):
        load_catalog(files=[_catalog_file(tmp_path, models)])


def test_aliases_a_file_gives_a_built_in_preset_are_checked_and_blame_the_file(tmp_path: Path) -> None:
    """A built-in preset's own aliases stand; a new one of its own works; another preset's is refused, naming the
    file (a file that changes no `file` had kept no origin, and the line would have blamed the built-in catalog)."""
    path = _catalog_file(tmp_path, "  llama-3.1-8b: {aliases: [l8, llama3.1-8b]}\n")
    catalog = load_catalog(files=[path])
    assert load_model(catalog, "l8").layers == load_model(catalog, "llama3.1-8b").layers == 32
    path.write_text("models:\n  llama-3.1-8b: {aliases: [l8, gpt3]}\n")
    with pytest.raises(ChipwiseError, match=rf"^{path}: models\.llama-3\.1-8b: alias 'gpt3' is already the alias of"):
        load_catalog(files=[path])


def test_a_files_preset_id_still_wins_over_a_built_in_alias(tmp_path: Path) -> None:
    path = _catalog_file(tmp_path, "  deepseek-r1: {name: Mine, file: mine.json, source: x, aliases: [r1-mine]}\n")
    catalog = load_catalog(files=[path])
    assert load_model(catalog, "deepseek-r1").params_total == load_model(catalog, "r1-mine").params_total == TINY_PARAMS


def test_an_unknown_field_of_a_preset_is_refused_naming_the_nearest(tmp_path: Path) -> None:
    """`alias: [gem9]` had been taken in silence, and `model show gem9` said only "unknown model 'gem9'"."""
    path = _catalog_file(tmp_path, "  g4: {name: G4, file: mine.json, source: x, alias: [gem9], params: 9e9}\n")
    with pytest.raises(ChipwiseError, match=r"models\.g4: unknown field 'alias'\. Did you mean 'aliases'\? Fix: use "):
        load_catalog(files=[path])


def test_the_built_in_index_fields_are_taken_in_a_file(tmp_path: Path) -> None:
    models = "  g5: {name: G5, file: mine.json, source: x, params_published: 3.5e6, params_source: me, notes: tiny}\n"
    catalog = load_catalog(files=[_catalog_file(tmp_path, models)])
    assert (catalog.models["g5"].params_published, catalog.models["g5"].notes) == (3.5e6, "tiny")


def test_a_new_preset_without_a_source_is_cited_as_its_file(tmp_path: Path) -> None:
    """It had been refused ('models.g3.source: Field required'), where docs/catalog-format.md cites it as itself."""
    path = _catalog_file(tmp_path, "  g3: {name: G3, file: mine.json}\n")
    row = {r["id"]: r for r in preset_summaries(load_catalog(files=[path]))}["g3"]
    assert row["source"] == f"mine.json (given by {path})"
    assert (row["layers"], row["params_total"]) == (3, TINY_PARAMS)


def test_a_presets_file_may_be_a_checkpoint_folder(tmp_path: Path) -> None:
    """`file: ck/mymodel` had read "cannot read model config 'ck/mymodel': Is a directory"; the command line reads
    a folder's config.json."""
    (tmp_path / "ck" / "mymodel").mkdir(parents=True)
    (tmp_path / "ck" / "mymodel" / "config.json").write_text(json.dumps(TINY))
    (tmp_path / "ck" / "empty").mkdir()
    path = tmp_path / "c.yaml"
    path.write_text("models:\n  g6: {name: G6, file: ck/mymodel, source: x}\n")
    catalog = load_catalog(files=[path])
    assert load_model(catalog, "g6").params_total == TINY_PARAMS
    # a folder without one is refused as the catalog loads (it had loaded, refused only where g7 was read)
    path.write_text("models:\n  g6: {name: G6, file: ck/mymodel, source: x}\n  g7: {name: G7, file: ck/empty}\n")
    with pytest.raises(ChipwiseError, match=r"model config '.*ck/empty' is a folder with no config\.json in it\."):
        load_catalog(files=[path])
