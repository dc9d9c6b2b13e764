"""An owned serving pool pays for the electricity its own energy figure reports: the TCO's fixed terms for its chips,
and its energy at the run's busy share, with the scale-out network's power only past one system, at the site's $/kWh;
its price record says what it is charged, beside the TCO record at full use."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.catalog.loader import load_catalog
from chipwise.economics.power import power_model
from chipwise.economics.tco import owned_tco
from chipwise.hardware import Hardware
from chipwise.hardware.build import hardware
from chipwise.planner.serving_economics import economics
from chipwise.serve.simulate import Pool


def test_an_owned_pool_pays_for_the_energy_it_reports(catalog: Catalog, hw: Hardware) -> None:
    """Eight H100s of one node busy 11% of the hour had been charged 8 x the TCO at full use ($1.628: 1,120 W a chip
    busy all hour, network included) = $13.02/h beside an energy figure of 3.51 kWh; they cost 8 x (0.8544 + 0.1709
    + 0.3213) fixed (capex $37,450 with no scale-out fabric on one node: 37,450 / 43,830 h, 0.04 x 37,450 / 8,766 h,
    $184.06 x 1.275 kW / 730.5 h) + the reported kWh x $0.0862 = $11.07/h ($12.72 with the fabric's $6,600)."""
    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), 8)]  # type: ignore[arg-type]
    light = economics(catalog, pools, 100.0, 500.0, pricing="owned", busy=[0.1105])
    kwh = light["energy_j_per_hour"] / 3.6e6
    # 8 x (969 W x 0.1105 + 220.7 W x 0.8895) x PUE 1.42 (no network: one node; busy 0.76 x 1,275 W)
    assert kwh == pytest.approx(8 * (0.969 * 0.1105 + 0.2207 * 0.8895) * 1.42, rel=1e-3)
    assert light["cost_usd_per_hour"] == pytest.approx(8 * (0.8544 + 0.1709 + 0.3213) + kwh * 0.0862, rel=1e-4)
    assert light["cost_usd_per_hour"] == pytest.approx(11.07, abs=0.01)
    # busy all hour, one node: the fixed terms and 969 W a chip, not the TCO's 1,069 W with the network's 100 W
    full = economics(catalog, pools, 100.0, 500.0, pricing="owned")
    assert full["cost_usd_per_hour"] == pytest.approx(8 * (0.8544 + 0.1709 + 0.3213 + 0.969 * 1.42 * 0.0862), rel=1e-4)


def test_an_owned_pool_past_one_node_pays_for_its_network(catalog: Catalog, hw: Hardware) -> None:
    """A replica across systems (one of 16 H100, two p5) uses the scale-out network: the energy figure counts its
    power, and so does the cost: busy all hour they cost 16 x the TCO at full use, as training prices them. (Two
    replicas of 8, each inside its p5, use no network and pay none: tests/planner/test_serving_network_use.py.)"""
    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=16.0), 1)]  # type: ignore[arg-type]
    full = economics(catalog, pools, 100.0, 500.0, pricing="owned")
    assert full["cost_usd_per_hour"] == pytest.approx(16 * owned_tco(catalog, system).usd_per_chip_hour)


def test_the_reviewers_scenario_costs_what_its_own_figures_give() -> None:
    """`predict` of 8 H100s owned at 0.2 requests/s: $11.08/h and $60.11 per million output tokens ($11.09 and $60.14
    at a busy 0.8 of chip and host; had been $13.02
    and $70.66, then $12.23 and $66.35 with a scale-out fabric one node does not have; $10.59 and $57.47 with the
    server at its $4,000 build cost, not its sale price), the cost's electricity the
    output's own energy_j_per_hour x $0.0862/kWh."""
    import chipwise.api as cw

    scenario = {
        "kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "input_tokens": 1024,
        "output_tokens": 256, "arrival_rate": 0.2, "requests": 200, "pricing": "owned",
    }  # fmt: skip
    r = cw.predict(scenario)
    fixed = 8 * (0.8544 + 0.1709 + 0.3213)
    assert r["cost_usd_per_hour"] == pytest.approx(fixed + r["energy_j_per_hour"] / 3.6e6 * 0.0862, rel=1e-4)
    assert r["cost_usd_per_hour"] == pytest.approx(11.08, abs=0.01)
    assert r["cost_usd_per_mtok"] == pytest.approx(11.080 / (0.2 * 256 * 3600 / 1e6), abs=0.05)


# An owned serving pool's price record says what it is charged: the TCO's fixed terms and the pool's own energy at its
# busy share, beside the TCO record at full use, busy all hour.


def test_the_owned_price_record_is_what_is_charged(catalog: Catalog, hw: Hardware) -> None:
    """Eight H100s of one node busy 11% of the hour: the record had shown only the TCO's $1.628 a chip-hour with
    $0.137 of energy (1,590 W busy all hour); they are charged 0.8544 + 0.1709 + 0.3213 fixed (one node: no
    scale-out fabric) and their own kWh x $0.0862 over 8 chips, $11.07/h."""
    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), 8)]  # type: ignore[arg-type]
    out = economics(catalog, pools, 100.0, 500.0, pricing="owned", busy=[0.1105])
    (record,) = out["price_sources"]
    energy = out["energy_j_per_hour"] / 3.6e6 * 0.0862 / 8
    assert record["terms_usd_per_chip_hour"] == pytest.approx(
        {"depreciation": 0.8544, "operations": 0.1709, "colocation": 0.3213, "energy": energy}, rel=1e-3
    )
    # (969 W x 0.1105 + 220.7 W x 0.8895) x PUE 1.42 = 0.4308 kWh a chip x $0.0862
    assert record["terms_usd_per_chip_hour"]["energy"] == pytest.approx(0.0371, abs=1e-4)
    assert record["usd_per_chip_hour"] == pytest.approx(out["cost_usd_per_hour"] / 8)
    assert record["usd_per_hour"] == pytest.approx(out["cost_usd_per_hour"]) and record["busy_share"] == 0.1105
    assert "busy all hour" in record["charged_basis"]
    # the TCO record stays the owned cost at full use, busy all hour: one node's, no fabric (1.3466 + 969 W x 1.42
    # x $0.0862)
    assert record["tco"]["usd_per_chip_hour"] == pytest.approx(1.3466 + 0.11861, abs=1e-3)
    assert record["tco"]["terms_usd_per_chip_hour"]["energy"] == pytest.approx(0.11861, abs=1e-4)
    assert record["tco"]["capex_usd_per_chip_by_part"]["scaleout_network"] == 0.0


