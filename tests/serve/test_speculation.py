"""Speculative decoding: the chain-acceptance arithmetic, the spelling users and tables give it, the cost of a
verification step, the simulator's bookkeeping when a step yields tau tokens per sequence, and the drafters: draft
models, and EAGLE heads (one dense decoder layer with its own LM head over a 32,000-token draft vocabulary, EAGLE-3)
at the method's prior only for a target it was measured on."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.iteration import Shapes
from chipwise.serve.kvcache import weights_per_rank
from chipwise.serve.sim.run import Deployment, simulate
from chipwise.serve.speculation import (
    DraftHead,
    Speculation,
    acceptance_for_length,
    drafter,
    parse_speculation,
    with_prior,
)
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model

I, O = 512, 128  # noqa: E741 - prompt and output tokens


def test_the_mtp_prior_follows_the_measured_acceptance_by_position() -> None:
    """A reused MTP module: tau = 1 + the share of steps accepting each position (vLLM's DeepSeek-V3 profile),
    1 + 0.7617 + 0.6158 + 0.5125 = 2.89 for three drafted tokens; deeper positions continue its last ratio."""
    assert parse_speculation("mtp:3").tokens_per_step == pytest.approx(2.89)
    assert parse_speculation("mtp:1").tokens_per_step == pytest.approx(1.7617)
    deep = parse_speculation("mtp:10").positions
    assert len(deep) == 10 and deep[9] / deep[8] == pytest.approx(0.2365 / 0.2722)
    assert parse_speculation("mtp:3@0.85").tokens_per_step == pytest.approx(1 + 0.85 + 0.85**2 + 0.85**3)


def test_tokens_per_step_by_hand() -> None:
    """tau = 1 + a + a^2 + ... + a^k: 1 + 0.8 + 0.64 + 0.512 = 2.952 for k = 3, alpha = 0.8."""
    assert Speculation("mtp", 3, 0.8).tokens_per_step == pytest.approx(2.952)
    assert Speculation("eagle", 3, 1.0).tokens_per_step == 4.0
    assert Speculation("mtp", 5, 0.0).tokens_per_step == 1.0


@given(k=st.integers(1, 8), alpha=st.floats(0.0, 0.999))
def test_acceptance_length_inverts_tokens_per_step(k: int, alpha: float) -> None:
    tau = Speculation("mtp", k, alpha).tokens_per_step
    assert Speculation("mtp", k, acceptance_for_length(tau, k)).tokens_per_step == pytest.approx(tau, rel=1e-9)


@pytest.mark.parametrize(
    ("text", "method", "k", "acceptance", "source"),
    [
        ("mtp:3", "mtp", 3, 0.7617, "prior"),
        ("eagle:3@0.8", "eagle", 3, 0.8, "stated"),
        ("draft:llama-3.2-1b:7@0.75", "draft", 7, 0.75, "stated"),
    ],
)
def test_parse_speculation(text: str, method: str, k: int, acceptance: float, source: str) -> None:
    s = parse_speculation(text)
    assert (s.method, s.draft_tokens, s.acceptance, s.acceptance_source) == (method, k, acceptance, source)


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        ("medusa:3", "unknown speculative method"),
        ("mtp", "cannot read speculation"),
        ("mtp:0", "at least 1 drafted token"),
        ("mtp:3@1.5", "not a probability"),
        ("draft:llama-3.2-1b:4", "no acceptance prior"),
        ("eagle:three", "cannot read speculation"),
        ("eagle:3@", "cannot read speculation 'eagle:3@'"),
        ("eagle:3@ ", "cannot read speculation"),
    ],
)
def test_bad_speculation_gets_one_line(text: str, fix: str) -> None:
    with pytest.raises(ChipwiseError, match=fix) as err:
        parse_speculation(text)
    assert "Fix:" in str(err.value) and "\n" not in str(err.value)


def test_an_unknown_draft_model_is_named_before_its_acceptance(catalog: Catalog) -> None:
    """draft:nomodel:3 had been told to state its acceptance, and only with one said the model was unknown."""
    for text in ("draft:nomodel:3", "draft:nomodel:3@0.7", "draft:lama-3.2-1b:3"):
        with pytest.raises(ChipwiseError, match=r"unknown model '(nomodel|lama-3\.2-1b)'\..* Fix:"):
            parse_speculation(text, catalog)
    with pytest.raises(ChipwiseError, match="no acceptance prior"):  # a known one still needs its acceptance
        parse_speculation("draft:llama-3.2-1b:4", catalog)


@pytest.fixture(scope="module")
def spec_setup(catalog: Catalog, hw: Hardware, llama8b: ModelSpec, h100_setup: ReplicaSetup) -> ReplicaSetup:
    """The conftest's Llama 3.1 8B replica on one H100, with a 3-token EAGLE drafter accepted 80% of the time."""
    plan = replace(h100_setup.plan, speculation=Speculation("eagle", 3, 0.8))
    return setup_replica(catalog, llama8b, hw.system("h100-sxm"), "trtllm", plan, 512.0, 128.0)


def test_a_verification_step_prices_k_plus_one_positions_and_k_drafts(
    spec_setup: ReplicaSetup, h100_setup: ReplicaSetup
) -> None:
    s, plain = spec_setup.steps, h100_setup.steps
    d = s.drafter
    assert d is not None and d.fixed == 0.0
    n = 8
    by_hand = s.fixed + s.token_time(4 * n) + s.seq_time(4 * n) + 3 * (d.token_time(n) + d.seq_time(n))
    assert s.decode_base(n) == pytest.approx(by_hand, rel=1e-12)
    # one read of the cache serves the 4 positions: GQA's verification stays bound by it, its 4 queries' score
    # FLOPs adding under 3% through the roofline's norm
    assert plain.a < s.a <= 1.03 * plain.a
    assert s.a_decode(1) == pytest.approx(s.a + 3 * d.a, rel=1e-12)
    # the drafter is one decoder layer of the target: a pass costs a fraction of a target step
    assert d.token_time(n) < plain.token_time(n) / 8
    assert s.tau == pytest.approx(2.952)


def test_verifying_k_drafts_attends_with_k_plus_one_queries(catalog: Catalog, hw: Hardware) -> None:
    """One read of a sequence's cache serves the k + 1 positions a verification step attends with; the score FLOPs
    grow with them. DeepSeek-V3's latent attention on a rank that holds all 128 heads (attention DP) is compute-bound
    (2 x 128 x 1,088 FLOPs per cached token against 576 bytes), so verifying 3 positions costs nearly 3x a decode
    step's (the roofline's norm of 3x the FLOPs and the one read); tensor-parallel at TP8 a rank holds 16 heads and
    reads the same latent, 60 FLOPs a byte, whose 3 positions approach the ridge (1.3x), and Llama's GQA, 8 KV heads
    read for 64 query heads, stays bound by the read."""
    from chipwise.perf.device import device_of
    from chipwise.perf.serving import attention_rate
    from chipwise.serve.engine import engine_profile, serving_device
    from chipwise.serve.iteration import Shapes, context_coefficient
    from chipwise.serve.quant import stored_bytes
    from chipwise.workload.presets import load_model

    system = hw.system("b200")
    dev = serving_device(device_of(system), engine_profile(catalog, "trtllm", system.chip.family))
    deepseek, llama = load_model(catalog, "deepseek-v3"), load_model(catalog, "llama-3.1-70b")

    def ratio(model: ModelSpec, shapes: Shapes) -> float:
        one, three = (float(context_coefficient(model, dev, shapes, "fp8", 2048.0, q)) for q in (1.0, 3.0))
        return three / one

    # per cached token on one of the 8 ranks: the latent's FLOPs at the attention rate against its fp8 bytes (under
    # attention DP each rank reads an eighth of the batch's tokens, as it holds an eighth of its sequences)
    rate, bw = attention_rate(dev, "fp8"), dev.hbm_bandwidth * dev.eff.memory
    flops, latent = 2.0 * 128 * (2 * 512 + 64) / 8, (512 + 64) * stored_bytes("fp8")
    for shapes, read in ((Shapes.of(8, 1, 8, 1), latent / 8), (Shapes.of(8, 1, 8), latent)):
        c, m = flops / rate, read / bw
        assert ratio(deepseek, shapes) == pytest.approx(math.hypot(3 * c, m) / math.hypot(c, m), rel=1e-12)
    assert 2.7 < ratio(deepseek, Shapes.of(8, 1, 8, 1)) < 3.0
    assert 1.2 < ratio(deepseek, Shapes.of(8, 1, 8)) < 1.5
    assert 1.0 < ratio(llama, Shapes.of(8)) < 1.05


def _one_request(setup: ReplicaSetup) -> tuple[float, float]:
    ones = np.ones(1, dtype=np.int64)
    out = simulate(Deployment((setup.pool(1),)), ones * I, ones * O, ones * 0, np.zeros(1))
    r = out.requests
    return float(r["first"][0] - r["arrival"][0]), float((r["finish"][0] - r["first"][0]) / (O - 1))


def test_single_request_by_hand(spec_setup: ReplicaSetup) -> None:
    """After its prompt (and the drafter's pass over it), a request decodes in ceil((O - 1) / tau) steps, each
    over a context that grows by tau: TPOT = (k base + a (k C + tau k (k - 1) / 2)) / (O - 1)."""
    s = spec_setup.steps
    ttft, tpot = _one_request(spec_setup)
    pairs = I * (I + 1) / 2
    assert ttft == pytest.approx(s.time(I, 1, 0.0, pairs) + s.draft_prefill(I), rel=1e-12)
    k = math.ceil((O - 1) / s.tau)
    total = k * s.decode_base(1) + s.a_decode(1) * (k * (I + 1) + s.tau * k * (k - 1) / 2)
    assert tpot == pytest.approx(total / (O - 1), rel=1e-12)


def test_speculation_pays_only_with_acceptance(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, h100_setup: ReplicaSetup, spec_setup: ReplicaSetup
) -> None:
    """At batch 1 drafting 3 tokens that are mostly accepted beats plain decoding; drafting tokens that are never
    accepted only adds their cost."""
    _, plain = _one_request(h100_setup)
    _, good = _one_request(spec_setup)
    never = replace(spec_setup.plan, speculation=Speculation("eagle", 3, 0.0))
    _, bad = _one_request(setup_replica(catalog, llama8b, hw.system("h100-sxm"), "trtllm", never, 512.0, 128.0))
    assert good < plain / 1.5
    assert bad > plain


@pytest.mark.parametrize("engine", ["trtllm", "vllm"])
def test_conservation_and_kv_bound_with_speculation(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, spec_setup: ReplicaSetup, engine: str
) -> None:
    """Every request of a loaded closed loop finishes (none dropped; vLLM preempts and recomputes on a small
    cache) and the KV cache never overflows, with steps that add tau tokens per sequence."""
    setup = setup_replica(catalog, llama8b, hw.system("h100-sxm"), engine, spec_setup.plan, 512.0, 128.0)
    n = 200
    rng = np.random.default_rng(1)
    inputs = rng.integers(64, 1024, n)
    outputs = rng.integers(2, 400, n)
    pool = replace(setup.pool(1), kv_tokens=20_000)
    out = simulate(Deployment((pool,)), inputs, outputs, np.zeros(n, dtype=np.int64), None, concurrency=48)
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    assert max(float(np.max(rep["util_v"])) for rep in out.replicas) <= 1.0 + 1e-9
    if engine == "vllm":
        assert r["preempted"].sum() > 0


def test_plan_serve_prices_speculation(catalog: Catalog) -> None:
    """With an MTP drafter every candidate decodes tau tokens per (dearer) step: at one user the estimated TPOT
    falls, and the simulated check of the chosen fleet runs the drafter too."""
    from chipwise.planner.serving_plan import plan_serving
    from chipwise.workload.load import Load

    def best(spec: str | None) -> dict[str, Any]:
        r = plan_serving(
            catalog, "deepseek-r1", ["b200"], Load("closed", concurrency=1), 1000, 1000, precision="fp4",
            disaggregated=False, verify=1, requests=8, speculative=spec,
        )  # fmt: skip
        verified: dict[str, Any] = r["verified"][0]
        return verified

    plain, mtp = best(None), best("mtp:3@0.8")
    both = plan_serving(
        catalog, "deepseek-r1", ["b200"], Load("closed", concurrency=1), 1000, 1000, precision="fp4",
        disaggregated=False, verify=0, speculative="none,mtp:3",
    )  # fmt: skip
    assert sorted(str(r["plan"]["speculative"])[:3] for r in both["results"]) == ["MTP", "Non"]
    assert mtp["tpot_s"]["p50"] < plain["tpot_s"]["p50"] / 1.5
    assert mtp["plan"]["both"]["speculative"].startswith("MTP k=3, acceptance 0.80")
    assert plain["plan"]["both"]["speculative"] is None


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 6), alpha=st.floats(0.0, 1.0), users=st.integers(1, 24), seed=st.integers(0, 10_000))
def test_every_request_finishes_whatever_the_speculation(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, h100_setup: ReplicaSetup, k: int, alpha: float, users: int,
    seed: int,
) -> None:  # fmt: skip
    """Conservation and the KV bound hold for any drafted-token count and acceptance, and a request's TPOT is
    never below what tau tokens per step allow at batch 1."""
    plan = replace(h100_setup.plan, speculation=Speculation("eagle", k, alpha))
    setup = setup_replica(catalog, llama8b, hw.system("h100-sxm"), "trtllm", plan, 512.0, 128.0)
    rng = np.random.default_rng(seed)
    n = 40
    inputs, outputs = rng.integers(16, 1024, n), rng.integers(2, 300, n)
    pool = replace(setup.pool(1), kv_tokens=30_000)
    out = simulate(Deployment((pool,)), inputs, outputs, np.zeros(n, dtype=np.int64), None, concurrency=users)
    r = out.requests
    assert np.all(np.isfinite(r["finish"])) and not r["dropped"].any()
    assert max(float(np.max(rep["util_v"])) for rep in out.replicas) <= 1.0 + 1e-9
    tpot = (r["finish"] - r["first"]) / np.maximum(r["output"] - 1, 1)
    floor = setup.steps.decode_base(1) / setup.steps.tau
    assert np.all(tpot[r["output"] > 2 * setup.steps.tau + 2] >= 0.99 * floor)


