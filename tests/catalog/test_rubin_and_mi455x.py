"""The 2026 parts: NVIDIA's Rubin GPU (Vera Rubin NVL72) and AMD's Instinct MI455X (Helios), with their racks, the
families their efficiencies and engine figures are carried from, and Trainium4 on Rubin's NVLink 6 switch tray."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import print_ranking
from chipwise.planner.training import plan_training
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.disaggregated import hybrid_domain, kv_transfer
from chipwise.serve.engine import engine_carried_from, engine_profile
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.presets import load_model

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_rubin_peaks_are_nvidias_dense_rows_not_the_sparse_inference_figure(catalog: Catalog) -> None:
    """NVIDIA's table marks 'NVFP4 Training' (35 PF) and 'FP8/FP6 Training' (17.5 PF) 'Dense specification' and the
    50 PF 'NVFP4 Inference' sparse (adaptive compression); BF16 is listed at 4 PF, not FP8 / 2."""
    rubin = catalog.chips["rubin"]
    assert rubin.flops["fp4"].si == pytest.approx(35e15)
    assert rubin.flops["fp8"].si == pytest.approx(17.5e15)
    assert rubin.flops["bf16"].si == pytest.approx(4e15)
    assert 50000 in [a.value for a in rubin.flops["fp4"].alternatives]  # kept, marked as the sparse figure
    # the latest product page (19.2 TB/s, NVLink 3 TB/s bidirectional) leads; the CES 2026 datasheet's stay beside it
    assert rubin.hbm_bandwidth.si == pytest.approx(19.2e12)
    assert 22 in [a.value for a in rubin.hbm_bandwidth.alternatives]
    assert rubin.scaleup_bandwidth.si == pytest.approx(1.5e12)
    assert rubin.tdp.status == "estimate" and rubin.tdp.derivation


def test_mi455x_runs_bf16_at_a_quarter_of_its_fp8_rate(catalog: Catalog) -> None:
    """CDNA 5 doubles FP4 over FP8 as CDNA 4 does, but runs BF16 at FP8 / 4 (AMD: 40.3 / 20.1 / 5 PF dense), where
    CDNA 3 and 4 ran it at FP8 / 2: the old ratio would have doubled its BF16 peak."""
    mi455x, mi355x = catalog.chips["mi455x"], catalog.chips["mi355x"]
    fp4, fp8, bf16 = (mi455x.flops[p].si for p in ("fp4", "fp8", "bf16"))
    assert fp4 == pytest.approx(2 * fp8, rel=0.01)
    assert bf16 == pytest.approx(fp8 / 4, rel=0.01)
    assert mi355x.flops["bf16"].si == pytest.approx(mi355x.flops["fp8"].si / 2, rel=0.01)
    assert mi455x.hbm_bandwidth.si == pytest.approx(23.3e12)
    assert mi455x.scaleup_bandwidth.si == pytest.approx(1.8e12)  # 3.6 TB/s bidirectional, per direction


def test_both_racks_hold_72_in_one_scale_up_domain(hw: Hardware) -> None:
    for rack, chip in (("vr200-nvl72", "rubin"), ("helios", "mi455x")):
        system = hw.system(rack)
        assert system.chip.id == chip and system.chips == 72
        assert system.scaleup.size == 72


@pytest.mark.parametrize(("family", "leader"), [("rubin", "blackwell-ultra"), ("cdna5", "cdna4")])
def test_a_new_family_takes_its_predecessors_fractions_but_its_own_compute_units(
    catalog: Catalog, family: str, leader: str
) -> None:
    """No Rubin or MI455X run is in any fit: every efficiency is its predecessor's (each derivation says so), but the
    GEMM wave quantisation counts the part's own units (224 SMs, 256 WGPs), and the time per optimizer step is the
    unfitted prior (the MI355X's 0.136 s had been 40% of an MI455X step)."""
    new, old = catalog.efficiency[family], catalog.efficiency[leader]
    assert set(new) == set(old)
    assert new["step_overhead"].value == 0.0 < old["step_overhead"].value
    for name in set(new) - {"compute_units", "matmul", "step_overhead"}:
        assert new[name].value == old[name].value, name
    assert {p: f.value for p, f in new["matmul"].items()} == {p: f.value for p, f in old["matmul"].items()}
    assert new["matmul"]["fp8"].derivation.startswith(f"taken from {leader}")
    assert new["compute_units"].value == {"rubin": 224, "cdna5": 256}[family]


CARRIED = [
    ("trtllm", "rubin", "trtllm on blackwell"),
    ("trtllm-engine", "rubin", "trtllm-engine on blackwell"),
    ("sglang", "rubin", "trtllm on blackwell"),
    ("vllm", "cdna5", "vllm on cdna3"),
    ("sglang", "cdna5", "vllm on cdna3"),
]


@pytest.mark.parametrize(("engine", "family", "carried"), CARRIED)
def test_the_engine_figures_are_carried_and_said_so(catalog: Catalog, engine: str, family: str, carried: str) -> None:
    """Each engine takes its predecessor family's figures, and its outputs say whose fit they are (the ‡ note)."""
    assert engine_carried_from(catalog, engine, family) == carried
    leader = {"rubin": "blackwell-ultra", "cdna5": "cdna4"}[family]
    new, old = engine_profile(catalog, engine, family), engine_profile(catalog, engine, leader)
    assert replace(new, chip_family=leader, provenance=old.provenance) == old


def test_trainium4_beside_rubin_moves_kv_at_nvlink_6_rates(catalog: Catalog, hw: Hardware) -> None:
    """On the Vera Rubin NVLink 6 switch tray, the tray NVLink Fusion was announced with, a TP8 Trainium4 prefill
    replica (two chips, 3.6 TB/s) sends its KV cache to one Rubin at the Rubin's 1.5 TB/s port; beside a GB300 the
    same pair of pools ran at the GB300's NVLink 5 900 GB/s."""
    model = load_model(catalog, "llama-3.1-8b")

    def setup(chip: str, engine: str, tp: int) -> ReplicaSetup:
        plan = ReplicaPlan(tp=tp, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
        return setup_replica(catalog, model, hw.system(chip), engine, plan, 2048.0, 128.0)

    pre = setup("trn4", "neuron", 8)
    rubin_rack, gb300_rack = hw.system("trn4-rubin-fusion-rack"), hw.system("trn4-gb300-fusion-rack")
    racks = [gb300_rack, rubin_rack]
    on_rubin = setup("rubin", "trtllm", 1)
    assert hybrid_domain(racks, pre.system, 8, on_rubin.system, 8) is rubin_rack
    assert hybrid_domain(racks, pre.system, 8, setup("gb300", "trtllm", 1).system, 8) is gb300_rack
    eff = rubin_rack.scaleup.fabric.bus_efficiency
    assert kv_transfer(model, pre, on_rubin, False, rubin_rack).bandwidth == pytest.approx(1.5e12 * eff)
    assert rubin_rack.link("trn4", "rubin") == pytest.approx((1.5e12, 1.5e-6))


def test_the_catalog_reference_lists_what_the_catalog_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/catalog.md is what scripts/write_catalog_reference.py writes from the built-in catalog, so a chip, system
    or fabric added (Rubin, MI455X and their racks here) or changed without regenerating it fails here."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import write_catalog_reference

    assert write_catalog_reference.OUT.read_text(encoding="utf-8") == write_catalog_reference.reference()


def test_a_refit_of_a_leader_family_moves_its_followers(monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/calibrate.py carries a refitted blackwell-ultra or cdna4 over to rubin and cdna5 (the figures both
    hold), keeping the followers' own compute units and per-step time."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import calibrate

    doc = yaml.safe_load(calibrate.EFFICIENCY_YAML.read_text(encoding="utf-8"))["efficiency"]
    moved = copy.deepcopy(doc)
    moved["cdna4"]["matmul"]["fp8"]["value"] = 0.123
    moved["cdna4"]["memory"]["value"] = 0.77
    moved["cdna4"]["step_overhead"]["value"] = 0.5
    calibrate.carry_to_followers(moved)
    assert moved["cdna5"]["matmul"]["fp8"]["value"] == 0.123 and moved["cdna5"]["memory"]["value"] == 0.77
    assert moved["cdna5"]["step_overhead"]["value"] == 0.0 and moved["cdna5"]["compute_units"]["value"] == 256
    assert moved["rubin"] == doc["rubin"]  # its leader did not move
    assert calibrate.FOLLOWERS == {"rubin": "blackwell-ultra", "cdna5": "cdna4"}


def test_a_training_ranking_marks_the_chips_that_run_a_predecessors_fit(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """plan train says which chips no training run of whose family is fitted (‡, and the family they borrow), as
    plan serve says it of engine figures; a fitted family says nothing."""
    report = plan_training(catalog, "llama-3.1-8b", 64, ["rubin", "mi455x", "gb300"], tokens=1e11)
    carried = {r["hardware"]: r.get("efficiency_carried_from") for r in report["results"]}
    assert carried == {"rubin": "blackwell-ultra", "mi455x": "cdna4", "gb300": None}
    print_ranking(report)
    out = capsys.readouterr().out
    assert "rubin ‡" in out and "gb300 ‡" not in out
    assert "rubin from blackwell-ultra" in out and "mi455x from cdna4" in out


def test_catalog_show_prints_the_values_it_keeps_beside_a_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A figure's alternatives (Rubin's sparse 50 PF FP4 beside the dense 35 PF) were in --json only: the table
    names them, and with --sources says whose they are."""
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["catalog", "show", "rubin"]) == 0
    out = capsys.readouterr().out
    assert "alternatives (--sources says whose): 50000 TFLOP/s; 25000 TFLOP/s" in out
    assert run(["catalog", "show", "rubin", "--sources"]) == 0
    assert "alternatives: 50000 TFLOP/s ('NVFP4 Inference' 50 PFLOPS" in capsys.readouterr().out
