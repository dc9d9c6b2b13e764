"""The web page resolves a model name as the command line does for presets and Hub ids (presets.preset_of), and
reads no file on the server: a preset-named checkpoint folder in the server's folder does not win there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import UnknownNameError
from chipwise.interfaces.web.routes import GET_ROUTES, POST_ROUTES, Settings
from chipwise.workload import load_model

TRAIN = {"chips": 8, "hardware": ["h100-sxm"], "tokens": 1e9, "top": 1}


def test_a_hub_id_plans_on_the_web_as_on_the_command_line() -> None:
    """'mistralai/Mixtral-8x7B-Instruct-v0.1' had been "unknown model" on the web page alone."""
    big = {**TRAIN, "chips": 64}
    report = POST_ROUTES["/api/plan/train"]({"model": "mistralai/Mixtral-8x7B-Instruct-v0.1", **big}, Settings())
    stock = POST_ROUTES["/api/plan/train"]({"model": "mixtral-8x7b", **big}, Settings())
    # the same plans, each naming the model as it was given beside the preset's id
    assert report["results"][0]["model_alias"] == "mistralai/Mixtral-8x7B-Instruct-v0.1"
    drop = [{k: v for k, v in r.items() if k != "model_alias"} for r in (*report["results"], *stock["results"])]
    assert (
        drop[: len(report["results"])] == drop[len(report["results"]) :]
        and report["results"][0]["hardware"] == "h100-sxm"
    )


def test_a_preset_named_folder_in_the_servers_folder_is_not_read(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "llama-3.1-8b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**catalog.model_config("llama-3.1-8b"), "num_hidden_layers": 2}))
    monkeypatch.chdir(tmp_path)
    assert load_model(catalog, "llama-3.1-8b").layers == 2  # the command line reads it: an existing path wins
    scenario = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "tokens": 1e9}
    assert POST_ROUTES["/api/predict"](scenario, Settings())["model_flops_per_token"] == 51_471_187_968
    report = POST_ROUTES["/api/plan/train"]({"model": "llama-3.1-8b", **TRAIN}, Settings())
    assert report["results"][0]["model_flops_per_token"] == 51_471_187_968
    models = {m["id"]: m for m in GET_ROUTES["/api/models"](Settings())["models"]}
    assert models["llama-3.1-8b"]["layers"] == 32
    with pytest.raises(UnknownNameError) as exc:
        POST_ROUTES["/api/plan/train"]({"model": "llama-3.1-8b/config.json", **TRAIN}, Settings())
    assert "the web page reads no files on the server" in str(exc.value)


def test_the_web_pages_worker_processes_read_no_files_either(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plan serve's checks run in spawned processes where they add up to many requests; a ContextVar does not reach
    them, so a worker had loaded the draft model from a preset-named folder in the server's folder (a 32,000-token
    vocabulary, refused as a drafter) and the option was dropped: 'No option could be simulated'. The two checks
    (colocated and split H100s) are sent to two worker processes whatever their requests and this machine's CPUs,
    and the answer says they ran there."""
    from chipwise.interfaces.web import routes
    from chipwise.planner import serving_shortlist

    folder = tmp_path / "llama-3.1-8b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**catalog.model_config("llama-3.1-8b"), "vocab_size": 32000}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(serving_shortlist, "PARALLEL_CHECK_REQUESTS", 0)  # the checks on worker processes at once
    monkeypatch.setattr(serving_shortlist, "fork_safe", lambda: False)  # spawned, as a server's threads have them
    monkeypatch.setattr(routes, "cpu_count", lambda: 2)  # the route's workers: two, on a one-CPU machine too
    body = {"model": "llama-3.1-70b", "rate": 2, "input_tokens": 512, "output_tokens": 128,
            "hardware": ["p5.48xlarge"], "speculative": "draft:llama-3.1-8b:4@0.7"}  # fmt: skip
    report = POST_ROUTES["/api/plan/serve"](body, Settings())
    assert report["search"]["check_processes"] == 2  # the checks ran on worker processes, not in this one
    assert report["verified"] and report["verified"][0]["hardware"] == "h100-sxm"
