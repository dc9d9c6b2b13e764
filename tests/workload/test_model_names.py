"""How a model name resolves: an existing config wins over a preset alias, a Hub id tries its name after the org, and a
name that is neither gets the presets it was likely meant to be; a scenario's relative config.json is taken from its
own folder, as its trace is; the Qwen2.5 base names have presets of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.workload import load_model
from chipwise.workload.scenario import load_scenario


def test_a_local_checkpoint_at_a_hub_ids_path_wins_over_the_preset(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen/Qwen3-8B had read the built-in preset (36 layers) rather than the user's own config (40 layers)."""
    folder = tmp_path / "Qwen" / "Qwen3-8B"
    folder.mkdir(parents=True)
    cfg = {**catalog.model_config("qwen3-8b"), "num_hidden_layers": 40}
    (folder / "config.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    spec = load_model(catalog, "Qwen/Qwen3-8B")
    assert (spec.layers, spec.source, spec.alias) == (40, "Qwen/Qwen3-8B/config.json", "")
    (tmp_path / "gpt3").mkdir()  # a folder with no config.json does not hide a preset
    assert load_model(catalog, "gpt3").name == "gpt3-175b"


@pytest.mark.parametrize(
    ("name", "pid"),
    [
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("meta-llama/Llama-3.1-405B-Instruct", "llama-3.1-405b"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-v3"),
    ],
)
def test_a_hub_id_tries_its_name_after_the_org(catalog: Catalog, name: str, pid: str) -> None:
    spec = load_model(catalog, name)
    assert (spec.name, spec.alias) == (pid, name)  # as written (it had been kept lower-cased)


def test_a_missing_hub_path_gets_the_presets_it_was_likely_meant_to_be(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownNameError) as exc:
        load_model(catalog, "Qwen/Qwen3-8B-Base")
    assert str(exc.value) == (
        "unknown model 'Qwen3-8B-Base'. Did you mean 'qwen3-8b', 'qwen3-30b-a3b', 'qwen3-4b'? Fix: run 'chipwise "
        f"model list', or give a path to a Hugging Face config.json (no file 'Qwen/Qwen3-8B-Base' in {tmp_path})."
    )
    with pytest.raises(ChipwiseError) as missing:
        load_model(catalog, "mine.json")
    assert str(missing.value) == (
        f"model config 'mine.json' does not exist (looked in {tmp_path}). Fix: give a preset name or a path to a "
        "config.json."
    )


@pytest.mark.parametrize("alias", ["Llama-4-Maverick-17B-128E-Instruct-FP8", "Qwen3-30B-A3B-Instruct-2507"])
def test_no_alias_names_a_checkpoint_other_than_its_presets(catalog: Catalog, alias: str) -> None:
    """The FP8 Maverick (fbgemm_fp8) had been priced as the bf16 one, the 2507 Qwen3-30B (262,144 tokens) with the
    April release's 40,960-token context."""
    with pytest.raises(UnknownNameError):
        load_model(catalog, alias)


def test_a_scenarios_relative_config_is_taken_from_its_folder(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sc"
    folder.mkdir()
    (folder / "mymodel.json").write_text(json.dumps(catalog.model_config("llama-3.2-1b")))
    (folder / "run.yaml").write_text("model: mymodel.json\nhardware: h100-sxm\nchips: 8\ntokens: 1e9\n")
    (folder / "other.yaml").write_text("model: nothere.json\nhardware: h100-sxm\nchips: 8\ntokens: 1e9\n")
    (folder / "preset.yaml").write_text("model: llama-3.2-1b\nhardware: h100-sxm\nchips: 8\ntokens: 1e9\n")
    monkeypatch.chdir(tmp_path)
    assert load_scenario(str(folder / "run.yaml")).model == str(folder / "mymodel.json")
    assert load_scenario(str(folder / "preset.yaml")).model == "llama-3.2-1b"
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(str(folder / "other.yaml"))
    assert str(exc.value) == (
        f"model config 'nothere.json' does not exist (looked in {folder} and {tmp_path}). Fix: give a preset name "
        "or a path to a config.json (a relative one from the scenario's folder)."
    )


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("/nonexistent/dir/llama-3.1-8b", ""),
        ("ckpts/mine/llama-3.1-8b", " (looked in {cwd})"),
        ("./llama-3.1-8b", " (looked in {cwd})"),
        ("../llama-3.1-8b", " (looked in {cwd})"),
        ("meta-llama/llama-3.1-8b.json", " (looked in {cwd})"),
        # no Hub org is '.hidden' or '-' (a Hub id's parts start with a letter or digit), nor a .JSON file
        (".hidden/llama-3.1-8b", " (looked in {cwd})"),
        ("-/llama-3.1-8b", " (looked in {cwd})"),
        ("org/config.JSON", " (looked in {cwd})"),
    ],
)
def test_a_missing_path_is_not_read_as_the_preset_its_folder_is_named_for(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, where: str
) -> None:
    """A misspelled checkpoint folder '/mnt/ckpts/llama-3.1-8b' had been priced as the stock preset: only a bare
    Hub id 'org/name' tries its name after the org."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ChipwiseError) as exc:
        load_model(catalog, name)
    assert str(exc.value) == (
        f"model config '{name}' does not exist{where.format(cwd=tmp_path)}. Fix: give a preset name or a path to a "
        "config.json."
    )
    assert load_model(catalog, "meta-llama/llama-3.1-8b").name == "llama-3.1-8b"  # a bare Hub id still resolves


def test_a_scenarios_missing_checkpoint_folder_names_both_places(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "run.yaml").write_text("model: ../ckpts/llama-3.1-8b\nhardware: h100-sxm\nchips: 8\ntokens: 1e9\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(str(tmp_path / "run.yaml"))
    assert str(exc.value) == (
        f"model config '../ckpts/llama-3.1-8b' does not exist (looked in {tmp_path} and {tmp_path}). Fix: give a "
        "preset name or a path to a config.json (a relative one from the scenario's folder)."
    )


def test_a_home_relative_path_is_expanded_not_read_as_a_hub_id(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'~/llama-3.1-8b' in a YAML file (no shell expands it) had been priced as the stock preset: '~' is no Hub org.
    It is the user's folder: a config there is read, and a missing one is refused."""
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ChipwiseError, match="does not exist"):
        load_model(catalog, "~/llama-3.1-8b")
    (tmp_path / "llama-3.1-8b").mkdir()
    config = {**catalog.model_config("llama-3.1-8b"), "num_hidden_layers": 2}
    (tmp_path / "llama-3.1-8b" / "config.json").write_text(json.dumps(config))
    assert load_model(catalog, "~/llama-3.1-8b").layers == 2


