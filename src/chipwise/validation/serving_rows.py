"""Serving rows of a ground-truth table: precision, engine, plan (or disaggregated pools), load, lengths and the
measured throughput, TTFT and TPOT statistics, read from the text of the cells as their writers spell them."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from chipwise.validation.cells import (
    NUM,
    PRECISION_TOKEN,
    TIME_COLUMNS,
    billions,
    canonical_chip,
    close_to,
    cores_per_chip,
    lookup,
    lookup_float,
    lookup_int,
    normalize_arch,
    notes_text,
    parse_int,
    parse_number,
    parse_params_from_arch,
    parse_positive,
    parse_range_midpoint,
    parse_stat_values,
    precision_problem,
    precision_tokens,
    reconcile_plan_with_chips,
    stated_cell,
    strip_parentheses,
    time_unit_problem,
    token_after,
    written_time_units,
)
from chipwise.validation.rows import (
    SKIP_DISAGGREGATED,
    SKIP_MIXED,
    SKIP_NO_CHIPS,
    SKIP_NO_METRIC,
    InferenceRow,
    Measured,
    unknown_chip,
)
from chipwise.workload.serving import CHIPS, MAX_TOKENS

_STAT_PREFERENCE: Final[tuple[str, ...]] = ("p50", "mean", "value", "p90", "p99")


#: Precisions a publication states outside the table a row comes from, keyed by a pattern of the row's source, with
#: the column texts they replace (empty: a silent column).
#: - NVIDIA's "Supercharging Llama 3.1 across NVIDIA Platforms" (July 2024) gives Llama 3.1 405B on 8 H200 at 399.9,
#:   230.8 and 49.6 output tokens/s without a precision; its follow-up "Boosting Llama 3.1 405B Performance up to
#:   1.44x with TensorRT Model Optimizer" (developer.nvidia.com, August 2024) repeats those numbers as the "Official
#:   Llama FP8 Recipe" row: FP8 weights, the KV cache in 16 bits (FP8 KV is that post's own Model Optimizer recipe).
#: - Juniper's MLPerf Inference v4.1 Llama 2 70B runs on NVIDIA's harness: their configs/llama2-70b/{Offline,Server}
#:   set precision = "fp16" (the harness's label, which the results' system description repeats) and use_fp8 = True
#:   (FP8 weights and KV cache), as NVIDIA's own submissions of that round do.
#: - AMD's MLPerf Llama 2 70B runs (MI300X v4.1, MI300X and MI325X v5.1) quantise the KV cache to FP8 as well as
#:   the weights, which is all the results' weight_data_types field says: "KV caches were quantized to OCP
#:   FP8-e4m3" (rocm.blogs.amd.com, Technical Dive into AMD's MLPerf Inference v5.1 Submission); v4.1's run scripts
#:   pass --kv-cache-dtype fp8 (ROCm/rocm-blogs, mlperf-inf-4-1). So do its v5.1 Mixtral-8x7B runs: the round's
#:   submission code sets kv_cache_dtype: fp8 for both scenarios (closed/AMD/code/mixtral-8x7b/harness_llm/models/
#:   mixtral-8x7b/{offline,server}_mi325x.yaml, the only configs stored for it) and quantises the checkpoint that
#:   every Mixtral run loads with Quark's --quant_scheme w_fp8_a_fp8 --kv_cache_dtype fp8
#:   (closed/AMD/setup/dataset_and_model/quantize_mixtral_8x7b.sh; github mlcommons/inference_results_v5.1).
SOURCE_PRECISIONS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "supercharging-llama-3-1-across-nvidia-platforms": ("FP8 weights, BF16 KV cache", ("",)),
    r"closed/AMD/results/[^/ ]+/(?:llama2-70b|mixtral-8x7b)": (
        "FP8 weights + FP8 KV cache",
        ("fp8 weights (weight_data_types=fp8)",),
    ),
    r"closed/JuniperNetworks/results/DGX-H100_H100-SXM-80GBx\d+_TRT/llama2-70b": (
        "FP8 weights + FP8 KV cache",
        ("fp16",),
    ),
}


#: the note a row gets when nothing states its weights (validation.serving then takes the checkpoint's own)
UNSTATED_WEIGHTS: Final = "weight precision not stated; assumed bf16"


def parse_weight_precision(text: str, notes: list[str]) -> str:
    """Weight precision: 'X weights' > 'weights X' / 'weight storage X' > 'X MoE' > 'model dtype X'."""
    lowered = text.lower()
    if "not stated" in lowered:
        notes.append(f"precision not stated by source ({text.strip()})")
    if "dequantized" in lowered:
        tokens = precision_tokens(text.split("(", maxsplit=1)[0]) or precision_tokens(text)
        if tokens:
            return tokens[0]
    if "mxfp4" in lowered and re.search(r"\bmoe\b|expert", lowered):
        return "mxfp4"  # MXFP4 experts, 16-bit elsewhere: the gpt-oss checkpoint format (serve.quant)
    for pattern in (
        rf"{PRECISION_TOKEN}\s+weights",
        rf"weights?(?:\s+storage)?\s*[:=]?\s*{PRECISION_TOKEN}",
        rf"weight_data_types\s*=\s*{PRECISION_TOKEN}",
        rf"{PRECISION_TOKEN}\s+(?:moe|experts)",
        rf"model dtype\s*{PRECISION_TOKEN}",
    ):
        found = token_after(pattern, lowered)
        if found is not None:
            return found
    tokens = precision_tokens(text)
    if tokens:
        return tokens[0]
    notes.append(UNSTATED_WEIGHTS)
    return "bf16"


_KV_PATTERNS: Final[tuple[str, ...]] = (
    rf"{PRECISION_TOKEN}[\s_-]*kv",
    rf"kv[_ ]cache(?:[_ ]dtype)?\s*[:=]?\s*{PRECISION_TOKEN}",
)


def kv_precision_stated(text: str) -> bool:
    """Whether the precision text names the KV cache's precision."""
    lowered = text.lower()
    return any(token_after(p, lowered) is not None for p in _KV_PATTERNS)


def parse_kv_precision(text: str, weight: str) -> str:
    """KV-cache precision: stated ('FP8 KV cache', 'FP8-KV', 'kv_cache_dtype fp8'), else 16-bit default."""
    lowered = text.lower()
    for pattern in _KV_PATTERNS:
        found = token_after(pattern, lowered)
        if found is not None:
            return found
    if weight in ("bf16", "fp16"):
        return weight
    model_dtype = token_after(rf"model dtype\s*{PRECISION_TOKEN}", lowered)
    return model_dtype if model_dtype in ("bf16", "fp16") else "bf16"


