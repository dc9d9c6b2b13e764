"""predict's cost row says in plain words where a price was taken from when the region asked for lists none
(serve_views._priced_elsewhere): it had read '(none listed where asked)' beside 'cost (on-demand, us-central1)'."""

from __future__ import annotations

from typing import Any

import chipwise.api as cw
from chipwise.interfaces.cli.serve_views import _cost_row

ONE: dict[str, Any] = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 1,
    "input_tokens": 512,
    "output_tokens": 128,
    "arrival_rate": 2,
    "requests": 200,
    "provider": "gcp",
    "region": "europe-west4",
}


def test_a_price_from_another_region_is_named_with_the_region_asked_for() -> None:
    r = cw.predict(ONE)
    assert r["region"] == "europe-west4" and r["price_sources"][0]["region"] == "us-central1"
    label, value = _cost_row(r, None)
    assert label == "cost (on-demand, us-central1)"
    assert "(none listed where asked)" not in label + value
    assert "[yellow](no gcp on-demand price listed in europe-west4; priced at gcp us-central1's)[/]" in value


def test_a_split_names_the_system_priced_elsewhere() -> None:
    r = {
        "pricing": "on-demand",
        "region": "europe-west4",
        "cost_usd_per_hour": 20.0,
        "cost_usd_per_mtok": 5.0,
        "output_tokens_per_s": 100.0,
        "priced_output_tokens_per_s": 100.0,
        "billed_chips": 2,
        "chips": 2,
        "load": {"utilisation": 0.5},
        "price_sources": [
            {"system": "tpu-v6e-8", "provider": "gcp", "region": "europe-west4"},
            {
                "system": "gcp-a3-megagpu-8g",
                "provider": "gcp",
                "region": "us-central1",
                "region_note": "no price in the region asked for; the nearest listed price is used",
            },
        ],
    }
    label, value = _cost_row(r, None)
    assert label == "cost (on-demand, europe-west4, us-central1)"
    assert "(no gcp on-demand price of gcp-a3-megagpu-8g listed in europe-west4; priced at gcp us-central1's)" in value
