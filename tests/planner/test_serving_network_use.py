"""A serving deployment draws the scale-out network's power, and owned pays its capex, only where its traffic crosses
it (planner.serving_economics.uses_network): a replica across systems, or a split's KV cache between them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import economics
from chipwise.serve.simulate import Pool

#: an H100 of a p5.48xlarge busy: 0.76 x (700 W + 575 W of host, 10.2 kW / 8 - 700) = 969 W, + 100 W of 400G fabric
H100_BUSY_W, H100_NETWORK_W = 969.0, 100.0
AWS_PUE = 1.15


def _pool(hw: Hardware, chips: float, replicas: int, role: str = "both") -> Pool:
    setup = SimpleNamespace(system=hw.system("p5.48xlarge"), chips=chips)
    return Pool(setup, replicas, role)  # type: ignore[arg-type]


def _network_w(econ: dict[str, object]) -> float:
    figures = econ["economics_figures"]
    assert isinstance(figures, dict)
    return float(figures["datacenter.opex.network_power_w_per_chip"]["value"])


def test_replicas_each_in_one_system_draw_no_network(catalog: Catalog, hw: Hardware) -> None:
    """Two TP8 replicas on 16 H100 (two p5) never talk to each other: 16 x 969 W x 1.15 busy all hour, where the
    fleet past one system had drawn 16 x 1,069 W."""
    econ = economics(catalog, [_pool(hw, 8.0, 2)], 100.0, 500.0)
    assert _network_w(econ) == 0.0
    assert econ["energy_j_per_hour"] == pytest.approx(16 * H100_BUSY_W * 3600 * AWS_PUE)


def test_owned_replicas_pay_one_systems_cost_each(catalog: Catalog, hw: Hardware) -> None:
    """Owned, two p5 of independent replicas cost twice one p5, chip for chip: the $6,600 a chip of 400G fabric
    (and its colocation) had been added past one system, 14.27 against 12.32 $/Mtok for the same replica."""
    one = economics(catalog, [_pool(hw, 8.0, 1)], 100.0, 500.0, pricing="owned")
    two = economics(catalog, [_pool(hw, 8.0, 2)], 200.0, 1000.0, pricing="owned")
    assert two["cost_usd_per_hour"] == pytest.approx(2 * one["cost_usd_per_hour"])
    assert two["cost_usd_per_mtok"] == pytest.approx(one["cost_usd_per_mtok"])


def test_a_replica_across_systems_draws_the_network(catalog: Catalog, hw: Hardware) -> None:
    """One TP8 x PP2 replica spans two p5: its stages hand off over the fabric, 16 x 1,069 W x 1.15."""
    econ = economics(catalog, [_pool(hw, 16.0, 1)], 100.0, 500.0)
    assert _network_w(econ) == H100_NETWORK_W
    assert econ["energy_j_per_hour"] == pytest.approx(16 * (H100_BUSY_W + H100_NETWORK_W) * 3600 * AWS_PUE)


def test_a_split_draws_the_network_only_where_its_kv_leaves_the_system(catalog: Catalog, hw: Hardware) -> None:
    """A TP4 prefill and a TP4 decode replica share one p5 (kv_path: the cache over NVLink): 8 x 969 W; TP8 and TP8
    rent two p5 and hand the cache over the network: 16 x 1,069 W."""
    nvlink, network = SimpleNamespace(network=False), SimpleNamespace(network=True)
    pools = [_pool(hw, 4.0, 1, "prefill"), _pool(hw, 4.0, 1, "decode")]
    inside = economics(catalog, pools, 100.0, 500.0, transfer=nvlink)  # type: ignore[arg-type]
    assert _network_w(inside) == 0.0
    assert inside["energy_j_per_hour"] == pytest.approx(8 * H100_BUSY_W * 3600 * AWS_PUE)
    pools = [_pool(hw, 8.0, 1, "prefill"), _pool(hw, 8.0, 1, "decode")]
    apart = economics(catalog, pools, 100.0, 500.0, transfer=network)  # type: ignore[arg-type]
    assert _network_w(apart) == H100_NETWORK_W
    assert apart["energy_j_per_hour"] == pytest.approx(16 * (H100_BUSY_W + H100_NETWORK_W) * 3600 * AWS_PUE)


RACK_SPLIT = {
    "kind": "serve",
    "model": "llama-3.1-70b",
    "hardware": "trn4>gb300",
    "input_tokens": 8192,
    "output_tokens": 256,
    "arrival_rate": 2,
    "requests": 300,
    "precision": "fp8",
    "kv_precision": "fp8",
    "plan": {
        "disaggregated": True,
        "prefill": {"hardware": "trn4", "tp": 4, "replicas": 2},
        "decode": {"hardware": "gb300", "tp": 4, "replicas": 2},
    },
}


def test_a_rack_split_draws_the_network_where_its_cache_takes_it() -> None:
    """In trn4-gb300-fusion-rack the cache crosses the rack's NVLink Fusion link: no network power. With the link
    --set to 1 GB/s kv_path sends it over the network, whose power had been left out (52.60 MJ an hour where the
    fabric's power gives 59.64)."""
    import chipwise.api as cw

    rack = cw.predict(RACK_SPLIT)
    slow = cw.predict(RACK_SPLIT, sets=["trn4-gb300-fusion-rack.links.trn4-gb300.bandwidth=1GB/s"])
    assert rack["kv_transfer"]["fabric"].endswith("in trn4-gb300-fusion-rack")
    assert not slow["kv_transfer"]["fabric"].endswith("in trn4-gb300-fusion-rack")
    rack_w = rack["economics_figures"]["datacenter.opex.network_power_w_per_chip"]["value"]
    # each pool's own fabric share, named with its system (serving_economics._pool_figures): Trainium4's 200 Gb/s a
    # chip draws 50 W, GB300's 800 Gb/s 200 W (one key had read the decode pool's 200 W for both)
    slow_w = [
        slow["economics_figures"][f"datacenter.opex.network_power_w_per_chip ({system})"]["value"]
        for system in ("trn4-ultraserver", "gb300-nvl72")
    ]
    assert rack_w == 0.0 and slow_w == [50.0, 200.0]
    assert slow["energy_j_per_hour"] > 1.1 * rack["energy_j_per_hour"]