#: TensorRT-LLM run from TensorRT engine builds, not its PyTorch back end: a stated TensorRT version (MLPerf's system
#: descriptions: 'TensorRT-LLM (TensorRT 10.2.0, CUDA 12.4)'), trtllm-build, an engine build, Triton's back end
_TRT_ENGINE_BUILD = r"tensorrt \d+\.\d|trtllm-build|engine build|tensorrt engine|triton"
#: A TensorRT-LLM release before 0.17, which had no PyTorch back end (its preview came with 0.17; it became the
#: default in 1.0): 'TensorRT-LLM 0.16.0', 'TRT-LLM v0.12'
_TRT_ENGINE_ONLY_RELEASE = r"(?:tensorrt[-_ ]?llm|trt-?llm)[ _-]*v?0\.(?:[0-9]|1[0-6])(?:\.|\b)"


def normalize_engine(text: str) -> str:
    """trtllm | trtllm-engine | vllm | sglang | neuron | fastertransformer | other (Neuron back ends win over vLLM;
    an NVIDIA NIM that names no other back end runs its optimised profiles on TensorRT-LLM engine builds; TensorRT-LLM
    is its PyTorch back end unless the text names a TensorRT engine build or a release older than that back end)."""
    lowered = text.lower()
    if re.search(r"neuron|\bnxd|\btnx\b", lowered):
        return "neuron"
    nim = bool(re.search(r"\bnim\b", lowered)) and "vllm" not in lowered and "sglang" not in lowered
    if nim or re.search(r"tensorrt[-_ ]?llm|trt-?llm", lowered):
        built = nim or re.search(_TRT_ENGINE_BUILD, lowered) or re.search(_TRT_ENGINE_ONLY_RELEASE, lowered)
        return "trtllm-engine" if built and "pytorch" not in lowered else "trtllm"
    if "sglang" in lowered:
        return "sglang"
    if "vllm" in lowered:
        return "vllm"
    if "fastertransformer" in lowered:
        return "fastertransformer"
    return "other"


def is_disaggregated(*texts: str) -> bool:
    """True when prefill and decode run on separate pools (PD disaggregation)."""
    text = " ".join(texts)
    pattern = r"disaggregat|\bPD\b|prefill\s*:.*decode\s*:|decode nodes|prefill/decode"
    return bool(re.search(pattern, text, re.IGNORECASE))


_DRAFTERS = r"(?:speculative(?:\s+decoding)?|spec[-\s]decod\w*|mtp|eagle-?\d?|draft(?:\s+models?)?|medusa)"
#: Ways a row says it does NOT draft: 'no speculative decoding', 'non-MTP', 'without EAGLE', 'no MTP/speculative
#: flags', 'MTP off', 'speculative decoding: disabled'
_NOT_DRAFTING = (
    rf"\b(?:no|non|without|w/o)[-\s]+{_DRAFTERS}(?:\s*(?:/|,|or|and)\s*{_DRAFTERS})*",
    rf"\b{_DRAFTERS}\s*[:=]?\s*(?:off|disabled|none|false)\b",
)


def is_speculative(*texts: str) -> bool:
    """Speculative decoding (EAGLE, draft model, MTP, Medusa) is mentioned and not negated."""
    text = " ".join(texts)
    for pattern in _NOT_DRAFTING:
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    return bool(re.search(r"speculat|eagle|\bdraft\b|\bMTP\b|medusa", text, re.IGNORECASE))


@dataclass(frozen=True)
class SpeculationText:
    """What a row says about its speculative decoding: the drafter, tokens drafted per step, the draft model's
    name and the acceptance, as a mean acceptance length (tokens per step, the bonus token included)."""

    method: str  # 'mtp' | 'eagle' | 'draft' | 'medusa' | '' (not recognised)
    draft_tokens: int | None
    draft_model: str
    acceptance_length: float | None


_DRAFT_TOKEN_PATTERNS: Final[tuple[str, ...]] = (
    r"(?:num[_ ]speculative[_ ]tokens|speculation length|speculative[_ ]tokens|num[_ ]nextn[_ ]predict[_ ]layers"
    r"|draft[_ ]tokens|draft[_ ]len(?:gth)?)\s*[=:]?\s*(\d+)",
    r"(\d+)\s*(?:speculative|draft(?:ed)?)\s*tokens",
    r"\bMTP[-_ ]?(?:layers?\s*)?[=:]?\s*(\d+)\b",
    r"\bMTP\s*\(\s*(\d+)",
)


def parse_speculation_text(text: str) -> SpeculationText:
    """The speculative-decoding facts of a row's plan, engine and notes text."""
    lowered = text.lower()
    # SGLang runs a model's MTP module through its EAGLE code path: the drafter is then the MTP module
    method = (
        "medusa"
        if "medusa" in lowered
        else "mtp"
        if re.search(r"\bmtp\b|nextn|multi[- ]token prediction", lowered)
        else "eagle"
        if "eagle" in lowered
        else "draft"
        if "draft" in lowered
        else ""
    )
    k = next((v for p in _DRAFT_TOKEN_PATTERNS if (v := lookup_int(p, text)) is not None), None)
    length = lookup_float(rf"(?:mean |average )?accept(?:ance|ed)[ _]length\s*(?:of\s*)?[=:]?\s*({NUM})", text)
    rate = lookup_float(rf"accept(?:ance|ed)(?:[ _]rate)?\s*[=:]?\s*({NUM})\s*%", text)
    if length is None and rate is not None and k:
        length = 1.0 + rate / 100.0 * k  # vLLM's acceptance rate: accepted / drafted tokens
    draft_model = lookup(r"with\s+(?:an?\s+)?([A-Za-z][\w.\-/]*)\s+draft", text) or ""
    return SpeculationText(method, k, draft_model, length)


@dataclass(frozen=True)
class _ServingPlan:
    tp: int
    pp: int
    ep: int
    dp: int
    attention_dp: bool
    counts_cores: bool
    given: bool


