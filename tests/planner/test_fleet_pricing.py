"""plan fleet priced in a mode and a region, as plan serve's ranking prices a fleet: it had priced every type
on-demand at its offer's own region, and taken neither --pricing nor --region."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.pricing import price_per_chip_hour
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.planner import fleet as fleet_mod
from chipwise.planner.fleet import plan_fleet
from chipwise.planner.fleet_workload import Bucket
from chipwise.workload.presets import load_model

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "chat-mix.yaml")
SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}
#: p5.48xlarge: $55.04/h on demand, 8 GPUs: $6.88 a GPU-hour; the catalog's reserved-1y $52/h, listed against the
#: $98.32 on-demand rate of its day, carried to today's: 52 x 55.04 / 98.32 / 8 = $3.6387 a GPU-hour (an estimate)
H100_ON_DEMAND = 55.04 / 8
H100_RESERVED_1Y = 52 * 55.04 / 98.32 / 8


def _fleet(
    catalog: Catalog, hardware_ids: list[str], pricing: str = "on-demand", region: str | None = None
) -> dict[str, Any]:
    return plan_fleet(
        catalog, "llama-3.1-8b", EXAMPLE, SLO, hardware_ids, precision="bf16", replay=False, pricing=pricing,
        region=region,
    )  # fmt: skip


def test_a_reserved_fleet_costs_less_an_hour_than_on_demand(catalog: Catalog) -> None:
    """The same H100 fleet at the 1-year reservation's $3.6387 a GPU-hour, not on-demand's $6.88: the report names
    the mode, and each type gives the reservation's quote as its price source."""
    on_demand = _fleet(catalog, ["h100-sxm"])
    reserved = _fleet(catalog, ["h100-sxm"], pricing="reserved-1y")
    assert (on_demand["pricing"], reserved["pricing"], reserved["region"]) == ("on-demand", "reserved-1y", None)
    quote = price_per_chip_hour(catalog, hardware(catalog).system("h100-sxm"), "reserved-1y")
    assert quote is not None and quote.usd_per_chip_hour == pytest.approx(H100_RESERVED_1Y, rel=1e-9)
    for f in reserved["fleet"]:
        assert f["usd_per_hour"] == pytest.approx(f["chips"] * quote.usd_per_chip_hour, rel=1e-9)
        assert f["price_source"]["entry"] == "p5.48xlarge" and f["price_source"]["status"] == "estimate"
        assert f["price_estimated"] is True  # carried to today's rate: the § mark
    for f in on_demand["fleet"]:
        assert f["usd_per_hour"] == pytest.approx(f["chips"] * H100_ON_DEMAND, rel=1e-9)
    # one chip type, every price scaled alike: the same instances, at 3.6387 / 6.88 = 52.9% of the cost
    assert [(f["type"], f["instances"]) for f in reserved["fleet"]] == [
        (f["type"], f["instances"]) for f in on_demand["fleet"]
    ]
    ratio = H100_RESERVED_1Y / H100_ON_DEMAND
    assert reserved["cost_usd_per_hour"] == pytest.approx(ratio * on_demand["cost_usd_per_hour"], rel=1e-9)
    assert reserved["cost_usd_per_hour"] < on_demand["cost_usd_per_hour"]


def test_an_owned_fleet_is_charged_its_tco_busy_all_hour(catalog: Catalog) -> None:
    """An owned H100 is charged the TCO of a chip busy all hour: depreciation $0.8544 + operations $0.1709 +
    colocation $0.3213 + energy $0.1186 = $1.4652 a chip-hour (plan serve's ranking, one p5.48xlarge), billed per
    chip (an owned fleet buys chips), its price source the TCO's."""
    r = _fleet(catalog, ["h100-sxm"], pricing="owned")
    assert r["pricing"] == "owned" and r["fleet"]
    for f in r["fleet"]:
        source = f["price_source"]
        assert source["basis"] == "owned" and source["tco"]["utilisation"] == 1.0
        assert source["tco"]["usd_per_chip_hour"] == pytest.approx(1.4652, abs=1e-4)
        assert f["usd_per_hour"] == pytest.approx(f["chips"] * source["tco"]["usd_per_chip_hour"], rel=1e-9)
        assert f["price_estimated"] is True  # the owned cost rests on estimated inputs (the chip's price)


