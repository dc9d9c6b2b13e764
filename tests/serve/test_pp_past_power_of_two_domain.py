"""Pipeline parallelism on a scale-up domain whose size is no power of two (an inf2.48xlarge's 24 NeuronCores, an
NVL72's 72 GPUs): PP starts once TP reaches the largest power of two the domain holds."""

from __future__ import annotations

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import topology_of
from chipwise.planner.serving_plan import plan_serving
from chipwise.serve.candidates import BATCHES, enumerate_candidates
from chipwise.workload import load_model
from chipwise.workload.load import Load


def _shapes(catalog: Catalog, hw: Hardware, model: str, system: str) -> tuple[set[tuple[int, int]], int]:
    cand = enumerate_candidates(load_model(catalog, model), topology_of(hw.system(system)))
    return set(zip(cand.tp.tolist(), cand.pp.tolist(), strict=True)), len(cand)


def test_inf2_tries_pp_past_tp16(catalog: Catalog, hw: Hardware) -> None:
    """24 ranks: TP 1..16 and TP16 x PP2, PP4 (16 x 4 = 64 ranks, within 4 domains' 96): 7 shapes x 12 batch limits
    = 84 candidates, where TP stopping at 16 < 24 had left 5 x 12 = 60 and no PP."""
    shapes, n = _shapes(catalog, hw, "llama-3.1-405b", "inf2.48xlarge")
    assert hw.system("inf2.48xlarge").chip.cores_per_chip * 12 == 24
    assert shapes == {(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (16, 2), (16, 4)}
    assert n == 7 * len(BATCHES) == 84


def test_nvl72_tries_pp_past_tp64(catalog: Catalog, hw: Hardware) -> None:
    """72 GPUs: TP64 x PP2 and PP4 join TP 1..64 (9 shapes x 12 = 108 for a dense model, 84 before)."""
    shapes, n = _shapes(catalog, hw, "llama-3.1-70b", "gb200-nvl72")
    assert {(64, 2), (64, 4)} <= shapes and not {(32, 2), (16, 2)} & shapes
    assert n == 9 * len(BATCHES)


def test_a_power_of_two_domain_is_searched_as_before(catalog: Catalog, hw: Hardware) -> None:
    """trn2.48xlarge's 64 ranks fill with TP64: PP only from there, 9 x 12 = 108 candidates as before."""
    shapes, n = _shapes(catalog, hw, "llama-3.1-70b", "trn2.48xlarge")
    assert {(64, 2), (64, 4)} <= shapes and (32, 2) not in shapes
    assert n == 108


def test_plan_serve_ranks_llama_405b_on_inf2(catalog: Catalog) -> None:
    """The report's run: 405B fp8 at 0.2 req/s on inf2 had read 'fits no replica shape (up to 96 ranks)'; its
    cheapest colocated fleet is now TP16 x PP2 (32 ranks, 16 chips a replica)."""
    out = plan_serving(
        catalog, "llama-3.1-405b", ["inf2"], Load("rate", rate=0.2), 1024, 256, precision="fp8", verify=0,
        disaggregated=False,
    )  # fmt: skip
    assert not out["skipped"]
    plan = out["results"][0]["plan"]
    assert (plan["tp"], plan["pp"]) == (16, 2)
