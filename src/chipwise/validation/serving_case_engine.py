"""The engine a serving row ran, set up as the run deployed it: the engine family and its profile (mixed chunks,
host sampling, the front end), the speculative decoding it drafted with, and the scheduler, launch and decode-batch
settings the row or its load generator's scripts and recipes give."""

from __future__ import annotations

from dataclasses import replace

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware.objects import System
from chipwise.serve.engine import BASE_PROFILE, ENGINES, EngineProfile, default_engine, engine_profile, has_engine_build
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.speculation import Speculation, acceptance_for_length, with_prior
from chipwise.validation.cells import stated_cell
from chipwise.validation.harness import DecodeRun, Harness, SglangRun, behind_dynamo, sglang_mixed_chunk
from chipwise.validation.models import preset_of
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving_row_engine import parse_speculation_text
from chipwise.workload.model import ModelSpec

SKIP_SPECULATIVE = "speculative decoding"

#: AMD's MLPerf Inference v5.1 harness runs vLLM's FP8 GEMMs as hipBLASLt tuned them shape by shape, and its code ships
#: the tuning results (MLCommons inference_results_v5.1 as github ntuhpc/inference_results_v5.1 @a634ab77 holds it,
#: closed/AMD/code/llama2-70b-99.9/scripts/gemm_llama2-70b/aa0bda7b/tuning_spx_1700_formatted.txt, gfx942, 304 CUs):
#: Llama 2 70B's QKV (10,240 x 8,192), output (8,192 x 8,192) and gate-up (57,344 x 8,192) GEMMs at 1,024-2,432 tokens
#: run at 1,262-1,365 TFLOP/s, 48-52% of MI300X's 2,614.9 dense FP8 peak. That is 1.30x (geometric mean of six shapes,
#: 1.24-1.35x) the rate perf.serving.streamed_gemm_time gives them at the family's FP8 fraction (compute_scale 1), and
#: 2.06x stock vLLM's fitted rate (engines.vllm.chips.cdna3.compute_scale). Status: estimate, measured on MI300X; MI325X
#: has the same compute die, and Mixtral's and MI355X's GEMMs in the same harness are taken at the same scale. AMD's
#: v4.1 submission (vLLM 0.4.3) is not covered: no tuning results of its were read.
AMD_MLPERF_TUNED_COMPUTE_SCALE = 1.30


def tuned_compute_scale(row: InferenceRow, engine: str, vendor: str) -> float | None:
    """The GEMM rate a run's harness tuned its engine to (AMD_MLPERF_TUNED_COMPUTE_SCALE), None for the engine's own."""
    amd_v51 = row.source_family.lower().startswith("mlperf inference v5.1") and vendor == "amd"
    return AMD_MLPERF_TUNED_COMPUTE_SCALE if amd_v51 and engine == "vllm" else None


def row_speculation(catalog: Catalog, row: InferenceRow) -> Speculation:
    """The speculative decoding a row ran, or ChipwiseError saying what it leaves out. A stated acceptance (a mean
    acceptance length, or vLLM's acceptance rate) is used as stated; without one, an MTP or EAGLE drafter takes its
    prior (serve.speculation) and a separate draft model, which has none, is skipped."""
    text = " ".join(row.raw.get(f, "") for f in ("parallelism", "serving_engine", "notes", "scenario"))
    said = parse_speculation_text(text)
    if said.method in ("", "medusa"):
        raise ChipwiseError(f"{SKIP_SPECULATIVE}: {said.method or 'drafter not recognised'}")
    if said.draft_tokens is None:
        raise ChipwiseError(f"{SKIP_SPECULATIVE}: tokens drafted per step not stated")
    k = said.draft_tokens
    if said.acceptance_length is not None:
        draft_model = preset_of(catalog, said.draft_model) if said.method == "draft" else ""
        if said.method == "draft" and not draft_model:
            raise ChipwiseError(f"{SKIP_SPECULATIVE}: draft model '{said.draft_model}' has no preset")
        return Speculation(said.method, k, acceptance_for_length(said.acceptance_length, k), draft_model)
    if said.method == "draft":
        raise ChipwiseError(f"{SKIP_SPECULATIVE}: a draft model's acceptance is not stated (no prior)")
    return with_prior(said.method, k)