def test_a_draft_model_is_smaller_than_its_target_reads_its_tokens_and_takes_memory(catalog: Catalog) -> None:
    """Llama 3.1 405B cannot draft for 70B, nor DeepSeek (another vocabulary) for Llama; an 8B draft's weights come
    out of the KV cache of the ranks it shares (70B in fp8 with it no longer fits one H100)."""
    from chipwise.errors import ChipwiseError, InfeasibleError
    from chipwise.hardware import hardware
    from chipwise.serve.build import setup_replica
    from chipwise.serve.plan import ReplicaPlan
    from chipwise.serve.speculation import drafter, parse_speculation
    from chipwise.workload.presets import load_model

    target = load_model(catalog, "llama-3.1-70b")
    with pytest.raises(ChipwiseError, match=r"draft model llama-3\.1-405b is not smaller than llama-3\.1-70b"):
        drafter(catalog, target, parse_speculation("draft:llama-3.1-405b:2@0.9"))
    with pytest.raises(ChipwiseError, match=r"has a vocabulary of 129,280 tokens and llama-3\.1-70b one of 128,256"):
        drafter(catalog, target, parse_speculation("draft:deepseek-r1:2@0.9"))
    h100 = hardware(catalog).system("h100-sxm")
    plan = ReplicaPlan(tp=2, max_batch=8, max_tokens=8192, weight_precision="fp8", kv_precision="fp8")
    alone = setup_replica(catalog, target, h100, "trtllm", plan, 1000.0, 200.0)
    spec = parse_speculation("draft:llama-3.1-8b:4@0.7")
    drafted = setup_replica(catalog, target, h100, "trtllm", replace(plan, speculation=spec), 1000.0, 200.0)
    # fp8 layers split over two ranks (4.0 GB) and its 16-bit embedding and LM head (0.5 GB more a rank)
    draft_rank = float(drafted.memory.weights - alone.memory.weights)
    assert 4.0e9 < draft_rank < 4.6e9
    assert drafted.memory.kv_tokens < alone.memory.kv_tokens
    with pytest.raises(InfeasibleError, match=r"with its drafter \(llama-3.1-8b\) does not fit"):
        setup_replica(catalog, target, h100, "trtllm", replace(plan, tp=1, speculation=spec), 1000.0, 200.0)


