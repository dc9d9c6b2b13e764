"""A split's KV path takes the faster of a hybrid rack's link and the scale-out network (it had taken the link
whenever both pools fit the rack, however slow a --set made it), and pools that share a hybrid rack are sited at one
region for their energy and carbon (they had been sited at each chip's price region, 'us-east-2>us-east-1')."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog, load_catalog
from chipwise.hardware import hardware
from chipwise.planner.serving_deployment import kv_path
from chipwise.planner.serving_economics import economics
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.simulate import Pool
from chipwise.workload.presets import load_model

FUSION = "trn4-gb300-fusion-rack"
SLOW_LINK = f"{FUSION}.links.trn4-gb300.bandwidth=1GB/s"
PROMPT = 2048  # tokens: Llama 3.1 8B's fp8 KV cache, 32 layers x 8 KV heads x 128 x 2 x 1 B = 65,536 B a token
PROMPT_BYTES = PROMPT * 32 * 8 * 128 * 2


def _pools(catalog: Catalog) -> tuple[ReplicaSetup, ReplicaSetup]:
    """Llama 3.1 8B TP1 fp8: a Trainium4 prefill replica (one NeuronCore, a quarter chip) and a GB300 decode one."""
    hw, model = hardware(catalog), load_model(catalog, "llama-3.1-8b")
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=4096, weight_precision="fp8", kv_precision="fp8")
    pre = setup_replica(catalog, model, hw.system("trn4"), "neuron", plan, float(PROMPT), 1.0)
    dec = setup_replica(catalog, model, hw.system("gb300"), "trtllm", plan, float(PROMPT), 128.0)
    return pre, dec


def _seconds(catalog: Catalog) -> tuple[str, float]:
    pre, dec = _pools(catalog)
    path = kv_path(catalog, load_model(catalog, "llama-3.1-8b"), pre, 4, dec, 2)
    return path.fabric, path.latency_s + path.seconds(PROMPT)


def test_the_rack_link_carries_the_kv_cache_where_it_is_faster(catalog: Catalog) -> None:
    # the Trainium4 core sends over a quarter of its chip's port in this NVLink 5 rack, the switch's 900 GB/s, at
    # the fabric's 0.77: 173.25 GB/s
    fabric, seconds = _seconds(catalog)
    assert fabric == f"nvlink-fusion in {FUSION}"
    assert seconds == pytest.approx(1.5e-6 + PROMPT_BYTES / (900e9 / 4 * 0.77))  # 0.776 ms


def test_a_slower_rack_link_gives_way_to_the_network() -> None:
    # at 1 GB/s x 0.77 the link would take 174 ms; the network, the Trainium4 core's share of its NIC (6.25 GB/s x
    # 0.8 = 5 GB/s against the GB300's 90 GB/s), 8 us + 134.2 MB / 5 GB/s = 26.8 ms: the link had been taken
    slow = load_catalog(sets=[SLOW_LINK])
    fabric, seconds = _seconds(slow)
    assert fabric == "efa-v4 to ib-xdr"
    assert seconds == pytest.approx(8e-6 + PROMPT_BYTES / 5e9)
    assert seconds < PROMPT_BYTES / (1e9 * 0.77)


def test_pools_in_one_hybrid_rack_are_one_site_either_way_round(catalog: Catalog) -> None:
    # trn4 is priced in us-east-2 and gb300 in us-east-1 (both AWS estimates): the rack's energy had been reckoned
    # at 'us-east-2>us-east-1', each pool on its own grid; the rack is one site, its provider AWS's default region
    # us-east-1 (Virginia, SERC: 379 g CO2e/kWh), whichever chip prefills
    trn4, gb300 = _pools(catalog)
    for pools in (
        [Pool(trn4, 4, "prefill"), Pool(gb300, 2, "decode")],
        [Pool(gb300, 2, "prefill"), Pool(trn4, 4, "decode")],
    ):
        econ = economics(catalog, pools, 1000.0, 5000.0)
        assert econ["region"] == "us-east-1"
        assert econ["grid_kg_co2e_per_kwh"] == pytest.approx(0.379)
        assert econ["site_note"].startswith(f"{FUSION} is one site: both pools' energy and carbon at us-east-1")
        assert sorted(q["region"] for q in econ["price_sources"]) == ["us-east-1", "us-east-2"]  # each its own quote
        assert "priced at its own chip's quote" in econ["site_note"]


def test_pools_past_the_rack_keep_their_own_sites(catalog: Catalog) -> None:
    # 200 Trainium4 cores are 50 chips, past the rack's 36: no rack holds both pools, each at its own region
    trn4, gb300 = _pools(catalog)
    econ = economics(catalog, [Pool(trn4, 200, "prefill"), Pool(gb300, 2, "decode")], 1000.0, 5000.0)
    assert econ["region"] == "us-east-2>us-east-1"
    assert "site_note" not in econ


def test_predict_says_the_rack_is_one_site(capsys: pytest.CaptureFixture[str]) -> None:
    """The site note predict's table shows beside energy (it had been in --json alone)."""
    from chipwise.interfaces.cli.serve_views import print_serving

    r = cw.predict(
        "{kind: serve, model: llama-3.1-8b, hardware: trn4>gb300, precision: fp8, kv_precision: fp8, "
        "input_tokens: 2048, output_tokens: 64, arrival_rate: 2, requests: 60, plan: {disaggregated: true, "
        "prefill: {hardware: trn4, tp: 1, replicas: 2}, decode: {hardware: gb300, tp: 1, replicas: 1}}}"
    )
    assert r["site_note"].startswith(f"{FUSION} is one site")
    print_serving(r)
    rows = [line.split("│") for line in capsys.readouterr().out.splitlines() if line.count("│") == 3]
    first = next(i for i, cells in enumerate(rows) if cells[1].strip() == "site")
    cell = " ".join(cells[2].strip() for cells in rows[first:] if cells[2].strip())
    assert cell.startswith(f"{FUSION} is one site: both pools' energy and carbon at us-east-1")
