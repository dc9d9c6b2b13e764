"""A serving row's weight and KV-cache precision, read from its precision text (or from the publication, where the
row's source states it outside its table)."""

from __future__ import annotations

import re
from typing import Final

from chipwise.validation.cells import PRECISION_TOKEN, precision_tokens, token_after

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


#: the note a row gets when nothing states its weights (validation.serving_case then takes the checkpoint's own)
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