#: Other spellings of a serving plan, rewritten into 'TPn EPn DPn x n' terms before it is read: TensorRT-LLM's and
#: InferenceX's DEPn (attention data-parallel + expert-parallel over n GPUs) and TEPn (tensor + expert parallel),
#: 'n x TPm', 'TPmxn', launcher flags ('--tp-size 8', 'tensor_parallel_size=8') and spelled-out names.
_PLAN_SPELLINGS: Final[tuple[tuple[str, str], ...]] = (
    (r"(?<![A-Za-z])((?:DEP|TEP|ADP|TP|PP|EP|DP)\s*\d+)\s*x(?=\s*\d)", r"\1 x "),  # replicas glued on: 'TP2x4'
    (r"\bDEP\s*(\d+)", r"TP\1 EP\1 attention DP"),
    (r"\bTEP\s*(\d+)", r"TP\1 EP\1"),
    (r"\bADP\s*(\d+)", r"DP\1 attention DP"),
    (r"\b(\d+)[- ]way\s+(tensor|pipeline|expert)", r"\2 parallel \1"),
    (r"\b(\d+)\s*x\s*TP\s*(\d+)", r"TP\2 x \1"),
    (r"\btensor[-_ ]parallel(?:ism|[-_ ]size)?\s*[=:]?\s*(\d+)", r"TP\1"),
    (r"\bpipeline[-_ ]parallel(?:ism|[-_ ]size)?\s*[=:]?\s*(\d+)", r"PP\1"),
    (r"\bexpert[-_ ]parallel(?:ism|[-_ ]size)?\s*[=:]?\s*(\d+)", r"EP\1"),
    (r"\b(tp|pp|ep|dp)[-_]size\s*[=:]?\s*(\d+)", r"\1 \2"),
    (r"(?<=\d)(?=(?:tp|pp|ep|dp)\d)", " "),  # glued names: 'tp8ep8dp8'
)
_ATTENTION_DP = r"attention[-_ ]*DP|DP[-_ ]*att(?:entio)?n\b|\bADP\b"


def _respell_plan(text: str) -> str:
    for pattern, repl in _PLAN_SPELLINGS:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return text


def parse_serving_plan(text: str, chip: str, num_chips: int | None, arch: str, notes: list[str]) -> _ServingPlan:
    """Per-replica tp/pp/ep and replica count dp from text such as 'TP2 x 4 instances'."""
    text = _respell_plan(text)
    decode = lookup(r"decode\s*:\s*([^;]*)", text)
    if decode is not None:
        notes.append("prefill/decode split; decode-phase parallelism used")
    core = strip_parentheses(decode if decode is not None else text)
    sizes = {key: lookup_int(rf"\b{key}\s*[=:]?\s*(\d+)", core) for key in ("TP", "PP", "EP", "DP")}
    replicas = lookup_int(r"\bx\s*(\d+)\s*(?:instances?|replicas?|copies)?\s*(?:$|[;,])", core.strip())
    if replicas is None:
        replicas = lookup_int(r"(\d+)\s*(?:replicas|model copies|instances)\b", text)
    attention_dp = bool(re.search(_ATTENTION_DP, text, re.IGNORECASE))
    ep_size = sizes["EP"]
    if arch == "moe" and ep_size and ep_size > 1 and not sizes["TP"] and (attention_dp or sizes["DP"] == ep_size):
        # vLLM's and SGLang's 'DP n + EP n' on an MoE model: attention data-parallel over the n expert-parallel ranks
        sizes["TP"], sizes["DP"], attention_dp = ep_size, None, True
        notes.append(f"DP{ep_size} with EP{ep_size} on an MoE model read as attention DP over {ep_size} ranks")
    ranks_stated = (num_chips or 0) * cores_per_chip(chip, text)
    tp_dp = (sizes["TP"] or 0) * (sizes["DP"] or 0)
    if arch == "moe" and sizes["TP"] and sizes["DP"] == sizes["TP"] and (attention_dp or tp_dp > ranks_stated > 0):
        # SGLang's '--tp n --dp n --enable-dp-attention': the DP ranks are the attention replicas inside the TP group
        sizes["DP"], attention_dp = None, True
        notes.append(f"DP{sizes['TP']} inside TP{sizes['TP']} on an MoE model read as attention DP over its ranks")
    given = any(v is not None for v in sizes.values()) or replicas is not None
    tp, pp = sizes["TP"] or 1, sizes["PP"] or 1
    dp = sizes["DP"] or replicas
    if given and dp is None and re.search(r"per instance", text, re.IGNORECASE):
        ranks = (num_chips or 0) * cores_per_chip(chip, text)
        if ranks and ranks % (tp * pp) == 0:
            dp = ranks // (tp * pp)
            notes.append(f"'per instance' plan: dp = {dp} instances from chip count")
    ep = sizes["EP"] or 1
    if sizes["EP"] is None and arch == "moe" and re.search(r"EP size[^;)]*not stated", text, re.IGNORECASE):
        ep = tp
        notes.append("EP size not stated; assumed EP = TP")
    if not given and num_chips == 1:
        notes.append("parallelism not stated; single chip implies tp=pp=ep=dp=1")
        given = True
    elif not given:
        notes.append("parallelism not stated")
    if not given:
        return _ServingPlan(1, 1, 1, 1, False, False, False)
    plan: dict[str, int | str | bool] = {"tp": tp, "pp": pp}
    if dp is not None:
        plan["dp"] = dp
    counts_cores = reconcile_plan_with_chips(
        plan, chip=chip, num_chips=num_chips, text=text, notes=notes, sizes=("tp", "pp", "dp")
    )
    return _ServingPlan(tp, pp, ep, int(plan.get("dp", 1)), attention_dp, counts_cores, True)


@dataclass(frozen=True)
class _Load:
    concurrency: int | None
    max_batch: int | None
    request_rate: float | None


_MAX_BATCH_PATTERNS: Final[tuple[str, ...]] = (
    r"max[-_ ]num[-_ ]seqs\s*[=:]?\s*(\d+)",
    r"gpu_batch_size\s*[=:]?\s*(\d+)",
    r"compiled\s+batch(?:[_ ]size)?\s*[=:]?\s*(\d+)",
    r"batch sizes? up to\s*(\d+)",
    r"max(?:imum)?\s+batch(?:[_ ]size)?\s*[=:]?\s*(\d+)",
)


#: How load generators and papers name the users of a closed loop: 'concurrency=64', 'max concurrent users=8',
#: '--max-concurrency 64', 'conc 16', 'c=64', InferenceX's 'c64', 'users=32', '64 concurrent requests', '32 users'.
_CONCURRENCY_PATTERNS: Final[tuple[str, ...]] = (
    r"concurren(?:cy|t users?|t requests?)\s*[=:]?\s*(\d+)",
    r"(?<![\w-])conc\s*[=:]?\s*(\d+)",
    r"(?<![\w-])c\s*=\s*(\d+)",
    r"(?<![\w-])c(\d+)\b",
    r"(?<![\w-])users?\s*[=:]\s*(\d+)",
    r"(?<![\w.])(\d+)\s*(?:concurrent(?:\s+(?:users?|requests?|clients?))?|users\b|clients\b)",
)


