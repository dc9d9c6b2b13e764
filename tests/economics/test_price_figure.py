"""The price a prediction rests on, as a figure (PriceQuote.figure): its SI value as every other figure carries it,
and a note that reads as words where the quote lacks a region and a date (a price the user set)."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.pricing import price_per_chip_hour
from chipwise.hardware import Hardware, hardware


def test_a_training_price_figure_has_its_si_value() -> None:
    """trn2's $2.73 an hour had had no 'si'; 2.73 / 3,600 s = 7.5833e-4 USD/s."""
    price = cw.predict("examples/train-llama70b-trn2.yaml")["economics_figures"]["trn2.price.on-demand"]
    assert (price["value"], price["unit"]) == (2.73, "USD/h")
    assert price["si"] == pytest.approx(7.583333e-4)


def test_a_serving_price_figure_has_its_si_value() -> None:
    """A system's own price, per system-hour: p5en.48xlarge's $63.296 an hour is 63.296 / 3,600 = 0.0175822 USD/s."""
    price = cw.predict("examples/serve-llama70b-h200.yaml")["economics_figures"]["p5en.48xlarge.price.on-demand"]
    assert (price["value"], price["unit"]) == (63.296, "USD/h")
    assert price["si"] == pytest.approx(0.01758222)


def test_a_user_price_note_leaves_out_the_empty_region_and_date() -> None:
    """A price set with --set has provider 'user' and no region or date: its note had read 'user  , per
    chip-hour'."""
    cat = load_catalog(sets=["trn2.price.on-demand=2"])
    system = hardware(cat).system("trn2")
    quote = price_per_chip_hour(cat, system)
    assert quote is not None
    (price,) = quote.figure(system).values()
    assert price["note"] == "set by the user, per chip-hour"
    assert (price["value"], price["si"]) == (2.0, pytest.approx(2.0 / 3600))


def test_a_catalog_price_note_names_its_provider_region_and_date(catalog: Catalog, hw: Hardware) -> None:
    """A catalog quote keeps all three: AWS's Trainium2 estimate in us-east-2, listed 2026-08."""
    system = hw.system("trn2")
    quote = price_per_chip_hour(catalog, system)
    assert quote is not None
    assert quote.figure(system)["trn2.price.on-demand"]["note"] == "aws us-east-2 2026-08, per chip-hour"


def test_plan_train_gives_the_user_price_note() -> None:
    """As the tester read it: plan_train with sets=['trn2.price.on-demand=2']."""
    rows = cw.plan_train(
        "llama-3.1-8b", chips=64, tokens=1e12, hardware=["trn2", "h100-sxm"], sets=["trn2.price.on-demand=2"]
    )["results"]
    (trn2,) = [r for r in rows if r["hardware"] == "trn2"]
    assert trn2["economics_figures"]["trn2.price.on-demand"]["note"] == "set by the user, per chip-hour"
