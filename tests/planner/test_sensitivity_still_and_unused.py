"""A sensitivity reads a figure that leaves a latency exactly still on both sides as 0 (it does not reach it), not as
noise under the run's resolution; a side past the figure's range cannot be priced, with the range's reason; and a
figure the prediction reports at 0 because this deployment does not use it is listed as not used, not as 0."""

from __future__ import annotations

import math

import pytest

import chipwise.api as cw
from chipwise.planner.sensitivity import _moved_row

#: llama-3.1-8b on one H100 at 5 req/s, 300 requests: a TTFT p99 read to 0.3 / sqrt(2 x 300 x 0.01) = 12.2%
SERVE_ONE = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "precision": "fp8",
             "arrival_rate": 5, "input_tokens": 512, "output_tokens": 128, "requests": 300}  # fmt: skip
#: 16 H100 as two TP8 replicas, each inside one p5.48xlarge: no scale-out traffic
TWO_REPLICAS = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "p5.48xlarge", "chips": 16,
                "plan": {"tp": 8, "replicas": 2}, "pricing": "owned", "arrival_rate": 2, "input_tokens": 1024,
                "output_tokens": 256, "requests": 200}  # fmt: skip
TRAIN_P5 = {"kind": "train", "model": "llama-3.1-8b", "hardware": "p5.48xlarge", "chips": 64, "tokens": 1e12,
            "region": "us-east-1"}  # fmt: skip


def test_two_exactly_still_moves_read_zero_not_noise() -> None:
    """A PUE moved -10% and +10% leaves a TTFT p99 of 50 ms at exactly 50 ms both ways: 0 < 12.2%, and 0 x 0 is no
    opposite pair, so it had read null and below_resolution; it is 0.0 (the figure does not reach it)."""
    base = {"ttft_p99": 0.05, "energy": 100.0}
    row = _moved_row(
        {}, {"ttft_p99": 0.05, "energy": 90.0}, {"ttft_p99": 0.05, "energy": 110.0}, base, 0.1,
        {"ttft_p99": 0.3 / math.sqrt(6)},
    )  # fmt: skip
    assert row["elasticity"]["ttft_p99"] == 0.0 and "below_resolution" not in row and "capped" not in row
    # energy x0.9 and x1.1 for PUE x0.9 and x1.1: ln(110 / 90) / ln(1.1 / 0.9) = 1 exactly
    assert row["elasticity"]["energy"] == pytest.approx(1.0, abs=1e-12)
    # one move still and the other under the resolution is still noise (TDP's -1.8% and 0 on 1,000 requests)
    noisy = _moved_row({}, {"ttft_p99": 0.0491}, {"ttft_p99": 0.05}, {"ttft_p99": 0.05}, 0.1, {"ttft_p99": 0.067})
    assert noisy["elasticity"]["ttft_p99"] is None and noisy["below_resolution"] == ["ttft_p99"]


def test_a_pue_that_does_not_reach_a_latency_reads_zero_on_a_real_run() -> None:
    """The reported run: datacenter.pue.aws had read null for all five latencies, both sides' changes exactly 0.0."""
    result = cw.sensitivity(SERVE_ONE, metric="ttft_p99", only=["pue.aws"], workers=1)
    (row,) = result["figures"]
    assert row["figure"] == "datacenter.pue.aws" and "below_resolution" not in row
    for k in ("e2e_p50", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99"):
        assert row["change"]["minus"][k] == row["change"]["plus"][k] == 0.0
        assert row["elasticity"][k] == 0.0
    assert row["elasticity"]["energy"] == pytest.approx(1.0, abs=1e-9)


def test_a_side_past_the_figures_range_cannot_be_priced() -> None:
    """A grid set to 1,900 g/kWh: +10% is 2,090 g/kWh, past the 2,000 g/kWh a --set is refused at; that side cannot
    be priced, with the range's reason, as the power -10% under the chips' TDP (8 x 700 W = 5,600 W > 5,220 W)."""
    result = cw.sensitivity(
        TRAIN_P5, metric="co2e", only=["grid", "p5.48xlarge.power"],
        sets=["p5.48xlarge.power=5.8kW", "datacenter.grid_intensity.us-east-1=1900gCO2e/kWh"],
    )  # fmt: skip
    rows = {r["figure"]: r for r in result["figures"]}
    grid = rows["datacenter.grid_intensity.us-east-1"]
    assert "2090 gCO2e/kWh is not in [0, 2000] gCO2e/kWh" in grid["plus"]["error"]
    assert grid["change"]["minus"]["co2e"] == pytest.approx(-0.1, abs=1e-12)
    # one-sided: ln(0.9) / ln(0.9) = 1
    assert grid["elasticity"]["co2e"] == pytest.approx(1.0, abs=1e-9)
    power = rows["p5.48xlarge.power"]
    assert "5,220 W is below its 8 h100-sxm chips' TDP" in power["minus"]["error"] and "error" not in power["plus"]


def test_network_figures_a_deployment_does_not_use_are_listed_as_not_used() -> None:
    """Two TP8 replicas, each inside one p5.48xlarge, draw and buy no scale-out network: the prediction reports its
    100 W and $6,600 a chip (and the rack-scale $4,400 scale-up switch, on the boards here) as 0. They had read
    "3 are 0, which a move by a share leaves at 0"."""
    result = cw.sensitivity(TWO_REPLICAS, metric="cost", only=["network", "scaleout"], workers=1)
    assert result["figures"] == []
    listed = {r["figure"]: r for r in result["not_priced"]}
    assert {name: r["kind"] for name, r in listed.items()} == {
        "datacenter.opex.network_power_w_per_chip": "unused",
        "datacenter.capex.scaleup_network_usd_per_chip": "unused",
        "datacenter.capex.scaleout_network_usd_per_chip": "unused",
    }
    assert listed["datacenter.opex.network_power_w_per_chip"]["value"] == 0.0
    assert listed["datacenter.opex.network_power_w_per_chip"]["reason"].endswith("; catalog 100 W)")
    assert listed["datacenter.capex.scaleout_network_usd_per_chip"]["reason"].endswith("; catalog 6,600 USD)")
    assert listed["datacenter.capex.scaleup_network_usd_per_chip"]["reason"].endswith("; catalog 4,400 USD)")
    assert all(r["reason"].startswith("not used by this deployment (") for r in listed.values())


def test_a_figure_set_to_zero_is_zero_not_unused() -> None:
    """The network's power --set to 0 W: the catalog's value is 0 too, so a move by a share leaves it 0."""
    result = cw.sensitivity(
        TWO_REPLICAS, metric="cost", only=["network_power"], sets=["datacenter.opex.network_power_w_per_chip=0"],
        workers=1,
    )  # fmt: skip
    (row,) = result["not_priced"]
    assert row["kind"] == "zero" and row["reason"] == "a move by a share leaves 0 at 0"