# The Qwen2.5 base names' own presets (131,072-token context).


@pytest.mark.parametrize("size", ["7", "14", "32", "72"])
def test_qwen25_base_names_get_the_base_context(catalog: Catalog, size: str) -> None:
    """Qwen2.5-7B/14B/32B/72B (and their Hub ids) had resolved to the Instruct preset, whose config states 32,768
    tokens; the base config states 131,072. The architecture is the same."""
    for name in (f"Qwen2.5-{size}B", f"Qwen/Qwen2.5-{size}B", f"qwen2.5-{size}b"):
        assert load_model(catalog, name).max_seq_len == 131_072
    for name in (f"Qwen2.5-{size}B-Instruct", f"Qwen/Qwen2.5-{size}B-Instruct", f"qwen2.5-{size}b-instruct"):
        assert load_model(catalog, name).max_seq_len == 32_768
    base, instruct = load_model(catalog, f"qwen2.5-{size}b"), load_model(catalog, f"qwen2.5-{size}b-instruct")
    assert base.params_total == instruct.params_total
    assert base.attention == instruct.attention and base.groups == instruct.groups


def test_qwen25_base_files_hold_the_base_config() -> None:
    """The base presets' files differ from the Instruct ones only where the base config.json does."""
    folder = Path(__file__).parents[2] / "src/chipwise/catalog/data/models"
    base = json.loads((folder / "qwen2.5-7b-base.json").read_text())
    instruct = json.loads((folder / "qwen2.5-7b.json").read_text())
    differ = {k for k in base.keys() | instruct.keys() if base.get(k) != instruct.get(k)}
    assert differ == {"max_position_embeddings", "eos_token_id", "transformers_version", "use_mrope"}
    assert (base["max_position_embeddings"], base["eos_token_id"]) == (131_072, 151_643)


def test_qwen25_72b_base_file_holds_the_base_config() -> None:
    """The 72B base config (Qwen/Qwen2.5-72B) states 131,072 tokens, max_window_layers 80 and rms_norm_eps 1e-05
    where the Instruct config states 32,768, 70 and 1e-06; the architecture is the same."""
    folder = Path(__file__).parents[2] / "src/chipwise/catalog/data/models"
    base = json.loads((folder / "qwen2.5-72b-base.json").read_text())
    instruct = json.loads((folder / "qwen2.5-72b.json").read_text())
    keys = base.keys() | instruct.keys()
    differ = {k: (base.get(k), instruct.get(k)) for k in keys if base.get(k) != instruct.get(k)}
    assert differ == {
        "max_position_embeddings": (131_072, 32_768),
        "max_window_layers": (80, 70),
        "rms_norm_eps": (1e-05, 1e-06),
        "eos_token_id": (151_643, 151_645),
    }