def test_the_charged_terms_are_the_cost(catalog: Catalog, hw: Hardware) -> None:
    """One source: usd_per_hour is chips x the sum of charged_per_chip_hour; at the full-use busy energy that is the
    TCO per chip-hour."""
    tco = owned_tco(catalog, hw.system("p5.48xlarge"))
    busy_j = 1517.98 * 3600.0  # 1,069 W IT x PUE 1.42, an hour
    terms = tco.charged_per_chip_hour(4, 4 * busy_j)
    assert terms["energy"] == pytest.approx(1.51798 * 0.0862, rel=1e-4)
    assert sum(terms.values()) == pytest.approx(tco.usd_per_chip_hour, rel=1e-4)
    assert tco.usd_per_hour(4, 4 * busy_j) == pytest.approx(4 * sum(terms.values()))


def test_the_reviewers_scenario_reads_its_charge() -> None:
    """`predict` of one H100 owned at 1 request/s: cost $1.443/h (1.3466 fixed, no scale-out fabric for one chip),
    and its record says that a chip-hour with $0.0921 of energy (1.0686 kWh x $0.0862; $0.0966 at a busy 0.8 of chip
    and host), not only the TCO's $1.465 and $0.119 busy all hour. (0.0961 while Poisson arrivals were left unscaled,
    offering a little under 1 request/s.)"""
    import chipwise.api as cw

    scenario = {
        "kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 1,
        "input_tokens": 1000, "output_tokens": 200, "pricing": "owned",
    }  # fmt: skip
    r = cw.predict(scenario)
    (record,) = r["price_sources"]
    assert r["cost_usd_per_hour"] == pytest.approx(1.3466 + r["energy_j_per_hour"] / 3.6e6 * 0.0862, abs=1e-4)
    assert record["usd_per_chip_hour"] == pytest.approx(r["cost_usd_per_hour"])
    assert record["terms_usd_per_chip_hour"]["energy"] == pytest.approx(r["energy_j_per_hour"] / 3.6e6 * 0.0862)
    assert record["terms_usd_per_chip_hour"]["energy"] == pytest.approx(0.09211, abs=1e-4)


def test_the_cost_per_million_tokens_counts_input_and_output(catalog: Catalog, hw: Hardware) -> None:
    """examples/serve-llama70b-h200.yaml: 8 H200 (one p5en.48xlarge, $63.296/h on demand in us-east-1, as 4 TP2
    replicas) at 20 requests/s of 1,024 + 1,024 tokens: 20,480 output and 40,960 total tokens/s. Per million output
    tokens 63.296 x 1e6 / (20,480 x 3,600) = $0.85851; per million of all tokens 63.296 x 1e6 / (40,960 x 3,600) =
    $0.42925, half of it (it had no test: the output price in its place went unnoticed)."""
    system = hw.system("p5en.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=2.0), 4)]  # type: ignore[arg-type]
    out = economics(catalog, pools, 20_480.0, 40_960.0)
    assert out["cost_usd_per_hour"] == pytest.approx(63.296, rel=1e-12)
    assert out["cost_usd_per_mtok"] == pytest.approx(63.296e6 / (20_480 * 3600), rel=1e-12)  # 0.85851
    assert out["cost_usd_per_mtok_total"] == pytest.approx(0.42925, rel=1e-4)
    assert out["cost_usd_per_mtok_total"] == pytest.approx(out["cost_usd_per_mtok"] * 1024 / 2048, rel=1e-12)


def test_serving_charges_the_rented_chips_it_leaves_unused_idle_power() -> None:
    """Llama-3.1-70B at 1 request/s on Inferentia2 runs 8 chips of an inf2.48xlarge's 12. The 4 others draw idle
    power all hour, as a training fleet's billed chips do: with the catalog's 250 W chip and 205 W host share, busy
    0.76 of both (345.8 W), idle 0.11 of the chip and 0.25 of the host (78.75 W), PUE 1.15: 8 x 345.8 x 1.15 =
    3.181 kWh an hour, + 4 x 78.75 x 1.15 = 0.362, 3.544 kWh (3.181 had been reported)."""
    r = cw.predict(
        {"kind": "serve", "model": "llama-3.1-70b", "hardware": "inf2", "input_tokens": 1024,
         "output_tokens": 256, "arrival_rate": 1}
    )  # fmt: skip
    assert (r["chips"], r["billed_chips"]) == (8, 12)
    catalog = load_catalog()
    p = power_model(catalog, hardware(catalog).system("inf2"), scaleout=False)
    b = r["busy_share"]
    per_hour_w = 8 * (p.busy_w * b + p.idle_w * (1 - b)) + 4 * p.idle_w
    assert r["energy_j_per_hour"] == pytest.approx(per_hour_w * r["pue"] * 3600.0, rel=1e-9)
    assert 4 * p.idle_w * r["pue"] * 3600.0 / r["energy_j_per_hour"] > 0.05  # the 4 idle chips' share: 10% now
