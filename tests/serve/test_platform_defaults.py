"""vLLM's launch defaults by platform (token budget, batch, KV block), the CUDA-graph and Dynamo settings refused
where a platform has none, a stated decode graph batch on vLLM, and a static engine's prefix-cache hit priced no
dearer than a miss."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of
from chipwise.serve.build import setup_replica
from chipwise.serve.engine import engine_fitted, engine_profile
from chipwise.serve.iteration import Shapes, eager_launches
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.policies import bucket, bucket_context
from chipwise.serve.sim.steps import prompt_chunks
from chipwise.workload.model import ModelSpec


@pytest.mark.parametrize(
    ("family", "tokens", "batch", "block"),
    [
        ("hopper", 8192, 1024, 16),  # 70 GiB and up, not an A100
        ("cdna3", 8192, 1024, 16),
        ("ampere", 2048, 256, 16),  # any A100 (vLLM PR 17885)
        ("tpu-v5p", 2048, 256, 16),  # a TPU reports no memory: the small-device defaults
        ("tpu-v6e", 2048, 256, 16),
        ("gaudi3", 2048, 256, 128),  # vllm-gaudi's block size
        ("gaudi2", 2048, 256, 128),
    ],
)
def test_vllm_takes_its_launch_defaults_by_platform(
    catalog: Catalog, family: str, tokens: int, batch: int, block: int
) -> None:
    """vLLM's EngineArgs._set_default_args: 8,192 tokens and 1,024 sequences on GPUs of 70 GiB or more other than
    A100s, 2,048 and 256 elsewhere (a TPU or Gaudi reports no device memory to it); vllm-gaudi's KV block is 128
    tokens. A TPU had taken the big-GPU 8,192 and 1,024."""
    eng = engine_profile(catalog, "vllm", family)
    assert (eng.max_tokens, eng.max_batch, eng.block_tokens) == (tokens, batch, block)


def test_launch_defaults_alone_are_no_fit(catalog: Catalog) -> None:
    """A chips node that holds only vLLM's launch defaults on a platform does not make vLLM read as fitted there."""
    assert not engine_fitted(catalog, "vllm", "tpu-v5p")
    assert not engine_fitted(catalog, "vllm", "gaudi3")
    assert engine_fitted(catalog, "vllm", "hopper")


