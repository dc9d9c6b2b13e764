"""The load generators behind published serving runs: how each issues requests and which of them it measures.

A closed-loop sweep point is not defined by its concurrency alone. The same 64 users give a different mean TTFT
when the benchmark counts the burst of 64 simultaneous prompts it starts with (most clients do: every user's
first request arrives at t = 0) than when it measures a steady window after a warm-up; and a stated length may be
an upper bound rather than a value. A validation case therefore runs the benchmark the row ran:

- InferenceX (SemiAnalysis InferenceMAX) runs its own benchmark_serving (benchmarks/benchmark_lib.sh
  run_benchmark_serving: ``--dataset-name random --random-range-ratio 0.8 --num-prompts $((CONC * 10))
  --max-concurrency $CONC --request-rate inf --ignore-eos``; github SemiAnalysisAI/InferenceX, every recipe that sets
  RANDOM_RANGE_RATIO sets 0.8; the same script ships as "sa-bench" in NVIDIA's srt-slurm recipes, e.g.
  ``--random-range-ratio 0.8 --num-prompts 2560 --max-concurrency 256``). Its sampler is one-sided: prompt and
  output lengths are uniform in [0.8 L, L] for a stated L (``np.random.randint(int(L * ratio), L + 1)``). All
  10 x CONC requests are queued at once behind the concurrency semaphore, so the first CONC start together;
  latencies are over every request and throughput is the run's output tokens over its duration (fill and drain
  included). Its warm-up requests (``--num-warmups``) run to completion before the measured run starts, so they
  only warm the server. Its SGLang launch scripts for Blackwell GPUs (B200, B300: dsr1_fp8/fp4, qwen3.5) make the
  scheduler poll for new requests every 10 decode iterations, and every 30 from 16 users on
  (``--scheduler-recv-interval``; 1 with attention DP; not modelled: dsr1_fp8's TP4 branch keeps 10, and the
  qwen3.5 FP8/FP4 B200 scripts switch to 30 above 4 users); its H200 scripts leave SGLang's default of 1. Its
  SGLang scripts set ``--cuda-graph-max-bs`` to their ``--max-running-requests`` (benchmarks/single_node/
  dsr1_fp8_b200.sh @16ffb658, dsr1_fp8_b200_mtp.sh @285b6628) and its TensorRT-LLM ones set cuda_graph_config
  max_batch_size to the users or their per-rank share (dsr1_fp8_b200_trt_mtp.sh @2f3a788f), so every decode batch
  replays a graph. Its vLLM scripts for Llama 3.x 70B on B200 capture pure decode batches only
  (``cudagraph_mode: FULL_DECODE_ONLY``): a batch that carries a prompt launches its kernels from Python
  (``uncaptured_prompts``). Its
  TensorRT-LLM scripts delay batching at 1k/1k (``batch_wait_timeout_iters``, ``batch_wait_max_tokens_ratio``) for
  DeepSeek-R1 FP8 on B200 from 64 users (40 iterations, 0.8; dsr1_fp8_b200_trt.sh, whose max_num_tokens is 8192
  at these lengths) and for Llama 3.x 70B below TP8 (20 iterations, 0.9): FP4 on B200 (70b_fp4_b200_trt_docker.sh),
  FP8 on B200 and H200 (70b_fp8_b200_trt_slurm.sh, 70b_fp8_h200_trt_slurm.sh @a267b4bd).
  One captures TensorRT-LLM's prompt iterations in piecewise CUDA graphs (torch_compile_config
  enable_piecewise_cuda_graph; otherwise they launch eagerly): dsr1_fp8_b200_trt.sh at 1k/1k for 64-255 users,
  1k/8k for 128-255 and 8k/1k from 64 (at 256 users and more it switches to DeepGEMM instead).
  Its client made its random prompts with a tokenizer the SGLang server does not use, for DeepSeek-V3/R1 on SGLang
  images from v0.5.10 (the first to require transformers 5) until 2026-05-15: transformers 5 loads DeepSeek's
  tokenizer (declared LlamaTokenizerFast, shipped as a ByteLevel BPE) with a Metaspace pre-tokenizer and decoder,
  which the server corrects at start-up and the client did not. The server re-tokenised each prompt's text into
  about five times the tokens the client counted (InferenceX PR #937: a 7,140-token prompt read as 35,921). PR #937
  patched the client only for a model given as a local directory; its scripts pass a Hub id, so the patch applied
  from PR #1381 (merged 2026-05-15), after which InferenceX re-ran these configurations (PR #1502). The rows state
  the client's lengths; the validation prefills what the server received.
- AIPerf (NVIDIA NIM benchmarking docs from NIM 1.8 on) holds the concurrency and measures after its warm-up
  phase (``--warmup-request-count``), whose requests are discarded. Latencies are taken over requests issued
  after every user's first request has finished.
- GenAI-Perf before its own request counts (2024 releases; --request-count and --warmup-request-count came in
  November 2024, github triton-inference-server/perf_analyzer PR #196) runs Perf Analyzer's time windows: every
  user starts at once with no warm-up, windows of ``--measurement-interval`` (10,000 ms by default; Perf Analyzer
  sleeps 1.2 x that per window) follow one another, and the run stops once three consecutive windows each saw a
  request end (GenAI-Perf sets ``--stability-percentage 999``), after at most 10 windows. A request is exported
  when it ends inside a window, and every window is exported (the first burst of prompts included); requests
  still in flight at the end are not. GenAI-Perf then takes TTFT and ITL over every exported request and output
  throughput as their output tokens over the span from the first request's start to the last response
  (perf_analyzer ``inference_profiler.cc`` ValidLatencyMeasurement, ``perf_analyzer.cc`` GenerateProfileExport;
  genai-perf ``llm_profile_data_parser.py``).
- guidellm (0.1.0, which optimum-neuron's benchmark/vllm scripts pin) starts every user of its throughput mode at
  once and keeps users - 1 requests in flight: its scheduler waits while index + 1 - completed >= max_concurrency
  (scheduler/base.py, _run_async; GUIDELLM__MAX_CONCURRENCY is the script's users). Latencies are over every
  request that finished, the first burst included, and throughput over the benchmark's whole span. Its reports
  record a 120 s max_duration, but the four read (optimum-neuron benchmark/vllm/results: std-8b-ods-true,
  hybrid-ods-8b, chunked-8b-v2, std-8b-v2, Llama 3.1 8B on inf2, 2026-03-03) issued throughput requests for 43.7,
  46.4, 39.7 and 39.7 s, then let those in flight finish (100, 110, 55 and 55 requests over 50-65 s; 31 in flight
  at most for 32 users, none errored); the window is taken as their mean, 42.4 s (why guidellm stopped issuing
  there was not found in its source).
- vLLM's and SGLang's serving benchmarks (`vllm bench serve`, benchmarks/benchmark_serving.py, `python -m
  sglang.bench_serving`), which InferenceX's script forks: ``--num-prompts`` requests (1000 unless set) queued at
  once behind the ``--max-concurrency`` semaphore, latencies over every request, throughput over the run's
  duration. Their random datasets' length ranges depend on the release and the flags, so a stated length is taken
  as the length, except where a row says SGLang's ran at its default range ratio (0): its lengths are then uniform
  in [1, L], and the row states the mean it counted, about L / 2 (SGLANG_RANDOM_DEFAULT).
  Its disaggregated runs (Dynamo with SGLang or TensorRT-LLM) launch from NVIDIA's srt-slurm recipes, whose
  prefill workers encode 16,384 tokens per rank an iteration where the engines' defaults would give less: SGLang's
  ``chunked-prefill-size`` of 131,072 on a worker of eight attention-DP ranks (65,536 on four), which SGLang divides
  by the DP size (server_args: chunked_prefill_size // dp_size), and TensorRT-LLM's context-worker
  ``max_num_tokens`` of 16,384-16,896, per rank (github NVIDIA/srt-slurm recipes/gb200-fp8/1k1k/max-tpt.yaml
  @07fbab13, recipes/gb200-fp8/8k1k/max_tpt.yaml @eb889c08; ishandhanani/srt-slurm
  recipes/b200-fp8/8k1k/stp/max-tpt-dep8-1p1d.yaml @4aa224c2: "131072 # 8k x 16"). Their decode workers capture
  graphs up to their batch per rank (``cuda-graph-max-bs`` 256-1,024) and hold DeepSeek-R1's 256 experts in
  whole slots per rank (``ep-num-redundant-experts`` 32 on 48 ranks; serve.iteration.expert_slot_share). AMD's
  MoRI runs take their own settings (benchmarks/multi_node/amd_utils/models.yaml), whose per-rank prefill budget is
  an environment variable the records do not give; they keep the engine's budget.
A row that states its request count runs that count. Other rows keep the validation's defaults (all users start
together; several batches' worth of requests).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from chipwise.validation.rows import InferenceRow
from chipwise.workload.lengths import LengthDist


@dataclass(frozen=True)
class ScriptRule:
    """The deployments a recipe's launch-script setting applies to: models, chip, weight precision, (ISL, OSL) and
    the users from which it is set."""

    models: tuple[str, ...]
    chip: str
    weight_precision: str
    lengths: tuple[int, int]  # (ISL, OSL)
    min_users: int

    def covers(self, model: str, chip: str, weight_precision: str, lengths: tuple[float, float], users: int) -> bool:
        return (
            model in self.models
            and chip == self.chip
            and weight_precision == self.weight_precision
            and (round(lengths[0]), round(lengths[1])) == self.lengths
            and users >= self.min_users
        )


@dataclass(frozen=True)
class BatchWait(ScriptRule):
    """A recipe's TensorRT-LLM batch waiting, up to a tensor-parallel size."""

    max_tp: int
    iters: int
    ratio: float


