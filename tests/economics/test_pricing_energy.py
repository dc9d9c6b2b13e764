"""Cloud prices by mode (as of a date, one price per chip, a vendor reference system's, a user's), derived commitment
prices, managed markups, sites (PUE, grid, electricity, price regions, the site of a fallback or worldwide price),
power."""

from __future__ import annotations

import json

import numpy as np
import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.energy import carbon_kg, check_region, energy_j, site_for
from chipwise.economics.power import power_model
from chipwise.economics.pricing import MODES, check_mode, latest_quotes, price_gap, price_per_chip_hour
from chipwise.economics.tco import owned_tco
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import Hardware, hardware


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
    """Spot, reserved and capacity-block prices are a cloud's products for its instance types: an Azure H100 system
    took AWS's p5 Capacity Block price per GPU, and an AWS p5 took GCP's spot price. Without an offer of their own
    they are priced from their on-demand rate by the mode's ratio, as an estimate, where their provider sells that
    product at all: an EC2 Capacity Block is AWS's, so Azure's H100 has none (it had been given 0.82 x Azure's
    on-demand rate). A vendor's reference system (dgx-h100) is no cloud's instance: it is priced as its chip's
    default system, p5.48xlarge, in every mode (economics.pricing._stand_in)."""
    p5 = price_per_chip_hour(catalog, hw.system("p5.48xlarge"), "capacity-block")
    assert p5 is not None and p5.provider == "aws" and p5.status != "estimate"
    azure = hw.system("azure-nd-h100-v5")
    assert price_per_chip_hour(catalog, azure, "capacity-block") is None
    assert "sold by aws only" in price_gap(catalog, azure, "capacity-block")
    r1 = price_per_chip_hour(catalog, azure, "reserved-1y")
    assert r1 is not None and r1.provider == "azure" and r1.derived_from_mode == "on-demand"
    assert r1.status == "estimate"
    for mode in ("capacity-block", "reserved-1y", "spot"):
        dgx = price_per_chip_hour(catalog, hw.system("dgx-h100"), mode)
        own = price_per_chip_hour(catalog, hw.system("p5.48xlarge"), mode)
        assert dgx is not None and own is not None and dgx.priced_as == "p5.48xlarge", mode
        assert (dgx.provider, dgx.usd_per_chip_hour) == (own.provider, own.usd_per_chip_hour), mode
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
    aws = [q for q in quotes if q.provider == "aws"]
    assert len(aws) == 1 and aws[0].usd_per_chip_hour == pytest.approx(6.88)
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
    assert p.busy_w == pytest.approx(0.76 * 1275 + 100)
    assert p.idle_w < p.busy_w < p.rated_w
    assert power_model(catalog, s, scaleout=False).network_w == 0
    site = site_for(catalog, s)
    e = energy_j(p.busy_w, 1024, 3600.0, site.pue.value)
    assert e == pytest.approx(1069 * 1024 * 3600 * 1.15)
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


def test_every_electricity_region_has_a_grid_intensity(catalog: Catalog, hw: Hardware) -> None:
    """A region with an electricity price but no grid intensity (us-va, us-tx, eu-average and 23 more) was refused
    by --region while the missing-price error suggested it. Each now places a fleet: Virginia in SERC (CCF factor
    0.000379069 t/kWh = 379 g/kWh), Texas in TRE (373), the EU average 510 g (1990) x (1 - 0.58) = 214 g."""
    from chipwise.catalog.terms import node
    from chipwise.economics.energy import check_region, known_regions

    prices = node(catalog, "datacenter", "electricity_usd_per_kwh")
    grids = node(catalog, "datacenter", "grid_intensity")
    assert sorted(set(prices) - set(grids)) == []
    assert all(check_region(catalog, r) == r for r in prices)
    assert set(known_regions(catalog)) == set(grids)
    system = hw.system("h100-sxm")
    for region, g_per_kwh, usd_per_kwh in (("us-va", 379, 0.0892), ("us-tx", 373, 0.0660), ("eu-average", 214, 0.205)):
        site = site_for(catalog, system, region, owned=True)
        assert site.kg_co2e_per_j * 3.6e9 == pytest.approx(g_per_kwh)
        assert site.electricity is not None and site.electricity.value * 3.6e6 == pytest.approx(usd_per_kwh)


