"""Predict published serving measurements: each ground-truth row becomes a serving job (model, lengths, load) and
a deployment (replica plan x replicas on the row's chip), which the simulator runs; the predicted output
tokens/s per chip, TTFT and TPOT are compared with the measured ones, statistic for statistic.

Scenarios as the sources define them:
- offline (MLPerf Offline, trtllm-bench max throughput, "infinite request rate"): every request at t = 0;
- server / interactive (MLPerf Server): Poisson arrivals at the measured request rate; TTFT and TPOT are means
  (or the percentiles the row gives);
- rate: Poisson arrivals at the stated rate; closed_loop: a fixed number of concurrent users (or a static batch),
  issued and measured as the row's load generator does (validation.harness: InferenceX, AIPerf, guidellm);
- single: one request at a time.
Assumptions a row forces are written into its notes: an unstated input length is the benchmark dataset's mean prompt
(MLPerf rows state only the output), else taken equal to the mean output length where no known longest prompt rules
that out; an unstated plan is searched for the best throughput per chip.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.disaggregated import kv_transfer
from chipwise.serve.engine import (
    BASE_PROFILE,
    ENGINES,
    EngineProfile,
    default_engine,
    engine_profile,
    has_engine_build,
    token_budget,
)
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import QUANTISED, WEIGHT_PRECISIONS, default_kv_precision
from chipwise.serve.search import best_throughput_shape, held_tokens
from chipwise.serve.sim.metrics import per_request, stats
from chipwise.serve.sim.metrics import summarise as summarise_run
from chipwise.serve.sim.run import simulate
from chipwise.serve.simulate import SATURATED, Pool, ServingSetup, cached_tokens, run_job, steady_window
from chipwise.serve.speculation import Speculation, acceptance_for_length, with_prior
from chipwise.validation.cells import parse_positive, parse_time, stated_cell
from chipwise.validation.consistency import self_check
from chipwise.validation.groundtruth import read_inference, require_unique_ids
from chipwise.validation.harness import (
    SHAREGPT_REPLY_CV,
    DecodeRun,
    Harness,
    SglangRun,
    behind_dynamo,
    harness_of,
    mean_length,
    sglang_mixed_chunk,
    sharegpt,
    sharegpt_replies,
)
from chipwise.validation.models import model_for, preset_of
from chipwise.validation.report import RowResult, summarise
from chipwise.validation.rows import SKIP_DISAGGREGATED, InferenceRow
from chipwise.validation.serving_rows import (
    UNSTATED_WEIGHTS,
    kv_precision_stated,
    latency_stats,
    parse_speculation_text,
    released_at_once,
)
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving import LengthDist, Load, ServingJob, context_overflow

SKIP_SPECULATIVE = "speculative decoding"
SKIP_NO_LENGTHS = "input and output lengths not stated"

#: The KV cache's share of memory taken for a published run whose engine default leaves less than one request (the
#: run fitted, so its operator raised it): 0.95 (status: estimate), the share InferenceX's launch script gives
#: SGLang for DeepSeek-R1 FP8 on four B200 (benchmarks/single_node/dsr1_fp8_b200.sh @16ffb658, TP4 branch:
#: --mem-fraction-static 0.95), the highest in the recipes read.
MEASURED_RUN_MEMORY_FRACTION = 0.95
#: Models whose only published 4-bit checkpoint is MXFP4 experts with 16-bit attention (serve.quant, mxfp4): a
#: row that says FP4 or MXFP4 for them ran that checkpoint (huggingface openai/gpt-oss-120b and -20b).
MXFP4_CHECKPOINTS: frozenset[str] = frozenset({"gpt-oss-120b", "gpt-oss-20b"})
#: Requests simulated per row, by load (enough for a steady window, few enough to validate quickly).
MAX_REQUESTS = 30000
MIN_REQUESTS = 240
#: An offline run's most: six batches of a large deployment (8 GPUs holding 18,000 sequences of MLPerf's Mixtral
#: take 110,000 requests); its first batch, which starts with every prompt at once, must turn over before the
#: steady window (serve.sim.metrics.window) and there must be batches after it.
MAX_OFFLINE_REQUESTS = 150000


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


@dataclass(frozen=True)
class Case:
    """A row made predictable: the job, the deployment, what to compare, and the assumptions made."""

    row: InferenceRow
    job: ServingJob
    setup: ServingSetup
    plan_source: str
    notes: tuple[str, ...]
    basis: str = "steady"
    latency_load: Load | None = None
    ramp_s: float = 0.0
    #: latencies only of requests issued after every user's first request finished (harness.Harness.after_warmup)
    after_warmup: bool = False
    #: a load generator that measures in time windows (harness.Harness.window_s): its users start together and
    #: only the requests that end within its measurement count
    windows: Harness | None = None
    #: the sequences a replica's KV cache holds at full length where the row's stated batch cap is more and the
    #: engine admits on demand (it then preempts; the note gives the simulated count), else 0
    kv_holds: int = 0

    @property
    def group(self) -> tuple[str, str]:
        """(engine, chip family): the level at which serving factors are calibrated."""
        s = self.setup.pools[0].setup
        return s.engine.engine, s.system.chip.family

    def with_profile(self, catalog: Catalog, profile: EngineProfile) -> Case:
        """The same case priced with another engine profile (calibration)."""

        def rebuilt(pool: Pool) -> Pool:
            s = pool.setup
            setup = setup_replica(
                catalog,
                self.job.model,
                s.system,
                s.engine.engine,
                s.plan,
                s.typical_prompt,
                s.typical_context - s.typical_prompt,
                longest_request=1,
                profile=replace(profile, host_sampling=s.engine.host_sampling),
            )
            return Pool(replace(setup, max_sequence=s.max_sequence), pool.replicas, pool.role)

        return replace(self, setup=replace(self.setup, pools=tuple(rebuilt(p) for p in self.setup.pools)))


def _engine(row: InferenceRow, vendor: str) -> str:
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


def _precision(p: str) -> str:
    return p if p in WEIGHT_PRECISIONS else "bf16"


@dataclass(frozen=True)
class BenchmarkDataset:
    """What an MLPerf Inference benchmark's dataset says about prompt lengths (MLPerf logs give only the mean
    output). `mean_input` is None when no source gives it; `long_prompts` marks datasets whose prompts are known
    to be much longer than their answers, where taking input = output would be badly wrong; `max_input` is the
    longest prompt a source states, past which no mean (and so no input = output) can lie."""

    dataset: str
    mean_input: float | None
    status: str
    source: str
    long_prompts: bool = False
    max_input: float | None = None


#: MLPerf Inference datasets by benchmark model (the MLPerf row's model, lower-cased, without punctuation).
#: Mean prompt lengths marked "estimate" are the mean of the token counts MLPerf's own preprocessed dataset stores
#: per sample (tok_input_length / tok_input_len), as summarised sample by sample in github
#: openshift-psap/performance-dashboard mlperf-data/summaries/*.csv (mlperf-data/original/generate_dataset_summaries.py
#: copies the columns); those files hold every sample (24,576, 15,000 and 8,313 rows) and their Mixtral and Llama
#: 3.1 405B output columns reproduce MLPerf's reference tokens per sample exactly (144.84, 684.68).
_PER_SAMPLE = "github openshift-psap/performance-dashboard mlperf-data/summaries/"
MLPERF_DATASETS: Mapping[str, BenchmarkDataset] = {
    "llama270b": BenchmarkDataset(
        "OpenOrca (GPT-4 part), 24,576 samples, prompts and answers each limited to 1,024 tokens",
        222.3,
        "estimate",
        "derivation: mean of tok_input_length over the 24,576 samples of open_orca_gpt4_tokenized_llama."
        f"sampled_24576.pkl.gz ({_PER_SAMPLE}llama2-70b-99.csv @7cd1065; median 152, p90 519); github "
        "mlcommons/inference language/llama2-70b/README.md (processorca.py --seqlen_limit=1024)",
    ),
    "mixtral8x7b": BenchmarkDataset(
        "OpenOrca + GSM8K + MBXP, 5,000 samples each",
        427.4,
        "estimate",
        "derivation: mean of tok_input_len over the 15,000 samples of 09292024_mixtral_15k_mintoken2_v1.pkl "
        f"({_PER_SAMPLE}mixtral-8x7b.csv @67033ba; median 283, p90 701); github mlcommons/inference "
        "docs/benchmarks/language/get-mixtral-8x7b-data.md",
    ),
    "llama3.18b": BenchmarkDataset(
        "CNN-DailyMail 3.0.0 validation (13,368 articles), prompt = 'Summarize this article' + the article",
        930.0,
        "estimate",
        "derivation: CNN/DailyMail articles are 781 (PTB) tokens long on average (Nallapati et al. 2016 split, "
        "github sebastianruder/NLP-progress english/summarization.md); the Llama 3 tokenizer cuts English news into "
        "about 1.15 BPE tokens per PTB token (contractions and punctuation are single PTB tokens, rare words split), "
        "and the chat template adds about 30 (github mlcommons/inference language/llama3.1-8b/PREPROCESSING.md): "
        "781 x 1.15 + 30 = 930",
    ),
    "llama3.1405b": BenchmarkDataset(
        "long-context mix (summarisation, needle-in-a-haystack, long-document QA; contexts up to 128K tokens), "
        "8,313 samples",
        9428.6,
        "estimate",
        "derivation: mean of tok_input_len over the 8,313 samples of mlperf_llama3.1_405b_dataset_8313_processed_"
        f"fp16_eval.pkl ({_PER_SAMPLE}llama3-1-405b.csv @739352b; median 10,112, p10 3,678, p90 14,156); "
        "mlcommons.org/2025/04/llm-inference-v5; github mlcommons/inference language/llama3.1-405b/README.md",
        long_prompts=True,
    ),
    # a reasoning set: short questions, answers thousands of tokens long (an input taken equal to the mean output,
    # 3,657-3,748 on the v5.1 rows, would be longer than the set's longest prompt)
    "deepseekr1": BenchmarkDataset(
        "MMLU-Pro 2,410 + AIME 1983-2024 932 + MATH-500 499 + LiveCodeBench 349 + GPQA 198 = 4,388 samples",
        803.8,
        "estimate",
        "derivation: mean of tok_input_len over the 4,388 samples of mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl "
        "(github openshift-psap/performance-dashboard datasets/summaries/deepseek-r1.csv @c402a31, written by its "
        "datasets/generate_summaries.py; median 902, p90 1,281, longest 3,140; its output column's mean, 4,043.45, "
        "is the reference mean-output-tok-len of github mlcommons/inference language/deepseek-r1/README.md); "
        "NVIDIA's MLPerf Inference v5.1 'Bandwidth specs of datacenter systems': DeepSeek-R1 max_input_len = 3136",
        max_input=3140.0,
    ),
}
SKIP_UNKNOWN_PROMPTS = "input length not stated and the benchmark's prompts are long (mean not published)"
SKIP_UNPUBLISHED_MEAN = "input length not stated and the benchmark's mean prompt length is not published"


def _benchmark_dataset(row: InferenceRow) -> BenchmarkDataset | None:
    if not row.source_family.lower().startswith("mlperf"):
        return None
    key = re.sub(r"[^a-z0-9.]", "", row.model_name.lower().split("(")[0])
    return MLPERF_DATASETS.get(key)


def _lengths(row: InferenceRow, notes: list[str]) -> tuple[float, float]:
    inp, out = row.input_len, row.output_len
    if inp is None and out is None:
        raise ChipwiseError(SKIP_NO_LENGTHS)
    if inp is None:
        assert out is not None
        data = _benchmark_dataset(row)
        if data is not None and data.mean_input is not None:
            notes.append(f"input length from the benchmark's dataset ({data.dataset}): {data.mean_input:.0f}")
            inp = data.mean_input
        elif data is not None and data.long_prompts:
            raise ChipwiseError(f"{SKIP_UNKNOWN_PROMPTS}: {data.dataset}")
        elif data is not None and data.max_input is not None and out > data.max_input:
            raise ChipwiseError(
                f"{SKIP_UNPUBLISHED_MEAN}: {data.dataset}; an input equal to the mean output ({out:.0f}) would be "
                f"longer than its longest prompt ({data.max_input:.0f})"
            )
        else:
            notes.append(f"input length not stated; taken equal to the mean output length ({out:.0f})")
            inp = out
    if out is None:
        notes.append(f"output length not stated; taken equal to the input length ({inp:.0f})")
        out = inp
    served = served_output(row, out)
    if served != out:
        notes.append(f"output length: the run generated {served:.0f} tokens a request where {out:.0f} were asked for")
    return float(inp), float(served)


def served_output(row: InferenceRow, out: float) -> float:
    """The mean output a row's requests produced: what the run generated where that differs from the asked-for
    `out` by more than GENERATED_TOLERANCE, else `out`."""
    generated = generated_length(row)
    if generated is not None and abs(generated / out - 1.0) > GENERATED_TOLERANCE:
        return generated
    return out


#: A run's measured mean output replaces the requested length when they differ by more than this share.
GENERATED_TOLERANCE = 0.02
_REQUESTED = re.compile(r"~|emulated|request|max[_ ]?tokens|up to|\bvar\b", re.IGNORECASE)


def _significant_digits(text: str) -> int:
    found = re.search(r"\d[\d.,]*", text.replace(",", ""))
    return len(found.group(0).replace(".", "").lstrip("0")) if found else 0


def generated_length(row: InferenceRow) -> float | None:
    """The mean tokens a run's requests generated, where the row states a requested length (a target its requests
    could stop short of, at an end-of-sequence token: '~250 (emulated, var 20)') and measures what they produced:
    from its mean end-to-end latency, TTFT and TPOT (e2e = TTFT + (O - 1) TPOT), else from its output tokens/s over
    its requests/s when that rate has three significant digits. None otherwise."""
    if not _REQUESTED.search(row.raw.get("output_len", "")):
        return None
    e2e = parse_time(row.raw.get("e2e_latency_s"), "e2e_latency_s")
    stats = latency_stats(row)
    ttft, tpot = stats.get("ttft_s", {}), stats.get("tpot_s", {})
    stat = "mean" if "mean" in ttft and "mean" in tpot else ("value" if "value" in ttft and "value" in tpot else None)
    if e2e is not None and stat is not None and tpot[stat] > 0 and e2e > ttft[stat]:
        return 1.0 + (e2e - ttft[stat]) / tpot[stat]
    total = parse_positive(row.raw.get("output_tokens_per_s_total"))
    rate_text = row.raw.get("requests_per_s", "")
    rate = parse_positive(rate_text)
    if total is not None and rate is not None and _significant_digits(rate_text) >= 3:
        return total / rate
    return None


def _job_lengths(gen: Harness | None, text: str, stated: float) -> LengthDist:
    """The lengths a row's requests had: its load generator's sampler where that spreads a stated length."""
    if gen is not None and gen.length_floor < 1.0:
        return gen.lengths(stated)
    return _length_dist(text, stated)


def _length_dist(text: str, mean: float) -> LengthDist:
    """A fixed length, or for guidellm's emulated data ('~1500 (emulated, var 150)') the uniform spread it draws
    from: mean + randint(-var, var) tokens (guidellm EmulatedRequestGenerator, github neuralmagic/guidellm
    src/guidellm/request/emulated.py)."""
    found = re.search(r"emulated[^)]*\bvar\s*(\d+)", text, re.IGNORECASE)
    spread = int(found.group(1)) if found else 0
    n = max(1, round(mean))
    if spread <= 0 or spread >= n:
        return LengthDist.fixed(n)
    return LengthDist("uniform", float(n), 0.0, n - spread, n + spread)


def _scheduler_settings(
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
    enable them."""
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
    return plan


