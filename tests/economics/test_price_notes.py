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


def test_a_mode_ratio_derivation_is_quoted_whole() -> None:
    """A spot price derived by the catalog's ratio quotes the ratio's whole derivation: a cut at its first '.' had
    read 'GCP a3-highgpu H100 6' for 6.571 and dropped the note that spot preemptions are not modelled."""
    import chipwise.api as cw

    out = cw.tco("h100-sxm", compare="spot")
    text = str(out)
    assert "GCP a3-highgpu H100 6.571 / 10.9791 = 0.598" in text
    assert "chipwise does not model preemptions" in text


def test_the_advised_unit_price_can_be_set_on_a_chip_without_one() -> None:
    """The owned-cost advice '(give one: --set tpu-v5e.unit_price=USD)' had been refused ('unknown figure'): a chip
    without a unit price takes one, and the owned run is priced."""
    bare = cw.plan_train("llama-3.1-8b", chips=64, tokens=1e12, hardware="tpu-v5e", pricing="owned")
    assert "--set tpu-v5e.unit_price=USD" in bare["results"][0]["price_note"]
    priced = cw.plan_train(
        "llama-3.1-8b", chips=64, tokens=1e12, hardware="tpu-v5e", pricing="owned", sets=["tpu-v5e.unit_price=5000"]
    )
    assert priced["results"][0]["cost_usd"] > 0 and "price_note" not in priced["results"][0]