@dataclass(frozen=True)
class PiecewiseGraphs(ScriptRule):
    """A recipe's piecewise CUDA graphs for prompt iterations, up to a number of users."""

    max_users: int  # inclusive; 0 = no limit

    def covers(self, model: str, chip: str, weight_precision: str, lengths: tuple[float, float], users: int) -> bool:
        within = self.max_users == 0 or users <= self.max_users
        return within and super().covers(model, chip, weight_precision, lengths, users)


@dataclass(frozen=True)
class DecodeBatch:
    """A disaggregated recipe's decode workers' batch cap: TensorRT-LLM's `max_batch_size`, counted per
    attention-DP rank, for the deployment of `workers` (prefill, decode) whose decode workers are TP`decode_tp`
    with attention DP; at the users its file names (empty: any). More users than the workers' slots wait for one
    behind Dynamo's front end, and that wait is in their TTFT."""

    models: tuple[str, ...]
    chip: str
    weight_precision: str
    lengths: tuple[int, int]  # (ISL, OSL)
    workers: tuple[int, int]  # (prefill workers, decode workers)
    decode_tp: int
    rank_batch: int
    users: tuple[int, ...] = ()

    def covers(self, run: DecodeRun) -> bool:
        return (
            run.model in self.models
            and run.chip == self.chip
            and run.weight_precision == self.weight_precision
            and (round(run.lengths[0]), round(run.lengths[1])) == self.lengths
            and run.workers == self.workers
            and run.decode_tp == self.decode_tp
            and (not self.users or run.users in self.users)
        )


