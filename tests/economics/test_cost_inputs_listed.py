"""The figures an output lists as its cost's inputs are those its cost reads: a rented chip-hour includes the
provider's electricity, so a rented run lists no electricity tariff (its --sources, economics_figures and
sensitivity had listed us-east-1's 0.0892 USD/kWh, which moved nothing); the owned TCO's dollars read no grid carbon
intensity, so its estimated_inputs leave it out (country-usa's had been counted, and dropped with --region
us-east-1 though no dollar moved)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.energy import site_for
from chipwise.economics.tco import owned_tco
from chipwise.hardware import Hardware
from chipwise.planner.scenario import predict_scenario
from chipwise.planner.sensitivity import sensitivity
from chipwise.workload.scenario import load_scenario

TRAIN = "{kind: train, model: llama-3.1-70b, hardware: h100-sxm, chips: 1024, tokens: 1T"
SERVE = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, input_tokens: 512, output_tokens: 128, "
    "arrival_rate: 2, requests: 200"
)
ELECTRICITY = "datacenter.electricity_usd_per_kwh."


def _figures(catalog: Catalog, text: str) -> dict[str, Any]:
    figures: dict[str, Any] = predict_scenario(catalog, load_scenario(text, catalog))["economics_figures"]
    return figures


def _tariffs(figures: dict[str, Any]) -> dict[str, float]:
    return {k: f["value"] for k, f in figures.items() if k.startswith(ELECTRICITY)}


def test_a_site_lists_what_energy_and_carbon_rest_on(catalog: Catalog, hw: Hardware) -> None:
    site = site_for(catalog, hw.system("p5.48xlarge"), "us-east-1")
    assert site.electricity is not None and site.electricity.value * 3.6e6 == pytest.approx(0.0892)  # kept for a TCO
    assert [t.key for t in site.terms()] == ["datacenter.pue.aws", "datacenter.grid_intensity.us-east-1"]


@pytest.mark.parametrize("text", [TRAIN + "}", SERVE + "}"])
def test_a_rented_run_lists_no_electricity_tariff(catalog: Catalog, text: str) -> None:
    figures = _figures(catalog, text)
    assert _tariffs(figures) == {}
    assert "datacenter.grid_intensity.us-east-1" in figures  # its carbon's


@pytest.mark.parametrize("text", [TRAIN + ", pricing: owned}", SERVE + ", pricing: owned}"])
def test_an_owned_run_lists_the_tariff_its_cost_reads(catalog: Catalog, text: str) -> None:
    """country-usa's 0.0862 USD/kWh (EIA's US industrial average, 2025), from the TCO's inputs, beside its grid."""
    figures = _figures(catalog, text)
    assert _tariffs(figures) == {ELECTRICITY + "country-usa": 0.0862}
    assert "datacenter.grid_intensity.country-usa" in figures


def test_a_rental_sensitivity_moves_no_tariff(catalog: Catalog) -> None:
    report = sensitivity(load_scenario(TRAIN + "}", catalog), metric="cost", catalog=catalog)
    names = [row["figure"] for row in report["figures"]] + [row["figure"] for row in report.get("not_priced") or []]
    assert names and not [n for n in names if n.startswith(ELECTRICITY)]


@pytest.mark.parametrize("region", [None, "us-east-1"])
def test_the_tco_s_estimated_inputs_are_its_cost_s(catalog: Catalog, hw: Hardware, region: str | None) -> None:
    tco = owned_tco(catalog, hw.system("p5.48xlarge"), region)
    keys = [t.key for t in tco.terms()]
    assert not [k for k in keys if k.startswith("datacenter.grid_intensity.")]
    assert not [k for k in tco.estimated if k.startswith("datacenter.grid_intensity.")]
    assert f"{ELECTRICITY}{region or 'country-usa'}" in keys and "datacenter.pue.colocation" in keys
