"""`chipwise sensitivity`: each figure a prediction rests on moved -10% and +10%, the elasticities checked against
hand arithmetic on the prediction's own breakdown, the plan held, and the figures listing complete (a figure it
leaves out moves nothing): the rental price, the chip TDP and the system power listed and moved; a side a cap
absorbs, a change of pricing basis and a tile size not read as a figure's move."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import chipwise.api as cw
from chipwise.catalog.fields import figure_paths
from chipwise.catalog.loader import _builtin_raw, load_catalog
from chipwise.catalog.overrides import FOLLOWED
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.web.routes import _FIELD_FIX
from chipwise.planner.scenario import predict_scenario
from chipwise.planner.sensitivity import (
    MAX_STEP,
    MAX_WORKERS,
    METRICS,
    _capped,
    _elasticity,
    _fixed_plan,
    _rebase,
    _value,
    candidate_figures,
    check_metric,
    check_step,
    default_workers,
    sensitivity,
)
from chipwise.workload.scenario import load_scenario
from cli_run import run_error, run_json

TRAIN = {
    "kind": "train",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 64,
    "seq_len": 4096,
    "global_batch_tokens": 4194304,
    "tokens": 1e11,
    "plan": {"tp": 2, "pp": 1, "dp": 32, "microbatch": 2, "zero": 1, "recompute": "none"},
}
SERVE = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 2,
    "precision": "bf16",
    "input_tokens": 512,
    "output_tokens": 128,
    "arrival_rate": 4,
    "requests": 200,
    "plan": {"tp": 2, "max_batch": 32},
}


@pytest.fixture(scope="module")
def train() -> dict[str, Any]:
    return cw.sensitivity(TRAIN)


def _row(result: dict[str, Any], figure: str) -> dict[str, Any]:
    return next(r for r in result["figures"] if r["figure"] == figure)


def test_compute_elasticity_is_the_finite_difference_of_the_breakdown(train: dict[str, Any]) -> None:
    """Peak FLOP/s scales the matmul and attention time by 1/x and leaves the rest: by hand, the step at x is
    C/x + R, and the elasticity ln(step(1.1) / step(0.9)) / ln(1.1 / 0.9)."""
    held = {**TRAIN, "plan": train["plan"]}
    base = cw.predict(held)
    b = base["breakdown"]
    c = b["compute"] + b["attention"]
    r = base["step_time_s"] - c
    by_hand = math.log((c / 1.1 + r) / (c / 0.9 + r)) / math.log(1.1 / 0.9)
    row = _row(train, "h100-sxm.flops.bf16")
    # each kernel's fixed launch and tail time does not scale with the peak: a little under the pure 1/x figure
    assert by_hand - 1e-9 < row["elasticity"]["step_time"] < by_hand + 0.02
    assert -1.0 < row["elasticity"]["step_time"] < -0.5  # compute-bound, not wholly
    # and exactly the central difference of two predictions with the peak set 10% down and up
    lo, hi = (cw.predict(held, sets=[f"h100-sxm.flops.bf16={x * 989.4}TFLOP/s"])["step_time_s"] for x in (0.9, 1.1))
    assert row["elasticity"]["step_time"] == pytest.approx(math.log(hi / lo) / math.log(1.1 / 0.9), rel=1e-6)
    assert row["change"]["plus"]["step_time"] == pytest.approx(hi / base["step_time_s"] - 1.0, rel=1e-6)
    # the GEMM fraction multiplies the same peak: the same moves (the LM head's bf16 GEMMs included)
    eff = _row(train, "efficiency.hopper.matmul.bf16")
    assert eff["change"]["plus"]["step_time"] == pytest.approx(row["change"]["plus"]["step_time"], rel=0.05)
    # ranked by |elasticity| of the step time: the peak (or its GEMM fraction) first
    assert train["figures"][0]["figure"] in ("h100-sxm.flops.bf16", "efficiency.hopper.matmul.bf16")
    assert train["metric"] == "step_time" and train["plan_held"] and train["step"] == 0.1


def test_energy_and_carbon_move_one_for_one_with_pue_and_grid(train: dict[str, Any]) -> None:
    """energy = IT power x time x PUE, CO2e = energy x grid intensity: elasticities exactly 1, and neither moves
    the step."""
    pue = next(r for r in train["figures"] if r["figure"].startswith("datacenter.pue."))
    assert pue["elasticity"]["energy"] == pytest.approx(1.0, abs=1e-9)
    assert pue["elasticity"]["co2e"] == pytest.approx(1.0, abs=1e-9)
    assert pue["elasticity"]["step_time"] == pytest.approx(0.0, abs=1e-12)
    grid = next(r for r in train["figures"] if r["figure"].startswith("datacenter.grid_intensity."))
    assert grid["elasticity"]["co2e"] == pytest.approx(1.0, abs=1e-9)
    assert grid["elasticity"]["energy"] == pytest.approx(0.0, abs=1e-12)


def test_plan_held_and_a_side_that_cannot_be_priced(train: dict[str, Any]) -> None:
    """The plan each move prices is the one the prediction chose; 10% less HBM capacity on a plan that fills it
    cannot be priced (one line says why), and the elasticity then stands on the other side."""
    assert train["plan"]["tp"] == 2 and train["plan"]["dp"] == 32
    tight = {**TRAIN, "model": "llama-3.1-70b", "chips": 16, "plan": {"tp": 8, "pp": 2, "dp": 1, "zero": 1}}
    result = cw.sensitivity(tight, metric="step_time", only=["hbm_capacity"])
    assert [r["figure"] for r in result["figures"]] == ["h100-sxm.hbm_capacity"]
    capacity = next(r for r in result["figures"] + result["not_priced"] if r["figure"].endswith("hbm_capacity"))
    assert "does not fit" in capacity["minus"]["error"]
    assert capacity["plus"]["step_time"] == pytest.approx(result["baseline"]["step_time"])
    assert capacity["elasticity"]["step_time"] == pytest.approx(0.0, abs=1e-12)


def test_zero_and_derived_figures_are_named_not_priced(train: dict[str, Any]) -> None:
    reasons = {r["figure"]: r["reason"] for r in train["not_priced"]}
    zeros = [r["figure"] for r in train["not_priced"] if r["value"] == 0]
    assert "reliability.checkpoint.detection_time_s" in zeros  # 0 s: a move by a share leaves it 0
    assert all(r["kind"] == "zero" for r in train["not_priced"] if r["figure"] in zeros)
    assert any(name.endswith("host_power_per_chip") for name in reasons)  # derived from system power and TDP
    tiles = [r for r in train["not_priced"] if r["kind"] == "discrete"]  # a tile size is listed, not moved
    assert tiles and all(r["figure"].endswith(("tile_m", "tile_n", "compute_units", ".chips")) for r in tiles)
    # a fabric tier's reach is a count as well: listed, not moved
    assert any(".tiers." in r["figure"] and "chips under a tier" in r["reason"] for r in tiles)
    # an SM count is listed, not moved: 118.8 and 145.2 SMs had slowed a step both ways
    assert any(r["figure"].endswith("compute_units") for r in tiles)
    # a derived figure was tried, both ways, and refused as its catalog loaded: no prediction of it is counted
    sides = [r[side] for r in train["figures"] for side in ("minus", "plus")]
    assert train["predictions"] == 1 + sum("error" not in side for side in sides)


def test_the_training_figures_listing_is_complete() -> None:
    """Every numeric figure of the chip, its system, its two fabrics and its efficiency family that the listing
    (`figures`) leaves out moves no metric when scaled by 1.1 (a chip figure a system figure follows is the
    system's, listed under the system's name)."""
    cat = load_catalog()
    sc = load_scenario(json.dumps(TRAIN), cat)
    base = predict_scenario(cat, sc)
    fixed = _fixed_plan(sc, base["plan"])
    listed = set(candidate_figures(base))  # the tile sizes too: listed, though not moved
    system = hardware(cat).system(base["system"])
    raw = _builtin_raw()
    entries = [
        ("chips", system.chip.id),
        ("systems", system.id),
        ("fabrics", system.scaleup.fabric.id),
        ("fabrics", system.scaleout_fabric.id),
        ("efficiency", system.chip.family),
    ]
    moved, tried = [], 0
    for section, key in entries:
        for path in figure_paths(raw[section][key]):
            name = f"{section}.{key}.{path}"
            if name in listed or f"{key}.{path}" in listed or (section == "chips" and path in FOLLOWED):
                continue
            try:
                priced = predict_scenario(load_catalog((), [f"{name}=x1.1"]), fixed)
            except ChipwiseError:
                continue  # a text figure, one only shown, or one out of range at x1.1
            tried += 1
            for metric in METRICS["train"].values():
                before, after = _value(metric, base), _value(metric, priced)
                if before and after and abs(after / before - 1.0) > 1e-9:
                    moved.append(name)
    assert tried > 0 and moved == []  # some figures were priced moved, and none of them moved the step


def test_serving_sensitivity_and_its_listing() -> None:
    """A serving run's moves are simulated with its own seed: HBM bandwidth shortens the decode step (TPOT), the
    PUE moves energy one for one; the engine's and the fabric's figures (tp 2 talks over NVLink) are listed."""
    result = cw.sensitivity(SERVE, metric="tpot_p50", workers=1, only=["hbm_bandwidth", "datacenter.pue"])
    assert result["metric"] == "tpot_p50" and result["only"] == ["hbm_bandwidth", "datacenter.pue"]
    hbm = _row(result, "h100-sxm.hbm_bandwidth")
    assert -1.0 < hbm["elasticity"]["tpot_p50"] < -0.1
    pue = next(r for r in result["figures"] if r["figure"].startswith("datacenter.pue."))
    assert pue["elasticity"]["energy"] == pytest.approx(1.0, abs=1e-6)
    assert result["predictions"] == 5
    names = set(cw.predict(SERVE)["figures"])
    assert {"h100-sxm.scaleup_bandwidth", "nvlink4.bus_efficiency", "engines.trtllm.layer_overhead"} <= names
    with pytest.raises(ChipwiseError, match="no figure of this prediction's names 'hbm_bandwith'"):
        cw.sensitivity(SERVE, only=["hbm_bandwith"])


def test_bad_options_are_one_line() -> None:
    with pytest.raises(ChipwiseError, match="unknown train scenario's metric 'speed'"):
        cw.sensitivity(TRAIN, metric="speed")
    with pytest.raises(ChipwiseError, match=r"step 0.7 is not a fraction in \(0, 0.5\)"):
        cw.sensitivity(TRAIN, step=0.7)
    with pytest.raises(ChipwiseError, match="workers 0"):
        cw.sensitivity(TRAIN, workers=0)
    no_tokens = {k: v for k, v in TRAIN.items() if k != "tokens"}
    with pytest.raises(ChipwiseError, match=r"has no time to train \(give the scenario tokens: to train on\)"):
        sensitivity(load_scenario(json.dumps(no_tokens)), metric="time_to_train")


def test_cli_table_json_and_errors(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "train.yaml"
    scenario.write_text(json.dumps(TRAIN))
    assert run(["sensitivity", str(scenario), "--top", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Sensitivity of llama-3.1-8b training on 64 x h100-sxm (the plan held: TP2 DP32" in out
    assert "more figures move it less (--top" in out
    assert "Figures that move other metrics, not step time" in out
    plot = tmp_path / "sens.png"
    argv = ["sensitivity", str(scenario), "--json", "--metric", "energy", "--plot", str(plot)]
    argv += ["--figures", "pue,h100-sxm.tdp"]
    data = run_json(capsys, argv)
    assert {r["figure"] for r in data["figures"]} == {"datacenter.pue.aws", "h100-sxm.tdp"}
    assert data["kind"] == "sensitivity" and data["metric"] == "energy"
    first, last = (abs(data["figures"][i]["elasticity"]["energy"] or 0.0) for i in (0, -1))
    assert first >= last
    assert plot.stat().st_size > 10_000
    assert "metric 'speed'" in run_error(capsys, ["sensitivity", str(scenario), "--metric", "speed"])


def test_a_figure_the_user_set_is_moved_from_the_value_set() -> None:
    """--set h100-sxm.flops.bf16=900TFLOP/s then a move x1.1 had been refused as giving the figure twice (the
    figure fell out of the result): the move replaces the user's --set, 900 -> 990 TFLOP/s."""
    result = cw.sensitivity(TRAIN, only=["h100-sxm.flops.bf16"], sets=["h100-sxm.flops.bf16=900TFLOP/s"])
    row = _row(result, "h100-sxm.flops.bf16")
    assert row["value"] == 900.0 and result["not_priced"] == []
    held = {**TRAIN, "plan": result["plan"]}
    at = {x: cw.predict(held, sets=[f"h100-sxm.flops.bf16={x}TFLOP/s"])["step_time_s"] for x in (810, 900, 990)}
    assert result["baseline"]["step_time"] == pytest.approx(at[900], rel=1e-12)
    assert row["change"]["plus"]["step_time"] == pytest.approx(at[990] / at[900] - 1.0, rel=1e-9)
    assert row["change"]["minus"]["step_time"] == pytest.approx(at[810] / at[900] - 1.0, rel=1e-9)


