"""Owned-fleet TCO: the hand-computed H100 case, break-even utilisation (against the system's own price first, or why it
has none), overrides and bad input, what `chipwise tco` refuses to price, the owned server at its sale price, the
utilisation bound a scenario is told, and the modes --compare offers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.pricing import latest_quotes, price_gap
from chipwise.economics.tco import owned_tco, tco_inputs, tco_report
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.interfaces.cli.app import run
from cli_run import run_error, run_json, scenario_error

HOURS_PER_YEAR = 365.25 * 24
HOURS_PER_MONTH = HOURS_PER_YEAR / 12


def test_h100_tco_by_hand(catalog: Catalog, hw: Hardware) -> None:
    """One H100 of a p5-class 8-GPU server, owned, in a US colocation facility, used every hour.

    capex    = 27,500 chip + 6,250 server + 0 scale-up (NVSwitch on the board) + 6,600 fabric + 3,700 storage
    power    = 10,200 W / 8 = 1,275 W per GPU with host; busy 0.76 x 1,275 + 100 W network = 1,069 W;
               rated 1,275 + 100 = 1,375 W
    $/h      = 44,050 / (5 x 8,766) + 0.04 x 44,050 / 8,766 + 184.06 x 1.375 / 730.5 + 1.069 x 1.42 x 0.0862
    """
    t = owned_tco(catalog, hw.system("h100-sxm"))
    capex = 27_500 + 6_250 + 0 + 6_600 + 3_700
    depreciation = capex / (5 * HOURS_PER_YEAR)
    operations = 0.04 * capex / HOURS_PER_YEAR
    colocation = 184.06 * 1.375 / HOURS_PER_MONTH
    energy = 1.069 * 1.42 * 0.0862
    assert t.capex_usd == capex
    terms = t.breakdown_per_chip_hour()
    assert terms["depreciation"] == pytest.approx(depreciation, rel=1e-9)  # 1.0050
    assert terms["operations"] == pytest.approx(operations, rel=1e-9)  # 0.2010
    assert terms["colocation"] == pytest.approx(colocation, rel=1e-9)  # 0.3465
    assert terms["energy"] == pytest.approx(energy, rel=1e-9)  # 0.1308
    assert t.usd_per_chip_hour == pytest.approx(1.68332, rel=1e-5)
    assert sum(terms.values()) == pytest.approx(t.usd_per_chip_hour, rel=1e-12)


def test_utilisation_and_break_even(catalog: Catalog, hw: Hardware) -> None:
    t = owned_tco(catalog, hw.system("h100-sxm"))
    half = owned_tco(catalog, hw.system("h100-sxm"), utilisation=0.5)
    # fixed costs per used hour double; energy per used hour is busy + idle share
    assert half.usd_per_chip_hour > 1.9 * (t.usd_per_chip_hour - t.breakdown_per_chip_hour()["energy"])
    u = t.break_even_utilisation(6.88)  # AWS p5 on-demand per GPU-hour
    assert u is not None and 0.2 < u < 0.25
    assert float(t.usd_per_used_chip_hour(u)) == pytest.approx(6.88, rel=1e-9)
    assert t.break_even_utilisation(1.0) is None  # renting at $1/h always wins


def test_overrides_and_facility(catalog: Catalog, hw: Hardware) -> None:
    base = owned_tco(catalog, hw.system("h100-sxm"))
    cheap = owned_tco(catalog, hw.system("h100-sxm"), overrides={"chip_price_usd": 17_500})
    assert base.usd_per_chip_hour - cheap.usd_per_chip_hour == pytest.approx(
        10_000 * (1 / (5 * HOURS_PER_YEAR) + 0.04 / HOURS_PER_YEAR), rel=1e-9
    )
    built = owned_tco(catalog, hw.system("h100-sxm"), facility="owned")
    assert "facility" in built.breakdown_per_chip_hour() and "colocation" not in built.breakdown_per_chip_hour()
    rack = owned_tco(catalog, hw.system("gb200"))
    assert rack.inputs.capex["scaleup_network"].value > 0  # NVL72 switch trays are extra capex


def test_owned_facility_by_hand_and_its_figure_in_usd_per_kw(catalog: Catalog, hw: Hardware) -> None:
    """An owned facility: 11,700 USD/kW x 1.375 kW rated per H100 / 15 years = $0.12235 a chip-hour. The figure is
    in USD/kW, SI USD/W when loaded (it had unit 'USD', and the model divided by 1,000 in the middle: the record's
    `si` 11.7 said 11.7 USD)."""
    built = owned_tco(catalog, hw.system("h100-sxm"), facility="owned")
    assert built.breakdown_per_chip_hour()["facility"] == pytest.approx(
        11_700 * 1.375 / (15 * HOURS_PER_YEAR), rel=1e-12
    )  # 0.12235
    record = built.inputs.space.record()
    assert (record["value"], record["unit"]) == (11_700, "USD/kW")
    assert record["si"] == pytest.approx(11.7, rel=1e-12)


def test_a_facility_cost_in_a_catalog_file_without_per_kw_is_one_clear_error(hw: Hardware, tmp_path: Path) -> None:
    """A catalog file written when the facility cost had unit 'USD' (per kW) would now be read per W, 1,000 times the
    cost meant: refused, naming the file and the unit."""
    path = tmp_path / "facility.yaml"
    path.write_text(
        "datacenter:\n  capex:\n    facility_usd_per_kw: {value: 12000, unit: USD, status: estimate, "
        'derivation: "a bid"}\n'
    )
    with pytest.raises(ChipwiseError) as info:
        load_catalog([path])  # refused as the file is read, before any command prices with it
    assert str(info.value) == (
        f"{path}: datacenter.capex.facility_usd_per_kw is in 'USD' (money), where the figure is a capacity_price. "
        "Fix: give it in one of USD/W, USD/kW, USD/MW."
    )
    # any figure of the tree sections: a facility life in GB had been taken as years
    life = "{value: 15, unit: GB, status: estimate, derivation: x}"
    path.write_text(f"datacenter:\n  capex:\n    facility_life_years: {life}\n")
    with pytest.raises(ChipwiseError, match=r"facility_life_years is in 'GB' \(bytes\), where the figure is a time"):
        load_catalog([path])


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"utilisation": -0.5}, "utilisation"),
        ({"utilisation": 1.5}, "utilisation"),
        ({"pue": 0.9}, "PUE"),
        ({"region": "us-eest-1"}, "Did you mean"),
        ({"facility": "garage"}, "facility"),
        ({"overrides": {"chip_price": 1.0}}, "unknown TCO input"),
    ],
)
def test_bad_inputs(catalog: Catalog, hw: Hardware, kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ChipwiseError, match=needle):
        owned_tco(catalog, hw.system("h100-sxm"), **kwargs)


def test_tco_json_has_every_term_and_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["tco", "h100-sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["usd_per_chip_hour"] == pytest.approx(1.683, abs=1e-3)
    assert set(data["terms_usd_per_chip_hour"]) == {"depreciation", "operations", "colocation", "energy"}
    for name, f in data["inputs"].items():
        assert f["status"], name
        assert f["source"] or f.get("derivation"), name
    assert any(q["provider"] == "aws" and q["break_even_utilisation"] for q in data["break_even"])


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["tco", "h100-sxm", "--utilisation", "-0.5"], "utilisation"),
        (["tco", "h100-sxm", "--pue", "0.9"], "PUE"),
        (["tco", "h100-sxm", "--region", "mars-1"], "unknown region"),
        (["tco", "h100-sxm", "--compare", "cheap"], "unknown pricing mode"),
        (["tco", "trn4"], "no unit price"),
        # NaN and infinity had priced a chip-hour at '$nan' and every break-even at 'never' (exit 0); each named as
        # its bound names it (the option's key, 'server_usd_per_chip', had been no name the user typed)
        (["tco", "h100-sxm", "--chip-price", "nan"], "h100-sxm chip price nan is not a finite number. Fix: give a"),
        (["tco", "h100-sxm", "--electricity", "inf"], "electricity price inf is not a finite number. Fix:"),
        (["tco", "h100-sxm", "--operations", "nan"], "operations fraction nan is not a finite number"),
        (["tco", "h100-sxm", "--server", "nan"], "server capex per chip nan is not a finite number"),
        (["tco", "h100-sxm", "--scaleup-network", "inf"], "scale-up network capex per chip inf is not a finite number"),
        (["tco", "h100-sxm", "--depreciation-years", "inf"], "depreciation life inf is not a finite number"),
        # an infinite PUE gave 'inf TWh'; NaN was 'below 1'
        (["tco", "h100-sxm", "--pue", "inf"], "PUE inf is not a finite number. Fix: give a PUE >= 1"),
        (["tco", "h100-sxm", "--pue", "nan"], "PUE nan is not a finite number. Fix: give a PUE >= 1"),
        (["tco", "h100-sxm", "--chip-price", "-1"], "h100-sxm chip price -1 is negative"),
    ],
)
def test_tco_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    assert run(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_break_even_against_a_mode_the_catalog_lists_no_price_in_is_derived(catalog: Catalog, hw: Hardware) -> None:
    """--compare reserved-3y on an H100: no such price is listed, and the break-even table was left empty with no
    word. It takes the price plan train uses (on-demand x the mode's ratio), marked an estimate with its derivation."""
    from chipwise.economics.pricing import price_per_chip_hour
    from chipwise.economics.tco import break_even, owned_tco

    system = hw.system("h100-sxm")
    rows = break_even(catalog, owned_tco(catalog, system), "reserved-3y")
    quote = price_per_chip_hour(catalog, system, "reserved-3y")
    assert quote is not None and len(rows) == 1
    assert rows[0]["usd_per_chip_hour"] == quote.usd_per_chip_hour and rows[0]["status"] == "estimate"
    assert "pricing_mode_ratio.reserved-3y" in rows[0]["derivation"]
    assert rows[0]["verdict"] == "owning is cheaper at any utilisation"  # paid every hour: no break-even


def test_the_scale_out_fabric_is_charged_by_the_systems_bandwidth(catalog: Catalog, hw: Hardware) -> None:
    """The $6,600 a chip of scale-out fabric is a 400G-port-a-GPU InfiniBand fat tree; a TPU v5p pod has 50 Gb/s of
    scale-out a chip and paid the whole of it (28% of its capex). By bandwidth: 6,600 x 50 / 400 = $825.

    capex = 9,000 chip + 6,250 server + 0 scale-up (torus links on the boards) + 825 fabric + 3,700 storage
          = 19,775 (it was 25,550 with the whole fabric)
    power = tpu-v5p-pod host share + 100 W x 50 / 400 = 12.5 W of network a chip
    A given fabric cost is taken as it is (no scaling): --scaleout-network 1000 stays $1,000."""
    t = owned_tco(catalog, hw.system("tpu-v5p"))
    parts = t.record()["capex_usd_per_chip_by_part"]
    assert parts["scaleout_network"] == pytest.approx(825.0)
    assert t.capex_usd == pytest.approx(9000 + 6250 + 0 + 825 + 3700)
    assert t.inputs.power.network_w == pytest.approx(12.5)
    trn2 = owned_tco(catalog, hw.system("trn2"))
    assert trn2.record()["capex_usd_per_chip_by_part"]["scaleout_network"] == pytest.approx(3300.0)
    given = owned_tco(catalog, hw.system("tpu-v5p"), overrides={"scaleout_network_usd_per_chip": 1000})
    assert given.record()["capex_usd_per_chip_by_part"]["scaleout_network"] == pytest.approx(1000.0)


# `tco` says why a system has no price of its own in the compared mode, and a zero scale-out reference bandwidth is
# refused.


# ------------------------------------------------------------------------------------------- no own price in tco
def test_tco_says_why_a_system_has_no_own_price_beside_its_chips_other_prices(
    catalog: Catalog, hw: Hardware, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tco azure-nd-h100-v5 --compare capacity-block` listed p5's block and captioned it '* azure-nd-h100-v5's own
    price', with no row starred: Capacity Blocks are EC2's, not Azure's, and predict leaves the Azure system '-'."""
    system = hw.system("azure-nd-h100-v5")
    report = tco_report(catalog, owned_tco(catalog, system), "capacity-block")
    assert [r["entry"] for r in report["break_even"]] == ["p5.48xlarge"]
    assert not report["break_even"][0]["this_system"]
    note = "capacity-block is sold by aws only, not by azure, which rents azure-nd-h100-v5"
    assert report["break_even_note"] == note == price_gap(catalog, system, "capacity-block")
    own = tco_report(catalog, owned_tco(catalog, hw.system("p5.48xlarge")), "capacity-block")
    assert "break_even_note" not in own
    from chipwise.interfaces.cli.app import run

    assert run(["tco", "azure-nd-h100-v5", "--compare", "capacity-block"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "own price, the one predict" not in out
    assert "azure-nd-h100-v5 has no capacity-block price (capacity-block is sold by aws only, not by azure" in out
    assert run(["tco", "p5.48xlarge", "--compare", "capacity-block"]) == 0
    assert "* p5.48xlarge's own price, the one predict and plan train use for it" in capsys.readouterr().out


# --------------------------------------------------------------------------------- zero scale-out reference bandwidth
@pytest.mark.parametrize("value", ["0", "0Gb/s"])
def test_a_zero_scaleout_reference_bandwidth_is_refused(capsys: pytest.CaptureFixture[str], value: str) -> None:
    """It had been taken as a share of 1 (every fabric priced at one 400G port a chip) and printed '/ 0 Gb/s per
    chip' in the derivation, exit 0."""
    err = run_error(
        capsys, ["tco", "h100-sxm", "--set", f"datacenter.capex.scaleout_reference_bandwidth_per_chip={value}"]
    )
    assert "scaleout_reference_bandwidth_per_chip" in err and "above 0" in err and "Fix:" in err


# `tco`'s break-even against the system's own price first, and `chipwise tco` refusing what it cannot price, saying why
# a price is missing, and marking an owned cost an estimate with its inputs listed.


# ------------------------------------------------------------------------------------------------------ one price
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


# ------------------------------------------------------------------------------------------------ hybrid, Trn4
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


# ---------------------------------------------------------------------------------------------- missing prices
def test_a_missing_price_says_why(catalog: Catalog, hw: Hardware, capsys: pytest.CaptureFixture[str]) -> None:
    """`tco mi300x --compare capacity-block` printed no break-even and no reason; a capacity block asked of Lambda
    said 'no aws price for h100-sxm', which the catalog has."""
    report = tco_report(catalog, owned_tco(catalog, hw.system("mi300x")), "capacity-block")
    assert report["break_even"] == [] and "sold by aws only" in report["break_even_note"]
    assert price_gap(catalog, hw.system("h100-sxm"), "capacity-block", provider="lambda").endswith("not by lambda")
    from chipwise.interfaces.cli.app import run

    assert run(["tco", "mi300x", "--compare", "capacity-block"]) == 0
    assert "no break-even against capacity-block prices: capacity-block is sold by aws only" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- tco input checks
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


# ---------------------------------------------------------------------------------------- an owned cost's status
def test_an_owned_cost_says_it_is_an_estimate_and_lists_its_inputs(catalog: Catalog, hw: Hardware) -> None:
    """An owned chip-hour ($1.69 for an H100) rests on the $27,500 analyst estimate and estimated datacenter figures,
    but carried no status, and its inputs were missing from the figures a prediction lists: Tco.status, estimated
    and figures give them (economics_figures keys)."""
    t = owned_tco(catalog, hw.system("h100-sxm"))
    assert t.status == "estimate" and "h100-sxm.unit_price" in t.estimated
    figures = t.figures()
    for key in ("h100-sxm.unit_price", "datacenter.colocation_usd_per_kw_month", "datacenter.pue.colocation"):
        assert key in figures, key
    record = t.record()
    assert record["status"] == "estimate" and record["estimated_inputs"] == t.estimated


# ----------------------------------------------------------------- the owned server, the utilisation bound, --compare
def test_the_owned_server_is_its_sale_price(catalog: Catalog, hw: Hardware) -> None:
    """The server term was SemiAnalysis's DGX H100 bill of materials / 8 = $4,000, a build cost beside a chip
    street price. A DGX H100 sells for ~$270,000: less 8 x $27,500 chips = $50,000 / 8 = $6,250 a GPU, so chip +
    server = $33,750, its sale price / 8. capex 44,050; $/h = 44,050 / (5 x 8,766) + 0.04 x 44,050 / 8,766 +
    184.06 x 1.375 / 730.5 + 1.069 x 1.42 x 0.0862 = 1.00502 + 0.20100 + 0.34645 + 0.13085 = $1.68332 (was $1.62797
    with 1,120 W busy); owning beats Lambda's $3.99 above (1.55247 + 0.03926) / (3.99 - 0.13085 + 0.03926) = 40.8%."""
    t = owned_tco(catalog, hw.system("h100-sxm"))
    server = t.inputs.capex["server"]
    assert server.value == pytest.approx(270_000 / 8 - 27_500) == 6_250
    assert server.status == "estimate" and "sale price" in server.derivation
    assert t.inputs.capex["chip"].value + server.value == pytest.approx(270_000 / 8)
    assert t.capex_usd == pytest.approx(44_050)
    assert t.usd_per_chip_hour == pytest.approx(1.00502 + 0.20100 + 0.34645 + 0.13085, abs=2e-5)
    assert t.break_even_utilisation(3.99) == pytest.approx(0.408, abs=5e-4)


TRAIN = "kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 64\ntokens: 1e12\npricing: owned\n"


@pytest.mark.parametrize("value", ["0", "0.005"])
def test_a_scenarios_utilisation_names_the_bound_the_tco_holds(value: str) -> None:
    """'utilisation: 0' had answered 'Input should be greater than 0. Fix: give a positive number', and 0.005 was then
    refused as outside 0.01 to 1: one line now names 0.01."""
    err = scenario_error(TRAIN + f"utilisation: {value}\n")
    assert "utilisation: Input should be greater than or equal to 0.01" in err


def test_compare_offers_only_the_modes_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """--compare foo had offered 'owned', which --compare owned then refused."""
    rental = "on-demand, capacity-block, reserved-1y, reserved-3y, spot."
    foo = run_error(capsys, ["tco", "h100-sxm", "--compare", "foo"])
    assert foo == f"error: unknown pricing mode 'foo'. Fix: use one of {rental}"
    owned = run_error(capsys, ["tco", "h100-sxm", "--compare", "owned"])
    assert owned == f"error: compare needs a rental mode. Fix: use one of {rental}"


def test_a_mistyped_mode_or_facility_gets_its_near_match(capsys: pytest.CaptureFixture[str]) -> None:
    """tco's closed sets say the near match, as an id's look-up does (UnknownNameError through the TCO's checks; plan
    train's and plan serve's in tests/interfaces/test_cli_bad_input.py): 'colo' had been told only the list."""
    rental = "on-demand, capacity-block, reserved-1y, reserved-3y, spot"
    assert run_error(capsys, ["tco", "h100-sxm", "--compare", "on-demnd"]) == (
        f"error: unknown pricing mode 'on-demnd'. Did you mean 'on-demand'? Fix: use one of {rental}."
    )
    assert run_error(capsys, ["tco", "h100-sxm", "--facility", "colo"]) == (
        "error: unknown facility 'colo'. Did you mean 'colocation'? Fix: use one of colocation, owned."
    )