def _one_static_batch(row: InferenceRow, ranks: int, model: ModelSpec) -> bool:
    """A row that runs one static batch of a stated size on several chips without stating a plan (Intel's Gaudi
    tables, a `run_generation --world_size N` run): the batch is one model instance's, split over every rank, where
    the heads allow it."""
    static = "static batch" in row.raw.get("scenario", "").lower() and (row.max_batch or row.concurrency)
    return bool(static) and ranks > 1 and not model.attention.tp_problem(ranks)


def _burst(row: InferenceRow) -> bool:
    """A run that released its stated number of requests together and timed them (a load generator's burst)."""
    return (
        row.scenario == "offline"
        and row.num_requests is not None
        and any(m.metric in ("ttft_s", "tpot_s") for m in row.measured)
        and released_at_once(f"{row.raw.get('scenario', '')} {row.raw.get('batch_or_concurrency', '')}")
    )


def _load(row: InferenceRow, max_batch: int, notes: list[str]) -> Load:
    latencies = any(m.metric in ("ttft_s", "tpot_s") for m in row.measured)
    if _burst(row):
        notes.append(f"a burst: its {row.num_requests} requests released together, timed from fill to drain")
        return Load("offline")
    if row.scenario == "offline" and latencies:
        notes.append("max-throughput run with latencies: a closed loop that keeps every batch slot busy")
        return Load("closed", concurrency=max_batch)
    if row.scenario in ("server", "interactive", "rate"):
        if row.request_rate:
            # the rate the run achieved when it fell short of the one aimed at: the load the latencies were taken at
            achieved = parse_positive(row.raw.get("requests_per_s"))
            if achieved is not None and achieved < row.request_rate:
                notes.append(
                    f"achieved {achieved:g} of the {row.request_rate:g} req/s aimed at; the achieved rate is used"
                )
                return Load("rate", rate=achieved)
            return Load("rate", rate=float(row.request_rate))
        notes.append("request rate not stated; run as a closed loop of max_batch users")
        return Load("closed", concurrency=max_batch)
    if row.scenario == "single":
        return Load("closed", concurrency=1)
    if row.scenario == "closed_loop":
        users = row.concurrency or max_batch
        if row.concurrency is None:
            notes.append(f"concurrency not stated; {users} users (the batch limit)")
        elif users > max_batch:
            # sweeps that saturate a server with more users than it has batch slots (guidellm's throughput
            # mode) report TTFTs of the served requests, not of a queue of the surplus users
            notes.append(f"{users} users for {max_batch} batch slots: the load generator holds the surplus")
            users = max_batch
        return Load("closed", concurrency=users)
    return Load("offline")