def test_a_tdp_the_user_set_is_moved_from_the_value_set() -> None:
    """The chip TDP, which sensitivity moves beside the prediction's listing, carries its derivation too: a --set of
    it is replaced by the move (it had been refused as giving the TDP twice, and the TDP fell out unpriced)."""
    result = cw.sensitivity(TRAIN, metric="energy", only=["h100-sxm.tdp"], sets=["h100-sxm.tdp=800W"])
    row = _row(result, "h100-sxm.tdp")
    assert row["value"] == 800.0 and result["not_priced"] == []
    assert row["elasticity"]["energy"] > 0.1


def test_the_step_bound_is_one_figure() -> None:
    """The sensitivity step's bound is one figure: the check and the web page's field fix each wrote 0.5; both read
    MAX_STEP."""
    assert MAX_STEP == 0.5 and check_step(0.49) == 0.49
    with pytest.raises(ChipwiseError, match=r"step 0.5 is not a fraction in \(0, 0.5\)"):
        check_step(MAX_STEP)
    assert _FIELD_FIX["step"] == "give a fraction in (0, 0.5), e.g. 0.1"


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return cw.predict(TRAIN)


@pytest.fixture(scope="module")
def moved() -> dict[str, Any]:
    return cw.sensitivity(TRAIN, metric="cost", only=["price", ".tdp", ".power", "tile_m"])


