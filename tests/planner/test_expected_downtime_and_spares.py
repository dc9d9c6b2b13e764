"""Expected downtime on Daly's model, and spares that chips paid for already cover.

Downtime had been failures x T_wall x R, capped at T_wall - T: at 1M trn3 that was 235,197 s uncapped, so the cap
booked all 176,513 s of overhead at idle power and no lost work. On Daly's model (the one goodput is) 938 failures
strike during computation (984 before Trn3's links doubled), each costing M(e^(R/M) - 1) = 171.8 s of
restarting: 161,097 s, plus 396 s of planned stops; the other 5,319 s are lost work, run at busy power. And the
1M-trn3 plan leaves 82,496 paid-for chips idle, which stand in for its 2% spares as billed extras do; 20,000 spares
had been paid on top ($516.8M, then $503.5M, $479.7M; now $727.8M, its software faults charged per rank)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.training import plan_training, predict_training
from chipwise.reliability import assess_run
from chipwise.reliability.goodput import reliability_inputs
from scenario_kinds import train_scenario


def test_downtime_by_hand(catalog: Catalog, hw: Hardware) -> None:
    """M = 1,000 s, tau = 100 s, delta = 10 s, R = 100 s, planned 1e-4/s at R_p = 10 s + 1,200 s (the checkpoint
    written before the stop and the 1,200 s restart, above the 14.3 s restore), T = 1,000 s:
    failures 10 (e^0.11 - 1) = 1.16278, each 1,000 (e^0.1 - 1) = 105.171 s: 122.291 s; goodput
    0.879 x 100 / (1,000 e^0.1 (e^0.11 - 1)) = 0.684009, T_wall 1,461.97 s, planned stops 1e-4 x 1,461.97 x 1,200 =
    175.436 s stopped (their writes run busy). The rest, 1,000 (e^0.11 - 1) - 1,000 + 1e-4 x 1,461.97 x 10 = 164.24
    s, is 100 + 1.46 s of writes and 62.78 s of lost work."""
    base = assess_run(reliability_inputs(catalog, hw.system("h100-sxm")), 64, 8e9, 2.0, "checkpoint")
    g = 0.879 * 100 / (1000 * math.exp(0.1) * math.expm1(0.11))
    restart = replace(base.inputs.restart_overhead, value=1200.0)
    run = replace(
        base,
        failures_per_s=1e-3,
        checkpoint_interval_s=100.0,
        checkpoint_write_s=10.0,
        downtime_per_failure_s=100.0,
        planned_per_s=1e-4,
        inputs=replace(base.inputs, restart_overhead=restart),
        goodput=g,
    )
    # a checkpointing run pays its write (delta) and, at each planned stop, a write and the restart from it (R_p:
    # it had been the restart overhead alone, 1,200 s)
    assert (run.recovery, run.checkpoint_cost_s, run.planned_restart_s) == ("checkpoint", 10.0, 1210.0)
    assert run.planned_stopped_s == 1200.0
    assert g == pytest.approx(0.684009, abs=1e-6)
    down = run.downtime_s(1000.0)
    assert down == pytest.approx(122.291 + 175.436, abs=1e-3)
    assert 1000.0 / g - 1000.0 - down == pytest.approx(164.24, abs=1e-2)  # writes 101.46 + lost work 62.78


@pytest.fixture(scope="module")
def million(catalog: Catalog) -> dict[str, Any]:
    """The plan of the fastest step on 1M trn3, given: plan train now runs the one that trains soonest, on 524,288
    chips (tests/planner/test_training_objective_plans.py), and this one keeps 82,496 paid-for chips idle."""
    sc = train_scenario(
        "{kind: train, model: llama-3.1-405b, hardware: trn3, chips: 1000000, tokens: 15e12, precision: bf16, "
        "plan: {tp: 16, pp: 7, dp: 4096, cp: 8, ep: 1, vpp: 1, microbatch: 1, zero: 1, recompute: none, sp: true, "
        "hsdp: false}}",
        catalog,
    )
    return predict_training(catalog, sc)


def test_the_million_chip_downtime_is_daly_s(million: dict[str, Any]) -> None:
    r = million
    rel = r["reliability"]
    t, wall, down = r["time_to_train_s"], r["expected_time_to_train_s"], r["expected_downtime_s"]
    m, tau, big_r = r["mtbf_s"], rel["checkpoint_interval_s"], rel["downtime_per_failure_s"]
    assert (rel["recovery"], big_r) == ("in-memory", 120.0) and m == pytest.approx(126.04, abs=0.01)
    # one step a snapshot: 13.125 s (12.998 before its data-parallel rings, 32,768 ranks over 912 UltraServers, paid
    # NCCL tuning.cc's 31,856 steps inside them, not one UltraServer's; 11.471 before its context-parallel rings,
    # blocks of 128 ranks in UltraServers of 576, were placed across two of them where 576 / 128 is 4.5; 13.734 before
    # a ring was charged only the share of its edges that leaves an oversubscribed block); the MTBF 126 s with
    # software faults per rank (176.6 per chip)
    assert tau == pytest.approx(13.125, abs=1e-3) and t == pytest.approx(183_359, abs=1)
    failures = t / tau * math.expm1(tau / m)
    assert failures == pytest.approx(1533.2, abs=0.1)
    restarts = failures * m * math.expm1(big_r / m)
    planned = 0.0363 / 3600 * wall * 120
    assert restarts == pytest.approx(307_464, abs=1) and planned == pytest.approx(607, abs=1)
    assert down == pytest.approx(restarts + planned, rel=1e-9)  # was 176,513: the whole overhead, capped
    lost = failures * m - t  # in memory: no checkpoint writes
    assert lost == pytest.approx(9_887, abs=1)
    assert down + lost == pytest.approx(wall - t, rel=1e-9)


def test_idle_chips_paid_for_stand_in_for_spares(million: dict[str, Any]) -> None:
    """max(1,000,000 paid, 917,504 x 1.02 = 935,854) = 1,000,000 chips over T_wall: 5.28 $/h x 1e6 x 139.25 h =
    $735.3M; and 82,496 idle chips over T_wall, no more, at idle power in the energy. By hand, at PUE 1.15: the 917,504
    used chips busy through T and the lost work at 0.76 x (1,000 W + 547 W host) + 50 W network = 1,225.72 W, idle
    through the downtime at 0.11 x 1,000 + 0.25 x 547 + 50 = 296.75 W, the 82,496 others idle through T_wall: 100.14
    GWh (the Trn3 UltraServer has no published power, so its host is its host_power_fraction, 0.547 of its TDP:
    Trainium2's 410 W a chip x 16 / 12 vCPU a chip; it had been the GB200 NVL72 rack's 0.389, 89.25 GWh).
    Re-pinned from 137.83 h, $727.8M and 88.34 GWh: the data-parallel rings' steps (NCCL's tuning.cc)."""
    r = million
    assert (r["chips_used"], r["billed_chips"]) == (917_504, 1_000_000)
    wall = r["expected_time_to_train_s"]
    assert wall / 3600 == pytest.approx(139.25, abs=0.01)
    assert r["expected_cost_usd"] == pytest.approx(5.28 * 1e6 * wall / 3600, rel=1e-12)
    assert r["expected_cost_usd"] == pytest.approx(735.3e6, rel=1e-3)
    t, down = r["time_to_train_s"], r["expected_downtime_s"]
    busy_s = wall - down  # T and the lost work
    joules = 1.15 * (1_225.72 * 917_504 * busy_s + 296.75 * (917_504 * down + 82_496 * wall))
    assert r["expected_energy_j"] == pytest.approx(joules, rel=1e-9)
    assert r["expected_energy_j"] / 3.6e12 == pytest.approx(100.14, abs=0.01)  # GWh
    assert busy_s - t == pytest.approx(9_887, abs=1)  # lost work, at busy power


def test_spares_past_the_chips_paid_for_are_still_paid(catalog: Catalog) -> None:
    """12 H100s in Capacity Blocks rent 16: max(16, 12 x 1.02) = 16, unchanged; 64 on demand, all used, pay
    64 x 1.02 = 65.28 chips over T_wall."""
    (twelve,) = plan_training(catalog, "llama-3.1-8b", 12, ["h100-sxm"], tokens=10e9, pricing="capacity-block")[
        "results"
    ]
    assert (twelve["chips_used"], twelve["billed_chips"]) == (12, 16.0)
    price, wall = twelve["price_usd_per_chip_hour"], twelve["expected_time_to_train_s"]
    assert twelve["expected_cost_usd"] == pytest.approx(price * 16 * wall / 3600, rel=1e-12)
    (full,) = plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], tokens=10e9)["results"]
    assert full["chips_used"] == 64
    price, wall = full["price_usd_per_chip_hour"], full["expected_time_to_train_s"]
    assert full["expected_cost_usd"] == pytest.approx(price * 64 * 1.02 * wall / 3600, rel=1e-12)


@pytest.mark.parametrize(
    ("chips", "pricing", "billed", "spares", "wanted"),
    [
        (8, "on-demand", 8, 0.16, 0.16),  # one p5: a share of the provider's pool, not a second p5
        (64, "on-demand", 64, 1.28, 1.28),
        (12, "capacity-block", 16, 0.0, 0.24),  # two whole p5: the 4 idle GPUs stand in for the 0.24 spares
    ],
)
def test_the_spares_paid_are_in_the_json(
    catalog: Catalog, chips: int, pricing: str, billed: float, spares: float, wanted: float
) -> None:
    """The expected figures pay for 2% spares of the chips used, pro rata (training._expected_fleet), past the chips
    billed; `spare_chips` says how many (8 chips had paid for 8.16 with no field to say so), and the expected cost
    is the price x (billed + spare_chips) x the expected time."""
    sc = train_scenario(
        f"{{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: {chips}, tokens: 1e9, pricing: {pricing}}}",
        catalog,
    )
    r = predict_training(catalog, sc)
    assert (r["billed_chips"], r["chips_used"]) == (billed, chips)
    assert r["spare_chips"] == pytest.approx(spares, abs=1e-12)
    assert r["spare_chips_wanted"] == pytest.approx(wanted, abs=1e-12)
    paid = r["price_usd_per_chip_hour"] * (billed + spares) * r["expected_time_to_train_s"] / 3600
    assert r["expected_cost_usd"] == pytest.approx(paid, rel=1e-12)


@pytest.mark.parametrize(("chips", "spares"), [(1024, 20.48), (64, 1.28), (8, 0.16)])
def test_the_spares_paid_carry_no_float_noise(catalog: Catalog, chips: int, spares: float) -> None:
    """`spare_chips` is the spares wanted less the whole chips that stand in for them, exact where no chip does: 1,024
    H100s had read 20.480000000000018 (the fleet of 1,044.48 less 1,024) beside spare_chips_wanted 20.48."""
    sc = train_scenario(
        f"{{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: {chips}, tokens: 1e9}}",
        catalog,
    )
    r = predict_training(catalog, sc)
    assert r["chips_used"] == chips
    assert r["spare_chips"] == r["spare_chips_wanted"] == spares
