"""A split whose KV cache crosses the scale-out network is one datacenter's network, so one site (serving_economics.
split_site), as plan hetero sites a mixed pipeline over it (network_site): the pool drawing more busy power sets
it. 2 trn2 prefill beside 4 H100 decode had read 'us-east-2>us-east-1' at a blend of both grids (395 g/kWh); the
cost row listed the price regions sorted by name where the energy row read them prefill>decode."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw

#: a trn2 and an H100 busy on the network draw 741.6 W and 1,069 W (tests/planner/test_hetero_one_site.py)
TRN2_W, H100_W = 741.6, 1069.0


def _split(prefill: dict[str, Any], decode: dict[str, Any]) -> dict[str, Any]:
    return cw.predict(
        {
            "kind": "serve",
            "model": "llama-3.1-8b",
            "hardware": "trn2",
            "precision": "bf16",
            "input_tokens": 512,
            "output_tokens": 64,
            "arrival_rate": 1,
            "requests": 60,
            "plan": {"disaggregated": True, "prefill": prefill, "decode": decode},
        }
    )


def test_the_larger_draw_sites_both_pools(capsys: pytest.CaptureFixture[str]) -> None:
    """2 H100 decoding draw 2 x 1,069 = 2.1 kW against the 2 trn2 prefilling's 2 x 741.6 = 1.5 kW: both at the
    H100s' us-east-1 (PUE 1.15, 379 g/kWh), each priced at its own quote (trn2 in us-east-2)."""
    r = _split({"hardware": "trn2", "replicas": 1, "tp": 8}, {"hardware": "h100-sxm", "replicas": 2, "tp": 1})
    assert (r["region"], r["pue"], r["grid_kg_co2e_per_kwh"]) == (
        "us-east-1",
        pytest.approx(1.15),
        pytest.approx(0.379),
    )
    assert r["co2e_kg_per_hour"] == pytest.approx(r["energy_j_per_hour"] / 3.6e6 * 0.379)
    assert f"{2 * H100_W / 1e3:.1f} kW against {2 * TRN2_W / 1e3:.1f} kW" == "2.1 kW against 1.5 kW"
    assert r["site_note"] == (
        "the h100-sxm decode pool and the trn2 prefill pool on one datacenter network are one site: both pools' "
        "energy and carbon at us-east-1, where the h100-sxm decode pool runs alone (the pool drawing more power "
        "busy: 2.1 kW against 1.5 kW); each pool is priced at its own chip's quote (us-east-2, us-east-1)"
    )
    from chipwise.interfaces.cli.serve_views import print_serving

    print_serving(r)
    out = capsys.readouterr().out
    assert "cost (on-demand, us-east-2, us-east-1)" in out  # prefill's, then decode's: it had read sorted


def test_a_larger_trn2_pool_takes_both_to_its_site() -> None:
    """4 trn2 decoding (4 x 741.6 = 3.0 kW) beside 1 H100 prefilling (1.1 kW): both at us-east-2's 411 g/kWh."""
    r = _split({"hardware": "h100-sxm", "replicas": 1, "tp": 1}, {"hardware": "trn2", "replicas": 1, "tp": 16})
    assert (r["region"], r["grid_kg_co2e_per_kwh"]) == ("us-east-2", pytest.approx(0.411))
    assert (
        "where the trn2 decode pool runs alone (the pool drawing more power busy: 3.0 kW against 1.1 kW)"
        in (r["site_note"])
    )
