"""A price set on the command line changes what the chips cost, not who runs them or where: the site (operator's
PUE, region, grid) is that of the catalog quote the user's price replaces, in training and in serving."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import load_catalog
from chipwise.economics.pricing import price_per_chip_hour
from chipwise.hardware import hardware
from chipwise.planner.serving_predict import predict_serving
from chipwise.planner.training import system_economics
from scenario_kinds import serve_scenario


def _site(sets: list[str], hw: str, mode: str = "on-demand", provider: str | None = None) -> tuple[Any, ...]:
    cat = load_catalog(sets=sets)
    econ = system_economics(cat, hardware(cat).system(hw), 64, mode, None, provider)
    return econ.site.region, econ.site.pue.value, econ.site.pue.key, econ.site.kg_co2e_per_j * 3.6e6


def test_a_user_price_keeps_the_replaced_quotes_site() -> None:
    """GB200 at the catalog's own $12.20 (AWS, us-east-1-dfw) had moved to a colocation site in country-usa (PUE
    1.42, 366 g/kWh); it stays in AWS's Dallas Local Zone on Texas's grid (PUE 1.15, 373 g/kWh)."""
    cat = load_catalog(sets=["gb200.price.on-demand=12.2"])
    q = price_per_chip_hour(cat, hardware(cat).system("gb200"))
    assert q is not None and (q.provider, q.region) == ("user", "") and q.usd_per_chip_hour == pytest.approx(12.2)
    assert q.site == ("aws", "us-east-1-dfw")
    site = ("us-tx", pytest.approx(1.15), "datacenter.pue.aws", pytest.approx(0.373))
    assert _site([], "gb200") == site
    assert _site(["gb200.price.on-demand=12.2"], "gb200") == site


@pytest.mark.parametrize(
    ("hw", "site"),
    [
        ("trn2", ("us-east-2", 1.15, 0.411)),  # had read us-east-1, 379 g/kWh
        ("tpu-v4", ("us-ok", 1.1, 0.426)),  # GCP's us-central2 in Oklahoma; had read us-central1, PUE 1.11
    ],
)
def test_any_user_price_leaves_the_site(hw: str, site: tuple[str, float, float]) -> None:
    """Whatever the price set (here $1 a chip-hour), the chips run where the catalog's quote puts them."""
    for sets in ([], [f"{hw}.price.on-demand=1.0"]):
        region, pue, _, grid = _site(sets, hw)
        assert (region, pue, grid) == (site[0], pytest.approx(site[1]), pytest.approx(site[2])), sets


def test_a_mode_that_follows_a_user_price_keeps_its_site() -> None:
    """A reserved-1y price that follows the user's on-demand price (0.7 x $1) runs where the catalog's reserved
    quote does: AWS us-east-2."""
    cat = load_catalog(sets=["trn2.price.on-demand=1.0"])
    q = price_per_chip_hour(cat, hardware(cat).system("trn2"), "reserved-1y")
    assert q is not None and q.provider == "user" and q.site == ("aws", "us-east-2")
    assert _site(["trn2.price.on-demand=1.0"], "trn2", "reserved-1y")[:2] == ("us-east-2", pytest.approx(1.15))


def test_no_catalog_quote_keeps_the_unset_runs_site() -> None:
    """No Lambda price of Trainium2: an unset run is sited at the provider asked for (a colocation PUE, 1.42, in
    country-usa); a user's price there had put the chips at AWS's us-east-1 (1.15)."""
    unset = _site([], "trn2", provider="lambda")
    assert unset == ("country-usa", pytest.approx(1.42), "datacenter.pue.colocation", pytest.approx(0.366))
    assert _site(["trn2.price.on-demand=1.0"], "trn2", provider="lambda") == unset


def test_training_energy_does_not_move_with_a_price() -> None:
    """predict at GB200's catalog price set by hand: the same energy and carbon (had read +23.5% and +21.2%)."""
    from chipwise.planner.training import predict_training
    from scenario_kinds import train_scenario

    sc = train_scenario("kind: train\nmodel: llama-3.1-8b\nhardware: gb200\nchips: 72\ntokens: 1e9\n")
    a = predict_training(load_catalog(), sc)
    b = predict_training(load_catalog(sets=["gb200.price.on-demand=12.2"]), sc)
    assert b["price_source"]["provider"] == "user"
    for key in ("cost_usd", "energy_j", "co2e_kg", "expected_energy_j"):
        assert b[key] == pytest.approx(a[key]), key
    assert (b["region"], b["pue"]) == ("us-tx", pytest.approx(1.15))


def test_serving_keeps_the_site_of_the_replaced_quote() -> None:
    """A serving deployment at a user's price runs at the catalog quote's site (serving_site): AWS us-east-2 for
    Trainium2, where a user's price had put it at us-east-1."""
    text = (
        "kind: serve\nmodel: llama-3.1-8b\nhardware: trn2\nchips: 8\ninput_tokens: 512\noutput_tokens: 64\n"
        "arrival_rate: 0.5\nrequests: 20\n"
    )
    r = predict_serving(load_catalog(sets=["trn2.price.on-demand=2.0"]), serve_scenario(text))
    assert (r["region"], r["pue"]) == ("us-east-2", pytest.approx(1.15))
    assert r["grid_kg_co2e_per_kwh"] == pytest.approx(0.411)


def test_a_split_in_a_hybrid_rack_keeps_a_user_priced_pools_quote_region() -> None:
    """A Trainium4 prefill pool beside a GB300 decode pool in the NVLink Fusion rack: its site line names each pool's
    quote region; a --set trn4 price had dropped trn4's us-east-2 ('(us-east-1)' alone), as plan hetero no longer
    does."""
    from chipwise.api import predict

    split = {
        "kind": "serve", "model": "llama-3.1-8b", "hardware": "trn4-gb300-fusion-rack", "precision": "bf16",
        "input_tokens": 1024, "output_tokens": 128, "arrival_rate": 2, "requests": 200,
        "plan": {"disaggregated": True, "prefill": {"hardware": "trn4", "tp": 1, "replicas": 1},
                 "decode": {"hardware": "gb300", "tp": 1, "replicas": 1}},
    }  # fmt: skip
    base = predict(split)["site_note"]
    assert "each pool is priced at its own chip's quote (us-east-2, us-east-1)" in base
    assert predict(split, sets=["trn4.price.on-demand=5"])["site_note"] == base