def test_a_draft_models_kv_cache_shares_the_blocks(catalog: Catalog, hw: Hardware) -> None:
    """Llama 3.2 1B drafting for Llama 3.1 8B on one H100 caches 16 layers x 8 KV heads x 64 x 2 x 2 B = 32 KiB a
    token beside the target's 128 KiB: the KV memory left after both models' weights holds 160 KiB a token (it held
    the target's 128 KiB alone, a quarter more tokens than fit)."""
    from chipwise.serve.build import setup_replica
    from chipwise.serve.plan import ReplicaPlan
    from chipwise.workload.presets import load_model

    target = load_model(catalog, "llama-3.1-8b")
    plan = ReplicaPlan(tp=1, max_batch=64, max_tokens=4096, weight_precision="bf16", kv_precision="bf16")
    spec = parse_speculation("draft:llama-3.2-1b:3@0.8")
    drafted = setup_replica(
        catalog, target, hw.system("h100-sxm"), "vllm", replace(plan, speculation=spec), 512.0, 128.0
    )
    assert float(drafted.memory.kv_bytes_per_token) == 128 * 1024 + 32 * 1024
    kv = float(drafted.memory.kv_memory)
    assert float(drafted.memory.kv_tokens) == pytest.approx(kv / (160 * 1024), abs=drafted.memory.block_tokens)