class DecodeRun(NamedTuple):
    """A disaggregated TensorRT-LLM run with attention-DP decode workers, as a DecodeBatch rule reads it."""

    model: str
    chip: str
    weight_precision: str
    lengths: tuple[float, float]
    workers: tuple[int, int]
    decode_tp: int
    users: int


@dataclass(frozen=True)
class ScriptScope:
    """The deployments a launch-script setting that departs from the engine's default covers: `engine` serving
    `models` on `chips` (vLLM's --kv-cache-dtype fp8 beside its 16-bit default; its cudagraph_mode
    FULL_DECODE_ONLY beside piecewise graphs for prompt iterations)."""

    engine: str
    models: tuple[str, ...]
    chips: tuple[str, ...]

    def covers(self, engine: str, model: str, chip: str) -> bool:
        return engine == self.engine and model in self.models and chip in self.chips


class SglangRun(NamedTuple):
    """A single-node run as a launch script's branches tell it apart."""

    engine: str
    model: str
    chip: str
    weight_precision: str
    tp: int
    lengths: tuple[float, float]  # (ISL, OSL) as stated
    users: int
    speculative: bool


@dataclass(frozen=True)
class SglangLaunch:
    """A recipe's SGLang memory and batch settings for DeepSeek-style deployments of `models` on `chip` at
    `weight_precision` and a tensor-parallel size in `tps` (at `lengths` (ISL, OSL) and from `min_users` users where
    set): the share of memory for weights and KV cache (--mem-fraction-static), the prompt tokens an iteration takes
    (--chunked-prefill-size) and the requests that run at once (--max-running-requests; 0: SGLang's default)."""

    models: tuple[str, ...]
    chip: str
    weight_precision: str
    tps: tuple[int, ...]
    memory_fraction: float
    prefill_tokens: int
    max_running: int = 0
    lengths: tuple[int, int] | None = None
    min_users: int = 0
    #: a recipe with speculative decoding (an MTP script), which only such runs use
    speculative: bool = False

    def covers(self, run: SglangRun) -> bool:
        return (
            run.engine == "sglang"
            and run.speculative == self.speculative
            and run.model in self.models
            and (run.chip, run.weight_precision) == (self.chip, self.weight_precision)
            and run.tp in self.tps
            and (self.lengths is None or (round(run.lengths[0]), round(run.lengths[1])) == self.lengths)
            and run.users >= self.min_users
        )


@dataclass(frozen=True)
class TokenizerMismatch:
    """A benchmark client that counts its prompts with a tokenizer the server does not use, so the server prefills
    `factor` times the tokens the client states: for `engine` images from `from_version` on, serving `models`, in
    runs before the client was fixed on `fixed_on` (an ISO date). `why` says what went wrong, for the row's note."""

    engine: str
    models: tuple[str, ...]
    from_version: tuple[int, int, int]
    fixed_on: str
    factor: float
    why: str

    def applies(self, engine: str, model: str, engine_text: str, run_date: str | None) -> bool:
        """Whether a run of `model` on `engine`, whose image the row names in `engine_text`
        ('lmsysorg/sglang:v0.5.10.post1-cu130'), dated `run_date`, had this mismatch."""
        if engine != self.engine or model not in self.models or run_date is None or run_date >= self.fixed_on:
            return False
        found = re.search(rf"{re.escape(self.engine)}[:\s]+v?(\d+)\.(\d+)\.(\d+)", engine_text, re.IGNORECASE)
        return found is not None and tuple(int(g) for g in found.groups()) >= self.from_version