def test_a_tpu_prompt_runs_in_vllms_tpu_budget(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """An 8,192-token prompt on a TPU v5p is encoded in 2,048-token chunks, 4 iterations (it had run in one)."""
    setup = setup_replica(catalog, llama8b, hw.system("tpu-v5p"), "vllm", ReplicaPlan(tp=1, max_batch=1), 8192, 128)
    eng = setup.engine
    assert eng.max_tokens == 2048
    assert len(prompt_chunks(8192, eng.max_tokens)) == 4


@pytest.mark.parametrize("chip", ["gaudi3", "tpu-v6e"])
@pytest.mark.parametrize("captured", [True, False])
def test_piecewise_graphs_is_refused_without_cuda_graphs(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, chip: str, captured: bool
) -> None:
    """vLLM on a TPU (XLA graphs) or a Gaudi (cudagraph_mode NONE) has no CUDA graphs: piecewise_graphs: false had
    added vLLM's 45 us CUDA launch a kernel (Gaudi 3 TTFT 38.0 -> 46.8 ms)."""
    plan = ReplicaPlan(tp=1, max_batch=1, piecewise_graphs=captured)
    with pytest.raises(ChipwiseError, match=rf"^plan.piecewise_graphs is .* vllm .* on {chip} chips: there are no"):
        setup_replica(catalog, llama8b, hw.system(chip), "vllm", plan, 128, 128)


def test_piecewise_graphs_stays_on_cuda_and_rocm(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """On NVIDIA and AMD GPUs (HIP graphs through the same capture API) vLLM's uncaptured launch applies: 45 us."""
    for chip in ("h100-sxm", "mi300x"):
        plan = ReplicaPlan(tp=1, max_batch=1, piecewise_graphs=False)
        eng = setup_replica(catalog, llama8b, hw.system(chip), "vllm", plan, 128, 128).engine
        assert eng.eager_launch_s == pytest.approx(45e-6)


@pytest.mark.parametrize(("chip", "engine"), [("gaudi3", "vllm"), ("tpu-v6e", "vllm"), ("trn2", "neuron")])
def test_dynamo_is_refused_where_it_has_no_worker(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec, chip: str, engine: str
) -> None:
    """Dynamo runs vLLM, SGLang and TensorRT-LLM workers on NVIDIA GPUs only: elsewhere front_end: dynamo had taken
    the engine's front end off (Gaudi 3 TTFT 38.0 -> 8.0 ms) or printed Dynamo's line for nothing (Neuron)."""
    plan = ReplicaPlan(tp=1, max_batch=1, front_end="dynamo", chunked_prefill=engine != "neuron")
    with pytest.raises(ChipwiseError, match=rf"^plan.front_end is dynamo, but Dynamo has no worker for {engine} on "):
        setup_replica(catalog, llama8b, hw.system(chip), engine, plan, 128, 128)


def test_dynamo_takes_vllms_front_end_off_on_nvidia(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    """On an H100 Dynamo's front end replaces vLLM's own server: its 30 ms a request go."""
    plan = ReplicaPlan(tp=1, max_batch=1, front_end="dynamo")
    eng = setup_replica(catalog, llama8b, hw.system("h100-sxm"), "vllm", plan, 128, 128).engine
    assert eng.request_overhead_s == 0.0
    assert engine_profile(catalog, "vllm", "hopper").request_overhead_s == pytest.approx(0.030)


def test_a_vllm_decode_batch_past_its_graphs_launches_uncaptured(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """plan.graph_batch on vLLM: a decode step of more sequences than it names pays vLLM's uncaptured launch a
    kernel (45 us), as its piecewise graphs cover only the captured sizes; graph_batch had changed nothing there
    (TPOT 23.9 ms at 64 users on an H100 either way)."""
    system = hw.system("h100-sxm")
    steps = setup_replica(catalog, llama8b, system, "vllm", ReplicaPlan(tp=1, graph_batch=1), 1024, 128).steps
    kernels = float(eager_launches(llama8b, device_of(system).chip, "bf16", Shapes.of(1, 1, 1, 0)))
    assert steps.decode_floor == pytest.approx(kernels * 45e-6, rel=1e-12)
    assert steps.eager_floor == 0.0  # prompts stay in piecewise graphs
    assert steps.eager_decode_floor(1, 0.0) == 0.0  # within the graph batch
    assert steps.eager_decode_floor(2, 0.0) == pytest.approx(
        steps.fixed + steps.seq_time(2) + kernels * 45e-6, rel=1e-12
    )
    default = setup_replica(catalog, llama8b, system, "vllm", ReplicaPlan(tp=1), 1024, 128).steps
    assert default.eager_decode_floor(64, 0.0) == 0.0  # vLLM's default graph batch is not applied (0: every batch)


def test_graph_batch_is_refused_without_cuda_graphs(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    plan = ReplicaPlan(tp=1, max_batch=8, graph_batch=1)
    with pytest.raises(ChipwiseError, match=r"^plan.graph_batch is 1, but vllm runs its decode steps only as compiled"):
        setup_replica(catalog, llama8b, hw.system("tpu-v6e"), "vllm", plan, 128, 128)


def test_a_bucket_that_spans_the_prefix_attends_to_nothing_more() -> None:
    """A 10% hit of a 2,048-token prompt leaves 1,843 tokens, which pad to the miss's 2,304-token bucket (compiled
    length 2,304): that bucket covers the 205 cached positions too. A 50% hit's 1,024 tokens fill a 1,024 bucket,
    which attends to the 1,024 cached ones."""
    assert bucket(1843, largest=2304) == bucket(2048, largest=2304) == 2304
    assert bucket_context(205, 1843, 2304) == 0
    assert bucket_context(1024, 1024, bucket(1024, largest=2304)) == 1024


def test_a_static_engines_prefix_hit_costs_no_more_than_a_miss(
    catalog: Catalog, hw: Hardware, llama8b: ModelSpec
) -> None:
    """Llama 3.1 8B on a Trainium2 (TP2), 2,048-token prompts: a 10% or 25% hit costs the miss's padded bucket, not
    more (0.3039 and 0.3084 s had read above the miss's 0.3010 s), and a 50% hit less."""
    plan = ReplicaPlan(tp=2, max_batch=32, max_tokens=131072, chunked_prefill=False)
    setup = setup_replica(catalog, llama8b, hw.system("trn2"), "neuron", plan, 2048, 256, longest_request=2304)
    steps, largest = setup.steps, setup.policy().largest_bucket
    assert largest == 2304
    miss = steps.prompt_alone(2048, 2048, True, largest)
    for cached in (205, 512):
        assert steps.prompt_alone(2048, 2048, True, largest, cached) == pytest.approx(miss, rel=1e-12)
    assert steps.prompt_alone(2048, 2048, True, largest, 1024) < 0.6 * miss
    assert prompt_chunks(2048, 2048, True, largest, 205) == [(1843, 2304, 1, 2304 * 2305 / 2)]


def test_a_simulated_prefix_hit_in_the_misss_bucket_reads_the_miss() -> None:
    """In the simulator as in one prompt's prefill: a 10% hit on 2,048-token prompts pads to the miss's bucket and
    reads its TTFT to the digit (the hit's iterations had not counted the prompt completing, its first token's LM
    head and sampling unpriced: 0.2990 s at p99 under the miss's 0.3006)."""
    import chipwise.api as cw

    sc = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "trn2", "engine": "neuron", "chips": 1,
          "input_tokens": 2048, "output_tokens": 64, "arrival_rate": 0.2, "requests": 100,
          "plan": {"tp": 2, "max_batch": 32, "replicas": 2}}  # fmt: skip
    miss, hit = cw.predict({**sc, "prefix_hit_rate": 0.0}), cw.predict({**sc, "prefix_hit_rate": 0.1})
    assert hit["ttft_s"] == miss["ttft_s"]
