"""plan_source where zero 3 leaves no hsdp to choose: a complete plan on one scale-up domain (or one whose hybrid
shard group would be a single rank) is 'given' without an hsdp key, as the search never picks hsdp there."""

from __future__ import annotations

from chipwise.catalog import Catalog
from chipwise.planner.training import plan_source
from chipwise.train.plans import left_to_search
from chipwise.workload import load_model

#: the tester's plan: Llama-3.1-8B on 8 H100 (one 8-GPU node), no hsdp key
ONE_NODE = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "microbatch": 1, "zero": 3, "recompute": "none"}


def test_a_complete_plan_on_one_domain_is_given(catalog: Catalog) -> None:
    """tp x cp x dp = 8 on 8-rank domains: hybrid sharding is plain ZeRO-3 there, so hsdp is no choice of the
    search's; it had read 'partial' (and 'given' only with hsdp: false)."""
    spec = load_model(catalog, "llama-3.1-8b")
    assert left_to_search(ONE_NODE, spec, 8) == []
    assert plan_source(ONE_NODE, spec, 8) == "given"
    assert plan_source({**ONE_NODE, "hsdp": False}, spec, 8) == "given"


def test_hsdp_is_still_left_where_it_applies(catalog: Catalog) -> None:
    """DP16 on two 8-GPU nodes shards over gcd(16, 8) = 8 ranks a node: hsdp is the search's choice, 'partial'. The
    cp the search still chooses (no pp given) leaves the group open, so hsdp stays left too."""
    spec = load_model(catalog, "llama-3.1-8b")
    two_nodes = {**ONE_NODE, "dp": 16}
    assert left_to_search(two_nodes, spec, 8) == ["hsdp"]
    assert plan_source(two_nodes, spec, 8) == "partial"
    assert plan_source({**two_nodes, "hsdp": True}, spec, 8) == "given"
    assert left_to_search({k: v for k, v in ONE_NODE.items() if k not in ("cp", "pp")}, spec, 8) == [
        "pp",
        "cp",
        "vpp",
        "hsdp",
    ]


def test_a_shard_group_of_one_leaves_no_hsdp(catalog: Catalog) -> None:
    """TP8 DP128 on 72-rank NVL72 racks spans 14 of them, but its shard group is gcd(128, 72 / 8) = 1, a plan the
    search does not offer (train.plans.hybrid_applies): 'given' without an hsdp key."""
    spec = load_model(catalog, "llama-3.1-70b")
    plan = {"tp": 8, "pp": 1, "dp": 128, "cp": 1, "microbatch": 1, "zero": 3, "recompute": "selective"}
    assert plan_source(plan, spec, 72) == "given"
    assert plan_source({**plan, "tp": 4, "dp": 256}, spec, 72) == "partial"  # gcd(256, 18) = 2


def test_predict_reads_a_complete_plan_on_one_node_as_given() -> None:
    """predict passes its system's domain: ZeRO-3 on one 8-GPU node without an hsdp key had read 'partial'."""
    from chipwise import api

    plan = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "microbatch": 1, "zero": 3, "recompute": "none"}
    sc = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "seq_len": 8192, "chips": 8}
    assert api.predict({**sc, "global_batch": 16, "plan": plan})["plan_source"] == "given"