#: How they name an open loop's arrival rate: 'rate=4 req/s', '@ 2 req/s', '4 QPS', 'qps=4', 'rps 4', 'Poisson 2 rps'.
_RATE_PATTERNS: Final[tuple[str, ...]] = (
    rf"(?:rate|@)\s*[=:@]?\s*({NUM})\s*req",
    rf"(?<![\w.])({NUM})\s*(?:req(?:uests)?\s*/\s*s(?:ec)?|rps|qps)\b",
    rf"\b(?:qps|rps|request[-_ ]rate)\s*[=:]?\s*({NUM})(?!\s*(?:users?|concurren))",
)


def _concurrency(text: str) -> int | None:
    for pattern in _CONCURRENCY_PATTERNS:
        found = lookup_int(pattern, text)
        if found is not None:
            return found
    return None


def parse_load(batch_text: str, scenario_text: str, notes_text: str) -> _Load:
    """Concurrency (fixed batch or users), batch limit and request rate from the load description."""
    max_batch = None
    remaining = batch_text
    for pattern in _MAX_BATCH_PATTERNS:
        found = lookup_int(pattern, remaining)
        if found is not None:
            max_batch = max_batch or found
            remaining = re.sub(pattern, " ", remaining, flags=re.IGNORECASE)
    if max_batch is None:
        max_batch = lookup_int(r"(?:server max batch size|compiled batch_size)\s*[=:]?\s*(\d+)", notes_text)
    concurrency = _concurrency(remaining)
    if concurrency is None:
        concurrency = lookup_int(r"(?<![\w-])(?:batch(?:[-_ ]size)?|bs)\s*[=:]?\s*(\d+)", remaining)
    if concurrency is None:  # a bare count in the batch-or-concurrency column
        concurrency = lookup_int(r"^\s*(\d+)\s*$", remaining)
    if concurrency is None:
        concurrency = _concurrency(scenario_text)
    rate = None
    for text in (batch_text, scenario_text):
        for pattern in _RATE_PATTERNS:
            rate = rate if rate is not None else lookup_float(pattern, text)
    return _Load(concurrency, max_batch, rate)


#: a load generator that releases its requests without pacing: 'infinite request rate', '--request-rate inf'
_UNPACED: Final = r"infinite request rate|request[-_ ]rate\s*[=:]?\s*inf\b|all requests (?:queued|released)"


def released_at_once(text: str) -> bool:
    """The text describes requests released together without pacing (a burst), not a paced or capped load."""
    return bool(re.search(rf"{_UNPACED}|\bburst\b", text.lower()))


def normalize_scenario(scenario_text: str, concurrency: int | None) -> str:
    """offline | server | interactive | closed_loop | rate | single, from the scenario text and load."""
    s = scenario_text.lower()
    if re.search(r"\bserver\b", s):
        return "server"
    if "interactiv" in s:
        return "interactive"
    if re.search(r"static[-_ ]batch", s):  # 'static batch', 'static-batch latency', 'static_batch'
        return "single" if concurrency == 1 else "closed_loop"
    unpaced = released_at_once(s)
    if concurrency is not None and unpaced:
        # a load generator that sends without pacing behind a cap on requests in flight: a closed loop of its users
        return "single" if concurrency == 1 else "closed_loop"
    if unpaced or re.search(r"^offline\b", s):
        return "offline"
    if re.search(r"asynchronous@|req/s|poisson|constant[- ]rate|request rate", s):
        return "rate"
    if re.search(r"(?<!a)synchronous|single[- ]stream|single request|(?<![\d.])1 concurrent request|one request", s):
        return "single"
    if "production" in s:
        return "server"
    if re.search(r"max concurrency|concurrent (?:users|requests)|closed[- ]loop|guidellm throughput", s):
        return "closed_loop"
    if re.search(r"throughput|saturat|offline", s) and "optimized" not in s:
        return "offline"
    return "single" if concurrency == 1 else "closed_loop"


def parse_length(text: str) -> float | None:
    """Mean length: a measured mean wins over a requested one ('512 requested (565 measured)' -> 565)."""
    measured = lookup_float(rf"measured mean\s*~?\s*({NUM})", text)
    if measured is None:
        measured = lookup_float(rf"(?<![A-Za-z0-9_.])({NUM})\s*measured", text)
    return measured if measured is not None else parse_number(text)


def parse_latency_limits(text: str) -> tuple[float | None, float | None]:
    """(TTFT limit, TPOT limit) in seconds from 'TTFT p99 <= 2000 ms, TPOT p99 <= 200 ms'."""

    def limit(metric: str) -> float | None:
        match = re.search(rf"{metric}[^,;<≤]*(?:<=|≤|<)\s*({NUM})\s*(ms|s)\b", text, re.IGNORECASE)
        if match is None:
            return None
        return float(match.group(1)) / (1000.0 if match.group(2).lower() == "ms" else 1.0)

    return limit("TTFT"), limit("TPOT")


def _context_stat(metric: str, value: float, context: str) -> tuple[str, str | None]:
    """Statistic of an unlabelled latency value, from the row's notes/scenario; (stat, note)."""
    if re.search(r"all metrics are p99|p99 values reported", context):
        return "p99", None
    if re.search(r"\bmedians?\b|\bp50 values\b", context) or re.search(rf"{metric} p50 only", context):
        return "p50", None
    if re.search(r"\bmean values\b", context):
        return "mean", None
    pair = re.search(rf"p50/p99 \(ms\)\"?\s*=\s*({NUM})\s*/\s*({NUM})", context)
    if metric == "tpot" and pair is not None:
        if close_to(value, float(pair.group(1)), 1e-3):
            return "p50", None
        if close_to(value, float(pair.group(2)), 1e-3):
            return "p99", None
    p99 = lookup_float(rf"{metric} p99\s*=\s*({NUM})", context)
    if p99 is not None and not close_to(value, p99, 1e-3):
        return "p50", f"{metric} column taken as p50 (p99 {p99:g} ms given in notes)"
    return "value", None


def _per_user_speed(text: str, metric: str) -> bool:
    """Whether a TPOT cell gives a per-user speed ('avg output speed 20-22 tok/s per user'), not a time."""
    return metric == "tpot" and bool(re.search(r"tok(?:ens)?/s", text, re.IGNORECASE)) and "derived" not in text