def test_the_missing_price_error_names_only_regions_it_accepts(catalog: Catalog, hw: Hardware) -> None:
    """eu-west-2 has a grid intensity but no electricity price: the fix lists regions that have both (it listed
    us-average and us-az, which --region refused)."""
    from chipwise.catalog.terms import node
    from chipwise.economics.energy import check_region, require_electricity

    site = site_for(catalog, hw.system("h100-sxm"), "eu-west-2", owned=True)
    with pytest.raises(ChipwiseError) as err:
        require_electricity(catalog, site)
    listed = str(err.value).split("(", 1)[1].split(")", 1)[0].replace(", ...", "").split(", ")
    prices = node(catalog, "datacenter", "electricity_usd_per_kwh")
    assert len(listed) == 8 and all(check_region(catalog, r) == r and r in prices for r in listed)


def test_an_instance_is_priced_at_its_own_clouds_rate_for_its_chip_first(catalog: Catalog, hw: Hardware) -> None:
    """p5e.48xlarge (AWS, H200) has no on-demand SKU. It took RunPod's per-GPU $4.59 (and a colocation site, PUE
    1.42) before AWS's own p5en rate for the same H200: 63.296 / 8 = $7.912 a GPU-hour. Its reserved-1y is derived
    from that AWS rate, 7.912 x 0.70 = $5.538 (it was RunPod's 4.59 x 0.70 = 3.213), and AWS's Capacity Block,
    47.76 / 8 = $5.97, is now below on-demand."""
    p5e = hw.system("p5e.48xlarge")
    od = price_per_chip_hour(catalog, p5e)
    assert od is not None and od.provider == "aws" and od.entry == "p5en.48xlarge"
    assert od.usd_per_chip_hour == pytest.approx(63.296 / 8)
    r1 = price_per_chip_hour(catalog, p5e, "reserved-1y")
    assert r1 is not None and r1.provider == "aws" and r1.derived_from_mode == "on-demand" and r1.status == "estimate"
    assert r1.usd_per_chip_hour == pytest.approx(63.296 / 8 * 0.70)
    cb = price_per_chip_hour(catalog, p5e, "capacity-block")
    assert cb is not None and cb.usd_per_chip_hour == pytest.approx(47.76 / 8)
    assert cb.usd_per_chip_hour < od.usd_per_chip_hour
    site = site_for(catalog, p5e, operator=od.provider, hint_region=od.region)
    assert site.pue.value == pytest.approx(1.15)  # AWS's, not colocation's 1.42


def test_a_commitment_is_not_derived_from_another_providers_rate() -> None:
    """A cloud instance whose only on-demand price is another provider's gets no derived reserved price: a p5e
    with AWS's H200 prices removed (a user catalog) falls back to RunPod's on-demand rate, but no reserved-1y."""
    from chipwise.catalog.loader import load_catalog
    from chipwise.hardware import hardware

    cat = load_catalog()
    kept = [p for p in cat.prices if not (p.provider == "aws" and (p.chip == "h200" or p.system.startswith("p5e")))]
    cat = type(cat)(**{**cat.__dict__, "prices": kept})
    p5e = hardware(cat).system("p5e.48xlarge")
    od = price_per_chip_hour(cat, p5e)
    assert od is not None and od.provider != "aws"
    assert price_per_chip_hour(cat, p5e, "reserved-1y") is None
    assert "not derived from another provider" in price_gap(cat, p5e, "reserved-1y")


