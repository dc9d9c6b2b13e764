"""plan hetero: the batch every option trains on and whose default it is, the verdict's percentage put one way
whoever wins, the share of the model the other part holds in the chosen plan, and the routed experts in the mix's
data-parallel reduction and optimizer update."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware
from chipwise.interfaces.cli.app import run
from chipwise.perf.compute import memory_time
from chipwise.planner.hetero import plan_hetero_training
from chipwise.planner.training import make_job
from chipwise.train.data_parallel import optimizer_traffic
from chipwise.train.hetero import HeteroPlans, Part, hetero_step
from chipwise.train.memory import working_weight_bytes
from chipwise.workload.presets import load_model


def test_a_default_batch_is_the_fleets_and_says_plan_trains_is_smaller(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """1,024 H100 beside 1,024 MI300X (Llama 3.1 8B): the default batch is the whole fleet's, max(1M, 1,024 x
    2,048) = 2,097,152 tokens, where plan train's for 1,024 chips of one part is max(1M, 1,024 x 1,024) = 1,048,576;
    the table had put 'h100-sxm alone (1024)' at 2M tokens a step without a word."""
    r = plan_hetero_training(catalog, "llama-3.1-8b", {"h100-sxm": 1024, "mi300x": 1024}, tokens=1e12)
    assert r["global_batch_tokens"] == 2_097_152 and r["global_batch"] == 256
    assert r["global_batch_default_chips"] == 2048
    assert r["plan_train_default_batch_tokens"] == {"h100-sxm": 1_048_576, "mi300x": 1_048_576}
    assert run(["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "h100-sxm=1024,mi300x=1024",
                "--tokens", "1T"]) == 0  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "global batch: 256 sequences of 8,192 tokens, 2,097,152 tokens a step: every option trains on it, the default "
        "for the whole fleet's 2,048 chips; plan train's default for a part's chips alone is smaller (1,048,576 for "
        "1,024 h100-sxm, 1,048,576 for 1,024 mi300x), so its row here differs from plan train's (give plan train "
        "--global-batch-tokens 2,097,152 to match)"
    ) in out
    # a batch given is the user's: no default to explain
    given = plan_hetero_training(
        catalog, "llama-3.1-8b", {"h100-sxm": 1024, "mi300x": 1024}, tokens=1e12, global_batch_tokens=2**21
    )
    assert given["global_batch_default_chips"] is None and given["plan_train_default_batch_tokens"] == {}


def test_a_default_batch_plan_train_shares_is_said_plainly(catalog: Catalog) -> None:
    """256 GB200 beside 512 Trainium1 (70B): 4M tokens, max(4M, 1,024 x 768), is plan train's default for either
    part's chips too, so nothing differs."""
    r = plan_hetero_training(catalog, "llama-3.1-70b", {"gb200": 256, "trn1": 512}, tokens=1e12)
    assert r["global_batch_tokens"] == 4_194_304 and r["global_batch_default_chips"] == 768
    assert r["plan_train_default_batch_tokens"] == {}


@pytest.fixture(scope="module")
def gb200_trn1(catalog: Catalog) -> dict[str, Any]:
    return plan_hetero_training(catalog, "llama-3.1-70b", {"gb200": 256, "trn1": 512}, tokens=1e12)


def test_a_loss_is_the_winners_lead_as_a_win_is(gb200_trn1: dict[str, Any]) -> None:
    """GB200 alone against the mix: 1,033,786 against 633,277 tokens/s, 1.63x. It had read 'better by 38%' (1 -
    633,277 / 1,033,786), where a win of the mix is mix / alone - 1; both are now the winner's over the other's."""
    alone, mixed = gb200_trn1["fastest_part"]["tokens_per_s"], gb200_trn1["mixed"]["tokens_per_s"]
    assert alone / mixed == pytest.approx(1.632, abs=0.01)
    assert gb200_trn1["verdict"] == "fastest part alone (gb200) is better by 63% in throughput"


def test_the_other_part_is_given_the_layers_it_holds(gb200_trn1: dict[str, Any]) -> None:
    """The Trainium1 stage, last, holds 6 of the 80 layers: 8%."""
    assert [s["layers"] for s in gb200_trn1["mixed"]["plan"]["stages"]] == [74, 6]
    assert "; the trn1 chips would hold 6 of the model's 80 layers (8%);" in gb200_trn1["reason"]