def parse_latency_ms(text: str, metric: str, context: str, notes: list[str]) -> dict[str, float]:
    """Latency statistics in milliseconds from a ttft_ms/tpot_ms cell.

    Handles 'p99 461.3; mean 275.9', 'p50 870.1', 'prefill 63.17', '~8 (derived ...)', and, for TPOT,
    a per-user speed 'avg output speed 20-22 tok/s per user' (inverted to ms per token).
    """
    if not text.strip():
        return {}
    if _per_user_speed(text, metric):
        speed = parse_range_midpoint(text)
        if speed:
            notes.append(f"tpot = 1 / ({text.strip()})")
            return {"mean" if re.search(r"\bavg|mean|average", text, re.I) else "value": 1000.0 / speed}
    column = f"{metric}_ms"
    values = parse_stat_values(text, column)  # each figure in ms, from the unit written after it
    if other := [w for w in written_time_units(text) if w != TIME_COLUMNS[column]]:
        notes.append(f"{metric} given in {', '.join(other)} ({text.strip()})")
    if "prefill" in text.lower():
        notes.append("prefill latency used as TTFT")
    if set(values) == {"value"}:
        stat, note = _context_stat(metric, values["value"], context)
        if note:
            notes.append(note)
        values = {stat: values["value"]}
    return values


#: the percentiles a latency cell may state, lowest first: each is at least the one before it
_PERCENTILES: Final[tuple[str, ...]] = ("p50", "p90", "p99")
#: a statistic's label in a latency cell, and what must follow it: an optional metric name, ':' or '=', a number
_STAT_LABEL: Final = r"\b(?:p50|p90|p99|median|mean|avg|average)\b"
_STAT_FIGURE: Final = re.compile(rf"{_STAT_LABEL}(?:\s+(?:ttft|tpot|itl|e2el?|latency))?\s*[:=]?\s*~?({NUM})", re.I)


def latency_cell_problem(text: str, metric: str) -> str | None:
    """What is wrong with a stated ttft_ms/tpot_ms cell whose figures parse_latency_ms would read only in part: a
    statistic without a number ('p99 579.3; mean abc' had been compared at its p99 without a word) or one that is
    no positive time, or percentiles out of order ('p99 10; p50 50': a tail below the median, one of them
    mistyped, had been compared at the p50 without a word). Labels in parentheses are comments ('median 13.6
    (median ITL)'); a TPOT given as a per-user speed ('avg output speed 20-22 tok/s per user') is read whole."""
    if _per_user_speed(text, metric):
        return None
    bare = strip_parentheses(text)
    for label in re.finditer(_STAT_LABEL, bare, re.IGNORECASE):
        figure = _STAT_FIGURE.match(bare, label.start())
        if figure is None:
            return f"its {label.group(0)} has no number"
        value = float(figure.group(1).replace(",", ""))
        if not 0 < value < math.inf:
            return f"its {label.group(0)} {figure.group(1)} is not a positive, finite time"
    stated = parse_latency_ms(text, metric, "", [])  # the figures it reads, in ms (each in its own unit)
    percentiles = [(p, stated[p]) for p in _PERCENTILES if p in stated]
    for (low, below), (high, above) in itertools.pairwise(percentiles):
        if above < below:
            return f"its {high} ({above:g} ms) is below its {low} ({below:g} ms)"
    return None


def _pick_stat(values: Mapping[str, float]) -> tuple[str, float] | None:
    for stat in _STAT_PREFERENCE:
        if values.get(stat, 0.0) > 0:
            return stat, values[stat]
    return None


def _throughput_stat_serving(context: str) -> str:
    if re.search(r"all metrics are p99", context):
        return "p99"
    if re.search(r"output tok/s is [^;]*\bp50\b", context):
        return "p50"
    return "value"


#: The Neuron SDK's LLM benchmark tables up to release 2.17 (general/benchmarks/inf2/throughput_data_LLM.csv in 2.14,
#: {trn1,inf2}/*_data_decoder.csv after it) have "Throughput (tokens/second)" and "Latency per Token" columns that
#: count every token of the sequence, prompt included. SDK 2.14's own page says so under both of its "Large Language
#: Models" tabs: "Throughput (tokens/second) counts both input and output tokens / Latency per Token counts both
#: input and output tokens" (general/benchmarks/inf2/inf2-performance.rst @277baef4); the 2.16 and 2.17 pages keep
#: that note only under Encoder-Decoder, so for their decoder tables the figures decide: the Llama-2-13b row of 3,968
#: prompt and 128 output tokens reads 2,756 tokens/s at 0.36 ms per token (a 13B model cannot emit an output token
#: in 0.36 ms: its weights alone take 2 ms to read on 16 Trainium chips), and only this reading gives one decode
#: rate per model and SDK across prompt lengths (Llama-2-70b on inf2: 0.77 output tokens/s per chip at 256/256 and
#: at 256/2048). On the batch-1 rows throughput x latency per token = 1000 (within 2%); a batched row's product is
#: not 1000 x batch (2.14's opt-30b at batch 256: 2,023.7 x 110.9 = 224,428). Hugging Face's optimum-neuron
#: benchmark of Llama-2-13b on Inferentia2 (docs v0.0.21) states the same convention: throughput is batch_size x
#: sequence_length / end-to-end latency, prompt included, "the same convention as other benchmarks".
_WHOLE_SEQUENCE_TABLE = ('published column "latency per token p50/p99 (ms)"', 'published "throughput (tokens/second)"')


def _output_share(raw: Mapping[str, str], context: str, notes: list[str]) -> float | None:
    """For a row of a table whose throughput and per-token latency count prompt and output tokens alike, the
    output tokens' share of the sequence (its output tokens/s are that share of the table's); None otherwise."""
    if not all(marker in context for marker in _WHOLE_SEQUENCE_TABLE):
        return None
    inp, out = parse_length(raw.get("input_len", "")), parse_length(raw.get("output_len", ""))
    if inp is None or out is None:
        return None
    notes.append(
        "the table's throughput and latency per token count prompt and output tokens alike: output tokens/s = "
        f"throughput x {out:g} / {inp + out:g}; its latency per token (the run's latency over the whole sequence) "
        "is not a TPOT and is not compared"
    )
    return out / (inp + out)


def _measurement_context(raw: Mapping[str, str]) -> str:
    """A serving row's notes and scenario, lower case: where it says how its figures were measured."""
    return f"{raw.get('notes', '')}; {raw.get('scenario', '')}".lower()


