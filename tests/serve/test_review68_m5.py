"""Review 68 (M5): an EAGLE head is one dense decoder layer with its own LM head over a 32,000-token draft
vocabulary (EAGLE-3), at the method's prior only for a target it was measured on; a draft model's heads split
over the target's tp."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.iteration import Shapes
from chipwise.serve.kvcache import weights_per_rank
from chipwise.serve.speculation import DraftHead, Speculation, drafter, parse_speculation, with_prior
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model

ONE_RANK = Shapes.of(1, 1, 1, 0)


def test_an_eagle_head_of_an_moe_target_is_one_dense_layer(catalog: Catalog) -> None:
    """gpt-oss-120b's head had been a copy of its last MoE layer, 128 experts: 3.2 B parameters. SpecForge's
    gpt-oss-120B-eagle3 is dense: attention 26,550,080 (64 x 64 query, 8 x 64 KV heads, biases), MLP 3 x 2,880 x
    17,280 = 149,299,200 (6 hidden sizes), norms 5,824 + enorm and hnorm 5,760 + the final 2,880, its LM head
    32,000 x 2,880 = 92,160,000: 268,023,744, 0.536 GB in 16 bits (its dense layer stays bf16 under mxfp4)."""
    target = load_model(catalog, "gpt-oss-120b")
    head = drafter(catalog, target, parse_speculation("eagle:3@0.8"))
    (layer,) = head.groups
    assert layer.moe is None and layer.mlp is not None and layer.mlp.ffn == 17_280 and layer.window == 0
    assert target.attention.params(2880) == 26_550_080
    assert head.params_total == 26_550_080 + 5_824 + 5_760 + 149_299_200 + 92_160_000 + 2_880 == 268_023_744
    assert float(weights_per_rank(head, ONE_RANK, "mxfp4")) == pytest.approx(2 * (268_023_744 - 2_880))
    # a target with dense layers lends their width (Llama 4 Maverick's 16,384, not its experts' 8,192)
    maverick = drafter(catalog, load_model(catalog, "llama-4-maverick"), parse_speculation("eagle:3@0.8"))
    assert maverick.groups[0].mlp is not None and maverick.groups[0].mlp.ffn == 16_384
    assert maverick.groups[0].moe is None
    # DeepSeek-V3's MTP module is an MoE layer, and samples with the target's LM head
    mtp = drafter(catalog, load_model(catalog, "deepseek-v3"), parse_speculation("mtp:1"))
    assert mtp.groups[0].moe is not None and (mtp.vocab, mtp.lm_head_params) == (129_280, 0)


def test_an_eagle_head_frees_kv_cache_on_an_moe_target(catalog: Catalog, hw: Hardware) -> None:
    """gpt-oss-120b on one H100 (vLLM, mxfp4): its MoE-layer head had taken 1.63 GiB and 30% of the KV cache; the
    dense head's 0.50 GiB leave it within a tenth of what the target alone holds."""
    from chipwise.serve.plan import ReplicaPlan

    target = load_model(catalog, "gpt-oss-120b")
    plan = ReplicaPlan(tp=1, max_batch=16, max_tokens=8192, weight_precision="mxfp4", kv_precision="bf16")
    alone = setup_replica(catalog, target, hw.system("h100-sxm"), "vllm", plan, 1024.0, 256.0)
    spec = replace(plan, speculation=Speculation("eagle", 3, 0.86))
    drafted = setup_replica(catalog, target, hw.system("h100-sxm"), "vllm", spec, 1024.0, 256.0)
    extra = float(drafted.memory.weights - alone.memory.weights)
    assert extra == pytest.approx(2 * (268_023_744 - 2_880))
    assert float(drafted.memory.kv_tokens) > 0.85 * float(alone.memory.kv_tokens)


@pytest.fixture(scope="module")
def eagle_setup(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> ReplicaSetup:
    from chipwise.serve.plan import ReplicaPlan

    plan = ReplicaPlan(
        tp=1, max_batch=64, max_tokens=4096, weight_precision="bf16", kv_precision="bf16",
        speculation=Speculation("eagle", 3, 0.8),
    )  # fmt: skip
    return setup_replica(catalog, llama8b, hw.system("h100-sxm"), "vllm", plan, 512.0, 128.0)


def test_an_eagle_pass_samples_its_draft_vocabulary(eagle_setup: ReplicaSetup, catalog: Catalog) -> None:
    """An EAGLE-3 head's LM head is 32,000 x 4,096 (draft_vocab_size), a quarter of Llama 3.1 8B's 128,256 x
    4,096: a drafting pass at one sequence reads 0.26 GB of LM head, not 1.05 GB (it had cost 0.37 ms a pass on
    an H100, now 0.09 ms), and the head keeps those 131,072,000 weights of its own beside its layer."""
    s = eagle_setup.steps
    assert s.drafter is not None
    assert s.drafter.seq_time(1) / s.seq_time(1) == pytest.approx(32_000 / 128_256, rel=0.02)
    head = drafter(catalog, load_model(catalog, "llama-3.1-8b"), parse_speculation("eagle:3"))
    assert isinstance(head, DraftHead) and (head.vocab, head.lm_head_params) == (32_000, 32_000 * 4096)


def test_eagle_at_the_prior_needs_a_target_it_was_measured_on(catalog: Catalog) -> None:
    """The 0.86 prior is Llama 3.1 8B's EAGLE-3 head: MPT-7B, with no head published, had read it (1.85x the
    throughput); stating an acceptance runs it, and Llama 3.1 8B keeps its prior."""
    mpt = load_model(catalog, "mpt-7b")
    with pytest.raises(ChipwiseError) as err:
        drafter(catalog, mpt, parse_speculation("eagle:3"))
    assert str(err.value) == (
        "no EAGLE head with a measured acceptance is known for mpt-7b (the prior, 0.86, is Llama 3.1 8B's EAGLE-3 "
        "head). Fix: state its acceptance, e.g. eagle:3@0.7."
    )
    assert drafter(catalog, mpt, parse_speculation("eagle:3@0.7")).layers == 1
    assert drafter(catalog, load_model(catalog, "llama-3.1-8b"), parse_speculation("eagle:3")).layers == 1


def test_a_draft_models_missing_acceptance_reads_as_a_draft_model() -> None:
    """It had read 'with a draft drafter', and its example another k."""
    with pytest.raises(ChipwiseError) as err:
        with_prior("draft", 3, "llama-3.2-1b")
    assert str(err.value) == (
        "no acceptance prior for speculation with a draft model. Fix: state it, e.g. draft:llama-3.2-1b:3@0.7."
    )