def test_an_owned_replica_across_systems_pays_for_the_scale_out_network(catalog: Catalog) -> None:
    """Llama 3.1 405B bf16 takes two p5.48xlarge a replica (TP8 PP2): its owned chips pay the scale-out network's
    capex, colocation and power, $1.6833 a chip-hour, as plan serve's ranking charges the same replica (16 x $1.6833
    = $26.93/h); a rental's price includes its provider's network and reads the same either way."""
    model = load_model(catalog, "llama-3.1-405b")
    system = hardware(catalog).system("h100-sxm")
    buckets = [Bucket("chat", 512, 128, 1.0)]
    types = fleet_mod._types_for(catalog, model, system, buckets, {"e2e_p99": 600.0}, "bf16", None, "owned")
    assert types and all(t.plan.tp * t.plan.pp > system.chips for t in types)
    for t in types:
        assert t.price_usd_per_hour == pytest.approx(16 * 1.6833, abs=0.01)
        assert t.source is not None and t.source["tco"]["usd_per_chip_hour"] * t.chips == pytest.approx(
            t.price_usd_per_hour, rel=1e-9
        )
    rented = fleet_mod._chip_prices(catalog, system, "on-demand", None)
    assert rented[True] == rented[False] and rented[False][0] == pytest.approx(H100_ON_DEMAND)


def test_capacity_blocks_rent_whole_instances_and_leave_out_what_aws_does_not_sell(catalog: Catalog) -> None:
    """EC2 Capacity Blocks sell whole p5.48xlarge instances, $41.528/h: $5.191 a GPU-hour in 8-GPU units (on demand
    rents single GPUs here); DigitalOcean's MI300X has no Capacity Block, and is left out with why."""
    r = _fleet(catalog, ["h100-sxm", "mi300x"], pricing="capacity-block")
    assert r["fleet"] and all(f["hardware"] == "h100-sxm" for f in r["fleet"])
    for f in r["fleet"]:
        assert f["chips"] % 8 == 0 and f["usd_per_hour"] == pytest.approx(f["chips"] * 5.191, rel=1e-9)
    assert {"hardware": "mi300x", "system": "mi300x-8x", "reason": (
        "capacity-block is sold by aws only, and the catalog has no aws price for mi300x"
    )} in r["skipped"]  # fmt: skip


def test_a_fleet_with_no_price_in_the_mode_is_one_line(catalog: Catalog) -> None:
    """MI300X alone in Capacity Blocks: no type is priced, and the line names why for each bucket."""
    with pytest.raises(ChipwiseError, match="capacity-block is sold by aws only"):
        _fleet(catalog, ["mi300x"], pricing="capacity-block")


def test_spot_prices_each_type_at_its_spot_quote(catalog: Catalog) -> None:
    """No spot price of p5 in the catalog: on-demand $6.88 x the catalog's spot ratio 0.6 = $4.128 a GPU-hour, an
    estimate (§)."""
    r = _fleet(catalog, ["h100-sxm"], pricing="spot")
    for f in r["fleet"]:
        assert f["usd_per_hour"] == pytest.approx(f["chips"] * 6.88 * 0.6, rel=1e-9)
        assert f["price_source"]["derived_from"] == "on-demand" and f["price_estimated"] is True


def test_a_region_prices_there_and_names_offers_from_elsewhere(catalog: Catalog) -> None:
    """us-east-2 has no p5 on-demand price: the type is priced at us-east-1's, as plan serve's ranking takes it, and
    the report says so; the report names the region it was asked for."""
    r = _fleet(catalog, ["h100-sxm"], region="us-east-2")
    assert (r["pricing"], r["region"]) == ("on-demand", "us-east-2")
    assert r["price_notes"] == ["p5.48xlarge (h100-sxm): no us-east-2 on-demand price; us-east-1's"]
    assert all(f["usd_per_hour"] == pytest.approx(f["chips"] * H100_ON_DEMAND) for f in r["fleet"])
    assert _fleet(catalog, ["h100-sxm"], region="us-east-1")["price_notes"] == []


@pytest.mark.parametrize(
    ("pricing", "region", "message"),
    [
        ("on-demand", "us-east-9", "unknown region 'us-east-9'. Did you mean 'us-east-2'"),
        ("cheap", None, "unknown pricing mode 'cheap'"),
    ],
)
def test_an_unknown_region_or_mode_is_one_line(
    catalog: Catalog, pricing: str, region: str | None, message: str
) -> None:
    with pytest.raises(ChipwiseError, match=message):
        _fleet(catalog, ["h100-sxm"], pricing, region)
