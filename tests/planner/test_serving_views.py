"""What `chipwise predict` says of a serving deployment: KV-cache use per pool of a split (and the plot's replica),
both pools' chips and figures, the stated chips a searched plan leaves idle, and `speculative: none`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chipwise.interfaces import plots
from chipwise.interfaces.cli.app import run
from chipwise.serve.sim.metrics import kv_utilisation
from chipwise.serve.sim.run import SimOutput
from chipwise.workload.serve_scenario import ServeScenario
from cli_run import run_json

#: Llama-3.1-8B split over one H100 encoding prompts and one B200 decoding them
SPLIT = (
    "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nprecision: fp8\ninput_tokens: 2048\noutput_tokens: 128\n"
    "arrival_rate: 5\nrequests: 200\nplan: {disaggregated: true, prefill: {hardware: h100-sxm, tp: 1, replicas: 3}, "
    "decode: {hardware: b200, tp: 1, replicas: 1}}\n"
)


def _replica(index: int, role: str, level: float) -> dict[str, Any]:
    """A replica whose KV cache holds `level` of itself from t = 1 s on (empty before)."""
    return {"index": index, "role": role, "util_t": np.array([0.0, 1.0]), "util_v": np.array([0.0, level])}


def _split_run() -> SimOutput:
    """Seven prefill replicas at 2% of their cache and one decode replica at 40%, for half the run each."""
    replicas = [_replica(k, "prefill", 0.02) for k in range(7)] + [_replica(7, "decode", 0.4)]
    return SimOutput(requests={}, replicas=replicas, last_admit=1.0, end=2.0, wall_s=0.0, closed_loop=False)


def test_a_split_reports_kv_use_per_pool_decode_first() -> None:
    """Averaged over every replica, seven prefill replicas hid the decode pool's use (4.4% where it used 20%)."""
    kv = kv_utilisation(_split_run())
    assert list(kv["pools"]) == ["decode", "prefill"]
    assert kv["pools"]["decode"] == {"mean": pytest.approx(0.2), "peak": pytest.approx(0.4), "replicas": 1}
    assert kv["pools"]["prefill"]["mean"] == pytest.approx(0.01) and kv["pools"]["prefill"]["replicas"] == 7
    assert "mean" not in kv and "peak" not in kv  # no figure averaged over both pools
    series = kv["series"]  # the decode replica, with its own figures
    assert (series["role"], series["replica"], series["peak"]) == ("decode", 0, pytest.approx(0.4))
    assert series["utilisation"] == [0.0, 0.4]


def test_one_pool_keeps_the_deployment_figures() -> None:
    run_ = SimOutput({}, [_replica(0, "both", 0.5), _replica(1, "both", 0.3)], 1.0, 2.0, 0.0, False)
    kv = kv_utilisation(run_)
    assert kv["mean"] == pytest.approx(0.2) and kv["peak"] == pytest.approx(0.5)
    assert kv["pools"]["both"]["replicas"] == 2 and kv["series"]["replica"] == 0


def test_kv_plot_titles_the_replica_it_draws(tmp_path: Path) -> None:
    kv = kv_utilisation(_split_run())
    result = {"kind": "serve", "breakdown": {"gemm": 0.01}, "kv_cache_utilisation": kv}
    svg = plots.prediction_serving(result, tmp_path / "p.svg").read_text()
    assert "KV cache, decode replica 0 (mean 20.0%, peak 40.0%)" in svg
    # a result saved before the series named its replica: replica 0, its figures those of all replicas
    old = {"mean": 0.3, "peak": 0.5, "series_replica0": {"t_s": [0, 1], "utilisation": [0, 0.5]}}
    svg = plots.prediction_serving({**result, "kv_cache_utilisation": old}, tmp_path / "o.svg").read_text()
    assert "KV cache, replica 0 (mean 30.0%, peak 50.0% over all replicas)" in svg


def test_predict_names_both_pools_chips_kv_and_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "split.yaml"
    f.write_text(SPLIT)
    data = run_json(capsys, ["predict", str(f), "--json"])
    assert data["hardware"] == "h100-sxm>b200" and data["system"] == "p5.48xlarge>p6-b200.48xlarge"
    assert {"h100-sxm.hbm_bandwidth", "b200.hbm_bandwidth", "efficiency.blackwell.memory"} <= set(data["figures"])
    # an engine figure fitted per chip family is listed for each pool's family
    assert {"engines.trtllm.compute_scale (hopper)", "engines.trtllm.compute_scale (blackwell)"} <= set(data["figures"])
    kv = data["kv_cache_utilisation"]
    assert list(kv["pools"]) == ["decode", "prefill"] and kv["series"]["role"] == "decode"
    assert kv["pools"]["decode"]["replicas"] == 1 and kv["pools"]["prefill"]["replicas"] == 3
    assert run(["predict", str(f), "--sources"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    decode, prefill = out.find("KV-cache utilisation, decode pool"), out.find("KV-cache utilisation, prefill pool")
    assert 0 <= decode < prefill
    assert "b200.hbm_bandwidth" in out and "h100-sxm.hbm_bandwidth" in out
    assert "(trtllm)" in out  # one engine, named once


def test_predict_says_why_a_searched_plan_leaves_stated_chips_idle(capsys: pytest.CaptureFixture[str]) -> None:
    """Six TPU v5e chips: the search takes one TP4 replica (4 chips), as three TP2 replicas would rent eight."""
    scenario = (
        "{kind: serve, model: llama-3.1-8b, hardware: tpu-v5e, chips: 6, input_tokens: 1024, output_tokens: 256, "
        "arrival_rate: 10, requests: 300}"
    )
    data = run_json(capsys, ["predict", scenario, "--json"])
    stated = data["stated_chips"]
    assert (stated["stated"], stated["used"]) == (6, data["chips"]) and data["chips"] < 6
    assert "TP2 x3 would fill them but rents 8 chips" in stated["reason"]
    assert run(["predict", scenario]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert f"the searched plan uses {data['chips']} of the 6 stated: TP2 x3" in out


def test_predict_that_fills_its_chips_has_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = (
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 2, input_tokens: 512, output_tokens: 128, "
        "arrival_rate: 5, requests: 100}"
    )
    assert "stated_chips" not in run_json(capsys, ["predict", scenario, "--json"])


@pytest.mark.parametrize("word", ["none", "None", "off"])
def test_scenario_speculative_none_means_no_drafting(word: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`plan serve --speculative none,mtp:1` took 'none'; a scenario refused it as an unknown method."""
    scenario = (
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, input_tokens: 512, output_tokens: 128, "
        f"arrival_rate: 2, requests: 60, speculative: '{word}'}}"
    )
    data = run_json(capsys, ["predict", scenario, "--json"])
    assert data["plan"]["speculative"] is None
    sc = ServeScenario(model="llama-3.1-8b", hardware="h100-sxm", arrival_rate=1, output_tokens=8, speculative=word)
    assert sc.speculative is None