def test_a_catalog_files_preset_named_like_a_builtin_alias_is_that_preset(tmp_path: Path) -> None:
    """'deepseek-r1' is DeepSeek-V3's alias: a file's preset of that id had loaded DeepSeek-V3 (671 B, 61 layers)
    and never read the file, and `model list` had shown DeepSeek-V3's figures on its row. An id wins over an
    alias."""
    from chipwise.catalog import load_catalog
    from chipwise.workload.presets import preset_summaries

    config = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 3,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000}  # fmt: skip
    (tmp_path / "mine.json").write_text(json.dumps(config))
    (tmp_path / "c.yaml").write_text("models:\n  deepseek-r1: {name: Mine, file: mine.json, source: my config}\n")
    catalog = load_catalog(files=[tmp_path / "c.yaml"])
    assert load_model(catalog, "deepseek-r1").layers == 3
    assert {r["id"]: r["layers"] for r in preset_summaries(catalog)}["deepseek-r1"] == 3


def test_model_list_reads_the_presets_not_the_folder_it_runs_in(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder named like a preset (a local checkpoint 'llama-3.1-8b/config.json') had put its figures on the
    preset's row of `model list`, and a stray file named 'phi-4' had failed the whole listing."""
    from chipwise.workload.presets import preset_summaries

    (tmp_path / "llama-3.1-8b").mkdir()
    (tmp_path / "llama-3.1-8b" / "config.json").write_text(
        json.dumps({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 2, "vocab_size": 100})
    )
    (tmp_path / "phi-4").write_text("notes\n")
    monkeypatch.chdir(tmp_path)
    rows = {r["id"]: r for r in preset_summaries(catalog)}
    assert rows["llama-3.1-8b"]["layers"] == 32 and rows["phi-4"]["layers"] == 40


def test_a_catalog_files_config_for_a_builtin_preset_cites_that_file(tmp_path: Path) -> None:
    """`models: {llama-3.1-8b: {file: mine.json}}` read the user's config and kept Meta's citation for it."""
    from chipwise.catalog import load_catalog
    from chipwise.workload.presets import preset_summaries

    config = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 3,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000}  # fmt: skip
    (tmp_path / "mine.json").write_text(json.dumps(config))
    (tmp_path / "c.yaml").write_text("models:\n  llama-3.1-8b: {file: mine.json}\n")
    catalog = load_catalog(files=[tmp_path / "c.yaml"])
    row = {r["id"]: r for r in preset_summaries(catalog)}["llama-3.1-8b"]
    assert row["layers"] == 3 and row["source"] == f"mine.json (given by {tmp_path / 'c.yaml'})"


def test_a_catalog_files_preset_id_written_another_way_is_refused(tmp_path: Path) -> None:
    """Names are read in any case: a file's `Llama-3.1-8B` had taken over the built-in llama-3.1-8b in silence."""
    from chipwise.catalog import load_catalog

    (tmp_path / "c.yaml").write_text("models:\n  Llama-3.1-8B: {file: mine.json}\n")
    with pytest.raises(ChipwiseError, match=r"models\.Llama-3\.1-8B: the id is preset 'llama-3\.1-8b' written"):
        load_catalog(files=[tmp_path / "c.yaml"])


def test_a_built_in_preset_renamed_keeps_its_config_and_a_given_source_stands(tmp_path: Path) -> None:
    """`{name: My 8B}` had moved the preset's origin to the file and looked for its config beside it ('cannot read
    model config'); a file's own `source` for its config is kept as written."""
    from chipwise.catalog import load_catalog
    from chipwise.workload.presets import preset_summaries

    (tmp_path / "c.yaml").write_text("models:\n  llama-3.1-8b: {name: My 8B}\n")
    catalog = load_catalog(files=[tmp_path / "c.yaml"])
    assert load_model(catalog, "llama-3.1-8b").layers == 32
    config = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 3,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000}  # fmt: skip
    (tmp_path / "mine.json").write_text(json.dumps(config))
    (tmp_path / "d.yaml").write_text("models:\n  llama-3.1-8b: {file: mine.json, source: my own export}\n")
    row = {r["id"]: r for r in preset_summaries(load_catalog(files=[tmp_path / "d.yaml"]))}["llama-3.1-8b"]
    assert row["source"] == "my own export" and row["layers"] == 3
