"""Why an option has no price (the '-' in a table and `price_note`), one text wherever it is said: the fix for an
owned chip with no unit price, the on-demand price a missing one falls back to only where that differs."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.economics.pricing import price_gap
from chipwise.economics.tco import owned_gap
from chipwise.hardware import Hardware

TPU_V5E_OWNED = "no unit price for tpu-v5e in the catalog: owned cost unknown (give one: --set tpu-v5e.unit_price=USD)"


def test_training_says_how_to_give_a_missing_unit_price() -> None:
    """plan train had dropped the fix ('give one: --set ...') that plan serve and tco print."""
    (row,) = cw.plan_train("llama-3.1-8b", chips=256, tokens=1e12, hardware="tpu-v5e", pricing="owned")["results"]
    assert row["price_note"] == TPU_V5E_OWNED


def test_one_text_for_a_missing_unit_price(catalog: Catalog, hw: Hardware) -> None:
    system = hw.system("tpu-v5e")
    assert owned_gap(system) == price_gap(catalog, system, "owned") == TPU_V5E_OWNED


@pytest.mark.parametrize(
    ("mode", "note"),
    [
        ("on-demand", "the catalog has no lambda on-demand price for tpu-v5p"),
        ("spot", "the catalog has no lambda spot or on-demand price for tpu-v5p"),
    ],
)
def test_a_missing_price_names_the_on_demand_fallback_once(
    catalog: Catalog, hw: Hardware, mode: str, note: str
) -> None:
    """On demand it had read 'no lambda on-demand or on-demand price'."""
    assert price_gap(catalog, hw.system("tpu-v5p"), mode, "lambda") == note


def test_training_names_the_missing_on_demand_price_once() -> None:
    report = cw.plan_train("llama-3.1-70b", chips=1024, tokens=1e12, hardware="tpu-v5p", provider="lambda")
    (row,) = report["results"]
    assert row["price_note"] == "the catalog has no lambda on-demand price for tpu-v5p"