def _client_users(row: InferenceRow, gen: Harness | None, replicas: int, max_batch: int) -> int:
    """The requests a closed-loop row's load generator kept in flight, where it holds back some of its stated users
    (guidellm: users - 1) and one replica seats them all; 0 otherwise. Where more users than seats were stated, the
    server's queue and the client's request timeout shaped the run (guidellm's scripts set 60 s), and several
    replicas behind optimum-neuron's proxy share one host (its README: 'DP replicas share host CPU and memory
    bandwidth'), which the simulator does not model: those rows are run at the occupancy they held instead."""
    if gen is None or not gen.held_back or row.scenario != "closed_loop" or not row.concurrency or replicas != 1:
        return 0
    users = row.concurrency - gen.held_back
    return users if 1 <= users <= max_batch else 0


#: Latency statistics that estimate a mean well enough for Little's law.
_CENTRAL = ("mean", "p50", "value")


#: A printed request rate whose rounding (half a unit in its last digit) exceeds this share of it is too coarse for
#: Little's law: guidellm's tables print two decimals, so '0.04' req/s is anything from 0.035 to 0.045 (+-12.5%).
COARSE_RATE = 0.05


def _rounding_share(text: str) -> float:
    """Half a unit in the last printed digit of a number, as a share of it (0 where no positive number)."""
    found = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
    value = float(found.group(0).replace(",", "")) if found else 0.0
    if found is None or value <= 0:
        return 0.0
    return 0.5 * 10.0 ** -len(found.group(1) or "") / value