def test_a_speculation_writes_the_text_it_is_read_from() -> None:
    """text() is what parse_speculation reads back: a prior's method alone, a stated acceptance with it."""
    for text in ("mtp:3", "eagle:2", "draft:llama-3.2-1b:4@0.75", "mtp:1@0.9", "eagle:3@0.7123456"):
        spec = parse_speculation(text)
        assert spec.text() == text
        assert parse_speculation(spec.text()) == spec


def test_a_draft_model_costs_less_a_token_than_an_moe_target(catalog: Catalog) -> None:
    """Qwen3 8B (8.19 B parameters, all active) drafting for Qwen3 30B-A3B (3.35 B active a token) would cost 2.4
    target tokens a drafted token: refused, though its 8.19 B total is below the target's 30.5 B."""
    from chipwise.serve.speculation import drafter
    from chipwise.workload.presets import load_model

    moe = load_model(catalog, "qwen3-30b-a3b")
    with pytest.raises(ChipwiseError) as err:
        drafter(catalog, moe, parse_speculation("draft:qwen3-8b:3@0.8"))
    assert str(err.value) == (
        "draft model qwen3-8b is not smaller than qwen3-30b-a3b (8.19 B against 3.35 B parameters active a token): "
        "drafting would cost more than it saves. Fix: use a smaller model of the target's family."
    )
    dense = load_model(catalog, "llama-3.1-8b")
    assert drafter(catalog, dense, parse_speculation("draft:llama-3.2-1b:3@0.8")).name == "llama-3.2-1b"


