"""A mixed pipeline is one site, and its parts draw the network their hand-off crosses (planner.hetero._mix_site)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog.loader import Catalog
from chipwise.planner.hetero import plan_hetero_training

FUSION = "trn4-gb300-fusion-rack"


def _mix(catalog: Catalog, model: str, fleet: dict[str, int], hybrid: str | None = None) -> dict[str, Any]:
    mixed = plan_hetero_training(catalog, model, fleet, tokens=10e9, hybrid=hybrid)["mixed"]
    assert mixed is not None
    return dict(mixed)


def test_a_hybrid_rack_is_one_site(catalog: Catalog) -> None:
    """36 trn4 + 36 gb300 in one Fusion rack: 1,929.1 kWh all at us-east-1's 379 g/kWh = 731.14 kg, where the trn4
    half had been at us-east-2's 411 g (its price's region) and the gb300 half at 379 g: 767.24 kg. (1,928.6 kWh
    while the rack's Trn4-Trn4 link ran at Trainium4's 1.8 TB/s port, not its NVLink 5 switch's 900 GB/s.)"""
    m = _mix(catalog, "llama-3.1-70b", {"trn4": 36, "gb300": 36}, FUSION)
    kwh = m["energy_j"] / 3.6e6
    assert kwh == pytest.approx(1929.1, abs=0.05)
    assert m["region"] == "us-east-1"
    assert m["grid_kg_co2e_per_kwh"] == pytest.approx(0.379)
    assert m["co2e_kg"] == pytest.approx(kwh * 0.379)
    assert m["co2e_kg"] == pytest.approx(731.14, abs=0.01)
    assert m["site_note"] == (
        f"{FUSION} is one site: both parts' energy and carbon at us-east-1 (the default region of aws, the rack's "
        "provider); each part is priced at its own chip's quote (us-east-2, us-east-1)"
    )


def test_a_network_mix_draws_the_network_in_each_part(catalog: Catalog) -> None:
    """8 H100 (one p5.48xlarge) beside 16 Trainium2 (one trn2.48xlarge): each part fits in one system, but the
    hand-off crosses the scale-out network, so each draws its share of it. Busy, an H100 draws 0.76 x (700 + 575) +
    100 = 1,069 W and a Trainium2 0.76 x (500 + 410) + 100 x 200/400 Gb/s = 741.6 W; x the PUE of 1.15:
    (8 x 1,069 + 16 x 741.6) x 1.15 = 23,480.24 W, where it had read (8 x 969 + 16 x 691.6) x 1.15 = 21,640.24 W."""
    m = _mix(catalog, "llama-3.1-8b", {"h100-sxm": 8, "trn2": 16})
    assert m["chips_used"] == {"h100-sxm": 8, "trn2": 16}
    assert m["facility_power_w"] == pytest.approx((8 * 1069 + 16 * 741.6) * 1.15)
    assert m["facility_power_w"] == pytest.approx(23480.24)


def test_a_network_mix_is_sited_where_its_larger_draw_runs(catalog: Catalog) -> None:
    """The Trainium2 draw 16 x 741.6 = 11.9 kW against the H100s' 8 x 1,069 = 8.6 kW, so both parts are at the
    Trainium2's site, us-east-2 (411 g/kWh), whichever --fleet names first; 16 H100 (17.1 kW) put both at theirs,
    us-east-1 (379 g)."""
    m = _mix(catalog, "llama-3.1-8b", {"h100-sxm": 8, "trn2": 16})
    swapped = _mix(catalog, "llama-3.1-8b", {"trn2": 16, "h100-sxm": 8})
    assert m["region"] == swapped["region"] == "us-east-2"
    assert m["co2e_kg"] == pytest.approx(m["energy_j"] / 3.6e6 * 0.411)
    assert swapped["co2e_kg"] == pytest.approx(m["co2e_kg"])
    assert m["site_note"].startswith(
        "trn2 and h100-sxm on one datacenter network are one site: both parts' energy and carbon at us-east-2, "
        "where trn2 runs alone (the part drawing more power busy: 11.9 kW against 8.6 kW)"
    )
    larger = _mix(catalog, "llama-3.1-8b", {"h100-sxm": 16, "trn2": 16})
    assert larger["region"] == "us-east-1"
    assert larger["co2e_kg"] == pytest.approx(larger["energy_j"] / 3.6e6 * 0.379)
