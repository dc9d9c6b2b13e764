"""Review mends of the economics layer: one price per chip across `tco` and `predict`, vendor reference systems
priced as their chip, modes that follow a user's price, price regions placed on a grid, the host's own idle power,
and `chipwise tco` refusing what it cannot price."""

from __future__ import annotations

import json

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.energy import check_region, site_for
from chipwise.economics.power import power_model
from chipwise.economics.pricing import latest_quotes, price_gap, price_per_chip_hour
from chipwise.economics.tco import owned_tco, tco_inputs, tco_report
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware, hardware
from cli_run import run_error, run_json


# ------------------------------------------------------------------------------------------------- #1 one price
def test_a_chips_listed_capacity_block_price_comes_before_a_ratio_estimate(catalog: Catalog, hw: Hardware) -> None:
    """predict priced a GB200 capacity block at 0.82 x the $12.20 on-demand estimate ($10.004) while the catalog lists
    the p6e-gb200 UltraServer's $761.904 an hour for 72 (spec, $10.58 a GPU-hour, which tco showed); a DGX H100 had
    no capacity-block price at all ('no aws price for h100-sxm') beside p5's $41.528 block."""
    gb200 = price_per_chip_hour(catalog, hw.system("gb200"), "capacity-block")
    assert gb200 is not None and gb200.status == "spec" and not gb200.derived_from_mode
    assert gb200.usd_per_chip_hour == pytest.approx(761.904 / 72)
    dgx = price_per_chip_hour(catalog, hw.system("dgx-h100"), "capacity-block")
    assert dgx is not None and dgx.usd_per_chip_hour == pytest.approx(41.528 / 8) and dgx.priced_as == "p5.48xlarge"


def test_tco_breaks_even_against_the_systems_own_price_first(catalog: Catalog, hw: Hardware) -> None:
    """`tco p5e.48xlarge --compare capacity-block` showed p5en's $54.92 / 8 = $6.87 (latest_quotes kept one price per
    provider and region, and p5en's stood for p5e's): p5e's own $47.76 / 8 = $5.97 comes first, p5en's beside it."""
    report = tco_report(catalog, owned_tco(catalog, hw.system("p5e.48xlarge")), "capacity-block")
    first, *rest = report["break_even"]
    assert first["this_system"] and first["entry"] == "p5e.48xlarge"
    assert first["usd_per_chip_hour"] == pytest.approx(47.76 / 8)
    assert [r["entry"] for r in rest] == ["p5en.48xlarge"]
    entries = {q.entry for q in latest_quotes(catalog, "h200", "capacity-block")}
    assert {"p5e.48xlarge", "p5en.48xlarge"} <= entries


# ------------------------------------------------------------------------------------- #3 vendor reference systems
def test_a_vendor_reference_system_costs_what_its_chip_costs(catalog: Catalog, hw: Hardware) -> None:
    """dgx-h100 took whichever provider's H100 price was newest: Azure's $12.29 (eastus, PUE 1.18), where
    h100-sxm is AWS's $6.88. It is priced as its chip's default system, p5.48xlarge, and its site follows."""
    dgx = price_per_chip_hour(catalog, hw.system("dgx-h100"))
    chip = price_per_chip_hour(catalog, hw.system("h100-sxm"))
    assert dgx is not None and chip is not None
    assert (dgx.provider, dgx.usd_per_chip_hour) == ("aws", pytest.approx(chip.usd_per_chip_hour))
    assert "priced as h100-sxm's default system, p5.48xlarge" in dgx.derivation
    site = site_for(catalog, hw.system("dgx-h100"), operator=dgx.provider, hint_region=dgx.region)
    assert (site.region, site.pue.value) == ("us-east-1", pytest.approx(1.15))


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