def test_an_eagle_or_mtp_head_shares_its_targets_embedding_and_lm_head(catalog: Catalog) -> None:
    """The head's weights are its decoder layer and two norms: Llama 3.1 8B's layer is 218,112,000 parameters
    (attention 41.9 M, MLP 176.2 M, norms 8,192) plus enorm and hnorm (8,192), 0.436 GB in bf16 on one rank; an
    EAGLE-3 head adds its LM head over a 32,000-token draft vocabulary (32,000 x 4,096, 16-bit), which the drafting
    pass multiplies by; an MTP module shares its target's."""
    from chipwise.serve.iteration import Shapes
    from chipwise.serve.kvcache import weights_per_rank
    from chipwise.serve.speculation import DraftHead, drafter
    from chipwise.workload.presets import load_model

    target = load_model(catalog, "llama-3.1-8b")
    head = drafter(catalog, target, parse_speculation("eagle:3"))
    assert isinstance(head, DraftHead) and (head.vocab, head.hidden, head.layers) == (32_000, 4096, 1)
    layer = 5 * 4096 * 4096 // 2 + 3 * 4096 * 14336 + 2 * 4096  # q, o and GQA k, v (8 of 32 heads); MLP; norms
    assert float(weights_per_rank(head, Shapes.of(1, 1, 1, 0), "bf16")) == pytest.approx(
        2.0 * (layer + 8192 + 32_000 * 4096)
    )
    mtp = drafter(catalog, load_model(catalog, "deepseek-v3"), parse_speculation("mtp:1"))
    assert (mtp.embedding_params, mtp.lm_head_params) == (0, 0)


ONE_RANK = Shapes.of(1, 1, 1, 0)  # one rank: no tp, pp or ep split


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


def test_the_json_gives_the_speculation_as_fields() -> None:
    """Beside the label, --json and the API give the speculation's fields: a consumer had read tokens a step out of
    'EAGLE k=3, acceptance 0.80 (2.95 tokens/step)'. (1 - 0.8^4) / (1 - 0.8) = 2.952."""
    import chipwise.api as cw

    scenario = {"kind": "serve", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 4, "precision": "fp8",
                "input_tokens": 512, "output_tokens": 128, "concurrency": 4, "requests": 40,
                "speculative": "eagle:3@0.8"}  # fmt: skip
    spec = cw.predict(scenario)["plan"]["speculation"]
    assert spec["method"] == "eagle" and spec["draft_tokens"] == 3 and spec["acceptance"] == 0.8
    assert spec["acceptance_source"] == "stated" and spec["text"] == "eagle:3@0.8"
    assert spec["tokens_per_step"] == pytest.approx((1 - 0.8**4) / (1 - 0.8), rel=1e-12)