def test_the_price_tdp_and_system_power_are_listed_with_their_sources(base: dict[str, Any]) -> None:
    """The $/chip-hour, the TDP and the system power the cost and energy rest on had no row in --sources."""
    figures = base["economics_figures"]
    price = next(f for k, f in figures.items() if ".price." in k)
    system = base["system"]
    assert f"{system}.price.on-demand" in figures  # a system's own price: per system-hour, as --set takes it
    chips = 8  # an H100 system
    assert price["value"] == pytest.approx(base["price_usd_per_chip_hour"] * chips, rel=1e-9)
    assert price["unit"] == "USD/h" and price["status"] and price["source"]
    tdp, power = figures["h100-sxm.tdp"], figures[f"{system}.power"]
    assert tdp["value"] == 700 and tdp["unit"] == "W" and tdp["source"]
    assert power["si"] > 8 * 700 and power["source"]


def test_the_rental_price_moves_cost_one_for_one(moved: dict[str, Any]) -> None:
    """No move of the price had been made, though cost is the chip-hours x the price: -10% and +10% exactly,
    elasticity ln(1.1/0.9)/ln(1.1/0.9) = +1, ranked first for cost; it moves no step or energy."""
    row = moved["figures"][0]
    assert ".price.on-demand" in row["figure"]
    assert row["change"]["minus"]["cost"] == pytest.approx(-0.10, abs=1e-9)
    assert row["change"]["plus"]["cost"] == pytest.approx(0.10, abs=1e-9)
    assert row["elasticity"]["cost"] == pytest.approx(1.0, abs=1e-9)
    assert row["elasticity"]["step_time"] == pytest.approx(0.0, abs=1e-12)
    assert {r["figure"] for r in moved["figures"]} >= {"h100-sxm.tdp", f"{moved['system']}.power"}


