"""The engine a serving row names and the settings it ran with, read from the row's text: the engine family, its
speculative decoding, SGLang's scheduler polling, a static-shape deployment's compiled length and piecewise CUDA
graphs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from chipwise.validation.cells import NUM, lookup, lookup_float, lookup_int

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
