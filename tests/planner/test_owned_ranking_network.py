"""plan serve ranks an owned row with the scale-out network's capex, colocation and power where its deployment uses the
network as its check counts it (serving_economics.uses_network): a replica of more chips than its system holds, or a
split whose KV cache leaves one system. It had ranked every owned row at one system's price and charged the network
in the check alone (13-15% low)."""

from __future__ import annotations

import math

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import RankingPrice, chip_hour_price, network_price, split_network
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load

#: an owned H100 of a p5.48xlarge busy all hour, one system: capex $37,450 over 5 years (0.8544) + 4% of it a year
#: (0.1709) + 1,275 W rated x $184.06/kW-month / 730.5 h (0.3213) + 969 W busy x PUE 1.42 x $0.0862/kWh (0.1186)
H100_ONE_SYSTEM = 0.8544 + 0.1709 + 0.3213 + 0.969 * 1.42 * 0.0862
#: the 400G fabric it adds: $6,600 of capex (6,600 / 43,830 h + 0.04 x 6,600 / 8,766 h), 100 W more rated
#: (0.1 kW x 184.06 / 730.5) and 100 W more busy (0.1 kW x 1.42 x $0.0862)
H100_NETWORK = 6600 / 43830 + 0.04 * 6600 / 8766 + 0.1 * 184.06 / 730.5 + 0.1 * 1.42 * 0.0862


def test_an_owned_chips_network_price_is_the_fabrics_share(catalog: Catalog, hw: Hardware) -> None:
    """$0.2181 a chip-hour of fabric over the one-system $1.4652: $1.6833, the TCO of a fleet of many busy all hour."""
    p5 = hw.system("p5.48xlarge")
    price = chip_hour_price(catalog, p5, "owned", None, None)[0]
    assert price == pytest.approx(H100_ONE_SYSTEM, rel=1e-4)
    assert network_price(catalog, p5, "owned", None, price) == pytest.approx(H100_NETWORK, rel=1e-4)
    assert network_price(catalog, p5, "owned", None, price) == pytest.approx(0.2181, abs=1e-4)
    assert chip_hour_price(catalog, p5, "owned", None, None, scaleout=True)[0] == pytest.approx(1.6833, abs=1e-4)


def test_a_rentals_price_includes_its_network(catalog: Catalog, hw: Hardware) -> None:
    """On demand the provider's price carries the network: no term is added, and an unpriced system has none."""
    p5 = hw.system("p5.48xlarge")
    rent = chip_hour_price(catalog, p5, "on-demand", None, None)[0]
    assert chip_hour_price(catalog, p5, "on-demand", None, None, scaleout=True)[0] == rent
    assert network_price(catalog, p5, "on-demand", None, rent) == 0.0
    assert network_price(catalog, p5, "owned", None, math.nan) == 0.0
    assert RankingPrice(2.0, 0.25).per_chip_hour(True) == 2.25
    assert RankingPrice(2.0, 0.25).per_chip_hour(False) == 2.0


def test_split_network_follows_the_kv_path(catalog: Catalog, hw: Hardware) -> None:
    """An owned p5 (no rental units) holds a split in its 8-chip NVLink domain: 4 + 4 chips stay in it, 3 x 2 + 4 =
    10 leave it; a replica of 16 spans two p5; an H100 prefill beside a Trainium2 decode pool crosses systems; Trainium4
    beside GB300 fits trn4-gb300-fusion-rack (36 of each), its NVLink Fusion link, 40 Trainium4 do not."""
    p5, trn2 = hw.system("p5.48xlarge"), hw.system("trn2.48xlarge")
    trn4, gb300 = hw.system("trn4"), hw.system("gb300")
    assert not split_network(catalog, [(p5, 4.0, 1), (p5, 4.0, 1)])
    assert split_network(catalog, [(p5, 2.0, 3), (p5, 4.0, 1)])
    assert split_network(catalog, [(p5, 16.0, 1), (p5, 8.0, 1)])
    assert split_network(catalog, [(p5, 8.0, 1), (trn2, 8.0, 1)])
    assert not split_network(catalog, [(trn4, 4.0, 2), (gb300, 4.0, 2)])
    assert split_network(catalog, [(trn4, 4.0, 10), (gb300, 4.0, 2)])


def test_a_replica_across_systems_ranks_with_the_network(catalog: Catalog) -> None:
    """Llama 3.1 405B bf16 as one TP8 PP2 replica on two p5.48xlarge had ranked at 16 x $1.4652 = $23.44/h, its check
    charging $26.92/h; it now ranks at 16 x $1.6833 = $26.93/h. A TP8 replica of one p5 ranks without it."""
    report = plan_serving(
        catalog, "llama-3.1-405b", ["p5.48xlarge"], Load("rate", rate=0.5), 1024, 256, None, precision="bf16",
        pricing="owned", disaggregated=False, verify=0,
    )  # fmt: skip
    row = report["results"][0]
    assert (row["plan"]["tp"], row["plan"]["pp"], row["chips"]) == (8, 2, 16)
    assert row["cost_usd_per_hour"] == pytest.approx(16 * (H100_ONE_SYSTEM + H100_NETWORK), rel=1e-4)
    assert row["cost_usd_per_hour"] == pytest.approx(26.93, abs=0.01)
    one = plan_serving(
        catalog, "llama-3.1-70b", ["p5.48xlarge"], Load("rate", rate=1.0), 1024, 256, None, precision="bf16",
        pricing="owned", disaggregated=False, verify=0,
    )["results"][0]  # fmt: skip
    assert one["plan"]["tp"] * one["plan"]["pp"] <= 8
    assert one["cost_usd_per_hour"] == pytest.approx(one["chips"] * H100_ONE_SYSTEM, rel=1e-4)


def test_a_split_past_one_system_ranks_with_the_network(catalog: Catalog) -> None:
    """Llama 3.1 70B at 6 req/s: a split of more H100 than one p5's 8 hands its KV cache over efa-v2, so each of its
    chips ranks at $1.6833 (10 chips had read $14.65/h beside a check of $16.61/h); one of 8 or fewer at $1.4652."""
    report = plan_serving(
        catalog, "llama-3.1-70b", ["p5.48xlarge"], Load("rate", rate=6.0), 2048, 256,
        {"ttft_p99": 2.0, "tpot_p99": 0.06}, pricing="owned", verify=0,
    )  # fmt: skip
    splits = [r for r in report["results"] if r["disaggregated"]]
    assert splits
    for row in splits:
        per_chip = H100_ONE_SYSTEM + (H100_NETWORK if row["chips"] > 8 else 0.0)
        assert row["cost_usd_per_hour"] == pytest.approx(row["chips"] * per_chip, rel=1e-4)
    assert any(row["chips"] > 8 for row in splits)
