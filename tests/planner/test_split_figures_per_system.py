"""A deployment's economics_figures are true of every pool: a figure two pools' systems read differently is named
with each system, and a scale-out network a deployment does not use reads 'not used:', not a system's 0."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from chipwise.catalog import Catalog
from chipwise.economics.power import NOT_USED
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import economics
from chipwise.serve.simulate import Pool

NET_W = "datacenter.opex.network_power_w_per_chip"
NET_USD = "datacenter.capex.scaleout_network_usd_per_chip"


def _pool(hw: Hardware, system: str, chips: float, replicas: int, role: str = "both") -> Pool:
    setup = SimpleNamespace(system=hw.system(system), chips=chips)
    return Pool(setup, replicas, role)  # type: ignore[arg-type]


def _figures(econ: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, Any] = econ["economics_figures"]
    return figures


def test_a_split_on_two_systems_names_each_pools_network(catalog: Catalog, hw: Hardware) -> None:
    """trn2.48xlarge prefill (200 Gb/s a chip: half the 400G fabric, 50 W and $3,300) beside p5.48xlarge decode (400
    Gb/s: 100 W and $6,600), owned, KV over the network: one key each had read the decode pool's 100 W and $6,600."""
    pools = [_pool(hw, "trn2.48xlarge", 8.0, 1, "prefill"), _pool(hw, "p5.48xlarge", 4.0, 1, "decode")]
    econ = economics(catalog, pools, 500.0, 2500.0, "owned", transfer=SimpleNamespace(network=True))  # type: ignore[arg-type]
    figures = _figures(econ)
    assert NET_W not in figures and NET_USD not in figures
    assert figures[f"{NET_W} (trn2.48xlarge)"]["value"] == 50.0
    assert figures[f"{NET_W} (p5.48xlarge)"]["value"] == 100.0
    assert figures[f"{NET_USD} (trn2.48xlarge)"]["value"] == 3300.0
    assert figures[f"{NET_USD} (p5.48xlarge)"]["value"] == 6600.0
    # what both pools read alike keeps its one name
    assert "datacenter.opex.idle_power_fraction" in figures


def test_a_split_on_one_system_keeps_one_name(catalog: Catalog, hw: Hardware) -> None:
    """Two pools of one p5 read every figure alike: no key gains a system."""
    pools = [_pool(hw, "p5.48xlarge", 8.0, 1, "prefill"), _pool(hw, "p5.48xlarge", 8.0, 1, "decode")]
    econ = economics(catalog, pools, 500.0, 2500.0, "owned", transfer=SimpleNamespace(network=True))  # type: ignore[arg-type]
    figures = _figures(econ)
    assert figures[NET_W]["value"] == 100.0 and figures[NET_USD]["value"] == 6600.0
    assert not any(" (" in name for name in figures)


def test_replicas_each_in_one_system_read_not_used(catalog: Catalog, hw: Hardware) -> None:
    """16 H100 as two TP8 replicas on two p5 had read 'a single system: no scale-out fabric' and 'a fleet of one
    p5.48xlarge: no scale-out network'; both are 0 because no traffic crosses the network, and say so."""
    econ = economics(catalog, [_pool(hw, "p5.48xlarge", 8.0, 2)], 500.0, 2500.0, "owned")
    figures = _figures(econ)
    for key in (NET_W, NET_USD):
        assert figures[key]["value"] == 0.0
        assert figures[key]["derivation"].startswith(NOT_USED)
        assert "a single system" not in figures[key]["derivation"]
        assert "a fleet of one p5.48xlarge" not in figures[key]["derivation"]
    across = _figures(economics(catalog, [_pool(hw, "p5.48xlarge", 16.0, 1)], 500.0, 2500.0, "owned"))
    assert across[NET_W]["value"] == 100.0 and not across[NET_W]["derivation"].startswith(NOT_USED)
    assert across[NET_USD]["value"] == 6600.0 and not across[NET_USD]["derivation"].startswith(NOT_USED)