def test_a_tile_size_is_listed_not_moved(moved: dict[str, Any]) -> None:
    """x0.9 of a 128-row tile (115.2) is no tile; it had been ranked as if it mattered."""
    tiles = [r for r in moved["not_priced"] if r["figure"].endswith("tile_m")]
    assert tiles and all(r["kind"] == "discrete" for r in tiles)
    assert not any(r["figure"].endswith("tile_m") for r in moved["figures"])


def test_a_side_a_cap_absorbs_is_named_and_the_other_side_stands() -> None:
    """The engine's HBM fraction 0.87 x 1.1323 is past its 0.95 cap: +10% moves nothing, -10% gives +4.53% TPOT.
    The central difference had read -0.22; the moving side's slope is ln(1.0453)/ln(0.9) = -0.42."""
    change = {"minus": {"tpot_p50": 0.0453, "cost": 0.0}, "plus": {"tpot_p50": 0.0, "cost": 0.0}}
    assert _capped(change, {}) == {"tpot_p50": "plus"}  # cost moves on neither side: no cap
    assert _capped({"minus": {"a": -0.01}, "plus": {"a": 0.01}}, {}) == {}
    assert _capped(change, {"tpot_p50": 0.05}) == {}  # under the run's resolution: noise, not a cap
    # per metric: a TDP past the reference power leaves the step still at +10% and moves energy both ways
    tdp = {"minus": {"step_time": 0.05, "energy": -0.04}, "plus": {"step_time": 0.0, "energy": 0.05}}
    assert _capped(tdp, {}) == {"step_time": "plus"}
    minus = {"tpot_p50": 1.0453}
    assert _elasticity(1.0, minus, {}, "tpot_p50", 0.1) == pytest.approx(math.log(1.0453) / math.log(0.9))
    assert _elasticity(1.0, minus, {}, "tpot_p50", 0.1) == pytest.approx(-0.421, abs=1e-3)