def achieved_rate(row: InferenceRow) -> tuple[float | None, str]:
    """The request rate a run achieved, and a note where it is not the printed one: a rate printed too coarsely
    (COARSE_RATE) is its output tokens/s over the tokens a request generated (8.07 / 230 = 0.0351 where '0.04'
    is printed), the printed one otherwise."""
    text = row.raw.get("requests_per_s", "")
    rate = parse_positive(text)
    total = parse_positive(row.raw.get("output_tokens_per_s_total"))
    if rate is None or total is None or row.output_len is None or _rounding_share(text) <= COARSE_RATE:
        return rate, ""
    out = served_output(row, row.output_len)
    derived = total / out
    return derived, (
        f"requests/s printed as {text.strip()}: taken as output tokens/s over the tokens a request generated, "
        f"{total:g} / {out:.0f} = {derived:.3g}"
    )


def occupancy(row: InferenceRow) -> float | None:
    """Requests in flight during a measured run, by Little's law: N = X (TTFT + (O - 1) TPOT), with X the achieved
    request rate, O the tokens a request generated (as the row is simulated) and TTFT, TPOT the run's central
    latencies (None when the row does not give all three)."""
    rate = achieved_rate(row)[0]
    got = {m.metric: m for m in row.measured if m.stat in _CENTRAL}
    if rate is None or row.output_len is None or "ttft_s" not in got or "tpot_s" not in got:
        return None
    out = served_output(row, row.output_len)
    return rate * (got["ttft_s"].value + max(0.0, out - 1.0) * got["tpot_s"].value)


def _equal_occupancy(row: InferenceRow, load: Load, held: int, notes: list[str]) -> tuple[Load, Load | None, float]:
    """The load to simulate and, for open loops, the load at which latencies are compared.

    An open-loop run that sustained its rate was stable, but how far below capacity it ran is unknown: near
    saturation the queueing delay grows as rho / (1 - rho), so a few % of capacity error moves the predicted
    latencies without bound. What the run does pin down is how many requests it held in flight (Little's law).
    Latencies are compared at that occupancy (a closed loop of N users), which tests the iteration model rather
    than the last few % of capacity; throughput is still predicted at the measured rate. A closed-loop sweep that
    held fewer requests in flight than the users it states (a load generator that could not keep them all busy)
    is run at the occupancy it held. Open loops compared this way ramp their users up over one measured request
    lifetime (N / X) and take their latencies in the steady state after it (the third value: the ramp, in s).

    `held` is how many requests of the assumed lengths the deployment's KV caches hold. An open loop cannot have
    held more in flight than its memory allows, so a larger N means the assumed lengths are too long (MLPerf rows
    state none), and N is capped there rather than turned into a queue the run did not have. A closed loop's N is
    not capped: its clients time each request from when they send it, so requests waiting in the server's queue
    for KV room are in flight too (GenAI-Perf's 250 users against a cache that holds 54 wait in the queue, and
    their TTFTs say so)."""
    n = occupancy(row)
    rate, derived = achieved_rate(row)
    if n is None or rate is None or row.scenario == "single":
        return load, None, 0.0
    if derived:
        notes.append(derived)
    users = max(1, round(n))
    if users > held and load.kind == "rate":
        notes.append(f"{n:.0f} requests in flight exceed the {held} the KV caches hold at the assumed lengths")
        users = held
    ramp = n / rate
    if load.kind == "rate":
        notes.append(f"latencies compared at the measured occupancy: {n:.1f} requests in flight (Little's law)")
        return load, Load("closed", concurrency=users), ramp
    if load.kind == "closed" and row.scenario == "closed_loop":
        held = min(users, load.concurrency if row.concurrency is None else row.concurrency)
        if held < load.concurrency or (row.concurrency and held < row.concurrency):
            notes.append(f"the run held {n:.1f} requests in flight (Little's law); run at that")
        return Load("closed", concurrency=held), None, 0.0
    return load, None, 0.0


def _requests(load: Load, concurrency: int, stated: int | None, out_len: float) -> tuple[int, str]:
    """Requests to simulate and the throughput basis: the run's own request count when it is within a few batches
    (the benchmark's fill and drain then matter, as in its own timing), else several batches' worth, measured
    over the steady window; a few minutes of arrivals for open loops. A closed loop runs its stated count whenever
    it can be simulated whole: its clients time every request, the burst of first prompts included, so a shorter
    run would weigh that burst more than the benchmark did. So does an offline run: requests of one length that
    start together stay nearly in step for many batches, so that no shorter window reads what the whole run did."""
    if load.kind == "closed" and stated is not None and stated <= MAX_REQUESTS:
        return stated, "run"
    if load.kind == "offline" and stated is not None and stated <= MAX_OFFLINE_REQUESTS:
        return stated, "run"
    if load.kind == "closed":
        users = load.concurrency
        n = 4 * users if users > 1 else 12
    elif load.kind == "rate":
        n = int(load.rate * (240.0 + 0.2 * out_len))  # four minutes plus a few request lifetimes
    else:
        n = 6 * concurrency
    most = MAX_OFFLINE_REQUESTS if load.kind == "offline" else MAX_REQUESTS
    n = min(max(n, MIN_REQUESTS if load.kind != "closed" or load.concurrency > 1 else 12), most)
    if stated is not None and stated <= n:
        return stated, "run"
    return n, "steady"


