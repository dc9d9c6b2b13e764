"""A scenario's prefix-cache hits and a disaggregated split need an engine that has them (serving_inputs.
check_engine_features, serving_split's 'not ranked' note): transformers-neuronx and optimum-neuron have neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.planner.serving_inputs import check_engine_features
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load
from chipwise.workload.serve_scenario import ServeScenario

SPLIT = {"disaggregated": True, "prefill": {"tp": 2, "replicas": 1}, "decode": {"tp": 2, "replicas": 1}}


def _scenario(**kw: Any) -> ServeScenario:
    return ServeScenario(
        model="llama-3.1-8b", hardware="trn1", input_tokens=1024, output_tokens=128, arrival_rate=2, **kw
    )


def test_prefix_hits_on_transformers_neuronx_are_refused(catalog: Catalog, hw: Hardware) -> None:
    """neuron on trn1 had read a TTFT of 252.0 ms at prefix_hit_rate 0.5 (501.5 ms without): it encodes every prompt."""
    with pytest.raises(ChipwiseError) as exc:
        check_engine_features(catalog, "neuron", hw.system("trn1"), _scenario(prefix_hit_rate=0.5))
    assert str(exc.value) == (
        "prefix_hit_rate 0.5 serves prompt tokens from a prefix cache, and neuron has no prefix cache on trainium1 "
        "chips (engines.neuron.chips.trainium1.prefix_cache). Fix: use engine: vllm-neuron (which has one there), or "
        "drop prefix_hit_rate."
    )
    with pytest.raises(ChipwiseError, match=r"^prefix_hit_rate 0.25 and prompt_pool 10 serve prompt .* drop "):
        check_engine_features(catalog, "neuron", hw.system("inf2"), _scenario(prefix_hit_rate=0.25, prompt_pool=10))
    with pytest.raises(ChipwiseError, match=r"optimum-neuron has no prefix cache on trainium2 chips"):
        check_engine_features(catalog, "optimum-neuron", hw.system("trn2"), _scenario(prompt_pool=100))


def test_engines_with_a_prefix_cache_pass(catalog: Catalog, hw: Hardware) -> None:
    for engine, system in (("vllm-neuron", "trn1"), ("neuron", "trn2"), ("vllm", "h100-sxm"), ("trtllm", "b200")):
        check_engine_features(catalog, engine, hw.system(system), _scenario(prefix_hit_rate=0.5, prompt_pool=10))
    check_engine_features(catalog, "neuron", hw.system("trn1"), _scenario())  # no hits asked: nothing to refuse


def test_a_split_without_kv_handover_is_refused(catalog: Catalog, hw: Hardware) -> None:
    with pytest.raises(ChipwiseError, match=r"^plan.disaggregated hands .* optimum-neuron has no KV-cache hand-over"):
        check_engine_features(catalog, "optimum-neuron", hw.system("inf2"), _scenario(plan=SPLIT))
    with pytest.raises(ChipwiseError, match=r"Fix: use engine: vllm-neuron .*, or serve colocated"):
        check_engine_features(catalog, "neuron", hw.system("trn1"), _scenario(plan=SPLIT))
    check_engine_features(catalog, "neuron", hw.system("trn2"), _scenario(plan=SPLIT))  # NxD Inference hands over


def test_plan_serve_offers_no_split_of_an_engine_without_kv_handover(catalog: Catalog) -> None:
    """Llama 3.1 8B at 2 req/s had ranked inf2>inf2 and trn1>trn1 splits of transformers-neuronx; they are now a
    'not ranked' note, and trn2 (NxD Inference) still splits."""
    out = plan_serving(catalog, "llama-3.1-8b", ["inf2", "trn1", "trn2"], Load("rate", rate=2.0), 1024, 128, verify=0)
    splits = {r["hardware"] for r in out["results"] if r["disaggregated"]}
    assert splits and all(h.split(">")[0] == h.split(">")[1] == "trn2" for h in splits)
    notes = [s["reason"] for s in out["skipped"] if s["hardware"] == "splits"]
    assert notes == [
        "neuron on inf2, neuron on trn1 made no prefill>decode split: their engines have no KV-cache hand-over from a "
        "prefill to a decode pool (engines.ENGINE.kv_handover). Fix: --engine vllm-neuron to price such splits"
    ]


def test_predict_refuses_what_the_engine_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """predict reaches the check through its pools (serving_pool.build_pool): transformers-neuronx on a trn1 had
    halved a 2,048-token prompt's TTFT at prefix_hit_rate 0.5, and inf2 under optimum-neuron had priced a split."""
    from cli_run import run_error

    base = "kind: serve\nmodel: llama-3.1-8b\ninput_tokens: 2048\noutput_tokens: 128\nrequests: 20\n"
    cache = tmp_path / "cache.yaml"
    cache.write_text(base + "hardware: trn1\nengine: neuron\nchips: 1\nprefix_hit_rate: 0.5\nconcurrency: 4\n")
    assert run_error(capsys, ["predict", str(cache)]).endswith(
        "Fix: use engine: vllm-neuron (which has one there), or drop prefix_hit_rate."
    )
    split = tmp_path / "split.yaml"
    split.write_text(
        base + "hardware: inf2\nengine: optimum-neuron\narrival_rate: 2\n"
        "plan: {disaggregated: true, prefill: {tp: 2, replicas: 1}, decode: {tp: 2, replicas: 1}}\n"
    )
    assert "optimum-neuron" in run_error(capsys, ["predict", str(split)])