def test_a_serving_move_is_priced_on_the_baselines_basis() -> None:
    """The baseline kept up, priced at the offered 20,480 tok/s while it delivered 19,031; 10% less FLOP/s
    fell behind, priced at the 16,719 it delivered: +22.5% cost where the delivered tokens moved 19,031 / 16,719 =
    +13.8%. On the baseline's basis the move is the throughput's."""
    basis = 20480 / 19031
    side = {"cost": 1e6 / 16719, "energy": 2e6 / 16719, "throughput": 16719.0, "basis": 1.0}
    rebased = _rebase(side, basis)
    base_cost = 1e6 / 20480  # the side read on its own basis had been +22.5%
    assert rebased["cost"] / base_cost - 1 == pytest.approx(19031 / 16719 - 1, rel=1e-9)  # +13.8%
    assert rebased["throughput"] == 16719.0  # not a per-token figure
    assert _rebase(side, None) is side  # a training run: no basis


def test_metric_names_a_near_match_and_workers_cap_is_named() -> None:
    """A mistyped metric is told its near match; the default workers are 1 for a training run and at most
    MAX_WORKERS for a serving one."""
    with pytest.raises(ChipwiseError, match="Did you mean 'cost'"):
        check_metric("train", "costs", None)
    assert default_workers("train") == 1 and 1 <= default_workers("serve") <= MAX_WORKERS


def test_an_owned_fleets_utilisation_is_moved_in_the_scenario() -> None:
    """Utilisation is a figure an owned fleet's cost rests on that the scenario gives, not the catalog: it had been
    listed as 'cannot be moved: unknown catalog id 'utilisation'. Did you mean 'nvlink-fusion'?'. At 0.6 its cost
    moves about inversely (the capex and fixed operations spread over the hours used); at 1 it cannot rise."""
    owned = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 64, "tokens": "100B",
             "pricing": "owned"}  # fmt: skip
    r = cw.sensitivity({**owned, "utilisation": 0.6}, metric="cost", only=["utilisation"])
    (row,) = [f for f in r["figures"] if f["figure"] == "utilisation"]
    assert -1.0 < row["elasticity"]["cost"] < -0.9
    assert row["elasticity"]["time_to_train"] == 0.0
    assert not [n for n in r["not_priced"] if n["figure"] == "utilisation"]
    (full,) = [
        f for f in cw.sensitivity(owned, metric="cost", only=["utilisation"])["figures"] if f["figure"] == "utilisation"
    ]
    assert "outside 0.01 to 1" in full["plus"]["error"] and full["elasticity"]["cost"] < -0.9