# --------------------------------------------------------------------------------------------- #5 hybrid, Trn4
def test_tco_refuses_a_rack_of_two_chip_types(
    catalog: Catalog, hw: Hardware, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tco trn4-gb300-fusion-rack` priced 36 Trainium4 and 36 GB300 as 72 Trainium4."""
    with pytest.raises(ChipwiseError, match="two chip types"):
        tco_inputs(catalog, hw.system("trn4-gb300-fusion-rack"))
    err = run_error(capsys, ["tco", "trn4-gb300-fusion-rack"])
    assert "36 trn4 and 36 gb300" in err and "chipwise tco gb300" in err


def test_tco_of_a_projected_chip_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.interfaces.cli.app import run

    data = run_json(capsys, ["tco", "trn4", "--chip-price", "15000", "--json"])
    assert data["projected"] is True
    assert run(["tco", "trn4", "--chip-price", "15000"]) == 0
    assert "PROJECTED: trn4" in capsys.readouterr().out
    assert "PROJECTED" in run_error(capsys, ["tco", "trn4"])  # no unit price: the error says what trn4 is


# ------------------------------------------------------------------------------------------- #6 missing prices
def test_a_missing_price_says_why(catalog: Catalog, hw: Hardware, capsys: pytest.CaptureFixture[str]) -> None:
    """`tco mi300x --compare capacity-block` printed no break-even and no reason; a capacity block asked of Lambda
    said 'no aws price for h100-sxm', which the catalog has."""
    report = tco_report(catalog, owned_tco(catalog, hw.system("mi300x")), "capacity-block")
    assert report["break_even"] == [] and "sold by aws only" in report["break_even_note"]
    assert price_gap(catalog, hw.system("h100-sxm"), "capacity-block", provider="lambda").endswith("not by lambda")
    from chipwise.interfaces.cli.app import run

    assert run(["tco", "mi300x", "--compare", "capacity-block"]) == 0
    assert "no break-even against capacity-block prices: capacity-block is sold by aws only" in capsys.readouterr().out


# ------------------------------------------------------------------------------------- #10, #11 tco input checks
def test_tco_refuses_nonsense_combinations(capsys: pytest.CaptureFixture[str]) -> None:
    """--colocation with an owned facility was ignored; --operations 5 (500% of capex a year) was accepted."""
    assert "--facility colocation" in run_error(
        capsys, ["tco", "h100-sxm", "--facility", "owned", "--colocation", "500"]
    )
    assert "operations fraction 5 is outside 0 to 1 (of capex a year" in run_error(
        capsys, ["tco", "h100-sxm", "--operations", "5"]
    )
    assert run_json(capsys, ["tco", "h100-sxm", "--operations", "0.06", "--json"])["usd_per_chip_hour"] > 0


def test_tco_with_every_cost_zero_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """Every capex input, colocation and electricity at 0: the table's shares divided by a zero total
    (ZeroDivisionError, an internal error)."""
    from chipwise.interfaces.cli.app import run

    zeros = ["--chip-price", "0", "--server", "0", "--scaleup-network", "0", "--scaleout-network", "0", "--storage",
             "0", "--colocation", "0", "--electricity", "0"]  # fmt: skip
    assert run(["tco", "h100-sxm", *zeros]) == 0
    out = capsys.readouterr()
    assert "error" not in out.err.lower() and "0.0000" in out.out


# ------------------------------------------------------------------------------------ #12 a user's on-demand price
def test_modes_follow_an_on_demand_price_set_on_the_command_line() -> None:
    """`--set h100-sxm.price=2.0`: spot followed ($1.20), but reserved-1y kept AWS's $3.64 and capacity-block $5.19,
    commitments dearer than the user's on-demand rate. Each mode keeps the catalog's discount off on-demand."""
    cat = load_catalog(sets=["h100-sxm.price=2.0"])
    system = hardware(cat).system("h100-sxm")
    base = load_catalog()
    p5 = hardware(base).system("h100-sxm")
    od = price_per_chip_hour(base, p5)
    assert od is not None
    for mode in ("capacity-block", "reserved-1y", "reserved-3y", "spot"):
        q, catalog_q = price_per_chip_hour(cat, system, mode), price_per_chip_hour(base, p5, mode)
        assert q is not None and catalog_q is not None
        assert q.usd_per_chip_hour == pytest.approx(2.0 * catalog_q.usd_per_chip_hour / od.usd_per_chip_hour), mode
        assert q.usd_per_chip_hour < 2.0 and q.provider == "user", mode
        assert "follows the on-demand price set on the command line" in q.derivation, mode


# ------------------------------------------------------------------------------------------ #14 price regions
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


# --------------------------------------------------------------------------------------------- #15 host idle
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


def test_an_owned_cost_says_it_is_an_estimate_and_lists_its_inputs(catalog: Catalog, hw: Hardware) -> None:
    """An owned chip-hour ($1.63 for an H100) rests on the $27,500 analyst estimate and estimated datacenter figures,
    but carried no status, and its inputs were missing from the figures a prediction lists: Tco.status, estimated
    and figures give them (economics_figures keys)."""
    t = owned_tco(catalog, hw.system("h100-sxm"))
    assert t.status == "estimate" and "h100-sxm.unit_price" in t.estimated
    figures = t.figures()
    for key in ("h100-sxm.unit_price", "datacenter.colocation_usd_per_kw_month", "datacenter.pue.colocation"):
        assert key in figures, key
    record = t.record()
    assert record["status"] == "estimate" and record["estimated_inputs"] == t.estimated
