"""plan hetero takes plan train's economics options (--pricing, --region, --provider, --utilisation, --pue) for the
mix and each part alone, and gives each part's share of the mix's price, power, energy and carbon: a TPU + H100 mix,
refused on demand (no provider rents both), had no way to be tried as an owned fleet."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.tco import owned_tco
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.planner.hetero import plan_hetero_training

OWNED_FLEET = {"tpu-v5p": 64, "h100-sxm": 64}


@pytest.fixture(scope="module")
def owned(catalog: Catalog) -> dict[str, Any]:
    return plan_hetero_training(catalog, "llama-3.1-8b", OWNED_FLEET, tokens=1e10, pricing="owned")


def test_an_owned_tpu_and_h100_mix_is_priced_on_the_owners_network(
    owned: dict[str, Any], catalog: Catalog, hw: Hardware
) -> None:
    """Owned, the two chips (each with a unit price) are joined by the owner's network, and each part is charged its
    TCO with the network's share: 64 TPU v5p, which alone fit in one pod and buy no network, pay 64 x the TCO of a
    chip with one plus the electricity of their facility power (busy, at the site's tariff)."""
    with pytest.raises(ChipwiseError, match="no provider rents both"):
        plan_hetero_training(catalog, "llama-3.1-8b", OWNED_FLEET, tokens=1e10)
    assert owned["pricing"] == "owned" and [a["pricing"] for a in owned["alone"]] == ["owned", "owned"]
    m = owned["mixed"]
    assert {q["basis"] for q in m["price_sources"].values()} == {"owned"}
    assert "each part is charged its own chip's owned cost" in m["site_note"]
    tpu = m["parts"]["tpu-v5p"]
    tco = owned_tco(catalog, hw.system("tpu-v5p"), scaleout=True)
    electricity = tpu["facility_power_w"] * 3600 * tco.inputs.electricity.value  # an hour's facility joules x $/J
    assert tpu["usd_per_hour"] == pytest.approx(64 * tco.fixed_and_idle_usd_per_chip_hour + electricity, rel=1e-9)
    alone = next(a for a in owned["alone"] if a["hardware"] == "tpu-v5p")
    assert tpu["usd_per_hour"] > alone["usd_per_hour"]  # the network it buys beside the H100s
    assert m["usd_per_hour"] == pytest.approx(sum(p["usd_per_hour"] for p in m["parts"].values()), rel=1e-12)


def test_the_mixs_parts_add_up_to_its_totals(catalog: Catalog) -> None:
    """36 trn4 and 36 GB300 in one fusion rack, on demand: each part's $/hour is its chips at its own quote (36 x
    $15.84 and 36 x $15.25 = $1,119.24 together), and the parts' power, energy and carbon add up to the mix's."""
    r = plan_hetero_training(
        catalog, "llama-3.1-70b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack"
    )
    m = r["mixed"]
    parts = m["parts"]
    assert parts["trn4"]["billed_chips"] == 36 and parts["gb300"]["billed_chips"] == 36
    assert parts["trn4"]["usd_per_hour"] == pytest.approx(36 * 15.84, abs=0.01)
    assert parts["gb300"]["usd_per_hour"] == pytest.approx(36 * 15.25, abs=0.01)
    assert m["usd_per_hour"] == pytest.approx(1119.24, abs=0.01)
    for key in ("facility_power_w", "energy_j", "expected_energy_j", "co2e_kg", "expected_co2e_kg"):
        assert sum(p[key] for p in parts.values()) == pytest.approx(m[key], rel=1e-12)


def test_a_pue_asked_for_holds_for_the_mix_and_each_part(catalog: Catalog) -> None:
    """--pue 1.1 sites the mix (its hybrid rack's site) and each part alone at PUE 1.1."""
    r = plan_hetero_training(
        catalog, "llama-3.1-70b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack", pue=1.1
    )
    assert r["mixed"]["pue"] == 1.1 and [a["pue"] for a in r["alone"]] == [1.1, 1.1]


def test_a_utilisation_for_rented_chips_is_one_line(catalog: Catalog) -> None:
    with pytest.raises(ChipwiseError, match=r"--utilisation 0\.5 prices owned chips"):
        plan_hetero_training(catalog, "llama-3.1-8b", {"trn2": 12, "h100-sxm": 12}, utilisation=0.5)