def engine_family(row: InferenceRow, vendor: str) -> str:
    """The engine family: vLLM serving on a Neuron back end is 'optimum-neuron' where optimum-neuron served it (its
    own NxD model code and vLLM platform) and 'vllm-neuron' otherwise (the vllm-neuron plugin over NxD Inference);
    native Neuron runtimes (transformers-neuronx, NxD Inference) are 'neuron'. A row naming no engine is served as
    predict serves a scenario naming none, with the chip vendor's engine (the unfitted 'default' profile had priced
    it 2-3.5x off predict's answer, in silence); one naming an engine chipwise does not know keeps the 'default'
    profile, with a note (the vendor's would move the published Gaudi rows, whose engines are Intel's own)."""
    if row.engine == "neuron" and "vllm" in row.raw.get("serving_engine", "").lower():
        text = " ".join(row.raw.get(k, "") for k in ("serving_engine", "source_family")).lower()
        return "optimum-neuron" if "optimum-neuron" in text else "vllm-neuron"
    if row.engine in ENGINES:
        return row.engine
    return BASE_PROFILE if stated_cell(row.raw, "serving_engine") else default_engine(vendor)


def host_sampling(row: InferenceRow) -> bool:
    """The row's deployment samples tokens on the host: optimum-neuron's 'CPU sampling' configurations (its default
    is on-device sampling; 'hybrid' samples only the first token, from the prefill graph, on the CPU)."""
    text = f"{row.raw.get('notes', '')} {row.raw.get('serving_engine', '')}".lower()
    return "cpu sampling" in text and "hybrid" not in text


def deployed_engine(
    catalog: Catalog, row: InferenceRow, model: ModelSpec, system: System, engine: str, notes: list[str]
) -> tuple[str, EngineProfile]:
    """The engine a row is priced with and its profile as the run deployed it: TensorRT-LLM's PyTorch back end for an
    MLA model; SGLang's mixed chunks and host sampling where the row says so; no HTTP front end for MLPerf's
    in-process LoadGen, and Dynamo's in place of the engine's own where the run sat behind it."""
    if row.engine not in ENGINES and (stated := stated_cell(row.raw, "serving_engine")):
        notes.append(f"serving engine '{stated}' not recognised: priced with the default engine profile")
    elif row.engine not in ENGINES:
        notes.append(f"engine not stated; priced as {engine}, the engine predict takes for {system.chip.vendor} chips")
    if not has_engine_build(engine, model):
        engine = "trtllm"
        notes.append("TensorRT-LLM runs MLA models (DeepSeek-V3/R1) on its PyTorch back end only")
    eng = engine_profile(catalog, engine, system.chip.family)
    if engine == "sglang" and not eng.mixed_batching and sglang_mixed_chunk(row):
        eng = eng.as_deployed(mixed_batching=True)
        notes.append("SGLang launched with --enable-mixed-chunk: prompt chunks ride in decode iterations (harness)")
    if host_sampling(row):
        eng = replace(eng, host_sampling=True)
        notes.append("tokens sampled on the host (CPU sampling): the logits of every compiled slot go to the CPU")
    if eng.budget_covers_sequence:
        notes.append(
            f"{engine}'s vLLM: a step takes the prompts that fit max({eng.max_tokens:,}, the model length) tokens"
        )
    if eng.request_overhead_s > 0 and row.source_family.lower().startswith("mlperf"):
        # MLPerf's LoadGen drives the engine in process: no HTTP server or tokenising front end between them
        eng = replace(eng, request_overhead_s=0.0)
    elif eng.request_overhead_s > 0 and behind_dynamo(row):
        eng = eng.as_deployed(front_end="dynamo")
        notes.append(f"behind Dynamo's front end: {engine}'s own HTTP server and tokeniser are not in the path")
    if (scale := tuned_compute_scale(row, engine, system.chip.vendor)) is not None:
        eng = replace(eng, compute_scale=scale)
        notes.append(
            f"AMD's MLPerf v5.1 harness: vLLM's FP8 GEMMs tuned shape by shape (hipBLASLt), compute scale {scale:g}"
        )
    return engine, eng


