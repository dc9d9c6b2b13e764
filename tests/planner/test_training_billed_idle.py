"""The chips a training fleet is billed for: a system rented in slices bills each scale-up domain as one rented unit
(6 TPU v6e are a v6e-8: 8 x $2.70 = $21.60 an hour, not three slices of 4 + 1 + 1, $16.20); chips billed but unused
draw idle power, as chips a plan leaves out do; an owned fleet of one system pays no scale-out network and is charged
its own energy figure's electricity."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.training import plan_training, system_economics
from scenario_kinds import train_scenario

IDLE_W, BUSY_W = 320.75, 1069.0  # an H100 of a fleet past one p5: 700 x 0.11 + 575 x 0.25 + 100; 0.76 x 1,275 + 100


def test_billed_chips_past_the_job_draw_idle_power(catalog: Catalog) -> None:
    """12 H100s in Capacity Blocks rent two p5, 16 GPUs: the energy had counted the 12 busy and 0.24 spares (2% of
    12) idle, 185 MJ under the 4 billed GPUs idle through the run. Now ideal = (1,069 x 12 + 320.75 x 4) W x T x PUE
    1.15, and expected = 1.15 x [12 x (1,069 (T_wall - D) + 320.75 D) + max(16, 12.24) - 12 = 4 idle x 320.75 x
    T_wall]."""
    r = plan_training(catalog, "llama-3.1-8b", 12, ["h100-sxm"], tokens=10e9, pricing="capacity-block")["results"][0]
    assert (r["chips_used"], r["billed_chips"]) == (12, 16.0)
    t, wall, down = r["time_to_train_s"], r["expected_time_to_train_s"], r["expected_downtime_s"]
    assert r["energy_j"] == pytest.approx((BUSY_W * 12 + IDLE_W * 4) * t * 1.15, rel=1e-9)
    expected = 1.15 * (12 * (BUSY_W * (wall - down) + IDLE_W * down) + 4 * IDLE_W * wall)
    assert r["expected_energy_j"] == pytest.approx(expected, rel=1e-9)
    # 4 x 320.75 W x 1.15 x ~125,000 s ~ 185 MJ more than the 12 busy chips alone (1.93 GJ)
    assert r["energy_j"] - BUSY_W * 12 * t * 1.15 == pytest.approx(4 * IDLE_W * 1.15 * t, rel=1e-9)
    assert r["energy_j"] - BUSY_W * 12 * t * 1.15 > 180e6
    # the cost is unchanged: 16 billed x the Capacity Block rate
    assert r["cost_usd"] == pytest.approx(16 * r["price_usd_per_chip_hour"] * t / 3600)


def test_an_owned_fleet_of_one_system_pays_no_scale_out_network(catalog: Catalog) -> None:
    """8 H100s on one p5 owned had been priced at the TCO of a fleet of many, 8 x $1.68957 a chip-hour ($6,600 a
    chip of 400G fabric, its colocation, and 1,120 W busy all hour where the run's figure was 1,020 W). They pay the
    fixed terms without the fabric, 8 x (0.85444 + 0.17089 + 0.32125) = $10.7726/h, and the run's own electricity,
    8 x 969 W (0.76 x 1,275) x 1.42 x $0.0862/kWh = $0.9489/h. Sixteen span two p5 and pay the fabric: 16 x
    $1.68332/h."""

    def owned(chips: int) -> dict[str, Any]:
        report = plan_training(catalog, "llama-3.1-8b", chips, ["h100-sxm"], tokens=1e10, pricing="owned")
        row: dict[str, Any] = report["results"][0]
        return row

    one, two = owned(8), owned(16)
    hours = one["time_to_train_s"] / 3600
    assert one["price_source"]["tco"]["capex_usd_per_chip_by_part"]["scaleout_network"] == 0.0
    assert one["energy_j"] / one["time_to_train_s"] == pytest.approx(8 * 969 * 1.42)
    electricity = one["energy_j"] / 3.6e6 * 0.0862
    assert electricity / hours == pytest.approx(0.9489, abs=1e-4)
    assert one["cost_usd"] == pytest.approx(8 * (0.85444 + 0.17089 + 0.32125) * hours + electricity, rel=1e-4)
    assert one["cost_usd"] / hours == pytest.approx(11.7215, abs=1e-3)
    assert one["price_usd_per_chip_hour"] == pytest.approx(one["cost_usd"] / (8 * hours))
    assert two["price_source"]["tco"]["capex_usd_per_chip_by_part"]["scaleout_network"] == pytest.approx(6600)
    assert two["cost_usd"] == pytest.approx(16 * 1.68332 * two["time_to_train_s"] / 3600, rel=1e-4)


def test_a_utilisation_with_a_reservation_says_it_is_paid_every_hour() -> None:
    """--utilisation with --pricing reserved-1y had said 'rented chips are paid by the hour used', which a
    reservation, paid every hour of its term, is not."""
    from chipwise.errors import ChipwiseError
    from chipwise.planner.training import check_utilisation

    with pytest.raises(ChipwiseError) as err:
        check_utilisation(0.5, "reserved-1y", "--utilisation", "--pricing owned")
    assert "a reservation is paid every hour of its term" in str(err.value) and "hour used" not in str(err.value)
    with pytest.raises(ChipwiseError, match="rented chips are paid by the hour used"):
        check_utilisation(0.5, "on-demand", "--utilisation", "--pricing owned")


@pytest.mark.parametrize(
    ("system", "chips", "pricing", "billed"),
    [
        ("tpu-v6e", 6, "on-demand", 8.0),  # one v6e-8, not 4 + 1 + 1
        ("tpu-v6e", 100, "on-demand", 128.0),  # one v6e-128
        ("tpu-v6e", 256, "on-demand", 256.0),
        ("tpu-v6e", 300, "on-demand", 320.0),  # a whole v6e-256 and a v6e-64 for the other 44
        ("tpu-v5e", 6, "on-demand", 8.0),
        ("h100-sxm", 12, "capacity-block", 16.0),  # two p5, as before
        ("h100-sxm", 12, "on-demand", 12.0),  # GPUs rented one by one
        ("tpu-v6e", 6, "owned", 6.0),  # an owned fleet buys the chips it uses
    ],
)
def test_a_scale_up_domain_is_one_rented_unit(
    catalog: Catalog, hw: Hardware, system: str, chips: int, pricing: str, billed: float
) -> None:
    """Training on a system rented in slices bills each scale-up domain's chips as one rented unit, as serving bills a
    replica: 6 TPU v6e are a v6e-8, not three slices of 4 + 1 + 1."""
    assert system_economics(catalog, hw.system(system), chips, pricing).billed == billed


def test_six_v6e_pay_for_a_v6e_8(catalog: Catalog) -> None:
    from chipwise.planner.training import predict_training

    sc = train_scenario(
        "{kind: train, model: llama-3.1-8b, hardware: tpu-v6e, chips: 6, precision: bf16, seq_len: 8192, "
        "global_batch_tokens: 4194304}",
        catalog,
    )
    r = predict_training(catalog, sc)
    assert r["billed_chips"] == 8.0 and r["price_usd_per_chip_hour"] == 2.70
    # one hour: 8 x $2.70 = $21.60, where 6 chips billed one by one had read $16.20
    assert r["cost_usd"] == pytest.approx(21.60, rel=1e-12)
