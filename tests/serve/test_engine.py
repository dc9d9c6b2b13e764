"""Serving-engine families and the chip vendors each runs on (catalog engines.<engine>.vendors), their batch and token
budgets (vLLM refuses a token budget below its batch), and their figures under --set."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import Hardware
from chipwise.serve.build import setup_replica
from chipwise.serve.engine import (
    ENGINES,
    check_engine_vendor,
    decode_graph_batch,
    default_max_tokens,
    engine_profile,
    engine_runs_on,
    engine_vendors,
    token_budget,
)
from chipwise.serve.plan import ReplicaPlan
from chipwise.workload.model import ModelSpec


@pytest.mark.parametrize(
    ("engine", "vendor", "runs"),
    [
        ("trtllm", "nvidia", True),
        ("trtllm", "amd", False),
        ("trtllm-engine", "google", False),  # from its base, trtllm
        ("vllm", "google", True),
        ("vllm", "intel", True),
        ("sglang", "amd", True),
        ("sglang", "google", False),
        ("neuron", "nvidia", False),
        ("vllm-neuron", "aws", True),  # from its base, neuron
        ("vllm-neuron", "nvidia", False),
        ("optimum-neuron", "aws", True),  # from neuron, its base's base
        ("optimum-neuron", "amd", False),
        ("default", "aws", True),  # names no vendors
        ("trtllm", "other", True),  # a hypothetical chip's vendor, which no engine lists
    ],
)
def test_engines_run_on_their_vendors_chips(catalog: Catalog, engine: str, vendor: str, runs: bool) -> None:
    assert engine_runs_on(catalog, engine, vendor) is runs


def test_an_engine_on_another_vendors_chip_is_one_line(catalog: Catalog) -> None:
    assert engine_vendors(catalog, "vllm-neuron") == ("aws",)
    with pytest.raises(ChipwiseError, match=r"trtllm does not run on tpu-v6e \(google; trtllm runs on nvidia chips "
                       r"only\)\. Fix: use one of vllm there"):  # fmt: skip
        check_engine_vendor(catalog, "trtllm", "google", "tpu-v6e")
    with pytest.raises(ChipwiseError, match="neuron does not run on hopper chips"):
        engine_profile(catalog, "neuron", "hopper")
    assert engine_profile(catalog, "neuron", "trainium2").engine == "neuron"


def test_carried_engine_figures_name_the_fit_they_come_from(catalog: Catalog) -> None:
    """A family with no serving run of its own runs a sibling's fit, and says whose: plan serve marks it (double
    dagger) and its verdict names the source, as it marks a family on engine defaults."""
    from chipwise.serve.engine import engine_carried_from

    assert engine_carried_from(catalog, "vllm-neuron", "trainium3") == "vllm-neuron on trainium2"
    assert engine_carried_from(catalog, "optimum-neuron", "trainium3") == "vllm-neuron on trainium2"  # inherited
    assert engine_carried_from(catalog, "trtllm", "blackwell-ultra") == "trtllm on blackwell"
    assert engine_carried_from(catalog, "sglang", "hopper") == "trtllm on blackwell"
    assert engine_carried_from(catalog, "trtllm", "hopper") is None  # fitted to its own runs
    assert engine_carried_from(catalog, "vllm", "gaudi3") is None  # no figures at all: the defaults


def test_an_engine_inherits_along_its_chain_of_bases(catalog: Catalog) -> None:
    """optimum-neuron builds on vllm-neuron, which builds on neuron: each figure comes from the nearest level that
    states it (the engine's own chip-family fit, then its base's, then the base's base), so on Trainium 1 and
    Inferentia 2, where its runs are the vllm-neuron fit, it is that profile, and on Trainium 2 its own fit replaces
    the factors and keeps the runtime's compiled shapes and vLLM-on-Neuron's scheduling (its own token budget aside)."""
    vllm_t1, own_t1 = (
        engine_profile(catalog, "vllm-neuron", "trainium1"),
        engine_profile(catalog, "optimum-neuron", "trainium1"),
    )
    assert replace(own_t1, provenance={}) == replace(
        vllm_t1, engine="optimum-neuron", provenance={}, prefill_batch=0, max_tokens=2048, budget_covers_sequence=True
    )
    own, vllm = (
        engine_profile(catalog, "optimum-neuron", "trainium2"),
        engine_profile(catalog, "vllm-neuron", "trainium2"),
    )
    assert own.compute_scale != vllm.compute_scale and own.moe_block_scale < 1.0 == vllm.moe_block_scale
    assert own.static_batch and own.moe_compiled  # neuron's
    assert own.decode_first and own.context_batch == 1  # vllm-neuron's


def test_a_cycle_of_bases_ends(catalog: Catalog) -> None:
    """Two engines naming each other as base resolve each once instead of looping."""
    from chipwise.catalog.schema import Figure

    def base(name: str) -> Figure:
        return Figure(value=name, unit="", status="estimate", derivation="a test engine")

    looped = replace(catalog, engines={**catalog.engines, "a": {"base": base("b")}, "b": {"base": base("a")}})
    assert (
        engine_profile(looped, "a", "hopper").step_overhead_s
        == engine_profile(catalog, "default", "hopper").step_overhead_s
    )


@pytest.mark.parametrize(("engine", "limit"), [("sglang", 4096), ("vllm", 1024), ("trtllm", 2048), ("default", 256)])
def test_an_engines_default_batch_limit_is_its_own(catalog: Catalog, engine: str, limit: int) -> None:
    """SGLang sizes its running batch from the KV cache, 2,048-4,096 requests (kv_cache_configurator
    resolve_max_num_reqs), not vLLM's 256 that the default profile holds."""
    assert engine_profile(catalog, engine, "hopper").max_batch == limit


@pytest.mark.parametrize(
    ("gib", "tp", "graphs"),
    [(180, 1, 512), (141, 8, 512), (141, 2, 256), (80, 1, 256), (40, 8, 160), (40, 1, 32), (24, 4, 80), (16, 1, 8)],
)
def test_sglang_captures_decode_graphs_by_its_memory_tiers(catalog: Catalog, gib: int, tp: int, graphs: int) -> None:
    """SGLang's default --cuda-graph-max-bs (server_args._handle_gpu_memory_settings): 512 from 160 GiB, 256 / 512
    below it (tp < 4 / tp >= 4), 32 / 160 below 60 GiB, 24 / 80 below 35, 8 below 20. Engines without the figure
    replay every batch (0)."""
    sglang = engine_profile(catalog, "sglang", "hopper")
    assert int(decode_graph_batch(sglang, gib * 2.0**30, tp)) == graphs
    assert int(decode_graph_batch(engine_profile(catalog, "trtllm", "hopper"), gib * 2.0**30, tp)) == 0


@pytest.mark.parametrize(
    ("gib", "tokens"), [(180, 16384), (160, 16384), (141, 8192), (80, 8192), (48, 4096), (24, 2048)]
)
def test_sglang_sizes_its_chunked_prefill_by_memory(catalog: Catalog, gib: int, tokens: int) -> None:
    """SGLang's default --chunked-prefill-size (server_args._handle_gpu_memory_settings): 16,384 from 160 GiB (B200,
    MI300X), 8,192 below, 4,096 below 60 GiB, 2,048 below 35. The engines that state one budget keep it, and an
    unknown memory keeps the catalog's."""
    sglang = engine_profile(catalog, "sglang", "blackwell")
    assert default_max_tokens(sglang, gib * 2.0**30) == tokens
    assert default_max_tokens(sglang) == sglang.max_tokens == 16384
    assert default_max_tokens(engine_profile(catalog, "trtllm", "blackwell"), gib * 2.0**30) == 8192


@pytest.mark.parametrize(
    ("engine", "family", "fp8_kv"),
    [("default", "gaudi2", True), ("default", "gaudi3", True), ("default", "hopper", False), ("vllm", "gaudi2", False)],
)
def test_gaudis_own_stack_keeps_an_fp8_deployments_kv_cache_in_fp8(
    catalog: Catalog, engine: str, family: str, fp8_kv: bool
) -> None:
    """Intel Neural Compressor's FP8 quantises the KV cache with the weights (an empty allowlist quantises KVCache);
    vLLM on Gaudi asks for it with --kv-cache-dtype fp8_inc, and elsewhere the default engine keeps 16 bits."""
    from chipwise.serve.quant import default_kv_precision

    profile = engine_profile(catalog, engine, family)
    assert profile.quantised_kv is fp8_kv
    assert default_kv_precision("fp8", profile.quantised_kv) == ("fp8" if fp8_kv else "bf16")


def test_a_budget_that_covers_the_sequence_takes_two_long_prompts(catalog: Catalog) -> None:
    """optimum-neuron's vLLM raises vLLM's 2,048-token budget to the model length: on a 4,096-token model a step
    takes two ~1,500-token prompts; a prompt longer than 2,048 tokens still fits; elsewhere the budget is as given."""
    eng = engine_profile(catalog, "vllm-neuron", "trainium1")
    assert eng.prefill_batch == 1 and eng.context_batch == 1 and not eng.budget_covers_sequence
    assert token_budget(eng, 1501, 32) == 1501  # one prompt a step
    optimum = engine_profile(catalog, "optimum-neuron", "trainium1")
    assert (optimum.prefill_batch, optimum.max_tokens, optimum.budget_covers_sequence) == (0, 2048, True)
    assert optimum.context_batch == 1  # vllm-neuron's: encoded one after another
    assert token_budget(optimum, 1501, 32, sequence=4096) == 4096
    assert token_budget(optimum, 3001, 32, sequence=4096) == 4096  # one 3,001-token prompt: over vLLM's 2,048
    assert token_budget(optimum, 1501, 1, sequence=4096) == 1501  # a batch of one takes one prompt
    assert token_budget(replace(optimum, budget_covers_sequence=False), 1501, 32, sequence=4096) == 2048


def test_an_engine_what_if_holds_on_every_chip_family() -> None:
    """`--set trtllm.step_overhead=50ms` changed nothing on Hopper or Blackwell, whose fitted figures
    (engines.trtllm.chips.F) shadowed it: an engine's figure set on the command line holds on every family of that
    engine, and a family's own (trtllm.chips.hopper.step_overhead) on that family alone."""
    from chipwise.catalog import load_catalog

    everywhere = load_catalog(sets=["trtllm.step_overhead=50ms"])
    for family in ("hopper", "blackwell", "ampere"):
        assert engine_profile(everywhere, "trtllm", family).step_overhead_s == pytest.approx(0.05), family
    assert engine_profile(everywhere, "trtllm-engine", "hopper").step_overhead_s < 0.01  # another engine's own
    one = load_catalog(sets=["trtllm.chips.hopper.step_overhead=50ms"])
    assert engine_profile(one, "trtllm", "hopper").step_overhead_s == pytest.approx(0.05)
    assert engine_profile(one, "trtllm", "blackwell").step_overhead_s < 0.01


def _plan(max_batch: int, max_tokens: int) -> ReplicaPlan:
    return ReplicaPlan(tp=1, max_batch=max_batch, max_tokens=max_tokens)


def test_vllm_refuses_a_token_budget_below_its_batch(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    model = llama8b
    with pytest.raises(InfeasibleError) as err:
        setup_replica(catalog, model, hw.system("h100-sxm"), "vllm", _plan(16, 8), 1024, 256)
    assert str(err.value) == (
        "max_tokens 8 is below max_batch 16: vllm schedules one token a running sequence a step, and refuses a token "
        "budget smaller than its batch. Fix: raise max_tokens to at least 16 or lower max_batch to 8."
    )
    # equal is what vLLM accepts (max_num_batched_tokens >= max_num_seqs)
    assert setup_replica(catalog, model, hw.system("h100-sxm"), "vllm", _plan(16, 16), 1024, 256).plan.max_tokens == 16


def test_turning_prompt_graphs_off_never_makes_a_prompt_cheaper(catalog: Catalog) -> None:
    """For every engine on every chip family it runs on: a prompt iteration's launch floor with its graphs captured
    (piecewise_graphs true) <= the engine's default <= with them off (false); vLLM, which captures them by default,
    pays its uncaptured launches when they are turned off, and an engine that runs them only as compiled graphs
    (TensorRT engines, Neuron) refuses the setting in one line."""
    families = {c.family: c.vendor for c in catalog.chips.values()}
    for engine in ENGINES:
        for family in (f for f, vendor in families.items() if engine_runs_on(catalog, engine, vendor)):
            eng = engine_profile(catalog, engine, family)
            if eng.uncaptured_launch_s == 0.0:
                with pytest.raises(ChipwiseError, match="only as compiled graphs"):
                    eng.prompt_graphs(False)
                continue
            on, off = eng.prompt_graphs(True), eng.prompt_graphs(False)
            assert on.eager_launch_s == 0.0 <= eng.eager_launch_s <= off.eager_launch_s, (engine, family)
            assert eng.prompt_graphs(None) is eng
            if eng.eager_launch_s > 0:
                assert off is eng  # an engine that launches prompts eagerly already
            else:
                assert engine == "vllm" and off.launch_figure == "uncaptured_launch" and off.eager_launch_s > 0
    assert engine_profile(catalog, "trtllm-engine", "hopper").uncaptured_launch_s == 0.0
    assert engine_profile(catalog, "sglang", "hopper").uncaptured_launch_s == pytest.approx(69e-6)  # its eager figure


@pytest.mark.parametrize("chip", ["trn2", "inf2", "trn1"])
def test_vllm_on_aws_chips_is_vllm_neuron(chip: str) -> None:
    """vLLM runs on Trainium and Inferentia through its vllm-neuron plugin: `engine: vllm` there had been priced with
    vLLM's GPU defaults (no compiled batch; 35-60% faster than vllm-neuron's fitted figures on one plan)."""
    import chipwise.api as cw

    scenario = {"kind": "serve", "model": "llama-3.1-8b", "hardware": chip, "input_tokens": 1024,
                "output_tokens": 256, "concurrency": 16, "requests": 100, "plan": {"tp": 8}}  # fmt: skip
    asked, plugin = cw.predict({**scenario, "engine": "vllm"}), cw.predict({**scenario, "engine": "vllm-neuron"})
    assert asked["engine"] == "vllm-neuron" and asked["tpot_s"] == plugin["tpot_s"]
    assert cw.predict({**scenario, "hardware": "h100-sxm", "engine": "vllm"})["engine"] == "vllm"