@dataclass(frozen=True)
class Harness:
    """How one load generator issues a closed-loop sweep point and which requests it measures."""

    name: str
    #: requests issued per concurrent user (0: the validation's default count)
    requests_per_user: int = 0
    #: stated lengths are the top of a uniform range [floor x L, L] (1.0: a stated length is the length)
    length_floor: float = 1.0
    #: the row states the mean of the range rather than its top (the tokens it counted over its requests)
    stated_mean: bool = False
    #: 'run' = throughput over the whole benchmark (fill and drain included); 'steady' = over the steady window
    basis: str = "steady"
    #: latencies only of requests issued after every user's first request finished (a warm-up is discarded)
    after_warmup: bool = False
    #: the generator issues requests for this long (s) instead of a request count
    duration_s: float | None = None
    #: requests fewer than its stated users the generator keeps in flight (guidellm 0.1.0: users - 1)
    held_back: int = 0
    #: requests the generator issues when the row states no count and no per-user rule applies (0: none)
    default_requests: int = 0
    #: the SGLang scheduler polling its launch scripts set on Blackwell GPUs: (interval, from this many users on,
    #: interval); None: the engine's default (every iteration)
    sglang_recv_interval: tuple[int, int, int] | None = None
    #: its launch scripts capture decode CUDA graphs up to the batch they allow (SGLang's --cuda-graph-max-bs set to its
    #: --max-running-requests, TensorRT-LLM's cuda_graph_config max_batch_size to the users), so no decode step runs
    #: eagerly
    graphs_cover_batch: bool = False
    #: TensorRT-LLM batch waiting its launch scripts set
    trtllm_batch_wait: tuple[BatchWait, ...] = ()
    #: TensorRT-LLM deployments its launch scripts run with piecewise CUDA graphs for prompt iterations
    trtllm_piecewise: tuple[PiecewiseGraphs, ...] = ()
    #: Perf Analyzer's time windows (s, as it sleeps them) and their most: latencies over the requests that end
    #: within the measurement (None: a request count)
    window_s: float | None = None
    max_windows: int = 10
    #: client/server tokenizer mismatches of its client: the server prefills more tokens than the row states
    tokenizer_mismatch: tuple[TokenizerMismatch, ...] = ()
    #: tokens each rank of a disaggregated deployment's prefill workers encodes an iteration in its recipes, by the
    #: disaggregation framework the row's engine text names: (framework, tokens); others keep the engine's budget
    prefill_rank_tokens: tuple[tuple[str, int], ...] = ()
    #: the decode workers' per-rank batch cap of its disaggregated TensorRT-LLM recipes
    trtllm_decode_batch: tuple[DecodeBatch, ...] = ()
    #: deployments whose launch scripts keep the KV cache in fp8
    fp8_kv_cache: tuple[ScriptScope, ...] = ()
    #: deployments whose launch scripts run prompt iterations without the CUDA graphs the engine would capture
    uncaptured_prompts: tuple[ScriptScope, ...] = ()
    #: SGLang deployments whose launch scripts set the KV cache's memory share, the prefill chunk and the running cap
    sglang_launch: tuple[SglangLaunch, ...] = ()
    #: deployments whose launch scripts set the engine's token budget an iteration (TensorRT-LLM --max_num_tokens)
    token_budgets: tuple[tuple[ScriptScope, int], ...] = ()

    def fp8_kv(self, engine: str, model: str, chip: str) -> bool:
        """Whether this generator's launch scripts keep the deployment's KV cache in fp8."""
        return any(rule.covers(engine, model, chip) for rule in self.fp8_kv_cache)

    def token_budget(self, engine: str, model: str, chip: str) -> int:
        """The tokens an iteration takes in this generator's launch scripts for the deployment (0: the engine's)."""
        return next((tokens for rule, tokens in self.token_budgets if rule.covers(engine, model, chip)), 0)

    def uncaptured(self, engine: str, model: str, chip: str) -> bool:
        """Whether this generator's launch scripts run the deployment's prompt iterations without the CUDA graphs its
        engine would capture them in (vLLM's cudagraph_mode FULL_DECODE_ONLY)."""
        return any(rule.covers(engine, model, chip) for rule in self.uncaptured_prompts)

    def sglang_launch_of(self, run: SglangRun) -> SglangLaunch | None:
        """The SGLang memory and batch settings this generator's launch scripts give a run (None: the engine's
        defaults); the first rule that covers it."""
        return next((r for r in self.sglang_launch if r.covers(run)), None)

    def prefill_tokens(self, engine_text: str) -> int:
        """Tokens a prefill rank encodes an iteration in this generator's recipes for the row's framework (0: the
        engine's default budget)."""
        return next((n for name, n in self.prefill_rank_tokens if name.lower() in engine_text.lower()), 0)

    def decode_rank_batch(self, engine: str, run: DecodeRun) -> int:
        """The batch each attention-DP rank of a disaggregated run's decode workers holds in this generator's recipes
        (0: not stated; the users set the batch)."""
        if engine != "trtllm":
            return 0
        return next((r.rank_batch for r in self.trtllm_decode_batch if r.covers(run)), 0)

    def requests(self, users: int, stated: int | None) -> int:
        """Requests a point of `users` issues: the row's stated count, else this generator's rule (0: none)."""
        if stated is not None:
            return stated
        return self.requests_per_user * users if self.requests_per_user else self.default_requests

    def recv_interval(self, engine: str, chip_family: str, users: int, attention_dp: bool) -> int:
        """Decode iterations between the scheduler's polls for new requests in this generator's deployments."""
        rule = self.sglang_recv_interval
        if rule is None or engine != "sglang" or attention_dp or chip_family not in BLACKWELL_DATACENTER:
            return 1
        low, users_from, high = rule
        return high if users >= users_from else low

    def batch_wait(
        self,
        engine: str,
        model: str,
        chip: str,
        weight_precision: str,
        lengths: tuple[float, float],
        users: int,
        tp: int,
    ) -> BatchWait | None:
        """The batch waiting this generator's launch scripts set for a deployment (None: off)."""
        if engine != "trtllm":
            return None
        deployment = (model, chip, weight_precision, lengths, users)
        return next((r for r in self.trtllm_batch_wait if r.covers(*deployment) and tp <= r.max_tp), None)

    def piecewise_graphs(
        self, engine: str, model: str, chip: str, weight_precision: str, lengths: tuple[float, float], users: int
    ) -> bool:
        """Whether this generator's launch scripts capture the deployment's prompt iterations in CUDA graphs."""
        deployment = (model, chip, weight_precision, lengths, users)
        return engine == "trtllm" and any(r.covers(*deployment) for r in self.trtllm_piecewise)

    def tokenizer_mismatch_of(
        self, engine: str, model: str, engine_text: str, date_text: str
    ) -> TokenizerMismatch | None:
        """The client/server tokenizer mismatch a run had (None: none), from the engine image the row names and the
        run's date ('run 2026-04-17')."""
        dated = re.search(r"\b(20\d\d-\d\d-\d\d)\b", date_text)
        run_date = dated.group(1) if dated else None
        return next((m for m in self.tokenizer_mismatch if m.applies(engine, model, engine_text, run_date)), None)

    def lengths(self, stated: float) -> LengthDist:
        """Lengths for a stated `stated` tokens under this generator's sampler."""
        top = max(1, round(2.0 * stated / (1.0 + self.length_floor) if self.stated_mean else stated))
        low = max(1, int(top * self.length_floor))
        return LengthDist.fixed(top) if low >= top else LengthDist("uniform", (low + top) / 2.0, 0.0, low, top)

    def measurement_end(self, finish: np.ndarray) -> float:
        """When a time-window measurement stops, given the requests' end times: after the first three consecutive
        windows in which requests end, or after `max_windows` windows."""
        width = self.window_s or math.inf
        ends = finish[np.isfinite(finish)]
        streak = 0
        for k in range(self.max_windows):
            streak = streak + 1 if np.any((ends >= k * width) & (ends < (k + 1) * width)) else 0
            if streak == 3:
                return (k + 1) * width
        return self.max_windows * width

    def note(self, users: int, requests: int) -> str:
        """What the validation ran for a point of `users` concurrent users issuing `requests` requests (0: a
        duration-bound run), for the row's notes."""
        details = []
        if self.stated_mean:
            details.append("lengths uniform in [1, L], L twice the stated mean")
        elif self.length_floor < 1.0:
            details.append(f"lengths uniform in [{self.length_floor:g} L, L]")
        if requests:
            details.append(f"{requests} requests, all queued at once")
        if self.duration_s is not None:
            details.append(f"users start together, requests issued for {self.duration_s:g} s and all finished")
        if self.after_warmup:
            details.append("latencies after the warm-up (every user's first request)")
        if self.window_s is not None:
            details.append(
                f"users start together; latencies over the requests that end within {self.window_s:g} s windows, "
                f"until three in a row see one (at most {self.max_windows})"
            )
        if self.basis == "run":
            details.append("throughput over the whole run")
        return f"{self.name} protocol" + (f" ({'; '.join(details)})" if details else "")