def inference_measured(raw: Mapping[str, str], num_chips: int | None, notes: list[str]) -> list[Measured]:
    """Output tokens/s per chip, TTFT and TPOT; one figure per metric, in SI units."""
    context = _measurement_context(raw)
    measured: list[Measured] = []
    per_chip = parse_positive(raw.get("output_tokens_per_s_per_chip"))
    total = parse_positive(raw.get("output_tokens_per_s_total"))
    if per_chip is None and total is not None and num_chips:
        per_chip = total / num_chips
        notes.append("output tokens/s per chip = total / num_chips")
    share = _output_share(raw, context, notes)
    if per_chip is not None:
        per_chip *= share or 1.0
        measured.append(Measured("output_tokens_per_s_per_chip", per_chip, _throughput_stat_serving(context)))
    for column, metric in (("ttft_ms", "ttft"), ("tpot_ms", "tpot")):
        if share is not None and metric == "tpot":
            continue
        picked = _pick_stat(parse_latency_ms(raw.get(column, ""), metric, context, notes))
        if picked is not None:
            measured.append(Measured(f"{metric}_s", picked[1] / 1000.0, picked[0]))
    return measured


def latency_stats(row: InferenceRow) -> dict[str, dict[str, float]]:
    """Every statistic of the TTFT and TPOT the row measured, in seconds: {'ttft_s': {'mean': .., 'p99': ..}}."""
    context = _measurement_context(row.raw)
    measured = {m.metric for m in row.measured}
    stats: dict[str, dict[str, float]] = {}
    for column, metric in (("ttft_ms", "ttft"), ("tpot_ms", "tpot")):
        if f"{metric}_s" in measured:
            values = parse_latency_ms(row.raw.get(column, ""), metric, context, [])
            stats[f"{metric}_s"] = {k: v / 1000.0 for k, v in values.items()}
    return stats


#: How a load generator's request count is written: '30000 requests', 'all 274560 queries issued at once', '1500
#: prompts', and as the benchmark flags that set it: vLLM and SGLang bench_serving '--num-prompts 1000' (or
#: num_prompts=1000), GenAI-Perf / AIPerf '--request-count 500', 'num_requests: 200'.
_REQUEST_COUNTS = (
    r"(\d[\d,]*)\s*(?:requests|prompts|queries|reqs)\b",
    r"\b(?:num|number[-_ ]of)[-_ ]?(?:prompts|requests)\s*(?:[=:]\s*|\s+)(\d[\d,]*)",
    r"\brequest[-_ ]count\s*(?:[=:]\s*|\s+)(\d[\d,]*)",
)


def parse_request_count(*texts: str) -> int | None:
    """How many requests a run issued (_REQUEST_COUNTS), from the first text that says."""
    for text in texts:
        for pattern in _REQUEST_COUNTS:
            found = lookup_int(pattern, text)
            if found is not None and found > 0:
                return found
    return None


def parse_recv_interval(*texts: str) -> int | None:
    """SGLang's scheduler polling interval a run states: '--scheduler-recv-interval 30',
    'scheduler_recv_interval=10' (the server-args dump)."""
    for text in texts:
        found = lookup_int(r"scheduler[-_]recv[-_]interval\s*(?:[=:]\s*|\s+)(\d+)", text)
        if found is not None and found > 0:
            return found
    return None


def parse_compiled_length(*texts: str) -> int | None:
    """The sequence length a static-shape deployment was compiled for, where a run states it: 'sequence_length=4096'
    (optimum-neuron), 'compiled/total sequence length=8192' (the Neuron SDK tables), 'max sequence length 8192',
    'seq_len 512', '--max-model-len 768'."""
    pattern = r"(?:sequence[ _]length|seq[-_]len|max[-_]model[-_]len)\s*(?:[=:]\s*|\s+)(\d+)"
    for text in texts:
        found = lookup_int(pattern, text)
        if found is not None and found > 0:
            return found
    return None


def states_piecewise_graphs(*texts: str) -> bool:
    """A run that captures its prompt iterations in CUDA graphs: 'enable_piecewise_cuda_graph: true' (TensorRT-LLM's
    torch_compile_config), '--enable-piecewise-cuda-graph' (SGLang), 'piecewise CUDA graphs'."""
    pattern = r"enable[-_]piecewise[-_]cuda[-_]graph(?!\s*[:=]\s*false)|piecewise cuda graphs? (?:on|enabled)"
    return any(re.search(pattern, t, re.IGNORECASE) for t in texts)


def _output_len(raw: Mapping[str, str], notes: list[str]) -> float | None:
    stated = parse_length(raw.get("output_len", ""))
    if stated is not None:
        return stated
    total = parse_number(raw.get("output_tokens_per_s_total"))
    requests = parse_number(raw.get("requests_per_s"))
    if total is not None and requests:
        notes.append("output_len = output tokens/s / requests/s")
        return total / requests
    notes.append("output_len not stated")
    return None


def _request_rate(raw: Mapping[str, str], scenario: str, load: _Load) -> float | None:
    if load.request_rate is not None:
        return load.request_rate
    if scenario in ("server", "interactive"):
        return parse_number(raw.get("requests_per_s"))
    return None


#: The largest measurement a row may state (SI), far past any published one: ten million output tokens/s per chip
#: (the tables' most is 56,528) and a day for a first token or an output token (their most: 196 s)
MAX_MEASURED: Final[dict[str, float]] = {"output_tokens_per_s_per_chip": 1e7, "ttft_s": 86_400.0, "tpot_s": 86_400.0}
_MEASURED_CELLS: Final[tuple[str, ...]] = (
    "output_tokens_per_s_per_chip",
    "output_tokens_per_s_total",
    "ttft_ms",
    "tpot_ms",
)


def _measured_value(raw: Mapping[str, str], column: str) -> bool:
    """Whether a stated measurement cell gives a positive figure (as inference_measured reads it)."""
    text = raw.get(column, "")
    if column in ("ttft_ms", "tpot_ms"):
        return _pick_stat(parse_latency_ms(text, column[:4], _measurement_context(raw), [])) is not None
    return parse_positive(text) is not None


