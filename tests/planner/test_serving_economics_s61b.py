"""An owned serving pool's price record says what it is charged (stop 61, review E #4): the TCO's fixed terms and
the pool's own energy at its busy share, beside the TCO record at full use, busy all hour."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.tco import owned_tco
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import economics
from chipwise.serve.simulate import Pool


def test_the_owned_price_record_is_what_is_charged(catalog: Catalog, hw: Hardware) -> None:
    """Eight H100s of one node busy 11% of the hour: the record had shown only the TCO's $1.628 a chip-hour with
    $0.137 of energy (1,590 W busy all hour); they are charged 0.9537 + 0.1907 + 0.3465 fixed and their own kWh x
    $0.0862 over 8 chips, $12.23/h."""
    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), 8)]  # type: ignore[arg-type]
    out = economics(catalog, pools, 100.0, 500.0, pricing="owned", busy=[0.1105])
    (record,) = out["price_sources"]
    energy = out["energy_j_per_hour"] / 3.6e6 * 0.0862 / 8
    assert record["terms_usd_per_chip_hour"] == pytest.approx(
        {"depreciation": 0.9537, "operations": 0.1907, "colocation": 0.3465, "energy": energy}, rel=1e-3
    )
    # (1,020 W x 0.1105 + 220.7 W x 0.8895) x PUE 1.42 = 0.4388 kWh a chip x $0.0862
    assert record["terms_usd_per_chip_hour"]["energy"] == pytest.approx(0.0378, abs=1e-4)
    assert record["usd_per_chip_hour"] == pytest.approx(out["cost_usd_per_hour"] / 8)
    assert record["usd_per_hour"] == pytest.approx(out["cost_usd_per_hour"]) and record["busy_share"] == 0.1105
    assert "busy all hour" in record["charged_basis"]
    # the TCO record stays the owned cost at full use, which `chipwise tco` prints
    assert record["tco"]["usd_per_chip_hour"] == pytest.approx(1.628, abs=1e-3)
    assert record["tco"]["terms_usd_per_chip_hour"]["energy"] == pytest.approx(0.1371, abs=1e-4)


def test_the_charged_terms_are_the_cost(catalog: Catalog, hw: Hardware) -> None:
    """One source: usd_per_hour is chips x the sum of charged_per_chip_hour; at the full-use busy energy that is the
    TCO per chip-hour."""
    tco = owned_tco(catalog, hw.system("p5.48xlarge"))
    busy_j = 1590.4 * 3600.0  # 1,120 W IT x PUE 1.42, an hour
    terms = tco.charged_per_chip_hour(4, 4 * busy_j)
    assert terms["energy"] == pytest.approx(1.5904 * 0.0862, rel=1e-4)
    assert sum(terms.values()) == pytest.approx(tco.usd_per_chip_hour, rel=1e-4)
    assert tco.usd_per_hour(4, 4 * busy_j) == pytest.approx(4 * sum(terms.values()))


def test_the_reviewers_scenario_reads_its_charge() -> None:
    """`predict` of one H100 owned at 1 request/s: cost $1.587/h, and its record now says $1.587 a chip-hour with
    $0.0961 of energy (4,014,917 J = 1.1153 kWh x $0.0862), not only the TCO's $1.628 and $0.137."""
    import chipwise.api as cw

    scenario = {
        "kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 1,
        "input_tokens": 1000, "output_tokens": 200, "pricing": "owned",
    }  # fmt: skip
    r = cw.predict(scenario)
    (record,) = r["price_sources"]
    assert r["cost_usd_per_hour"] == pytest.approx(1.587, abs=1e-3)
    assert record["usd_per_chip_hour"] == pytest.approx(r["cost_usd_per_hour"])
    assert record["terms_usd_per_chip_hour"]["energy"] == pytest.approx(r["energy_j_per_hour"] / 3.6e6 * 0.0862)
    assert record["terms_usd_per_chip_hour"]["energy"] == pytest.approx(0.0961, abs=1e-4)