#: chip families of the Blackwell data-centre GPUs (B200, GB200; B300, GB300)
BLACKWELL_DATACENTER = ("blackwell", "blackwell-ultra")
INFERENCEX = Harness(
    "InferenceX benchmark_serving",
    requests_per_user=10,
    length_floor=0.8,
    basis="run",
    sglang_recv_interval=(10, 16, 30),
    graphs_cover_batch=True,
    trtllm_batch_wait=(
        BatchWait(("deepseek-v3",), "b200", "fp8", (1024, 1024), 64, 8, 40, 0.8),
        BatchWait(("llama-3.1-70b", "llama-3.3-70b"), "b200", "fp4", (1024, 1024), 1, 4, 20, 0.9),
        BatchWait(("llama-3.1-70b", "llama-3.3-70b"), "b200", "fp8", (1024, 1024), 1, 4, 20, 0.9),
        BatchWait(("llama-3.1-70b", "llama-3.3-70b"), "h200", "fp8", (1024, 1024), 1, 4, 20, 0.9),
    ),
    trtllm_piecewise=(
        PiecewiseGraphs(("deepseek-v3",), "b200", "fp8", (1024, 1024), 64, 255),
        PiecewiseGraphs(("deepseek-v3",), "b200", "fp8", (1024, 8192), 128, 255),
        PiecewiseGraphs(("deepseek-v3",), "b200", "fp8", (8192, 1024), 64, 0),
    ),
    prefill_rank_tokens=(("Dynamo", 16384),),
    # decode `max_batch_size` (per attention-DP rank) of the DeepSeek-R1 Dynamo + TensorRT-LLM recipes without
    # MTP, benchmarks/multi_node/srt-slurm-recipes/dsr1/trtllm/{b200,b300}-{fp4,fp8}/{1k1k,8k1k}/disagg/stp/
    # ctx{P}_gen{D}_{dep8,dp8}_batch{B}_eplb0_mtp0[_{users}].yaml, each file at @20e07441 or @792d8aa4 (read whole:
    # b200-fp4/1k1k ctx1_gen2_dep8_batch128 @792d8aa4, b300-fp4/1k1k ctx3_gen2_dep8_batch256 @20e07441,
    # b300-fp8/1k1k ctx1_gen2_dp8_batch128_eplb0_mtp0_3072 @792d8aa4: `decode: max_batch_size` as the name says);
    # b200-fp4/8k1k's disagg-{P}p{D}d-dep8-b{B}-eplb0-mtp0.yaml @9e58409f name the same batches
    trtllm_decode_batch=(
        DecodeBatch(("deepseek-v3",), "b200", "fp4", (1024, 1024), (1, 1), 8, 512),
        DecodeBatch(("deepseek-v3",), "b200", "fp4", (1024, 1024), (1, 2), 8, 128),
        DecodeBatch(("deepseek-v3",), "b200", "fp4", (1024, 1024), (1, 5), 8, 32),
        DecodeBatch(("deepseek-v3",), "b200", "fp4", (8192, 1024), (4, 1), 8, 192),
        DecodeBatch(("deepseek-v3",), "b200", "fp4", (8192, 1024), (4, 3), 8, 32),
        DecodeBatch(("deepseek-v3",), "b200", "fp4", (8192, 1024), (7, 2), 8, 128),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (1024, 1024), (1, 1), 8, 512, (4096,)),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (1024, 1024), (1, 5), 8, 48, (1920,)),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (1024, 1024), (2, 5), 8, 128, (5152,)),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (8192, 1024), (1, 1), 8, 128, (128,)),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (8192, 1024), (1, 1), 8, 256, (256,)),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (8192, 1024), (1, 2), 8, 64, (128,)),
        DecodeBatch(("deepseek-v3",), "b200", "fp8", (8192, 1024), (2, 1), 8, 640, (640,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (1024, 1024), (1, 2), 8, 64),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (1024, 1024), (2, 1), 8, 512),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (1024, 1024), (3, 1), 8, 1024),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (1024, 1024), (3, 2), 8, 256),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (8192, 1024), (5, 2), 8, 32),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (8192, 1024), (6, 1), 8, 128),
        DecodeBatch(("deepseek-v3",), "b300", "fp4", (8192, 1024), (8, 1), 8, 256),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (1024, 1024), (1, 1), 8, 256, (2112,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (1024, 1024), (1, 2), 8, 128, (3072,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (1024, 1024), (1, 3), 8, 48, (1280,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (1024, 1024), (2, 1), 8, 1024, (16384,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (8192, 1024), (2, 1), 8, 32, (256,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (8192, 1024), (3, 1), 8, 64, (512,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (8192, 1024), (5, 1), 8, 128, (1075,)),
        DecodeBatch(("deepseek-v3",), "b300", "fp8", (8192, 1024), (7, 1), 8, 384, (3072,)),
        # GB200 and GB300, the same recipes' {gb200,gb300}-{fp4,fp8}/{1k1k,8k1k}/disagg/stp/
        # ctx{P}_gen{D}_dep{4,8,16,32}_batch{B}_eplb{0,256}_mtp0[_{users}].yaml @20e07441 or @792d8aa4, decode TP as
        # the name's dep (read whole: gb300-fp4/8k1k ctx11_gen3_dep4_batch256 @20e07441, gb200-fp8/1k1k
        # ctx1_gen1_dep32_batch32_eplb0_mtp0_1127 @792d8aa4: `decode: max_batch_size` as the name says); not
        # gb200-fp4/1k1k ctx1_gen1_dep32_batch16: its rows (666, 1,075 users) ran a larger batch than 16 x 32
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (1024, 1024), (1, 2), 4, 768),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (1024, 1024), (1, 1), 8, 512),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (1024, 1024), (2, 1), 16, 256),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (1024, 1024), (2, 1), 32, 64),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (8192, 1024), (8, 1), 16, 128),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (8192, 1024), (10, 1), 16, 256),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (8192, 1024), (2, 1), 32, 8),
        DecodeBatch(("deepseek-v3",), "gb200", "fp4", (8192, 1024), (7, 1), 32, 32),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (1024, 1024), (1, 1), 8, 512, (4301,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (1024, 1024), (1, 1), 8, 768, (6144,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (1024, 1024), (1, 1), 16, 128, (2151,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (1024, 1024), (1, 1), 32, 8, (256,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (1024, 1024), (1, 1), 32, 32, (1127,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (8192, 1024), (3, 1), 16, 32, (615,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (8192, 1024), (5, 1), 16, 64, (1229,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (8192, 1024), (2, 1), 32, 8, (333,)),
        DecodeBatch(("deepseek-v3",), "gb200", "fp8", (8192, 1024), (4, 1), 32, 16, (666,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (1024, 1024), (2, 1), 8, 1024),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (1024, 1024), (3, 1), 16, 256),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (1024, 1024), (2, 1), 32, 32),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (1024, 1024), (3, 1), 32, 64),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (8192, 1024), (11, 3), 4, 256),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (8192, 1024), (9, 1), 16, 64),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (8192, 1024), (14, 1), 16, 128),
        DecodeBatch(("deepseek-v3",), "gb300", "fp4", (8192, 1024), (7, 1), 32, 16),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (1024, 1024), (3, 2), 8, 512, (8602,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (1024, 1024), (3, 2), 8, 768, (12288,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (1024, 1024), (2, 1), 16, 128, (2253,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (1024, 1024), (2, 1), 32, 32, (1229,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (8192, 1024), (7, 1), 8, 256, (2151,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (8192, 1024), (4, 1), 16, 32, (666,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (8192, 1024), (7, 1), 16, 64, (1229,)),
        DecodeBatch(("deepseek-v3",), "gb300", "fp8", (8192, 1024), (6, 1), 32, 16, (512,)),
    ),
    # `kv-cache-dtype: fp8` in the vLLM scripts' config.yaml: 70b_fp8_h100_slurm.sh, 70b_fp8_h200_slurm.sh,
    # 70b_fp8_b200_docker.sh, 70b_fp4_b200_docker.sh, gptoss_fp4_b200.sh (not gptoss_fp4_h100.sh or _h200.sh)
    fp8_kv_cache=(
        ScriptScope("vllm", ("llama-3.1-70b", "llama-3.3-70b"), ("h100-sxm", "h200", "b200")),
        ScriptScope("vllm", ("gpt-oss-120b",), ("b200",)),
        # `--kv-cache-dtype fp8_e4m3` in every single-node DeepSeek-R1 SGLang script but dsr1_fp8_h200.sh, the
        # MTP ones (dsr1_fp8_b200_mtp.sh) included
        ScriptScope("sglang", ("deepseek-v3",), ("b200", "b300", "mi300x", "mi325x", "mi355x")),
    ),
    # `"cudagraph_mode": "FULL_DECODE_ONLY", "splitting_ops": []` in the compilation config of the Llama 3.x 70B vLLM
    # scripts for B200, one a precision (70b_fp8_b200_docker.sh, 70b_fp4_b200_docker.sh @bb4c7f93; the fork
    # jyothisambolu/InferenceMAX's 70b_fp8_b200_slurm.sh @03ab54e0): a mixed prefill-decode batch runs without CUDA
    # graphs. The one script both precisions had shared before (70b_b200_slurm.sh @2caa5e5d, `"level": 3`), the H100
    # and H200 scripts (70b_fp8_h100_slurm.sh @2a205bb3, 70b_fp8_h200_slurm.sh @409e9a48) and
    # gptoss_fp4_b200_docker.sh (@2e46dba0) keep vLLM's default graphs
    uncaptured_prompts=(ScriptScope("vllm", ("llama-3.1-70b", "llama-3.3-70b"), ("b200",)),),
    # `--max_num_tokens 16384` in its TensorRT-LLM scripts for Llama 3.x 70B: 70b_fp8_b200_trt_slurm.sh and
    # 70b_fp8_h200_trt_slurm.sh @a267b4bd (the version whose batch waiting trtllm_batch_wait reads) and
    # 70b_fp4_b200_trt_docker.sh @c2faa3da. A version of the slurm scripts at @73ef9225 passes $MAX_MODEL_LEN instead
    # (2,248 at 1k/1k); which ran when is not recorded, and priced on the silicon sample's H200 rows it reads worse
    # (TTFT 14.6% -> 17.4%, where 16,384 reads 11.6%)
    token_budgets=((ScriptScope("trtllm", ("llama-3.1-70b", "llama-3.3-70b"), ("b200", "h200")), 16384),),
    # the single-node DeepSeek-R1 SGLang scripts (benchmarks/single_node, each read at two commits with the same
    # flags): dsr1_fp8_b200.sh @16ffb658 and dsr1_fp8_b300.sh @56324839 (TP8: 0.82, 32,768 tokens, 128 requests;
    # TP4: 0.95, 8,192, 32), dsr1_fp4_b200.sh @285b6628 and dsr1_fp4_b300.sh @56324839 (0.85, 16,384, 256),
    # dsr1_fp8_h200.sh @161e7f65 (0.82, 32,768; 512 requests at 1k/1k, else 256), dsr1_fp8_mi300x.sh and
    # dsr1_fp8_mi325x.sh @285b6628 (0.8, 131,072), dsr1_fp8_mi355x.sh @285b6628 (0.8, 196,608) and
    # dsr1_fp4_mi355x.sh @1d3f38da (0.8, 196,608; 32,768 at 8k/1k above 32 users); with MTP, dsr1_fp8_b200_mtp.sh
    # @285b6628 (TP8 only: 0.82, 16,384, 512), which dsr1_fp8_b300_mtp.sh is taken to copy as the B300 scripts do
    sglang_launch=(
        SglangLaunch(("deepseek-v3",), "b200", "fp8", (8,), 0.82, 16384, 512, speculative=True),
        SglangLaunch(("deepseek-v3",), "b300", "fp8", (8,), 0.82, 16384, 512, speculative=True),
        SglangLaunch(("deepseek-v3",), "b200", "fp8", (8,), 0.82, 32768, 128),
        SglangLaunch(("deepseek-v3",), "b200", "fp8", (4,), 0.95, 8192, 32),
        SglangLaunch(("deepseek-v3",), "b300", "fp8", (8,), 0.82, 32768, 128),
        SglangLaunch(("deepseek-v3",), "b300", "fp8", (4,), 0.95, 8192, 32),
        SglangLaunch(("deepseek-v3",), "b200", "fp4", (4, 8), 0.85, 16384, 256),
        SglangLaunch(("deepseek-v3",), "b300", "fp4", (4, 8), 0.85, 16384, 256),
        SglangLaunch(("deepseek-v3",), "h200", "fp8", (8,), 0.82, 32768, 512, lengths=(1024, 1024)),
        SglangLaunch(("deepseek-v3",), "h200", "fp8", (8,), 0.82, 32768, 256),
        SglangLaunch(("deepseek-v3",), "mi300x", "fp8", (8,), 0.8, 131072),
        SglangLaunch(("deepseek-v3",), "mi325x", "fp8", (8,), 0.8, 131072),
        SglangLaunch(("deepseek-v3",), "mi355x", "fp8", (4, 8), 0.8, 196608),
        SglangLaunch(("deepseek-v3",), "mi355x", "fp4", (4, 8), 0.8, 32768, lengths=(8192, 1024), min_users=33),
        SglangLaunch(("deepseek-v3",), "mi355x", "fp4", (4, 8), 0.8, 196608),
    ),
    tokenizer_mismatch=(
        TokenizerMismatch(
            "sglang",
            ("deepseek-v3",),
            (0, 5, 10),
            "2026-05-15",
            35921 / 7140,
            "the client tokenised with transformers 5's reading of the model's tokenizer, which the server corrects",
        ),
    ),
)
#: the NIM pages do not state their request counts: eight per user leaves several waves after the warm-up one
AIPERF = Harness("AIPerf", requests_per_user=8, after_warmup=True)
#: the default --measurement-interval of 10,000 ms, slept as 12 s
GENAI_PERF = Harness("GenAI-Perf (Perf Analyzer time windows)", basis="run", window_s=12.0)
GUIDELLM = Harness("guidellm throughput mode", basis="run", duration_s=42.4, held_back=1)
#: --num-prompts defaults to 1000 in both (vllm/benchmarks/serve.py, sglang/bench_serving.py)
BENCH_SERVING = Harness("vLLM/SGLang bench_serving", basis="run", default_requests=1000)
#: SGLang's bench_serving on its random dataset without --random-range-ratio: the ratio defaults to 0, so prompt
#: and output lengths are uniform in [1, L] (sample_random_requests: randint(max(int(L x ratio), 1), L + 1)); the
#: rows that say so state the mean length they counted (about L / 2)
SGLANG_RANDOM_DEFAULT = replace(
    BENCH_SERVING, name="SGLang bench_serving (random dataset, default range ratio)", length_floor=0.0, stated_mean=True
)

_MARKERS: tuple[tuple[tuple[str, ...], Harness], ...] = (
    (("inferencex", "inferencemax", "sa-bench", "semianalysis"), INFERENCEX),
    (("aiperf",), AIPERF),
    (("genai-perf", "perf_analyzer", "perf analyzer"), GENAI_PERF),
    (("guidellm",), GUIDELLM),
    (("vllm bench serve", "benchmark_serving", "bench_serving", "bench serve"), BENCH_SERVING),
)


#: SGLang deployments launched with --enable-mixed-chunk (SGLang's default runs prompts in iterations of their own,
#: catalog engines.sglang.mixed_batching): (a marker of the row's source family, the SGLang versions whose launches
#: pass it). AIConfigurator's generator asks for it in every aggregated worker (generator/rule_plugin/sglang.rule:
#: `agg enable_mixed_chunk = true`, which config/backend_config_mapping.yaml maps to `enable-mixed-chunk`), and its
#: SGLang 0.5.6.post2 template passes it (backend_templates/sglang/cli_args.0.5.6.post2.j2 @ff1a4aa6); its 0.5.1.post1
#: template and its generic one test a key the mapping never sets, `enable-mix-chunk` (cli_args.0.5.1.post1.j2 and
#: cli_args.j2 @5dc6d4f9), so those deployments, the silicon sample's SGLang 0.5.1.post1 and 0.5.8.post1 points, ran
#: unmixed. The gap-analysis points are read as the generator's own deployments (docs/research/heldout_serving.md,
#: stop 41).
SGLANG_MIXED_CHUNK: tuple[tuple[str, tuple[str, ...]], ...] = (("aiconfigurator gap-analysis", ("0.5.6",)),)


def sglang_mixed_chunk(row: InferenceRow) -> bool:
    """Whether the row's SGLang deployment was launched with --enable-mixed-chunk (SGLANG_MIXED_CHUNK)."""
    source, engine = row.source_family.lower(), row.raw.get("serving_engine", "").lower()
    return any(
        marker in source and any(f"sglang {version}" in engine for version in versions)
        for marker, versions in SGLANG_MIXED_CHUNK
    )


#: Sources whose deployments sit behind NVIDIA Dynamo's front end (`python3 -m dynamo.frontend`: its HTTP server
#: tokenises and detokenises in its own process and hands the workers token ids) though their engine text does not
#: name Dynamo: AIConfigurator's gap-analysis points, read as its generator's own deployments (stop 41), which run
#: every aggregated vLLM worker as `python3 -m dynamo.vllm` beside `dynamo.frontend`
#: (generator/config/backend_templates/vllm/run.sh.j2 and k8s_deploy.yaml.j2 @1089dfa8).
DYNAMO_FRONT_END_SOURCES: tuple[str, ...] = ("aiconfigurator gap-analysis",)


def behind_dynamo(row: InferenceRow) -> bool:
    """Whether the row's engine served behind Dynamo's front end: its engine text names Dynamo, or its source
    deploys that way (DYNAMO_FRONT_END_SOURCES)."""
    source, engine = row.source_family.lower(), row.raw.get("serving_engine", "").lower()
    return "dynamo" in engine or any(marker in source for marker in DYNAMO_FRONT_END_SOURCES)


def harness_of(row: InferenceRow) -> Harness | None:
    """The load generator a closed-loop row names in its scenario or source family (None: not one chipwise
    models, or not stated)."""
    text = " ".join(row.raw.get(k, "") for k in ("scenario", "source_family")).lower()
    if "sglang.bench_serving" in text and "random-range-ratio not set" in row.raw.get("notes", "").lower():
        return SGLANG_RANDOM_DEFAULT
    for markers, harness in _MARKERS:
        if any(m in text for m in markers):
            return harness
    return None


#: ShareGPT as vLLM's and SGLang's serving benchmarks sample it (``--dataset-name sharegpt``): a request is a
#: conversation's first human turn, asking for as many tokens as the first reply had (the model may stop sooner),
#: and pairs are kept with at least 4 tokens each, a prompt of at most 1,024 and the two at most 2,048 (vllm
#: benchmarks/datasets.py ShareGPTDataset with is_valid_sequence; sglang bench_serving sample_sharegpt_requests).
#: The replies' lengths spread widely, and in a burst of requests the longest ones set how long the run drains.
SHAREGPT_MIN_TOKENS = 4
SHAREGPT_MAX_TOTAL = 2048
#: Reply lengths as a lognormal with this coefficient of variation (status: estimate). Derivation: no source
#: publishes the sampled lengths' spread; the SGLang cookbook's one-user ShareGPT run of gpt-oss-120b on 8 B200
#: (docs/research/heldout_dense_sweeps.csv Z001: TTFT and TPOT nearly constant, mean / median 33.7 / 31.8 ms and
#: 2.31 / 2.31 ms) gives the replies' median from its median end-to-end latency, 1 + (389.9 - 31.8) / 2.31 = 156
#: tokens, against their mean of 212.5; a lognormal's median / mean is exp(-sigma^2 / 2), so 0.734 gives
#: sigma^2 = 0.62 and CV = sqrt(exp(sigma^2) - 1) = 0.93. The same run at 100 users reads 0.72 (Z002).
SHAREGPT_REPLY_CV = 0.93


def sharegpt(row: InferenceRow) -> bool:
    """Whether a row's requests came from the ShareGPT dataset (its scenario, derived fields or notes say so)."""
    return any("sharegpt" in row.raw.get(k, "").lower() for k in ("scenario", "derived_fields", "notes"))


def sharegpt_replies(mean: float, prompt: float) -> LengthDist:
    """ShareGPT reply lengths with a stated mean, after a prompt of `prompt` tokens: lognormal (SHAREGPT_REPLY_CV),
    bounded as the benchmarks filter them; the lognormal's own mean is set so that the bounded lengths keep the
    stated mean (the bounds move it once the mean nears the room the prompt leaves)."""
    high = max(SHAREGPT_MIN_TOKENS, SHAREGPT_MAX_TOTAL - round(prompt))
    target = min(max(mean, float(SHAREGPT_MIN_TOKENS)), float(high))
    shape = target
    for _ in range(3):
        shape *= target / LengthDist("lognormal", shape, SHAREGPT_REPLY_CV * shape, SHAREGPT_MIN_TOKENS, high).expected
    return LengthDist("lognormal", shape, SHAREGPT_REPLY_CV * shape, SHAREGPT_MIN_TOKENS, high)


def mean_length(harness: Harness | None, stated: float) -> float:
    """The mean of a stated length under the generator's sampler."""
    if harness is None or harness.length_floor >= 1.0 or not math.isfinite(stated):
        return stated
    return harness.lengths(stated).mean