def cell_problem(raw: Mapping[str, str], num_chips: int | None, measured: list[Measured]) -> str | None:
    """Why a row's stated cells cannot be used: a chip count below one or past the largest fleet planned (a billion
    chips ran for minutes), a length that is no token count, a measurement that is not a positive number or is past
    any plausible one. Such a row is skipped with this reason, not predicted from nonsense or read as blank."""
    if num_chips is not None and num_chips < 1:
        return f"num_chips {num_chips} is not a chip count"
    if num_chips is not None and (problem := CHIPS.problem(num_chips)) is not None:
        return f"num_chips: {problem}"
    for column in ("input_len", "output_len"):
        text = stated_cell(raw, column)
        length = parse_length(text) if text is not None else None
        if text is not None and (length is None or not 0 < length <= MAX_TOKENS):
            return f"{column} '{text}' is not a token count from 1 to {MAX_TOKENS:,}"
    chips_text = stated_cell(raw, "num_chips")
    if chips_text is not None and _chip_count_cell(chips_text) is None:
        return f"num_chips '{chips_text}' is not a whole number of chips"
    for column in (*_MEASURED_CELLS, "e2e_latency_s"):
        text = stated_cell(raw, column)
        unit_problem = column in TIME_COLUMNS and text is not None and not _per_user_speed(text, column[:4])
        if unit_problem and (problem := time_unit_problem(str(text), column)) is not None:
            return problem  # '11 min' is read as 660,000 ms; '11 fortnights' had been read as 11 ms
        if column not in _MEASURED_CELLS:
            continue
        if text is not None and not _measured_value(raw, column):
            return f"{column} '{text}' is not a positive measurement"
        why = latency_cell_problem(text, column[:4]) if text is not None and column in ("ttft_ms", "tpot_ms") else None
        if why is not None:
            return f"{column} '{text}': {why}"
    if (problem := precision_problem(raw)) is not None:
        return problem  # 'FP3' had been noted 'weight precision not stated' and priced as bf16
    for m in measured:
        if m.value > MAX_MEASURED[m.metric]:
            return f"{m.metric} {m.value:g} is past any plausible measurement (at most {MAX_MEASURED[m.metric]:g})"
    return None


def _inference_skip_reason(
    raw: Mapping[str, str],
    chip: str,
    num_chips: int | None,
    measured: list[Measured],
    known: frozenset[str],
    pools_stated: bool = False,
) -> str | None:
    if chip == "mixed" or "heterogeneous" in raw.get("notes", "").lower():
        return SKIP_MIXED
    if chip not in known:
        return unknown_chip(chip, known)
    if (problem := cell_problem(raw, num_chips, measured)) is not None:
        return problem
    if num_chips is None:
        return SKIP_NO_CHIPS
    disaggregated = is_disaggregated(raw.get("serving_engine", ""), raw.get("parallelism", ""), raw.get("scenario", ""))
    if disaggregated and not pools_stated:
        return SKIP_DISAGGREGATED
    if not measured:
        return SKIP_NO_METRIC
    return None


#: A chip count written into the hardware text: '8x H200', 'NVIDIA B200 (8x)', '2 x H100 80G', '8 GPUs' (not an
#: instance size such as 'trn2.48xlarge' nor a rack name such as 'NVL72').
_HARDWARE_COUNTS: Final[tuple[str, ...]] = (
    r"\(\s*(\d+)\s*[x\u00d7]\s*\)",
    r"(?<![\w.])(\d+)\s*[x\u00d7]\s*(?=(?:NVIDIA|AMD|Intel|Google|AWS|[A-Z]{1,3}\d))",
    r"(?<![\w.])(\d+)\s+(?:GPUs|chips|accelerators)\b",
)


def _chip_count(
    raw: Mapping[str, str], chip: str, plan: _ServingPlan, notes: list[str], prefill_chips: int = 0
) -> int | None:
    """The row's chip count, or when the column is empty the one its hardware text or GPU plan states (with a
    disaggregated row's prefill pool, `prefill_chips`)."""
    stated = _chip_count_cell(raw.get("num_chips", ""))
    if stated is not None or stated_cell(raw, "num_chips") is not None:
        return stated  # a cell that states no chip count is the row's problem (cell_problem), not a blank one
    hardware_text = raw.get("hardware", "")
    for pattern in _HARDWARE_COUNTS:
        found = lookup_int(pattern, hardware_text)
        if found:
            notes.append(f"num_chips not stated; {found} from the hardware text")
            return found
    if plan.given and cores_per_chip(chip, "") == 1 and not plan.counts_cores:
        found = plan.tp * plan.pp * plan.dp + prefill_chips
        pools = " of both pools" if prefill_chips else ""
        notes.append(f"num_chips not stated; {found} from the plan{pools} (TP x PP x replicas)")
        return found
    return None


#: a pool's name, with an optional 'pool'/'workers'/... after it
_POOL_WORD = r"(?:[ _-]?(?:pool|workers?|servers?|instances?|nodes?))?"
_PREFILL_NAME = rf"\b(?:prefill|context|ctx){_POOL_WORD}"
_DECODE_NAME = rf"\b(?:decode|generation|gen){_POOL_WORD}"
#: the start of a plan: a shape such as TP4, TEP8, DEP16, EP8 or ADP8, perhaps after 'N x', 'N workers' or '('
_WORKERS = r"(?:x|workers?|instances?|servers?|replicas?)"
_SHAPE_AHEAD = rf"(?=\s*[(\[]?\s*(?:\d+\s*{_WORKERS}\s*)?(?:TP|TEP|DEP|DP|EP|PP|ADP)\s*\d)"
#: Dynamo's and SGLang's 'xPyD': x prefill and y decode workers of one shape.
_XPYD = r"\b(\d+)\s*P\s*(\d+)\s*D\b"


def _pool_sections(text: str) -> str:
    """The pools of a row's parallelism text spelt one way: 'prefill: SHAPE x N; decode: SHAPE x N'. Reads
    'ctx'/'context' and 'gen'/'generation', a name without a colon ('prefill TP8, decode DEP8'), 'N prefill (TP4)',
    'N workers TP4', 'N x TP4', 'P: TP4 / D: DEP8' and InferenceX's 'PTP4x3/DTP16x1'."""
    pool = {"P": "prefill", "D": "decode"}
    text = re.sub(r"\b([PD])TP(\d+)\s*x\s*(\d+)", lambda m: f"{pool[m[1]]}: TP{m[2]} x {m[3]};", text)
    text = re.sub(r"\b([PD])\s*:", lambda m: f"{pool[m[1]]}:", text)
    text = re.sub(rf"\b(\d+)\s*({_PREFILL_NAME}|{_DECODE_NAME})\s*\(([^)]*)\)", r"\2: \3 x \1", text,
                  flags=re.IGNORECASE)  # fmt: skip
    text = re.sub(rf"{_PREFILL_NAME}\s*(?:[:=]|{_SHAPE_AHEAD})", "prefill:", text, flags=re.IGNORECASE)
    text = re.sub(rf"{_DECODE_NAME}\s*(?:[:=]|{_SHAPE_AHEAD})", "decode:", text, flags=re.IGNORECASE)
    parts = re.split(r"(prefill:|decode:)", text)
    out = [parts[0].strip(" ([,;")]
    for name, raw in zip(parts[1::2], parts[2::2], strict=False):
        body = raw.strip().strip("()[]").strip(" ,;/+|")
        shape = re.sub(rf"^(\d+)\s*{_WORKERS}\s*(?:of\s*)?(.+)$", r"\2 x \1", body)  # 'N workers TP4' -> 'TP4 x N'
        out.append(f"{name} {shape};")
    return " ".join(out).strip()


