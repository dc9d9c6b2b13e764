"""`chipwise claims`: a verdict is decided only on given figures (every estimated figure it turns on named until then),
one rounding rule for a claimed figure, printed thresholds that, set, do what they say, claim 1 at one batch that
fills both servers, a tie on cost that is no lag, and every figure labelled where it came from."""

from __future__ import annotations

import math
from typing import Any

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.planner.claim_costs import HALF, _firm
from chipwise.planner.claim_runs import ClaimRuns, filling_batch
from chipwise.planner.claim_wording import at_most, estimates_text, holds_from_ratio, holds_from_share
from chipwise.planner.claims import check_claims, chosen_claims


def _checks(sets: list[str], only: str) -> dict[str, dict[str, Any]]:
    """The checks of the claims `only` names (as --claim reads it) under the what-ifs `sets`."""
    report = check_claims(load_catalog(sets=sets), only=chosen_claims(only))
    return {k["id"]: k for c in report["claims"] for k in c["checks"]}


@pytest.fixture(scope="module")
def base(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return {k["id"]: k for c in check_claims(catalog, only=(3, 5))["claims"] for k in c["checks"]}


# ------------------------------------------------------------------------------------ firm only on given figures
def test_a_saving_is_firm_only_on_given_figures() -> None:
    """Holding against one rival with both sides' figures given decides; failing needs every figure given; anything
    else rests on estimates, naming our side's and, where it holds, the rivals it holds against (else all of them)."""
    est = {"Trn3": ["TDP"], "h200": ["unit price"], "b200": []}
    assert _firm({"h200": True, "b200": False}, est, "Trn3") == (None, {"Trn3": ["TDP"], "h200": ["unit price"]})
    assert _firm({"h200": False, "b200": False}, est, "Trn3") == (None, est)
    given = {"Trn3": [], "h200": ["unit price"], "b200": []}
    assert _firm({"h200": True, "b200": True}, given, "Trn3") == (True, {})  # b200's figures are all given
    assert _firm({"h200": False, "b200": False}, {k: [] for k in given}, "Trn3") == (False, {})
    assert estimates_text({"Trn3": ["TDP", "host share"], "h200": ["unit price"], "b200": []}) == (
        "Trn3's TDP and host share; h200's unit price"
    )


def test_claim3b_set_unit_price_still_rests_on_the_gpus_and_trn3s_power() -> None:
    """`--set trn3.unit_price=11500` read 'holds' at a 49.5% saving against the H200, whose $35,000 is an estimate, on
    Trn3's estimated TDP and host share; with 6a's Trainium unit prices set, 6a held on the H100's estimated
    $27,500. Each rests on estimates now and names them."""
    checks = _checks(["trn3.unit_price=11500", "trn2.unit_price=5000"], "3,6")
    b, a6 = checks["3b"], checks["6a"]
    assert b["verdict"] == "rests on estimates" and b["why"].startswith("on chipwise's estimates it would")
    assert "it rests on chipwise's estimates of Trn3's TDP and host share; " in b["why"]
    assert "unit price ($11,500) is the one set on the command line" in b["why"]
    assert a6["verdict"] == "rests on estimates"
    assert (
        "it rests on chipwise's estimates of h100-sxm (dgx-h100)'s unit price; trn2's TDP and host share" in (a6["why"])
    )
    assert "Trainium is not sold" not in a6["why"]


def test_claim3b_decides_once_both_sides_figures_are_given() -> None:
    """Trn3's unit price, TDP and host share and the H200's unit price and its instance's power given: a saving of
    49.5% or more against the H200 holds on them alone, with nothing left to name; a Trn3 at 1,300 W that falls short
    of 49.5% against the H200 still rests on the other GPUs' estimates (it could hold against one of them)."""
    given = [
        # 11,500 held before the placement of groups across UltraServers, 10,500 before FSDP paid a latency a layer,
        # 9,500 before the gathers' rings stepped through every member (NCCL's tuning.cc: Trn3's own plan for
        # Llama-3.1-405B on 16,384 chips went from 2.62 s to 3.07 s a step, its saving against the H200 at 9,500 from
        # 49.5% to 41.0%)
        "trn3.unit_price=2500",
        "trn3-ultraserver.host_power_fraction=0.389",
        "h200.unit_price=35000",
        "p5en.48xlarge.power=10.2kW",
    ]
    held = _checks([*given, "trn3.tdp=1000W"], "3")["3b"]
    saving = held["numbers"]["saving_vs"]["h200"]
    assert saving >= HALF and held["verdict"] == "holds"
    assert "estimate" not in held["why"]
    short = _checks([*given, "trn3.tdp=1300W"], "3")["3b"]
    assert max(short["numbers"]["saving_vs"].values()) < HALF
    assert short["verdict"] == "rests on estimates" and "h100-sxm's unit price" in short["why"]
    assert "Trn3's" not in short["why"].split("it rests on")[1]  # Trn3's figures are all given


# ------------------------------------------------------------------------- printed thresholds, set, do what they say
def test_a_needed_figure_is_cut_down_to_the_digits_shown() -> None:
    """3a's $5.5958 had printed '<= $5.60' (set, 49.46%) and 1d's 629.88 W '<= 630 W' (set, 1.3997x)."""
    assert at_most(5.5958, 2) == 5.59 and at_most(629.88, 0) == 629.0 and at_most(11_511.4, 0) == 11_511.0
    assert at_most(5.59, 2) == 5.59  # a figure already at the digits stays


def _needed(why: str, head: str, tail: str) -> float:
    return float(why.split(head)[1].split(tail, maxsplit=1)[0].replace(",", ""))


def test_claim3a_and_3b_printed_prices_set_give_half(base: dict[str, dict[str, Any]]) -> None:
    """The Trn3 price 3a prints for 50% against its best GPU, and the unit price 3b prints, each set on the command
    line, give a 49.5% saving or more against that GPU."""
    gpu_a = max(base["3a"]["numbers"]["saving_vs"], key=lambda g: base["3a"]["numbers"]["saving_vs"][g])
    head_a = f"against {gpu_a} needs Trn3 at <= $"
    price = _needed(base["3a"]["why"], head_a, " a chip-hour")
    gpu_b = max(base["3b"]["numbers"]["saving_vs"], key=lambda g: base["3b"]["numbers"]["saving_vs"][g])
    unit = _needed(base["3b"]["why"], f"against {gpu_b} needs Trn3 at <= $", " a chip")
    assert price == math.floor(price * 100) / 100 and unit == math.floor(unit)
    checks = _checks([f"trn3.price={price}", f"trn3.unit_price={unit:.0f}"], "3")
    assert checks["3a"]["numbers"]["saving_vs"][gpu_a] >= HALF
    assert checks["3b"]["numbers"]["saving_vs"][gpu_b] >= HALF
    # 3a's rivals' prices are published: Trn3's set price decides it
    assert checks["3a"]["verdict"] == "holds" and "estimate" not in checks["3a"]["why"]


# ------------------------------------------------------------------------------------------ one rounding rule
def test_one_rounding_rule_for_a_claimed_figure() -> None:
    """A claimed 'Nx' is read at one decimal, a 'P%' at whole percents: 4.4x from 4.35, 4x from 3.95 (1c had held from
    3.9, 1e from 4.0), 3x from 2.95; 50% from 49.5%, 40% from 39.5%."""
    assert (holds_from_ratio(4.4), holds_from_ratio(4.0), holds_from_ratio(3.0)) == (4.35, 3.95, 2.95)
    assert (holds_from_share(0.50), holds_from_share(0.40)) == (0.495, 0.395)


def test_claim1a_and_1c_read_on_their_side_of_the_rule() -> None:
    """Trn3 at 2,511.16 TFLOP/s: 144 x 2,511.16 / (64 x 1,299) = 4.34958x, printed '4.35x ... short of the 4.4x
    claimed'; it reads 4.3496x now. Trn3's HBM x1.17: 144 x 168.48 / (64 x 96) = 3.94875x, which had held '4x the
    memory' (from 3.9); short of 3.95 it does not, and reads 3.949x."""
    checks = _checks(["trn3.flops.fp8=2.51116e15", "trn3.hbm_capacity=x1.17"], "1")
    a, c = checks["1a"], checks["1c"]
    assert a["numbers"]["peak_fp8_ratio"] == pytest.approx(144 * 2511.16 / (64 * 1299))
    assert (
        "the FP8 peak ratio is 4.3496x (2,511 vs 1,299 TFLOP/s dense per chip, 144 vs 64 chips), short of" in (a["why"])
    )
    assert c["numbers"]["capacity_ratio"] == pytest.approx(3.94875)
    assert c["verdict"] == "does not hold"
    assert c["why"].startswith("capacity is 3.949x (set on the command line vs spec)")


# ------------------------------------------------------------------------------------ claim 1 at one full batch
def test_claim1_runs_one_batch_that_fills_both_servers(catalog: Catalog) -> None:
    """The planner's 512 sequences left 16 of the Trn3 UltraServer's 144 chips idle (DP128 x CP4); 576 = lcm(144, 64)
    is the least multiple of both at or above 512, and keeps every chip of both busy."""
    runs = ClaimRuns(catalog)
    assert filling_batch(runs, "llama-3.1-70b", (144, 64)) == 576 == math.lcm(144, 64)
    assert filling_batch(runs, "llama-3.1-70b", (64,)) == 512  # 512 already fills 64 chips
    for system, chips in (("trn3-ultraserver", 144), ("trn2-ultraserver", 64)):
        run = runs.train("llama-3.1-70b", system, chips, "fp8", global_batch=576)
        assert isinstance(run, dict) and run["chips_used"] == chips and run["global_batch"] == 576


# --------------------------------------------------------------------------------------------------- claim 7
def test_claim7_a_tie_on_cost_is_no_lag() -> None:
    """Both Trainiums 5% cheaper per Mtok than the H100 (a tie, the why says): 7a had held 'lagged in
    cost-effectiveness'. Its capacity-block rate set on the command line read 'its published $1.500'."""
    tie = _checks(["trn2.price=1.395", "trn1.price=0.7347"], "7")["7a"]
    n = tie["numbers"]
    for chip in ("trn2", "trn1"):
        assert n[chip]["usd_per_mtok"] / n["h100-sxm"]["usd_per_mtok"] == pytest.approx(0.95, abs=0.01)
    assert tie["verdict"] == "does not hold on this workload" and "a tie on cost-effectiveness" in tie["why"]
    cb = _checks(["trn2.price.capacity-block=1.5"], "7")["7a"]
    assert "(its $1.500 a chip-hour set on the command line, the H100's $5.191)" in cb["why"]
    assert "published $1.500" not in cb["why"]


# --------------------------------------------------------------------------------- figures labelled and given
def test_claim4a_and_2b_label_a_set_figure_and_let_it_decide() -> None:
    """`--set trn4.flops.fp8=x0.5` read 'catalog trn4 / trn3 ... FP8 1.50x' beside 'chipwise's trn4 figures are these
    ratios ... 3x FP8', cannot be checked; `--set trn3.hbm_capacity=x1.16` read 'catalog: 167 GiB' beside 'the Neuron
    docs give 144 GiB'. 7,551 x 0.5 / 2,517 = 1.50x FP8, short of 3x (from 2.95x): the given figure decides."""
    checks = _checks(["trn4.flops.fp8=x0.5", "trn3.hbm_capacity=x1.16"], "2,4")
    a4, b2 = checks["4a"], checks["2b"]
    assert a4["numbers"]["fp8_ratio"] == pytest.approx(7551 * 0.5 / 2517)
    assert "FP8 1.50x [set on the command line]" in a4["computed"] and "catalog" not in a4["computed"]
    assert a4["verdict"] == "does not hold"
    assert "chipwise's trn4 figures (FP4 6.00x, HBM bandwidth 4.00x) are the announcement applied" in a4["why"]
    assert "FP8 1.50x [set on the command line]: short of the 3x claimed" in a4["why"] and "3.00x" not in a4["why"]
    assert b2["computed"].startswith("167 GiB = 179.4 GB [set on the command line]")  # 144 x 1.16 = 167.04 GiB
    assert b2["why"] == "167 GiB [set on the command line] is 179.4 GB, 144 GB or more"


def test_claim4a_holds_on_given_figures_that_meet_it() -> None:
    """All three Trn4 figures given, each at its claim: 15,102 = 6 x 2,517 TFLOP/s FP4, 7,551 FP8, 19.6 TB/s."""
    sets = ["trn4.flops.fp4=15102TFLOP/s", "trn4.flops.fp8=7551TFLOP/s", "trn4.hbm_bandwidth=19.6TB/s"]
    a4 = _checks(sets, "4")["4a"]
    assert a4["verdict"] == "holds" and "announced, not shipping" not in a4["why"]


def test_claim5b_on_a_catalog_estimate_leans(base: dict[str, dict[str, Any]]) -> None:
    """5b held on the catalog's $27,500 [estimate]; it leans now, and a price set on the command line decides."""
    assert base["5b"]["verdict"] == "rests on estimates"
    assert base["5b"]["why"].startswith("on chipwise's estimates it would hold: no list price exists")
    assert _checks(["h100-sxm.unit_price=30000"], "5")["5b"]["verdict"] == "holds"
