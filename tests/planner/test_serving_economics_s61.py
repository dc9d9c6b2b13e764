"""An owned serving pool pays for the electricity its own energy figure reports (stop 61, review A #2): the TCO's
fixed terms for its chips, and its energy at the run's busy share, with the scale-out network's power only past one
system, at the site's $/kWh."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.tco import owned_tco
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import economics
from chipwise.serve.simulate import Pool


def test_an_owned_pool_pays_for_the_energy_it_reports(catalog: Catalog, hw: Hardware) -> None:
    """Eight H100s of one node busy 11% of the hour had been charged 8 x the TCO at full use ($1.628: 1,120 W a chip
    busy all hour, network included) = $13.02/h beside an energy figure of 3.51 kWh; they cost 8 x (0.9537 + 0.1907
    + 0.3465) fixed + the reported kWh x $0.0862."""
    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), 8)]  # type: ignore[arg-type]
    light = economics(catalog, pools, 100.0, 500.0, pricing="owned", busy=[0.1105])
    kwh = light["energy_j_per_hour"] / 3.6e6
    # 8 x (1,120 W x 0.1105 + 321 W x 0.8895) x PUE 1.42 (no network: one node)
    assert kwh == pytest.approx(8 * (1.020 * 0.1105 + 0.2207 * 0.8895) * 1.42, rel=1e-3)
    assert light["cost_usd_per_hour"] == pytest.approx(8 * (0.9537 + 0.1907 + 0.3465) + kwh * 0.0862, rel=1e-4)
    assert light["cost_usd_per_hour"] == pytest.approx(12.23, abs=0.01)
    # busy all hour, one node: the fixed terms and 1,020 W a chip, not the TCO's 1,120 W with the network's 100 W
    full = economics(catalog, pools, 100.0, 500.0, pricing="owned")
    tco = owned_tco(catalog, system)
    assert full["cost_usd_per_hour"] == pytest.approx(8 * (tco.usd_per_chip_hour - 0.1 * 1.42 * 0.0862), rel=1e-4)


def test_an_owned_pool_past_one_node_pays_for_its_network(catalog: Catalog, hw: Hardware) -> None:
    """Past one system the energy figure counts the scale-out network's power, and so does the cost: sixteen H100s
    busy all hour cost 16 x the TCO at full use, as training prices them."""
    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=8.0), 2)]  # type: ignore[arg-type]
    full = economics(catalog, pools, 100.0, 500.0, pricing="owned")
    assert full["cost_usd_per_hour"] == pytest.approx(16 * owned_tco(catalog, system).usd_per_chip_hour)


def test_the_reviewers_scenario_costs_what_its_own_figures_give() -> None:
    """`predict` of 8 H100s owned at 0.2 requests/s: $12.23/h and $66.35 per million output tokens (had been $13.02
    and $70.66), the cost's electricity the output's own energy_j_per_hour x $0.0862/kWh."""
    import chipwise.api as cw

    scenario = {
        "kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "input_tokens": 1024,
        "output_tokens": 256, "arrival_rate": 0.2, "requests": 200, "pricing": "owned",
    }  # fmt: skip
    r = cw.predict(scenario)
    fixed = 8 * (0.9537 + 0.1907 + 0.3465)
    assert r["cost_usd_per_hour"] == pytest.approx(fixed + r["energy_j_per_hour"] / 3.6e6 * 0.0862, rel=1e-4)
    assert r["cost_usd_per_hour"] == pytest.approx(12.23, abs=0.01)
    assert r["cost_usd_per_mtok"] == pytest.approx(66.35, abs=0.05)
