"""A split's `hardware` as predict prints it ('h100-sxm>trn2', prefill first) is read as the two pools' hardware in a
disaggregated scenario and refused in a colocated one; a top-level `hardware` that contradicts the pools' is refused
(both had been an 'unknown chip' error or dropped unsaid); the KV transfer is marked projected where either end's
system is."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.serving_deployment import build_deployment
from chipwise.planner.serving_predict import predict_serving
from chipwise.serve.simulate import ServingSetup
from chipwise.workload.presets import load_model
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.serving_job import serving_job

BASE: dict[str, Any] = {
    "kind": "serve",
    "model": "llama-3.1-70b",
    "precision": "fp8",
    "input_tokens": 1000,
    "output_tokens": 100,
    "arrival_rate": 1,
    "requests": 50,
}


def _scenario(hardware: str, plan: dict[str, Any] | None) -> ServeScenario:
    return ServeScenario.model_validate(BASE | {"hardware": hardware} | ({"plan": plan} if plan else {}))


def _setup(catalog: Catalog, hardware: str, plan: dict[str, Any]) -> ServingSetup:
    sc = _scenario(hardware, plan)
    model = load_model(catalog, sc.model)
    return build_deployment(catalog, model, sc, serving_job(model, sc), {})[0]


def _pools(setup: ServingSetup) -> list[tuple[str, str]]:
    return [(p.role, p.setup.system.chip.id) for p in setup.pools]


def test_a_split_named_as_predict_prints_it_gives_each_pool_its_side(catalog: Catalog) -> None:
    """hardware: h100-sxm>trn2 puts the TP2 prefill replica on an H100 and the TP8 decode replica on Trainium2, as
    naming each pool's hardware does; the KV cache moves at the slower end's NIC share: 8 NeuronCores x 6.25 GB/s x
    0.8 = 40 GB/s (2 H100s at 50 GB/s x 0.8 = 80 GB/s), 327,680 B a token (bf16 KV, 70B) -> 8.192 us a token."""
    pools = {"prefill": {"replicas": 1, "tp": 2}, "decode": {"replicas": 1, "tp": 8}}
    setup = _setup(catalog, "h100-sxm>trn2", {"disaggregated": True} | pools)
    assert _pools(setup) == [("prefill", "h100-sxm"), ("decode", "trn2")]
    assert setup.transfer is not None
    assert setup.transfer.bandwidth == pytest.approx(40e9)
    assert setup.transfer.s_per_token == pytest.approx(327_680 / 40e9)
    named = {"prefill": {"hardware": "h100-sxm"} | pools["prefill"], "decode": {"hardware": "trn2"} | pools["decode"]}
    same = _setup(catalog, "h100-sxm", {"disaggregated": True} | named)
    assert _pools(same) == _pools(setup) and same.transfer == setup.transfer
    # a pool that names its own keeps it where it agrees with its side (a system of the same chip)
    agrees = {"prefill": {"hardware": "p5.48xlarge"} | pools["prefill"], "decode": pools["decode"]}
    assert _pools(_setup(catalog, "h100-sxm>trn2", {"disaggregated": True} | agrees)) == _pools(setup)


@pytest.mark.parametrize(
    ("hardware", "plan", "says"),
    [
        (
            "h100-sxm>trn2",
            None,
            r"^hardware 'h100-sxm>trn2' names a split's two pools \(prefill>decode\), but the plan is colocated\. "
            r"Fix: add plan: \{disaggregated: true\} .*plan\.prefill\.hardware / plan\.decode\.hardware",
        ),
        (
            "h100-sxm",
            {"prefill": {"hardware": "h200", "replicas": 1, "tp": 2}, "decode": {"hardware": "trn2", "tp": 8}},
            r"^hardware 'h100-sxm' is neither pool's: plan\.prefill\.hardware is h200 and plan\.decode\.hardware is "
            r"trn2\. Fix: set hardware: h200>trn2 \(prefill first\), or drop a pool's hardware",
        ),
        (
            "b200>h200",
            {"prefill": {"hardware": "h200", "tp": 2}, "decode": {"tp": 8}},
            r"^hardware 'b200>h200' names b200 for the prefill pool, but plan\.prefill\.hardware is h200\. Fix:",
        ),
        ("b200>h200>trn2", {}, r"^hardware 'b200>h200>trn2' is not one chip or system, nor a split's two"),
        ("b200>", {}, r"^hardware 'b200>' is not one chip or system, nor a split's two"),
    ],
)
def test_a_hardware_the_pools_contradict_is_one_line(
    catalog: Catalog, hardware: str, plan: dict[str, Any] | None, says: str
) -> None:
    """Refused before any pool is built or simulated: a colocated `a>b` had been 'unknown chip or system' with a
    pointer to `catalog list`, and an h100-sxm above h200 and trn2 pools ran as h200>trn2 with no word of it."""
    sc = _scenario(hardware, None if plan is None else {"disaggregated": True} | plan)
    with pytest.raises(ChipwiseError, match=says) as err:
        predict_serving(catalog, sc)
    assert "\n" not in str(err.value)


def test_the_kv_transfer_is_projected_where_either_end_is(catalog: Catalog) -> None:
    """GB200 TP2 -> Trainium4 TP2 over the network runs at the Trn4 end's 2 NeuronCores x 25 GB/s / 4 x 0.8 = 10 GB/s,
    a figure of the projected trn4-ultraserver: the transfer says so (it said shipping hardware, only a projected
    hybrid rack marked); GB200 -> H200 over the network stays unmarked."""
    pools = {"prefill": {"hardware": "gb200", "replicas": 1, "tp": 2}, "decode": {"replicas": 1, "tp": 2}}
    setup = _setup(catalog, "gb200>trn4", {"disaggregated": True} | pools)
    assert setup.transfer is not None
    assert setup.transfer.bandwidth == pytest.approx(10e9)
    assert setup.transfer.projected
    shipping = _setup(catalog, "gb200>h200", {"disaggregated": True} | pools)
    assert shipping.transfer is not None and not shipping.transfer.projected