def parse_pools(text: str, chip: str, arch: str, notes: list[str]) -> tuple[str, _ServingPlan | None]:
    """A disaggregated row's plan text for its decode pool, and its prefill pool when the row states one
    ('prefill: TP4 EP4 x 2; decode: DEP8', 'ctx: 2 x TEP4, gen: 1 x DEP16', '1P2D, TP8 each',
    '2P1D (prefill TP4, decode DEP8)', '4 prefill (TP4) + 1 decode (DEP16)')."""
    counts = re.search(_XPYD, text)
    text = _pool_sections(re.sub(_XPYD, " ", text) if counts else text)
    if counts and "decode:" not in text:
        shape = text.strip(" ,;")
        text = f"prefill: {shape} x {counts.group(1)}; decode: {shape} x {counts.group(2)};"
    elif counts:
        # the xPyD counts name the workers of the shapes the text gives per pool
        for name, n in (("prefill", counts.group(1)), ("decode", counts.group(2))):
            body = lookup(rf"{name}: ([^;]*);", text)
            if body is not None and not re.search(r"\bx\s*\d", body):
                text = text.replace(f"{name}: {body};", f"{name}: {body} x {n};", 1)
    section = lookup(r"prefill:\s*([^;]*)", text)
    if section is None or "decode:" not in text:
        return text, None
    prefill = parse_serving_plan(section, chip, None, arch, [])
    if not prefill.given:
        return text, None
    notes.append(f"disaggregated: prefill pool {prefill.dp} x TP{prefill.tp}")
    return text, prefill


def _chip_count_cell(text: str) -> int | None:
    """The chips a num_chips cell counts: '8', '1,024', or the GPUs of '1 node (8 GPUs)'."""
    devices = lookup_int(r"(\d+)\s*(?:x\s*)?(?:gpus?|chips?|accelerators?|devices?)\b", text)
    return devices if devices is not None else parse_int(text)


def parse_inference_row(raw: dict[str, str], known_chips: frozenset[str], aliases: Mapping[str, str]) -> InferenceRow:
    notes: list[str] = []
    name = raw.get("model", "").strip()
    arch_text = raw.get("arch", "")
    total, active = billions(raw.get("params_total_B", "")), billions(raw.get("params_active_B", ""))
    if total is None:
        total, active_from_arch = parse_params_from_arch(arch_text)
        active = active if active is not None else active_from_arch
    arch = normalize_arch(arch_text, name, total, active)
    if not arch_text.strip():
        notes.append(f"arch not stated; inferred {arch}")
    if active is None and arch == "dense":
        active = total
    chip = canonical_chip(raw.get("chip", ""), aliases, notes)
    num_chips = _chip_count_cell(raw.get("num_chips", ""))
    precision_text = raw.get("precision", "")
    checkpoint = precision_tokens(raw.get("model", ""))
    if checkpoint and not precision_tokens(precision_text):
        # a quantised checkpoint named by its precision ('Llama-3.1-70B-Instruct-FP8') where the column is silent
        notes.append(f"weight precision taken from the checkpoint name ({checkpoint[0]})")
        precision_text = f"{precision_text} {checkpoint[0]} weights"
    stated = next((v for key, v in SOURCE_PRECISIONS.items() if re.search(key, raw.get("source", ""))), None)
    if stated is not None and precision_text.strip().lower() in stated[1]:
        notes.append(f"precision from the publication: {stated[0]}")
        precision_text = stated[0]
    weight = parse_weight_precision(precision_text, notes)
    plan_text, prefill = parse_pools(raw.get("parallelism", ""), chip, arch, notes)
    prefill_chips = prefill.tp * prefill.pp * prefill.dp if prefill is not None else 0
    decode_chips = num_chips - prefill_chips if num_chips is not None and prefill is not None else num_chips
    plan = parse_serving_plan(plan_text, chip, decode_chips, arch, notes)
    num_chips = _chip_count(raw, chip, plan, notes, prefill_chips)
    load = parse_load(raw.get("batch_or_concurrency", ""), raw.get("scenario", ""), raw.get("notes", ""))
    scenario = normalize_scenario(raw.get("scenario", ""), load.concurrency)
    if scenario == "closed_loop" and load.concurrency is None and load.request_rate is not None:
        scenario = "rate"
        notes.append(f"an arrival rate ({load.request_rate:g} req/s) and no users: an open loop")
    input_len = parse_length(raw.get("input_len", ""))
    if input_len is None:
        notes.append("input_len not stated")
    ttft_limit, tpot_limit = parse_latency_limits(raw.get("latency_constraint", ""))
    measured = inference_measured(raw, num_chips, notes)
    spec_fields = ("parallelism", "serving_engine", "notes", "scenario")
    return InferenceRow(
        id=raw.get("id", "").strip(),
        source_family=raw.get("source_family", "").strip(),
        model_name=name,
        arch=arch,
        params_total=total,
        params_active=active,
        chip=chip,
        num_chips=num_chips,
        weight_precision=weight,
        kv_precision=parse_kv_precision(precision_text, weight),
        engine=normalize_engine(raw.get("serving_engine", "")),
        tp=plan.tp,
        pp=plan.pp,
        ep=plan.ep,
        dp=plan.dp,
        attention_dp=plan.attention_dp,
        plan_counts_cores=plan.counts_cores,
        plan_given=plan.given,
        scenario=scenario,
        concurrency=load.concurrency,
        max_batch=load.max_batch,
        request_rate=_request_rate(raw, scenario, load),
        input_len=input_len,
        output_len=_output_len(raw, notes),
        ttft_limit_s=ttft_limit,
        tpot_limit_s=tpot_limit,
        speculative=is_speculative(*(raw.get(f, "") for f in spec_fields)),
        measured=measured,
        skip_reason=_inference_skip_reason(raw, chip, num_chips, measured, known_chips, prefill is not None),
        notes=notes_text(notes),
        raw=raw,
        num_requests=parse_request_count(
            *(raw.get(f, "") for f in ("batch_or_concurrency", "latency_constraint", "scenario", "notes"))
        ),
        recv_interval=parse_recv_interval(*(raw.get(f, "") for f in ("serving_engine", "parallelism", "notes"))),
        compiled_length=parse_compiled_length(*(raw.get(f, "") for f in ("serving_engine", "scenario", "notes"))),
        piecewise_graphs=states_piecewise_graphs(*(raw.get(f, "") for f in ("serving_engine", "parallelism", "notes"))),
        prefill_pool=(prefill.tp, prefill.pp, prefill.ep, prefill.attention_dp, prefill.dp) if prefill else None,
        precision_text=precision_text,
    )