def test_the_share_is_what_the_plan_holds_not_the_fleets_capacity(catalog: Catalog) -> None:
    """DeepSeek-V3 on 64 H100 beside 64 MI300X splits 45/16 layers: the H100s hold 16 of 61 (26%), where their
    capacity (fleet chips over a layer's chip-seconds) had been read as 'would add 51% of the mix's compute'. Beside
    1,000 MI300X the mix runs only some of them, and says how many (the share had counted all 1,000)."""
    r = plan_hetero_training(catalog, "deepseek-v3", {"h100-sxm": 64, "mi300x": 64}, tokens=1e12)
    layers = {s["hardware"]: s["layers"] for s in r["mixed"]["plan"]["stages"]}
    assert layers == {"mi300x": 45, "h100-sxm": 16}
    assert "the h100-sxm chips would hold 16 of the model's 61 layers (26%)" in r["reason"]
    assert "of the mix's compute" not in r["reason"]
    big = plan_hetero_training(catalog, "deepseek-v3", {"h100-sxm": 8, "mi300x": 1000}, tokens=1e12)
    used = big["mixed"]["chips_used"]["mi300x"]
    assert used < 1000
    assert f"the mix runs {used:,} of the 1,000 mi300x" in big["reason"]


def test_the_mixs_data_parallelism_reduces_and_updates_the_routed_experts(catalog: Catalog) -> None:
    """A mixed pipeline has no expert parallelism, so each of Mixtral 8x7B's experts is replicated over dp and
    updated as a dense weight: the optimizer reads and writes (46.70B - 2 x 131.1M) / 32 parameters a layer, not
    (1.61B - 2 x 131.1M) / 32. On 64 MI300X (TP1 PP2, 16 layers a stage, the embedding) beside 64 H100 at DP32 the
    update had read 0.2 ms; by hand it is memory_time of 30 B x 1.4513G x 16 + 131.1M over 32, some 3.3 ms."""
    model = load_model(catalog, "mixtral-8x7b")
    job = make_job(model, None, None, None, "bf16", 1e12, chips=128)
    hw = hardware(catalog)
    a, b = Part(hw.system("mi300x"), 64), Part(hw.system("h100-sxm"), 64)
    one = np.array([1])
    hp = HeteroPlans(tp_a=one, pp_a=2 * one, tp_b=2 * one, pp_b=one, dp=32 * one, mb=one, recompute=0 * one)
    res = hetero_step(model, job, a, b, hp, (50e9, 50e9), 1e-5)
    per_layer = (model.params_total - model.embedding_params - model.lm_head_params) / model.layers
    assert per_layer == pytest.approx(1.4513e9, rel=1e-4)
    layers_a = math.ceil(int(res.layers_a[0]) / 2)
    params_a = per_layer * layers_a + model.embedding_params  # TP1
    traffic = optimizer_traffic("bf16", working_weight_bytes(a.dev, "bf16"))
    expected_a = float(memory_time(np.array([traffic * params_a / 32]), a.dev, kernels=4.0)[0])
    params_b = (per_layer * (model.layers - int(res.layers_a[0])) + model.lm_head_params) / 2
    expected_b = float(memory_time(np.array([traffic * params_b / 32]), b.dev, kernels=4.0)[0])
    optimizer = float(res.optimizer[0])
    assert optimizer == pytest.approx(expected_a if res.dp_on_a[0] else expected_b, rel=1e-9)
    assert optimizer > 2e-3  # the dense parameters alone had given some 0.2 ms


def test_a_part_priced_by_the_user_keeps_its_quotes_region_in_the_site_line() -> None:
    """A part whose price --set gave keeps the region of the catalog quote it replaces (PriceQuote.site): its own
    region is '', and the site line had named the other part's quote alone (us-east-1) where trn2's is us-east-2."""
    from chipwise.api import plan_hetero

    base = plan_hetero("llama-3.1-8b", {"h100-sxm": 8, "trn2": 16}, tokens=1e10)["mixed"]
    user = plan_hetero("llama-3.1-8b", {"h100-sxm": 8, "trn2": 16}, tokens=1e10, sets=["trn2.price.on-demand=2.235"])
    assert "(us-east-1, us-east-2)" in base["site_note"]
    assert user["mixed"]["site_note"] == base["site_note"]
    assert user["mixed"]["co2e_kg"] == base["co2e_kg"]
