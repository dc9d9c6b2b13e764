"""Cloud prices by mode, derived commitment prices, managed markups, sites (PUE, grid, electricity), power."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.economics.energy import carbon_kg, energy_j, site_for
from chipwise.economics.power import power_model
from chipwise.economics.pricing import MODES, check_mode, latest_quotes, price_per_chip_hour
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import Hardware


def test_modes_include_owned() -> None:
    assert set(MODES) == {"on-demand", "capacity-block", "reserved-1y", "reserved-3y", "spot", "owned"}
    with pytest.raises(ChipwiseError, match="unknown pricing mode"):
        check_mode("cheap")


def test_system_price_per_chip(catalog: Catalog, hw: Hardware) -> None:
    q = price_per_chip_hour(catalog, hw.system("h100-sxm"))
    assert q is not None and q.provider == "aws" and q.basis == "system"
    assert q.usd_per_chip_hour == pytest.approx(55.04 / 8)


def test_a_price_set_on_the_command_line_wins(hw: Hardware) -> None:
    """`--set h100-sxm.price=2` (a negotiated per-chip price) and `--set p5.48xlarge.price=16` (per system-hour)
    are the user's own prices: they win over the catalog's AWS price of the system, which used to win silently."""
    from chipwise.catalog.loader import load_catalog
    from chipwise.hardware import hardware

    for assignment, per_chip in (("h100-sxm.price=2.0", 2.0), ("p5.48xlarge.price=16", 2.0)):
        cat = load_catalog(sets=[assignment])
        q = price_per_chip_hour(cat, hardware(cat).system("h100-sxm"))
        assert q is not None and q.provider == "user" and q.usd_per_chip_hour == pytest.approx(per_chip), assignment
        assert q.region_matched
    spot = load_catalog(sets=["h100-sxm.price.spot=1.5"])
    od = price_per_chip_hour(spot, hardware(spot).system("h100-sxm"))
    assert od is not None and od.provider == "aws"  # a spot price set leaves on-demand alone


def test_catalog_mode_price_beats_derived(catalog: Catalog, hw: Hardware) -> None:
    cb = price_per_chip_hour(catalog, hw.system("h100-sxm"), "capacity-block")
    assert cb is not None and not cb.derived_from_mode and cb.usd_per_chip_hour == pytest.approx(41.528 / 8)


def test_missing_mode_is_derived_from_on_demand(catalog: Catalog, hw: Hardware) -> None:
    od = price_per_chip_hour(catalog, hw.system("b200"))
    r3 = price_per_chip_hour(catalog, hw.system("b200"), "reserved-3y")
    assert od is not None and r3 is not None
    assert r3.derived_from_mode == "on-demand" and r3.status == "estimate"
    assert r3.usd_per_chip_hour == pytest.approx(od.usd_per_chip_hour * 0.45)
    assert "pricing_mode_ratio.reserved-3y" in r3.derivation


def test_a_clouds_instance_takes_its_own_clouds_products_only(catalog: Catalog, hw: Hardware) -> None:
    """Spot, reserved and capacity-block prices are a cloud's products for its instance types: an Azure or a
    vendor's H100 system took AWS's p5 Capacity Block price per GPU (a rental AWS sells only as whole 8-GPU
    instances, so naming another system got round the unit), and an AWS p5 took GCP's spot price. Without an
    offer of their own they are priced from their on-demand rate by the mode's ratio, as an estimate."""
    p5 = price_per_chip_hour(catalog, hw.system("p5.48xlarge"), "capacity-block")
    assert p5 is not None and p5.provider == "aws" and p5.status != "estimate"
    for sid in ("azure-nd-h100-v5", "dgx-h100"):
        cb = price_per_chip_hour(catalog, hw.system(sid), "capacity-block")
        od = price_per_chip_hour(catalog, hw.system(sid))
        assert cb is not None and od is not None and cb.entry != "p5.48xlarge"
        assert cb.derived_from_mode == "on-demand" and cb.status == "estimate"
    spot = price_per_chip_hour(catalog, hw.system("p5.48xlarge"), "spot")
    assert spot is not None and spot.provider == "aws" and spot.derived_from_mode == "on-demand"
    gcp = price_per_chip_hour(catalog, hw.system("gcp-a3-highgpu-8g"), "spot")
    assert gcp is not None and gcp.provider == "gcp" and not gcp.derived_from_mode
    # on demand, a system without a rate of its own still borrows another instance type's for its chip
    assert price_per_chip_hour(catalog, hw.system("dgx-h100")) is not None