def test_a_commitment_listed_against_an_old_on_demand_rate_is_carried_to_todays(catalog: Catalog, hw: Hardware) -> None:
    """p5's ~$52/h 1-year reservation (2025) was quoted against the $98.32 on-demand rate, cut to $55.04 since; it
    stood only 5.5% below today's on-demand, and owning an H100 broke even at 23.8% use. Carried to today's rate:
    52 x 55.04 / 98.32 = 29.11 $/h = 3.6387 a GPU-hour (an estimate). A reservation is paid every hour of its year,
    so no utilisation break-even: the owned H100's fixed 1.55247 $/h (depreciation 1.00502 + operations 0.20100 +
    colocation 0.34645) and busy energy 0.137092 $/h (1,120 W x 1.42 x $0.0862/kWh) make 1.68957 $/h busy every
    hour, under 3.6387: owning is cheaper at any utilisation (it had printed 'own when utilisation > 43.2%')."""
    from chipwise.economics.pricing import latest_quotes
    from chipwise.economics.tco import owned_tco, tco_report

    q = price_per_chip_hour(catalog, hw.system("p5.48xlarge"), "reserved-1y")
    assert q is not None and q.status == "estimate" and not q.derived_from_mode
    assert q.usd_per_chip_hour == pytest.approx(52 * 55.04 / 98.32 / 8)
    assert "52 x 55.04 / 98.32" in q.derivation
    [listed] = latest_quotes(catalog, "h100-sxm", "reserved-1y")
    assert (listed.provider, listed.region, listed.status) == ("aws", "us-east-1", "estimate")
    assert listed.usd_per_chip_hour == pytest.approx(52 * 55.04 / 98.32 / 8)
    assert "52 x 55.04 / 98.32" in listed.derivation  # how it was carried, not a bare $3.64 'estimate'
    report = tco_report(catalog, owned_tco(catalog, hw.system("h100-sxm")), "reserved-1y")
    row = report["break_even"][0]
    assert row["break_even_utilisation"] is None and row["verdict"] == "owning is cheaper at any utilisation"
    assert row["owned_usd_per_calendar_hour"]["busy"] == pytest.approx(1.68332, abs=1e-4)
    assert "52 x 55.04 / 98.32" in report["break_even"][0]["derivation"]
    # an on-demand price that never moved leaves its commitment as listed (trn1: 21.50 since launch)
    trn1 = price_per_chip_hour(catalog, hw.system("trn1.32xlarge"), "reserved-1y")
    assert trn1 is not None and trn1.usd_per_chip_hour == pytest.approx(8.197 / 16)


def test_a_managed_service_and_a_capacity_block_price_only_their_providers(catalog: Catalog, hw: Hardware) -> None:
    """SageMaker (AWS) marked up DigitalOcean's MI300X to 2.59 x 1.15 = $2.98 and Google's TPU v5p to 4.20 x 1.15 =
    $4.83; a Capacity Block (EC2's) was derived for DigitalOcean at 2.59 x 0.82. None of those is sold: no price, and
    the reason. An AWS H100 keeps the markup: 55.04 / 8 x 1.15 = $7.912."""
    for sid in ("mi300x-8x", "tpu-v5p-pod"):
        system = hw.system(sid)
        assert price_per_chip_hour(catalog, system, managed="sagemaker") is None
        assert "sagemaker runs on aws" in price_gap(catalog, system, managed="sagemaker")
        assert price_per_chip_hour(catalog, system, "capacity-block") is None
    p5 = price_per_chip_hour(catalog, hw.system("p5.48xlarge"), managed="sagemaker")
    assert p5 is not None and p5.usd_per_chip_hour == pytest.approx(55.04 / 8 * 1.15)
    with pytest.raises(ChipwiseError, match="sagemaker runs on aws instances only"):
        price_per_chip_hour(catalog, hw.system("h100-sxm"), managed="sagemaker", provider="gcp")