def prepare(catalog: Catalog, row: InferenceRow) -> Case:
    """Turn a row into a Case; raise ChipwiseError with the reason when it cannot be predicted."""
    if row.skip_reason == SKIP_DISAGGREGATED:
        raise ChipwiseError(
            "prefill/decode-disaggregated deployment whose pool sizes and per-pool parallelism the row does not "
            "state (disaggregation itself is simulated: plan.disaggregated)"
        )
    if row.skip_reason:
        raise ChipwiseError(row.skip_reason)
    speculation = row_speculation(catalog, row) if row.speculative else None
    if row.num_chips is None:
        raise ChipwiseError("no chip count")
    notes: list[str] = []
    model, model_note = model_for(catalog, row.model_name)
    notes.append(model_note)
    stated_in, stated_out = _lengths(row, notes)
    past = context_overflow(model, stated_in, stated_out)
    if past:
        # predict refuses such a request; a published run that served it (Neuron's Llama 2 13B compiled at 16,384
        # tokens over a 4,096 context) is priced as it ran, and says so
        notes.append(f"{past}; priced anyway, as the run was published")
    gen = harness_of(row)
    system = hardware(catalog).system(row.chip)
    engine = _engine(row, system.chip.vendor)
    served_in = stated_in
    image_and_date = (row.raw.get("serving_engine", ""), row.raw.get("date_or_version", ""))
    mismatch = gen.tokenizer_mismatch_of(engine, model.name, *image_and_date) if gen is not None else None
    if gen is not None and mismatch is not None:
        served_in = stated_in * mismatch.factor
        notes.append(
            f"prompts as the server tokenised them: {mismatch.factor:.2f} x the stated length ({gen.name}: "
            f"{mismatch.why})"
        )
    inp, out = mean_length(gen, served_in), mean_length(gen, stated_out)
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
    cores = system.chip.cores_per_chip
    prefill_pool = row.prefill_pool
    ranks = row.num_chips * cores - (prefill_pool[0] * prefill_pool[1] * prefill_pool[4] if prefill_pool else 0)
    weight = _precision(row.weight_precision)
    if UNSTATED_WEIGHTS in row.notes and model.released_precision != weight:
        weight = model.released_precision
        notes.append(f"weights as {model.name}'s checkpoint ships them: {weight}")
    if weight == "fp4" and model.name in MXFP4_CHECKPOINTS:
        weight = "mxfp4"
        notes.append(f"{model.name} 4-bit weights read as its published MXFP4 checkpoint (experts only)")
    # the generator's single-node launch scripts (its disaggregated runs follow recipes of their own)
    scripts = gen if prefill_pool is None else None
    kv = row.kv_precision if row.kv_precision in ("bf16", "fp16", "fp8", "fp4", "int8") else "bf16"
    if not kv_precision_stated(row.precision_text):
        kv = default_kv_precision(weight, eng.quantised_kv) if weight in QUANTISED else kv
        if scripts is not None and kv != "fp8" and scripts.fp8_kv(engine, model.name, row.chip):
            kv = "fp8"
            notes.append(f"KV cache in fp8 ({scripts.name}'s launch scripts set it)")
    searched_adp = False
    if row.plan_given:
        tp, pp, ep = row.tp, row.pp, row.ep
        replicas = row.dp if row.dp > 1 else max(1, ranks // (tp * pp))
        if row.dp > 1 and cores > 1 and not row.plan_counts_cores:
            replicas = row.dp * cores  # replicas counted in chips: each chip holds `cores` ranks (as in training)
            notes.append(f"plan counted in chips: {row.dp} replicas x {cores} NeuronCores a chip = {replicas} replicas")
        if tp * pp * replicas != ranks:
            raise ChipwiseError(_plan_chips_mismatch(row, tp * pp, replicas, ranks, cores))
        plan_source = "given"
    elif _one_static_batch(row, ranks, model):
        tp, pp, ep, replicas, plan_source = ranks, 1, 1, 1, "inferred"
        notes.append(
            f"plan not stated; one static batch on {row.num_chips} chips is one model instance over all of them: TP{tp}"
        )
    else:
        tp, ep, searched_adp = best_throughput_shape(model, system, eng, weight, kv, ranks, inp, out)
        pp, replicas = 1, max(1, ranks // tp)
        plan_source = "searched"
        shape = f"TP{tp}" + (f" EP{ep}" if ep > 1 else "") + (" with attention DP" if searched_adp else "")
        notes.append(f"plan not stated; the most output tokens/s per chip: {shape} x {replicas} replicas")
    if model.moe is not None and ep > tp:
        ep = tp
    adp = (row.attention_dp or searched_adp) and model.moe is not None and tp > 1
    max_batch = row.max_batch or (row.concurrency if row.scenario in ("closed_loop", "single") else None)
    if adp and row.max_batch and "gpu_batch_size" in row.raw.get("batch_or_concurrency", ""):
        max_batch = row.max_batch * tp  # a per-GPU batch: every attention-DP rank runs its own
        notes.append(f"gpu_batch_size is per attention-DP rank: replica batch {max_batch}")
    if row.scenario == "single":
        max_batch = max_batch or 1
    max_batch = int(max_batch or eng.max_batch)
    if row.concurrency and row.scenario == "closed_loop" and row.max_batch is None:
        max_batch = max(1, min(max_batch, math.ceil(row.concurrency / replicas)))
    seats = max_batch  # the users' share of a replica: the load, and a disaggregated row's prefill pool, keep it
    if prefill_pool is not None and gen is not None and adp and row.concurrency:
        workers = (prefill_pool[4], replicas)
        run = DecodeRun(model.name, row.chip, weight, (stated_in, stated_out), workers, tp, row.concurrency)
        rank_batch = gen.decode_rank_batch(engine, run)
        if rank_batch and rank_batch * tp < max_batch:
            max_batch = rank_batch * tp
            notes.append(
                f"decode workers hold {rank_batch} sequences per attention-DP rank ({max_batch} a worker; "
                f"{gen.name}'s recipes): the other users wait for a slot"
            )
    max_tokens = token_budget(eng, inp + 1, max_batch, system.chip.hbm_capacity, row.compiled_length or inp + out)
    if scripts is not None:
        lengths, users, drafts = (stated_in, stated_out), row.concurrency or 1, speculation is not None
        launch = scripts.sglang_launch_of(SglangRun(engine, model.name, row.chip, weight, tp, lengths, users, drafts))
        if launch is not None:
            eng = replace(eng, memory_fraction=launch.memory_fraction)
            max_tokens = launch.prefill_tokens
            max_batch = min(max_batch, launch.max_running or max_batch)
            notes.append(
                f"SGLang launched with --mem-fraction-static {launch.memory_fraction:g}, --chunked-prefill-size "
                f"{launch.prefill_tokens:,}"
                + (f", --max-running-requests {launch.max_running}" if launch.max_running else "")
                + f" ({scripts.name}'s launch scripts)"
            )
    plan = ReplicaPlan(
        tp=tp,
        pp=pp,
        ep=ep,
        attention_dp=adp,
        max_batch=max_batch,
        max_tokens=max_tokens,
        chunked_prefill=eng.chunked_prefill,
        weight_precision=weight,
        kv_precision=kv,
        speculation=speculation,
    )
    plan = _scheduler_settings(plan, row, gen, engine, system.chip.family, model.name, (stated_in, stated_out), notes)
    if speculation is not None:
        notes.append(f"speculative decoding: {speculation.label()}")
    try:
        setup, eng = _measured_fit(catalog, model, system, engine, plan, (inp, out), eng, notes)
    except InfeasibleError as exc:
        if not past:
            raise
        # the context is the reason to give: the KV cache's own fix (raise tp) had priced a prompt 7.6x past it
        raise InfeasibleError(
            f"{past}, and {str(exc).split('. Fix:')[0]}. Fix: shorten the prompt or the answer, or pick a "
            "longer-context model."
        ) from None
    if eng.static_batch and row.compiled_length is not None:
        setup = replace(setup, max_sequence=max(setup.max_sequence, row.compiled_length))
    block = eng.block_tokens
    need = held_tokens(eng.admission, inp, out)
    fits = int(setup.kv_tokens // (math.ceil(need / block) * block + block))
    whole = int(setup.kv_tokens // (math.ceil((inp + out) / block) * block))
    # a stated cap the cache cannot hold at full length: an on-demand engine admits up to it and preempts as the
    # sequences grow (AMD's MLPerf Llama 2 70B yaml: max_num_seqs 2700 where its KV cache holds about 2,000)
    kv_holds = whole if row.max_batch and eng.admission == "on_demand" and plan.max_batch > whole else 0
    clients = _client_users(row, gen, replicas, seats)
    if clients and gen is not None:
        load, latency_load, ramp = Load("closed", concurrency=clients), None, 0.0
        notes.append(f"{row.concurrency} users: the client keeps {clients} requests in flight ({gen.name})")
    else:
        given = _load(row, seats * replicas, notes)
        load, latency_load, ramp = _equal_occupancy(row, given, fits * replicas, notes)
    per_replica = max(1, min(max_batch, int(setup.kv_tokens // max(1.0, inp + out))))
    n, basis = _requests(load, per_replica * replicas, row.num_requests, out)
    if _burst(row) and row.num_requests is not None:  # every request of the burst, however many batches it takes
        n, basis = min(row.num_requests, MAX_REQUESTS), "run"
    duration = None
    after_warmup = False
    windows = None
    if gen is not None and load.kind == "closed" and latency_load is None:
        users = load.concurrency
        issued = gen.requests(users, row.num_requests)
        if gen.window_s is not None and row.num_requests is None:
            windows, n, basis, issued = gen, MAX_REQUESTS, "run", 0
            duration = gen.window_s * gen.max_windows
        elif gen.duration_s is not None and users > 1 and row.num_requests is None:
            duration, n, basis, issued = gen.duration_s, MAX_REQUESTS, gen.basis, 0
        elif issued:
            n, basis = min(MAX_REQUESTS, issued), gen.basis
            after_warmup = gen.after_warmup and users > 1
        if gen.duration_s is None or users > 1:
            notes.append(gen.note(users, issued))
    if sharegpt(row):
        output = sharegpt_replies(max(1.0, stated_out), served_in)
        notes.append(f"ShareGPT replies: lognormal lengths, mean {stated_out:.0f}, CV {SHAREGPT_REPLY_CV:g}")
    else:
        output = _job_lengths(gen, row.raw.get("output_len", ""), max(1.0, stated_out))
    job = ServingJob(
        model=model,
        input=_job_lengths(gen, row.raw.get("input_len", ""), served_in),
        output=output,
        load=load,
        requests=n,
        duration_s=duration,
    )
    pools = ServingSetup((Pool(setup, replicas),))
    if prefill_pool is not None:
        rank_tokens = gen.prefill_tokens(row.raw.get("serving_engine", "")) if gen is not None else 0
        pools = _disaggregated(
            catalog, model, system, engine, eng, prefill_pool, setup, replicas, inp, rank_tokens, seats
        )
        if gen is not None and rank_tokens:
            notes.append(f"prefill workers encode {rank_tokens} tokens per rank an iteration ({gen.name}'s recipes)")
    return Case(row, job, pools, plan_source, tuple(notes), basis, latency_load, ramp, after_warmup, windows, kv_holds)


def _plan_chips_mismatch(row: InferenceRow, shard: int, replicas: int, ranks: int, cores: int) -> str:
    """Why a stated plan cannot be priced on the row's chips: it needs more or fewer than the row counts, and its
    throughput per chip would be a simulation on other chips divided by the row's count ('TP16 needs 16 chips; the
    row has 8 chips'). A disaggregated row's decode pool has the chips its prefill pool leaves."""
    unit = "chips" if cores == 1 else "NeuronCores"
    shape = f"TP{row.tp}" + (f" PP{row.pp}" if row.pp > 1 else "")
    if row.dp > 1:
        need = f"{shape} x {replicas} needs {shard * replicas} {unit}"
    elif shard > ranks:
        need = f"{shape} needs {shard} {unit}"
    else:
        need = f"{shape} needs a multiple of {shard} {unit}"
    has = f"{row.num_chips} chip{'' if row.num_chips == 1 else 's'}" + (
        "" if cores == 1 else f" ({ranks} NeuronCores, {cores} a chip)"
    )
    if row.prefill_pool is None:
        return f"{need}; the row has {has}"
    tp, pp, _, _, count = row.prefill_pool
    prefill = tp * pp * count
    return f"decode pool {need}; the row's {ranks + prefill} {unit} leave {ranks} after its prefill pool's {prefill}"


def _measured_fit(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    plan: ReplicaPlan,
    lengths: tuple[float, float],
    eng: EngineProfile,
    notes: list[str],
) -> tuple[ReplicaSetup, EngineProfile]:
    """The replica as the run deployed it. A published run proves that its model and one request fitted: where the
    engine's default share of memory for the KV cache leaves room for less than one request, the run's operator
    raised it, and the replica takes MEASURED_RUN_MEMORY_FRACTION instead (weights that do not fit stay an error)."""
    inp, out = lengths

    def build(profile: EngineProfile) -> ReplicaSetup:
        return setup_replica(catalog, model, system, engine, plan, inp, out, int(inp + out), profile)

    try:
        return build(eng), eng
    except InfeasibleError as first:
        if eng.memory_fraction >= MEASURED_RUN_MEMORY_FRACTION:
            raise
        raised = replace(eng, memory_fraction=MEASURED_RUN_MEMORY_FRACTION)
        try:
            setup = build(raised)
        except InfeasibleError:
            raise first from None
    share = f" ({eng.memory_fraction:g} of memory)" if eng.memory_fraction else ""
    notes.append(
        f"{engine}'s KV-cache share{share} holds less than one request here; the run fitted, so its share "
        f"is taken at {MEASURED_RUN_MEMORY_FRACTION:g}"
    )
    return setup, raised


def _disaggregated(
    catalog: Catalog,
    model: ModelSpec,
    system: Any,
    engine: str,
    eng: EngineProfile,
    prefill_pool: tuple[int, int, int, bool, int],
    decode: ReplicaSetup,
    decode_replicas: int,
    inp: float,
    rank_tokens: int = 0,
    prefill_batch: int = 0,
) -> ServingSetup:
    """A row's stated prefill pool beside its decode pool, the KV cache sent between them over the system's
    scale-up fabric when both pools fit one domain, else over its scale-out network. `rank_tokens`: the tokens each
    prefill rank encodes an iteration in the run's recipes (0: the engine's budget); an engine whose attention-DP
    ranks share one budget (SGLang) is given theirs together. `prefill_batch`: the prefill plan's batch (0: the
    decode plan's)."""
    tp, pp, ep, adp, count = prefill_pool
    ep = ep if model.moe is not None and ep <= tp else 1
    d = decode.plan
    batch = prefill_batch or d.max_batch
    plan = replace(d, tp=tp, pp=pp, ep=ep, attention_dp=adp and tp > 1, speculation=None, max_batch=batch)
    budget = token_budget(eng, inp + 1, plan.max_batch, system.chip.hbm_capacity)
    if rank_tokens:
        budget = rank_tokens * (tp if plan.attention_dp and not eng.adp_budget_per_rank else 1)
    plan = replace(plan, max_tokens=budget)
    pre = setup_replica(catalog, model, system, engine, plan, inp, 1.0, longest_request=int(inp + 1), profile=eng)
    same = pre.chips * count + decode.chips * decode_replicas <= system.scaleup.size
    return ServingSetup(
        (Pool(pre, count, "prefill"), Pool(decode, decode_replicas, "decode")),
        transfer=kv_transfer(model, pre, decode, same),
    )


_STAT_KEY = {"p50": "p50", "p90": "p90", "p99": "p99", "mean": "mean", "value": "mean"}


#: A saturated open-loop run's latencies are taken at this share of the capacity it did deliver.
EDGE = 0.95


@dataclass(frozen=True)
class Simulated:
    """A case's simulation: the run's summary, the one its latencies are read from, and the notes on both."""

    summary: dict[str, Any]
    latencies: dict[str, Any]
    notes: tuple[str, ...]
    self_consistent: bool | None


def predict_case(case: Case, seed: int = 0) -> list[RowResult]:
    """Simulate a case and compare each measured metric with its prediction."""
    return compare(case, simulate_case(case, seed))


def simulate_case(case: Case, seed: int = 0) -> Simulated:
    """Simulate a case as its row was measured.

    A published open-loop run (MLPerf Server, a fixed request rate) was sustainable: the load generator's rate
    was at most the system's capacity. When the predicted capacity is below that rate, the simulated queue
    grows without bound and its latencies depend only on how long one simulates; the prediction then reports
    the capacity as throughput and the latencies at the edge of it (EDGE x capacity), and says so in the notes.
    """
    row = case.row
    summary = _run(case.job, case.setup, seed, case.basis, case.ramp_s, case.after_warmup, case.windows)
    latencies = summary
    notes = list(case.notes)
    load = case.job.load
    if case.latency_load is not None:
        lat_job = replace(case.job, load=case.latency_load, requests=_requests(case.latency_load, 0, None, 0.0)[0])
        latencies = _open_loop_phase(_run(lat_job, case.setup, seed, "steady", case.ramp_s))
    elif load.kind == "rate":
        offered = load.rate * case.job.mean_output
        delivered = float(summary["output_tokens_per_s"])
        if delivered < SATURATED * offered:
            edge = EDGE * delivered / case.job.mean_output
            latencies, _ = run_job(replace(case.job, load=replace(load, rate=edge)), case.setup, seed=seed)
            notes.append(
                f"predicted capacity {delivered / case.job.mean_output:.3g} req/s is below the measured "
                f"{load.rate:.3g} req/s: latencies at {edge:.3g} req/s"
            )
    if case.kv_holds:
        cap = case.setup.pools[-1].setup.plan.max_batch
        preempted = int(summary.get("requests", {}).get("preemptions", 0))
        notes.append(
            f"batch cap {cap} exceeds the {case.kv_holds} sequences the KV cache holds at full length; the engine "
            f"admits on demand and preempts ({preempted} preemptions simulated)"
        )
    # a closed loop that issues for a window and then drains keeps fewer than its users in flight for part of the
    # run, so its users do not bound its throughput by Little's law
    drains = load.kind == "closed" and case.job.duration_s is not None and case.windows is None
    check = None if drains else self_check(row, load)
    if check is not None and not check.consistent:
        notes.append(check.note())
    return Simulated(summary, latencies, tuple(notes), None if check is None else check.consistent)


def compare(case: Case, sim: Simulated) -> list[RowResult]:
    """Each metric the case's row measured, next to its prediction by the simulation."""
    row = case.row
    results: list[RowResult] = []
    chips = row.num_chips or case.setup.chips
    for m in row.measured:
        if m.metric == "output_tokens_per_s_per_chip":
            predicted = float(sim.summary["output_tokens_per_s"]) / float(chips)
        else:
            key = "ttft_s" if m.metric == "ttft_s" else "tpot_s"
            predicted = float(sim.latencies[key][_STAT_KEY.get(m.stat, "mean")])
        if not math.isfinite(predicted) or predicted <= 0:
            continue
        results.append(
            RowResult(
                id=row.id,
                chip=row.chip,
                metric=m.metric,
                measured=m.value,
                predicted=predicted,
                plan_source=case.plan_source,
                source_family=row.source_family,
                notes="; ".join((*sim.notes, row.notes)).strip("; "),
                self_consistent=sim.self_consistent,
                engine=case.group[0],
                stat=m.stat,
            )
        )
    return results


def _open_loop_phase(summary: dict[str, Any]) -> dict[str, Any]:
    """TTFT of an open loop from a closed loop at the same occupancy. A closed loop issues a request when another
    finishes, i.e. at an iteration boundary; an open-loop arrival lands at a random point of the iteration in
    flight and waits out the rest of it first: half an iteration on average, where a decoding request's
    iteration interval is its TPOT."""
    tpot = summary["tpot_s"]["mean"]
    if not math.isfinite(tpot):
        return summary
    ttft = {k: v + 0.5 * tpot for k, v in summary["ttft_s"].items()}
    return {**summary, "ttft_s": ttft}


def _run(
    job: ServingJob,
    setup: ServingSetup,
    seed: int,
    basis: str,
    ramp_s: float,
    after_warmup: bool = False,
    windows: Harness | None = None,
) -> dict[str, Any]:
    """Simulate a job. A closed loop with a ramp issues its users over `ramp_s` seconds and takes its latencies
    over the requests that arrive after the ramp and before the last `users` requests (which see the final drain);
    with `after_warmup` its users start together and the latencies are of requests that arrive after every user's
    first request finished, again before the last `users`; with `windows` (a time-window load generator) they
    are of the requests that end within its measurement."""
    if windows is not None and job.load.kind == "closed":
        return _windowed(job, setup, seed, windows)
    if job.load.kind != "closed" or (ramp_s <= 0.0 and not after_warmup):
        return run_job(job, setup, seed=seed, basis=basis)[0]
    rng = np.random.default_rng(seed)
    n = job.requests
    inputs, outputs = job.lengths(n, rng)
    cached = cached_tokens(job, setup, inputs, outputs, rng)
    users = job.load.concurrency
    out = simulate(setup.deployment(), inputs, outputs, cached, None, concurrency=users, ramp_s=ramp_s)
    window = steady_window(out, users, start=ramp_s, after_warmup=after_warmup)
    return summarise_run(out, chips=max(setup.chips, 1e-9), basis=basis, latency_window=window)


def _windowed(job: ServingJob, setup: ServingSetup, seed: int, gen: Harness) -> dict[str, Any]:
    """A closed loop measured in time windows: users start together and keep issuing until the measurement can
    end; latencies over the requests that ended within it, output throughput as their tokens over the span from
    the first request's start to the last one's end."""
    summary, out = run_job(job, setup, seed=seed, basis="run")
    req = out.requests
    finish = req["finish"]
    measured = np.isfinite(finish) & (finish <= gen.measurement_end(finish))
    if not measured.any():
        return summary
    lat = per_request(out)
    kept = {k: np.where(measured, v, np.nan) for k, v in lat.items() if k != "served"}
    span = float(finish[measured].max() - np.nanmin(req["arrival"]))
    tokens = float(req["output"][measured].sum())
    return {
        **summary,
        "ttft_s": stats(kept["ttft"]),
        "ttft_wait_s": stats(kept["wait"]),
        "tpot_s": stats(kept["tpot"]),
        "e2e_s": stats(kept["e2e"]),
        "output_tokens_per_s": tokens / span if span > 0 else summary["output_tokens_per_s"],
    }


def predict_row(catalog: Catalog, row: InferenceRow) -> list[RowResult]:
    """Predict every measured metric of one row (ChipwiseError says why a row cannot be predicted)."""
    return predict_case(prepare(catalog, row))


def catalog_rows(catalog: Catalog, path: Path) -> list[InferenceRow]:
    """A serving ground-truth CSV's rows, their chips read against the catalog's chips and aliases; one line where
    two rows share an id or one has none (their results are reported by id)."""
    rows = read_inference(path, known_chips=frozenset(catalog.chips), aliases=hardware(catalog).chip_aliases())
    require_unique_ids(path, [r.id for r in rows])
    return rows


def validate_serving(catalog: Catalog, path: Path) -> dict[str, Any]:
    """`chipwise validate` on a serving ground-truth CSV: one entry per measured metric of each row."""
    results: list[RowResult] = []
    skipped: list[tuple[str, str]] = []
    for row in catalog_rows(catalog, path):
        try:
            rows = predict_row(catalog, row)
        except ChipwiseError as exc:
            skipped.append((row.id, one_line(str(exc))))
            continue
        if not rows:
            skipped.append((row.id, "no metric could be predicted"))
            continue
        results.extend(rows)
    return summarise("serve", results, skipped)


def one_line(text: str) -> str:
    """A message on one line (runs of whitespace, newlines included, become one space)."""
    return re.sub(r"\s+", " ", text).strip()