def test_managed_markup(catalog: Catalog, hw: Hardware) -> None:
    plain = price_per_chip_hour(catalog, hw.system("h100-sxm"))
    managed = price_per_chip_hour(catalog, hw.system("h100-sxm"), managed="sagemaker")
    assert plain is not None and managed is not None
    assert managed.usd_per_chip_hour == pytest.approx(plain.usd_per_chip_hour * 1.15)
    with pytest.raises(UnknownNameError, match="Did you mean"):
        price_per_chip_hour(catalog, hw.system("h100-sxm"), managed="sagemakr")


def test_as_of_date_and_region_preference(catalog: Catalog, hw: Hardware) -> None:
    old = price_per_chip_hour(catalog, hw.system("h100-sxm"), as_of="2025-12")
    assert old is not None and old.usd_per_chip_hour == pytest.approx(98.32 / 8)
    far = price_per_chip_hour(catalog, hw.system("h100-sxm"), region="eu-west-1")
    assert far is not None and not far.region_matched and "region_note" in far.record()


def test_latest_quotes_are_newest_per_provider(catalog: Catalog) -> None:
    quotes = latest_quotes(catalog, "h100-sxm")
    aws = [q for q in quotes if q[0] == "aws"]
    assert len(aws) == 1 and aws[0][2] == pytest.approx(6.88)
    assert [q[2] for q in quotes] == sorted(q[2] for q in quotes)


def test_site_defaults_and_validation(catalog: Catalog, hw: Hardware) -> None:
    aws = site_for(catalog, hw.system("h100-sxm"))
    assert aws.region == "us-east-1" and aws.pue.value == pytest.approx(1.15)
    gcp = site_for(catalog, hw.system("tpu-v6e"))
    assert gcp.pue.key.endswith("google-us-central1")  # Google's per-region PUE
    owned = site_for(catalog, hw.system("h100-sxm"), owned=True)
    assert owned.region == "country-usa" and owned.pue_key == "colocation" and owned.electricity is not None
    assert site_for(catalog, hw.system("h100-sxm"), pue=1.3).pue.value == 1.3
    with pytest.raises(UnknownNameError, match=r"Did you mean .*'us-east-1'"):
        site_for(catalog, hw.system("h100-sxm"), "us-east-l")
    with pytest.raises(ChipwiseError, match="below 1"):
        site_for(catalog, hw.system("h100-sxm"), pue=0.95)


def test_energy_and_carbon_formulas(catalog: Catalog, hw: Hardware) -> None:
    s = hw.system("h100-sxm")
    p = power_model(catalog, s, scaleout=True)
    assert p.host_w == pytest.approx(10_200 / 8 - 700)
    assert p.busy_w == pytest.approx(0.8 * 1275 + 100)
    assert p.idle_w < p.busy_w < p.rated_w
    assert power_model(catalog, s, scaleout=False).network_w == 0
    site = site_for(catalog, s)
    e = energy_j(p.busy_w, 1024, 3600.0, site.pue.value)
    assert e == pytest.approx(1120 * 1024 * 3600 * 1.15)
    assert carbon_kg(e, site) == pytest.approx(e / 3.6e6 * 0.379)
    arr = energy_j(np.array([p.idle_w, p.busy_w]), np.array([8, 16]), 10.0, 1.2)
    assert arr.shape == (2,) and arr[1] > arr[0]


def test_a_three_year_commitment_costs_no_more_than_a_listed_one_year_one(catalog: Catalog, hw: Hardware) -> None:
    """trn1.32xlarge lists a reserved rate ($0.512 a chip-hour, filed as 1-year) and no 3-year one, which on-demand x
    0.45 priced at $0.605: more for the longer term. The 3-year price is the 1-year one where that is lower."""
    system = hw.system("trn1.32xlarge")
    one = price_per_chip_hour(catalog, system, "reserved-1y")
    three = price_per_chip_hour(catalog, system, "reserved-3y")
    assert one is not None and three is not None and not one.derived_from_mode
    assert three.usd_per_chip_hour == one.usd_per_chip_hour and three.derived_from_mode == "reserved-1y"
    assert three.status == "estimate" and "costs no more" in three.derivation
    for chip in ("h100-sxm", "b200", "trn2"):  # where the ratio prices it lower, it stands
        s = hw.system(chip)
        r1, r3 = price_per_chip_hour(catalog, s, "reserved-1y"), price_per_chip_hour(catalog, s, "reserved-3y")
        assert r1 is not None and r3 is not None and r3.usd_per_chip_hour <= r1.usd_per_chip_hour