def test_nothing_priced_under_a_managed_service_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """`plan train --managed sagemaker --objective cost` on chips AWS does not rent: one line and exit 2, not a table
    of '-'. Ranked by time it ranks, each '-' saying why, as every pricing mode does (an owned chip without a unit
    price had ranked by cost as '-' rows, exit 0, where SageMaker was refused even by time)."""
    from chipwise.interfaces.cli.app import run

    argv = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1T", "--chips", "64", "--hardware"]
    assert run([*argv, "mi300x,tpu-v5p", "--managed", "sagemaker", "--objective", "cost"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sagemaker runs on aws instances" in err[0] and "Fix:" in err[0]
    assert run([*argv, "mi300x,tpu-v5p", "--managed", "sagemaker"]) == 0
    assert "no price: tpu-v5p: sagemaker runs on aws instances" in capsys.readouterr().out


def test_the_scale_out_network_scales_with_the_systems_bandwidth(catalog: Catalog, hw: Hardware) -> None:
    """The 100 W per chip of scale-out switches and optics is sized for one 400G port a GPU: a TPU v5p pod's
    50 Gb/s a chip draws 100 x 50 / 400 = 12.5 W, trn2's 200 Gb/s 50 W, a p5's 400 Gb/s the full 100 W."""
    from chipwise.economics.power import scaleout_share

    for sid, gbps, net_w in (("tpu-v5p-pod", 50, 12.5), ("trn2.48xlarge", 200, 50.0), ("p5.48xlarge", 400, 100.0)):
        system = hw.system(sid)
        assert scaleout_share(catalog, system).value == pytest.approx(gbps / 400)
        assert power_model(catalog, system).network_w == pytest.approx(net_w)
        assert power_model(catalog, system, scaleout=False).network_w == 0.0


# as_of compares dates at the coarser precision: a year keeps the prices dated in it.


# -------------------------------------------------------------------------------------------------- as_of by year
@pytest.mark.parametrize("as_of", ["2025", "2025-05", "2025-06"])
def test_as_of_a_year_keeps_the_prices_dated_in_it(catalog: Catalog, hw: Hardware, as_of: str) -> None:
    """as_of='2025' found no on-demand H100 price ('2025-05' > '2025' as text) while it kept the reserved-1y price
    dated '2025': p5's $98.32 of 2025-05 is in force by 2025, as by 2025-06."""
    quote = price_per_chip_hour(catalog, hw.system("h100-sxm"), "on-demand", as_of=as_of)
    assert quote is not None and quote.usd_per_chip_hour == pytest.approx(98.32 / 8)
    assert quote.date == "2025-05"


def test_as_of_a_year_keeps_the_newest_price_in_it(catalog: Catalog, hw: Hardware) -> None:
    """'2026' had ignored the 2026-07 price (and taken 2025-05's $12.29): it is listed by 2026."""
    quote = price_per_chip_hour(catalog, hw.system("h100-sxm"), "on-demand", as_of="2026")
    assert quote is not None and quote.date == "2026-07" and quote.usd_per_chip_hour == pytest.approx(55.04 / 8)


# One price per chip across `tco` and `predict`, vendor reference systems priced as their chip, the middle provider's
# price where none is the preferred one's, modes that follow a user's price, price regions placed on a grid, and the
# host's own idle power.


# ---------------------------------------------------------------------------------------------------- one price
def test_a_chips_listed_capacity_block_price_comes_before_a_ratio_estimate(catalog: Catalog, hw: Hardware) -> None:
    """predict priced a GB200 capacity block at 0.82 x the $12.20 on-demand estimate ($10.004) while the catalog lists
    the p6e-gb200 UltraServer's $761.904 an hour for 72 (spec, $10.58 a GPU-hour, which tco showed); a DGX H100 had
    no capacity-block price at all ('no aws price for h100-sxm') beside p5's $41.528 block."""
    gb200 = price_per_chip_hour(catalog, hw.system("gb200"), "capacity-block")
    assert gb200 is not None and gb200.status == "spec" and not gb200.derived_from_mode
    assert gb200.usd_per_chip_hour == pytest.approx(761.904 / 72)
    dgx = price_per_chip_hour(catalog, hw.system("dgx-h100"), "capacity-block")
    assert dgx is not None and dgx.usd_per_chip_hour == pytest.approx(41.528 / 8) and dgx.priced_as == "p5.48xlarge"


# ---------------------------------------------------------------------------------------- vendor reference systems
def test_a_vendor_reference_system_costs_what_its_chip_costs(catalog: Catalog, hw: Hardware) -> None:
    """dgx-h100 took whichever provider's H100 price was newest: Azure's $12.29 (eastus, PUE 1.18), where
    h100-sxm is AWS's $6.88. It is priced as its chip's default system, p5.48xlarge, and its site follows."""
    dgx = price_per_chip_hour(catalog, hw.system("dgx-h100"))
    chip = price_per_chip_hour(catalog, hw.system("h100-sxm"))
    assert dgx is not None and chip is not None
    assert (dgx.provider, dgx.usd_per_chip_hour) == pytest.approx(("aws", chip.usd_per_chip_hour))
    assert "priced as h100-sxm's default system, p5.48xlarge" in dgx.derivation
    site = site_for(catalog, hw.system("dgx-h100"), operator=dgx.provider, hint_region=dgx.region)
    assert (site.region, site.pue.value) == pytest.approx(("us-east-1", 1.15))


def test_no_preferred_provider_takes_the_middle_providers_price(catalog: Catalog) -> None:
    """Where no price is the preferred provider's (an MI300X rack: no AWS price), the date a provider last moved its
    price picked the provider: Azure's $6.00 redated to the newest became the rack's price. Each provider's current
    price, and of those the middle one (lower middle of four: 1.50, 2.59, 6.00, 6.00): DigitalOcean's $2.59."""
    cat = load_catalog()
    prices = [p.model_copy(update={"date": "2027-01"}) if p.provider == "azure" and p.chip == "mi300x" else p
              for p in cat.prices]  # fmt: skip
    cat = type(cat)(**{**cat.__dict__, "prices": prices})
    q = price_per_chip_hour(cat, hardware(cat).system("mi300x"))
    assert q is not None and q.provider == "digitalocean" and q.usd_per_chip_hour == pytest.approx(2.59)


# ---------------------------------------------------------------------------------------- a user's on-demand price
def test_modes_follow_an_on_demand_price_set_on_the_command_line() -> None:
    """`--set h100-sxm.price=2.0`: spot followed ($1.20), but reserved-1y kept AWS's $3.64, carried from AWS's
    on-demand rate, dearer than the user's. A mode without a published price keeps the catalog's discount off
    on-demand; a published one (p5's $5.191 capacity block, AWS's own product) stays as it is."""
    cat = load_catalog(sets=["h100-sxm.price=2.0"])
    system = hardware(cat).system("h100-sxm")
    base = load_catalog()
    p5 = hardware(base).system("h100-sxm")
    od = price_per_chip_hour(base, p5)
    assert od is not None
    for mode in ("reserved-1y", "reserved-3y", "spot"):
        q, catalog_q = price_per_chip_hour(cat, system, mode), price_per_chip_hour(base, p5, mode)
        assert q is not None and catalog_q is not None and catalog_q.status == "estimate"
        assert q.usd_per_chip_hour == pytest.approx(2.0 * catalog_q.usd_per_chip_hour / od.usd_per_chip_hour), mode
        assert q.usd_per_chip_hour < 2.0 and q.provider == "user", mode
        assert "follows the on-demand price set on the command line" in q.derivation, mode
    cb = price_per_chip_hour(cat, system, "capacity-block")
    assert (
        cb is not None and cb.usd_per_chip_hour == pytest.approx(5.191) and (cb.provider, cb.status) == ("aws", "spec")
    )


def test_a_published_price_in_another_mode_is_not_moved_by_a_users_on_demand_price() -> None:
    """`--set trn2.price=4.8` had priced Trainium2's capacity block, $35.7608 a trn2.48xlarge-hour on AWS's page
    ($2.235 a chip), at 4.8 x 2.235 / 2.7257 = $3.93 'set on the command line'; a 3-year reservation, which the
    catalog lists only as an estimate (on-demand x 0.45), still follows the user's rate: 4.8 x 0.45 = $2.16."""
    cat = load_catalog(sets=["trn2.price=4.8"])
    trn2 = hardware(cat).system("trn2")
    cb = price_per_chip_hour(cat, trn2, "capacity-block")
    assert cb is not None and cb.provider == "aws" and cb.status == "spec"
    assert cb.usd_per_chip_hour == pytest.approx(35.7608 / 16)
    three = price_per_chip_hour(cat, trn2, "reserved-3y")
    assert three is not None and three.provider == "user" and three.derived_from_mode == "on-demand"
    assert three.usd_per_chip_hour == pytest.approx(4.8 * 0.45)


# ---------------------------------------------------------------------------------------------- price regions
def test_price_regions_are_placed_on_a_grid(catalog: Catalog, hw: Hardware) -> None:
    """GB200 is priced in us-east-1-dfw (AWS's Dallas Local Zone) but its carbon was us-east-1's (Virginia), and
    --region us-east-1-dfw / us / us-ashburn-1 were refused though prices are quoted there; 'global' names no place."""
    assert check_region(catalog, "us-east-1-dfw") == "us-tx"
    assert check_region(catalog, "us") == "country-usa"
    assert check_region(catalog, "us-ashburn-1") == "us-va"
    with pytest.raises(ChipwiseError, match=r"not a place chips run in\. Fix:"):
        check_region(catalog, "global")
    q = price_per_chip_hour(catalog, hw.system("gb200"))
    assert q is not None and q.region == "us-east-1-dfw"
    site = site_for(catalog, hw.system("gb200"), operator=q.provider, hint_region=q.region)
    assert site.region == "us-tx" and "Dallas" in site.grid.record()["located"]
    asked = price_per_chip_hour(catalog, hw.system("gb200"), region="us-east-1-dfw")
    assert asked is not None and asked.region_matched


# ------------------------------------------------------------------------------------------------- host idle
def test_the_gpu_idle_measurement_is_not_applied_to_the_host(catalog: Catalog, hw: Hardware) -> None:
    """Idle power was (TDP + host) x 0.11, an idle H200's fraction applied to CPUs, DRAM, NICs and fans too: the
    host idles at its own share (an estimate, with its derivation, among the figures)."""
    p = power_model(catalog, hw.system("h100-sxm"), scaleout=True)
    assert p.host_idle is not None and p.host_idle.status == "estimate" and "host" in p.host_idle.derivation
    assert p.idle_w == pytest.approx(700 * 0.11 + 575 * p.host_idle.value + 100)
    assert p.host_idle.value > p.idle.value
    assert p.host_idle.key in {t.key for t in p.terms()}
    record = owned_tco(catalog, hw.system("h100-sxm")).record()
    assert record["inputs"]["host_idle_power_fraction"]["status"] == "estimate"
    assert json.dumps(record)  # serialisable


# ------------------------------------------------------------------------------- fallback and worldwide prices' sites
def test_a_china_only_part_gets_no_ec2_product_and_no_aws_site(catalog: Catalog, hw: Hardware) -> None:
    """The RTX PRO 6000D's $4.14 stand-in (g7e.48xlarge's other GPU / 8) was filed under aws/us-east-1: it had been
    given an EC2 Capacity Block at 4.14 x 0.82 = $3.395, AWS's PUE 1.15 and us-east-1's 379 g/kWh. Filed as the other
    ranking fallbacks are (neocloud, a worldwide list price), capacity-block is '-' and the fleet runs in a colocation
    facility (PUE 1.42) on the US average grid, which says it was assumed."""
    system = hw.system("rtx-pro-6000d-8x")
    od = price_per_chip_hour(catalog, system, "on-demand")
    assert od is not None and (od.provider, od.region, od.usd_per_chip_hour) == ("neocloud", "global", 4.14)
    assert price_per_chip_hour(catalog, system, "capacity-block") is None
    spot = price_per_chip_hour(catalog, system, "spot")  # a neocloud's mode ratio, as the other fallbacks get
    assert spot is not None and spot.provider == "neocloud"
    site = site_for(catalog, system, operator=od.provider, hint_region=od.region)
    assert (site.region, site.pue_key, site.pue.value) == ("country-usa", "colocation", 1.42)
    assert site.grid.extra["located"] == (
        "the price's region global is a provider's one worldwide list price, which names no place: country-usa's "
        "grid assumed"
    )


def test_a_global_price_says_where_the_fleet_was_put(catalog: Catalog, hw: Hardware) -> None:
    """Hyperstack's H100 is one worldwide price: the fleet went to country-usa with no word (a 'us' price had one)."""
    system = hw.system("h100-sxm")
    quote = price_per_chip_hour(catalog, system, "on-demand", provider="hyperstack")
    assert quote is not None and quote.region == "global"
    site = site_for(catalog, system, operator=quote.provider, hint_region=quote.region)
    assert site.region == "country-usa" and "global" in site.grid.extra["located"]
    us = site_for(catalog, system, operator="lambda", hint_region="us")  # unchanged: its own note
    assert us.grid.extra["located"] == (
        "the price's region us is a provider's one price across its US data centres: country-usa's grid"
    )
    asked = site_for(catalog, system, region="country-usa", operator="hyperstack", hint_region="global")
    assert "located" not in asked.grid.extra  # a region the user gave is where it runs: nothing assumed