def scheduler_settings(
    plan: ReplicaPlan,
    row: InferenceRow,
    gen: Harness | None,
    engine: str,
    chip_family: str,
    model: str,
    lengths: tuple[float, float],
    notes: list[str],
) -> ReplicaPlan:
    """`plan` with the scheduler settings the run used: SGLang's polling interval as the row states it
    (--scheduler-recv-interval), else as its load generator's launch scripts set it; TensorRT-LLM's batch
    waiting where those scripts set it; piecewise CUDA graphs for prompt iterations where the row or the scripts
    enable them, and none where the scripts turn the engine's off."""
    users = row.concurrency or 1
    scripts = f"{gen.name}'s launch scripts" if gen is not None else ""
    interval, why = (row.recv_interval, "as stated") if row.recv_interval is not None else (1, scripts)
    if gen is not None and row.recv_interval is None:
        interval = gen.recv_interval(engine, chip_family, users, plan.attention_dp)
    if engine == "sglang" and interval > 1:
        notes.append(f"the scheduler polls for new requests every {interval} decode iterations ({why})")
        plan = replace(plan, recv_interval=interval)
    wait = gen.batch_wait(engine, model, row.chip, plan.weight_precision, lengths, users, plan.tp) if gen else None
    if gen is not None and wait is not None and not plan.attention_dp:
        notes.append(
            f"prompts wait for a batch of {wait.ratio:g} x max_tokens tokens, at most {wait.iters} iterations "
            f"({scripts})"
        )
        plan = replace(plan, batch_wait_iters=wait.iters, batch_wait_ratio=wait.ratio)
    if gen is not None and gen.graphs_cover_batch:
        plan = replace(plan, graph_batch=plan.max_batch)  # every decode batch replays a captured graph
    if row.piecewise_graphs or (
        gen is not None and gen.piecewise_graphs(engine, model, row.chip, plan.weight_precision, lengths, users)
    ):
        why = "as stated" if row.piecewise_graphs else scripts
        notes.append(f"prompt iterations replay piecewise CUDA graphs ({why})")
        plan = replace(plan, piecewise_graphs=True)
    elif gen is not None and gen.uncaptured(engine, model, row.chip):
        notes.append(f"prompt iterations run without CUDA graphs (cudagraph_mode FULL_DECODE_ONLY; {scripts})")
        plan = replace(plan, piecewise_graphs=False)
    return plan


def decode_worker_batch(gen: Harness, engine: str, run: DecodeRun, max_batch: int, notes: list[str]) -> int:
    """A disaggregated run's decode batch cap: the sequences per attention-DP rank its load generator's recipes hold,
    where those are fewer than `max_batch` (the other users wait for a slot)."""
    rank_batch = gen.decode_rank_batch(engine, run)
    if rank_batch and rank_batch * run.decode_tp < max_batch:
        max_batch = rank_batch * run.decode_tp
        notes.append(
            f"decode workers hold {rank_batch} sequences per attention-DP rank ({max_batch} a worker; "
            f"{gen.name}'s recipes): the other users wait for a slot"
        )
    return max_batch


def launched_sglang(
    scripts: Harness, run: SglangRun, eng: EngineProfile, max_tokens: int, max_batch: int, notes: list[str]
) -> tuple[EngineProfile, int, int]:
    """The engine profile, token budget and batch cap as the load generator's SGLang launch scripts set them
    (--mem-fraction-static, --chunked-prefill-size, --max-running-requests), where they set them."""
    launch = scripts.sglang_launch_of(run)
    if launch is None:
        return eng, max_tokens, max_batch
    eng = replace(eng, memory_fraction=launch.memory_fraction)
    max_tokens = launch.prefill_tokens
    max_batch = min(max_batch, launch.max_running or max_batch)
    notes.append(
        f"SGLang launched with --mem-fraction-static {launch.memory_fraction:g}, --chunked-prefill-size "
        f"{launch.prefill_tokens:,}"
        + (f", --max-running-requests {launch.max_running}" if launch.max_running else "")
        + f" ({scripts.name}'s launch scripts)"
    )
    return eng, max_tokens, max_batch
