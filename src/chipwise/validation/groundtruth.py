"""Parse the published ground-truth CSVs into normalized, typed records.

Two files are read: the training runs (``groundtruth_training.csv``) and the serving runs
(``groundtruth_inference.csv``); see ``shared/data/groundtruth.md`` for column semantics. Every row
becomes a :class:`TrainingRow` or :class:`InferenceRow`. A row that cannot be predicted keeps a short
``skip_reason``; anything the normalizer had to assume is written to ``notes``. Rows are parsed by
rules on the text of their cells, never by row id, so new rows in the same format parse the same way.

Units: parameters as counts (the CSV gives billions), times in seconds, rates in tokens/s or req/s.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, TypeVar

from chipwise.errors import ChipwiseError

__all__ = [
    "KNOWN_CHIPS",
    "InferenceRow",
    "Measured",
    "ModelDims",
    "TrainingRow",
    "detect_kind",
    "parse_int",
    "parse_number",
    "parse_positive",
    "parse_stat_values",
    "read_inference",
    "read_training",
    "training_flops_per_token",
]

KNOWN_CHIPS: Final[frozenset[str]] = frozenset(
    {
        "trn1", "inf2", "trn2", "trn3", "trn4",
        "a100-40gb", "a100-80gb", "h100-sxm", "h100-96gb", "h800", "h200", "gh200",
        "b200", "b300", "gb200", "gb300", "rtx-pro-6000d",
        "mi300x", "mi325x", "mi355x",
        "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7",
        "gaudi2", "gaudi3",
    }
)  # fmt: skip

# NeuronCores per chip as the parallelism of a row counts them (trn2-class chips: logical cores at LNC=2).
_PHYSICAL_NEURON_CORES: Final[dict[str, int]] = {"trn1": 2, "inf2": 2, "trn2": 8, "trn3": 8, "trn4": 8}
_DEFAULT_LNC: Final[int] = 2

# A model TFLOP/s figure is turned into tokens/s only while attention is a small part of FLOPs/token,
# because sources count attention FLOPs differently (causal or not).
_MAX_ATTENTION_SHARE_FOR_TFLOPS: Final[float] = 0.10

_STAT_PREFERENCE: Final[tuple[str, ...]] = ("p50", "mean", "value", "p90", "p99")

_TRAIN_MARKERS: Final[frozenset[str]] = frozenset({"step_time_s", "tokens_per_s_per_chip", "global_batch_seqs"})
_SERVE_MARKERS: Final[frozenset[str]] = frozenset({"output_tokens_per_s_per_chip", "ttft_ms", "tpot_ms"})

SKIP_NO_THROUGHPUT: Final[str] = "no throughput or step time"
SKIP_MFU_ONLY: Final[str] = "MFU only (peak FLOP/s denominator not given)"
SKIP_UNIT_AMBIGUOUS: Final[str] = "throughput unit ambiguous (per chip or total)"
SKIP_NO_CHIPS: Final[str] = "no chip count"
SKIP_MIXED: Final[str] = "mixed hardware"
SKIP_NO_METRIC: Final[str] = "no measured metric"
SKIP_DISAGGREGATED: Final[str] = "prefill/decode disaggregated serving whose pools the row does not state"


# --------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelDims:
    """Model shape as the row gives it; ``None`` where the row leaves a field blank."""

    name: str
    arch: str
    params_total: float | None
    params_active: float | None
    layers: int | None
    hidden: int | None
    ffn_hidden: int | None
    heads: int | None
    kv_heads: int | None
    vocab: int | None
    experts: int | None = None
    top_k: int | None = None


@dataclass(frozen=True)
class Measured:
    """One measured figure in SI units, with the statistic the source reports."""

    metric: str
    value: float
    stat: str


@dataclass(frozen=True)
class TrainingRow:
    id: str
    source_family: str
    model: ModelDims
    chip: str
    num_chips: int | None
    precision: str
    seq_len: int | None
    global_batch_tokens: float | None
    micro_batch: int | None
    plan: dict[str, int | str | bool]
    plan_counts_cores: bool
    measured: Measured | None
    skip_reason: str | None
    lora: bool
    notes: str
    raw: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class InferenceRow:
    id: str
    source_family: str
    model_name: str
    arch: str
    params_total: float | None
    params_active: float | None
    chip: str
    num_chips: int | None
    weight_precision: str
    kv_precision: str
    engine: str
    tp: int
    pp: int
    ep: int
    dp: int
    attention_dp: bool
    plan_counts_cores: bool
    plan_given: bool
    scenario: str
    concurrency: int | None
    max_batch: int | None
    request_rate: float | None
    input_len: float | None
    output_len: float | None
    ttft_limit_s: float | None
    tpot_limit_s: float | None
    speculative: bool
    measured: list[Measured]
    skip_reason: str | None
    notes: str
    raw: dict[str, str] = field(repr=False)
    num_requests: int | None = None
    #: prefill/decode disaggregation with stated pools: the prefill pool's (tp, pp, ep, attention_dp, replicas);
    #: tp ... dp above are then the decode pool's
    prefill_pool: tuple[int, int, int, bool, int] | None = None
    #: the precision the row ran at as read: its column, or where that is silent its checkpoint's name or the
    #: publication's own statement (SOURCE_PRECISIONS)
    precision_text: str = ""


# --------------------------------------------------------------------------------------------------
# Number helpers
# --------------------------------------------------------------------------------------------------

_NUM: Final[str] = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?"
# A number that is not glued to a word before it (so 'p99', 'TP8', 'x64' give no number).
_NUMBER_RE: Final[re.Pattern[str]] = re.compile(rf"(?<![A-Za-z0-9_.])({_NUM})([kKMBGT](?![A-Za-z]))?")
_SUFFIX: Final[dict[str, float]] = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def parse_number(text: str | None) -> float | None:
    """First number in a cell: '2787.5 (derived)' -> 2787.5, '~1500 (var 150)' -> 1500, '1.3M' -> 1.3e6.

    A number glued to letters before it ('p99', 'TP8') is not a value; a k/K/M/B/G/T right after the
    digits is a decimal multiplier. Returns ``None`` when the cell has no finite number.
    """
    if not text:
        return None
    match = _NUMBER_RE.search(text)
    if match is None:
        return None
    value = float(match.group(1).replace(",", ""))
    if match.group(2):
        value *= _SUFFIX[match.group(2)]
    return value if math.isfinite(value) else None


def parse_int(text: str | None) -> int | None:
    """Integer cell ('512', '1,024', '16 (nodes)'); ``None`` when absent or not a whole number."""
    value = parse_number(text)
    if value is None or abs(value - round(value)) > 1e-9:
        return None
    return round(value)


_STAT_ALIASES: Final[dict[str, str]] = {
    "p50": "p50", "median": "p50", "p90": "p90", "p99": "p99",
    "mean": "mean", "avg": "mean", "average": "mean",
}  # fmt: skip
_STAT_VALUE_RE: Final[re.Pattern[str]] = re.compile(
    rf"\b(p50|p90|p99|median|mean|avg|average)\b(?:\s+(?:ttft|tpot|itl|e2el?|latency))?\s*[:=]?\s*~?({_NUM})",
    re.IGNORECASE,
)
#: 'value (stat)': '45.3 (p50)', '120 ms (mean)'
_VALUE_STAT_RE: Final[re.Pattern[str]] = re.compile(
    rf"~?({_NUM})\s*(?:ms|s)?\s*\(\s*(p50|p90|p99|median|mean|avg|average)\s*\)", re.IGNORECASE
)


def parse_stat_values(text: str | None) -> dict[str, float]:
    """Labelled statistics in a cell: 'p99 461.3; mean 275.9' -> {'p99': 461.3, 'mean': 275.9}.

    A cell with a single unlabelled number gives {'value': x}; an empty cell gives {}.
    """
    if not text:
        return {}
    found: dict[str, float] = {}
    for label, number in _STAT_VALUE_RE.findall(text):
        found.setdefault(_STAT_ALIASES[label.lower()], float(number.replace(",", "")))
    for number, label in _VALUE_STAT_RE.findall(text):
        found.setdefault(_STAT_ALIASES[label.lower()], float(number.replace(",", "")))
    if found:
        return found
    value = parse_number(text)
    return {} if value is None else {"value": value}


def parse_range_midpoint(text: str) -> float | None:
    """Midpoint of a range such as '20-22' or '20 to 22'; a single number is returned as is."""
    match = re.search(rf"({_NUM})\s*(?:-|–|to)\s*({_NUM})", text)
    if match is not None:
        low, high = float(match.group(1)), float(match.group(2))
        if high >= low >= 0:
            return (low + high) / 2
    return parse_number(text)


def parse_positive(text: str | None) -> float | None:
    """A measured figure: the cell's number when it is > 0, else ``None`` (zero means 'not measured')."""
    value = parse_number(text)
    return value if value is not None and value > 0 else None


def _lookup(pattern: str, text: str, flags: int = re.IGNORECASE) -> str | None:
    """First capture group of ``pattern`` in ``text``, or ``None``."""
    match = re.search(pattern, text, flags)
    return match.group(1) if match else None


def _lookup_int(pattern: str, text: str) -> int | None:
    return parse_int(_lookup(pattern, text))


def _lookup_float(pattern: str, text: str) -> float | None:
    return parse_number(_lookup(pattern, text))


def _billions(text: str) -> float | None:
    """A count given in billions, as a count ('6.7' -> 6.7e9, without binary rounding noise)."""
    value = parse_number(text)
    if value is None:
        return None
    text_value = repr(value)
    return value * 1e9 if "e" in text_value else float(f"{text_value}e9")


def _strip_parentheses(text: str) -> str:
    """Text with every '( ... )' group removed (nested groups are removed from the inside out)."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\([^()]*\)", " ", text)
    return text


def _close(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


# --------------------------------------------------------------------------------------------------
# Shared field parsers
# --------------------------------------------------------------------------------------------------

_PRECISION_TOKEN_RE: Final[re.Pattern[str]] = re.compile(
    r"(?<![a-z0-9])(nvfp4|mxfp4|mxfp8|fp4|fp8|float8|e4m3|int8|int4|w4a16|w8a8|awq|gptq|bf16|bfloat16|fp16|float16|fp32"
    r"|float32)"
)
_PRECISION_OF_TOKEN: Final[dict[str, str]] = {
    "nvfp4": "fp4", "mxfp4": "fp4", "fp4": "fp4", "int4": "int4", "w4a16": "int4", "awq": "int4", "gptq": "int4",
    "w8a8": "int8",
    "mxfp8": "fp8", "fp8": "fp8", "float8": "fp8", "e4m3": "fp8", "int8": "int8",
    "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "fp32": "fp32", "float32": "fp32",
}  # fmt: skip
_TOKEN: Final[str] = _PRECISION_TOKEN_RE.pattern


def _precision_tokens(text: str) -> list[str]:
    """Normalized precisions named in ``text``, in order of appearance. 'W8A8' is int8 unless fp8 is named too
    ('W8A8-FP8'); AWQ and GPTQ checkpoints are 4-bit weights unless 8-bit is named ('GPTQ int8')."""
    found = _PRECISION_TOKEN_RE.findall(text.lower())
    named = {_PRECISION_OF_TOKEN[t] for t in found if t not in ("w8a8", "awq", "gptq")}
    skip = {t for t, other in (("w8a8", "fp8"), ("awq", "int8"), ("gptq", "int8")) if other in named}
    return [_PRECISION_OF_TOKEN[t] for t in found if t not in skip]


def _token_after(pattern: str, text: str) -> str | None:
    """Normalized precision captured by ``pattern`` (which must contain one precision-token group)."""
    token = _lookup(pattern, text.lower(), 0)
    return None if token is None else _PRECISION_OF_TOKEN[token]


def normalize_arch(arch_text: str, model_name: str, total: float | None, active: float | None) -> str:
    """'dense' or 'moe' from the arch column, else from active < total params, else from the model name."""
    text = arch_text.lower()
    if "moe" in text or "mixture" in text or "expert" in text:
        return "moe"
    if text.strip():
        return "dense"
    if total is not None and active is not None and active < 0.95 * total:
        return "moe"
    moe_names = r"mixtral|deepseek-?(?:v[23]|r1)|-a\d+b|maverick|scout|gpt-?oss|\d+x\d+b|\bmoe\b"
    return "moe" if re.search(moe_names, model_name.lower()) else "dense"


def parse_moe_shape(arch_text: str) -> tuple[int | None, int | None]:
    """(routed experts, top-k) from text such as 'MoE (256 routed + 1 shared, top-8; MLA)'."""
    experts = _lookup_int(r"(\d+)\s*(?:routed\s*)?experts", arch_text)
    if experts is None:
        experts = _lookup_int(r"(\d+)\s*routed", arch_text)
    top_k = _lookup_int(r"top-?\s*(\d+)", arch_text)
    return experts, top_k


def parse_params_from_arch(arch_text: str) -> tuple[float | None, float | None]:
    """(total, active) parameters from text such as 'MoE 671B/37B active'."""
    match = re.search(rf"({_NUM})\s*B\s*/\s*({_NUM})\s*B\s*active", arch_text, re.IGNORECASE)
    if match is None:
        return None, None
    return float(match.group(1)) * 1e9, float(match.group(2)) * 1e9


def cores_per_chip(chip: str, text: str) -> int:
    """How many parallel ranks one chip holds when a row counts NeuronCores (1 for other chips)."""
    physical = _PHYSICAL_NEURON_CORES.get(chip)
    if physical is None:
        return 1
    if physical <= 2:
        return physical
    lnc = _lookup_int(r"\bLNC\s*=?\s*(\d)", text) or _DEFAULT_LNC
    return max(physical // lnc, 1)


def _notes_text(notes: list[str]) -> str:
    return "; ".join(dict.fromkeys(n for n in notes if n))


# --------------------------------------------------------------------------------------------------
# Training rows
# --------------------------------------------------------------------------------------------------


def normalize_training_precision(text: str, notes: list[str]) -> str:
    """One of fp32/bf16/fp16/fp8/fp4/int8 from the training precision text."""
    tokens = _precision_tokens(text)
    lowered = text.lower()
    if not tokens:
        if "mixed" in lowered:
            notes.append(f"precision '{text}' names no dtype; assumed fp16")
            return "fp16"
        notes.append("precision not stated; assumed bf16")
        return "bf16"
    first = tokens[0]
    if re.search(rf"{_TOKEN}\s*(?:or|/)\s*{_TOKEN}", lowered) and len(set(tokens)) > 1:
        notes.append(f"precision '{text}' is ambiguous; took {first}")
    elif "not resolved" in lowered or "not verified" in lowered:
        notes.append(f"precision '{text}' not confirmed by source")
    if first == "fp32" and "autocast" in lowered:
        notes.append("fp32 with compiler matmul autocast")
    return first


def _parse_training_dims(raw: Mapping[str, str], notes: list[str]) -> ModelDims:
    name = raw.get("model", "").strip()
    total = _billions(raw.get("params_total_B", ""))
    active = _billions(raw.get("params_active_B", ""))
    arch_text = raw.get("arch", "")
    arch = normalize_arch(arch_text, name, total, active)
    if not arch_text.strip():
        notes.append(f"arch not stated; inferred {arch}")
    if active is None and arch == "dense":
        active = total
    experts, top_k = parse_moe_shape(arch_text) if arch == "moe" else (None, None)
    return ModelDims(
        name=name,
        arch=arch,
        params_total=total,
        params_active=active,
        layers=parse_int(raw.get("layers")),
        hidden=parse_int(raw.get("hidden")),
        ffn_hidden=parse_ffn_hidden(raw.get("ffn_hidden", ""), notes),
        heads=parse_int(raw.get("heads")),
        kv_heads=parse_int(raw.get("kv_heads")),
        vocab=parse_int(raw.get("vocab")),
        experts=experts,
        top_k=top_k,
    )


def parse_ffn_hidden(text: str, notes: list[str]) -> int | None:
    """FFN width; for MoE text such as 'dense 18432 / expert 2048' the per-expert width is kept."""
    expert = _lookup_int(r"expert\s*[:=]?\s*(\d+)", text)
    if expert is None:
        return parse_int(text)
    dense = _lookup_int(r"dense\s*[:=]?\s*(\d+)", text)
    if dense is not None:
        notes.append(f"ffn_hidden = expert width {expert} (dense-layer width {dense})")
    return expert


def parse_global_batch_seqs(text: str, notes: list[str]) -> int | None:
    """Global batch in sequences; a ramp 'a->b->c' keeps its final value."""
    if "->" in text:
        final = parse_int(text.rsplit("->", maxsplit=1)[-1])
        notes.append(f"global batch ramps ({text.strip()}); used final value {final}")
        return final
    return parse_int(text)


def parse_batch_tokens(text: str, seq_len: int | None, notes: list[str]) -> float | None:
    """Global batch in tokens: '4194304', '16M', '2M (approx, per paper)'.

    A K/M suffix is read as a power of two (M = 2**20) when that, and not the decimal reading, gives a
    whole number of sequences of ``seq_len`` tokens (batch sizes are set in sequences).
    """
    value = parse_number(text)
    suffix = _lookup(rf"(?<![A-Za-z0-9_.])(?:{_NUM})([kKM])(?![A-Za-z])", text, 0)
    if value is None or suffix is None:
        return value
    binary = value / _SUFFIX[suffix] * (1024.0 if suffix in "kK" else 1024.0**2)
    if seq_len and (binary / seq_len).is_integer() and not (value / seq_len).is_integer():
        notes.append(f"global_batch_tokens '{text.strip()}' read as binary ({binary:.0f})")
        return binary
    return value


def _global_batch_tokens(
    raw: Mapping[str, str], seq_len: int | None, seqs: int | None, notes: list[str]
) -> float | None:
    tokens = parse_batch_tokens(raw.get("global_batch_tokens", ""), seq_len, notes)
    if tokens is not None:
        return tokens
    if seqs is not None and seq_len is not None:
        return float(seqs * seq_len)
    return None


def normalize_recompute(text: str) -> str | None:
    """'none' | 'selective' | 'full' from recompute/remat text; ``None`` when the text says neither."""
    lowered = text.lower()
    if re.search(r"selective|\bsac\b|per-op|minimal|save_|offload|qkv_proj", lowered):
        return "selective"
    if "full" in lowered:
        return "full"
    if re.search(r"\bnone\b|\bno\b|nothing_saveable|disabled", lowered):
        return "none"
    return None


def parse_zero_stage(sharding: str) -> int | None:
    """ZeRO stage from sharding text: FSDP full shard -> 3, SHARD_GRAD_OP -> 2, distributed optimizer -> 1."""
    lowered = sharding.lower()
    stage = _lookup_int(r"zero[-_ ]?(\d)", lowered)
    if stage is not None:
        return stage
    if "shard_grad_op" in lowered:
        return 2
    if "fsdp" in lowered:
        return 3
    if "distributed optimizer" in lowered:
        return 1
    if re.search(r"\bddp\b", lowered):
        return 0
    return None


_PLAN_COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("TP", "tp"), ("PP", "pp"), ("DP", "dp"), ("CP", "cp"), ("EP", "ep"), ("VP", "vpp"),
)  # fmt: skip


def _training_plan_keys(raw: Mapping[str, str], notes: list[str]) -> dict[str, int | str | bool]:
    """Plan keys the row states: parallel sizes, ZeRO stage, recompute, sequence parallelism."""
    plan: dict[str, int | str | bool] = {}
    for column, key in _PLAN_COLUMNS:
        size = parse_int(raw.get(column))
        if size is not None:
            plan[key] = size
    sharding, recompute_text = raw.get("sharding", ""), raw.get("recompute", "")
    text = f"{sharding}; {recompute_text}; {raw.get('notes', '')}"
    tp = _lookup_int(r"ici_(?:tp|tensor_parallelism)\s*=\s*(\d+)", text)
    if "tp" not in plan and tp is not None:
        plan["tp"] = tp
        notes.append(f"tp={tp} from ici_tp setting")
    if "pp" not in plan and re.search(r"\bno PP\b", sharding, re.IGNORECASE):
        plan["pp"] = 1
    zero = parse_zero_stage(sharding)
    if zero is not None:
        plan["zero"] = zero
    remat_text = recompute_text or _lookup(r"remat(?:_policy)?\s*=\s*([\w]+)", raw.get("notes", "")) or ""
    recompute = normalize_recompute(remat_text)
    if recompute is not None:
        plan["recompute"] = recompute
    elif remat_text.strip():
        notes.append(f"recompute '{remat_text}' not understood")
    if re.search(r"sequence[- ]parallel", text, re.IGNORECASE):
        plan["sequence_parallel"] = True
    return plan


def _plan_product(plan: Mapping[str, int | str | bool], keys: tuple[str, ...]) -> int:
    product = 1
    for key in keys:
        value = plan.get(key, 1)
        product *= value if isinstance(value, int) and not isinstance(value, bool) else 1
    return product


def reconcile_plan_with_chips(
    plan: dict[str, int | str | bool],
    *,
    chip: str,
    num_chips: int | None,
    text: str,
    notes: list[str],
    sizes: tuple[str, ...] = ("tp", "pp", "dp", "cp"),
) -> bool:
    """Decide whether the plan counts NeuronCores; fix a stated dp that contradicts the chip count.

    Returns ``plan_counts_cores``. For a chip with one rank per chip this is always False.
    """
    units = cores_per_chip(chip, text)
    says_cores = bool(re.search(r"neuron ?cores?|\blnc\b", text, re.IGNORECASE))
    if units == 1:
        counts_cores = False
    elif says_cores or num_chips is None or "dp" not in plan:
        counts_cores = True
    else:
        counts_cores = _plan_product(plan, sizes) != num_chips
    if num_chips is None or "dp" not in plan:
        return counts_cores
    ranks = num_chips * (units if counts_cores else 1)
    product = _plan_product(plan, sizes)
    if product != ranks:
        others = product // max(int(plan["dp"]), 1)
        if others and ranks % others == 0:
            notes.append(f"stated dp={plan['dp']} gives {product} ranks, not {ranks}; dp set to {ranks // others}")
            plan["dp"] = ranks // others
        else:
            notes.append(f"parallel sizes give {product} ranks but the row has {ranks}")
    return counts_cores


def training_flops_per_token(dims: ModelDims, seq_len: int) -> tuple[float, float] | None:
    """(training FLOPs per token, attention share) as 6*N_active + 12*layers*hidden*seq_len.

    ``None`` when the parameter count or the layer/hidden sizes are missing.
    """
    params = dims.params_active if dims.params_active is not None else dims.params_total
    if params is None or dims.layers is None or dims.hidden is None:
        return None
    attention = 12.0 * dims.layers * dims.hidden * seq_len
    total = 6.0 * params + attention
    return total, attention / total


def _throughput_stat(raw: Mapping[str, str]) -> str:
    return "p50" if "median" in raw.get("derived_fields", "").lower() else "value"


def _seq_per_s_from_notes(notes_text: str) -> float | None:
    return _lookup_float(rf"performance\s*=\s*({_NUM})\s*seq(?:uences)?\s*/\s*s", notes_text)


def _measured_from_tflops(
    raw: Mapping[str, str], dims: ModelDims, seq_len: int | None, notes: list[str]
) -> Measured | None:
    tflops = parse_positive(raw.get("tflops_per_chip"))
    if tflops is None:
        return None
    if re.search(r"\bup to\b", raw.get("notes", ""), re.IGNORECASE):
        notes.append("only an 'up to' (peak, not sustained) model TFLOP/s per chip given; not converted")
        return None
    if seq_len is None:
        notes.append("only model TFLOP/s per chip given and seq_len unknown; not converted")
        return None
    flops = training_flops_per_token(dims, seq_len)
    if flops is None:
        notes.append("only model TFLOP/s per chip given and model dims incomplete; not converted")
        return None
    per_token, attention_share = flops
    if attention_share > _MAX_ATTENTION_SHARE_FOR_TFLOPS:
        notes.append(
            f"only model TFLOP/s per chip given; attention is {attention_share:.0%} of FLOPs/token, "
            "so the FLOP convention matters too much to convert"
        )
        return None
    notes.append(
        f"tokens/s per chip derived from {tflops:g} model TFLOP/s per chip with "
        "FLOPs/token = 6*N_active + 12*layers*hidden*seq_len"
    )
    return Measured("tokens_per_s_per_chip", tflops * 1e12 / per_token, "value")


def training_measured(
    raw: Mapping[str, str],
    dims: ModelDims,
    *,
    seq_len: int | None,
    global_seqs: int | None,
    num_chips: int | None,
    notes: list[str],
    derive_from_tflops: bool = True,
) -> Measured | None:
    """Tokens/s per chip if given, else step time, else total tokens/s over chips, else derived figures."""
    stat = _throughput_stat(raw)
    per_chip = parse_positive(raw.get("tokens_per_s_per_chip"))
    if per_chip is not None:
        return Measured("tokens_per_s_per_chip", per_chip, stat)
    step = parse_positive(raw.get("step_time_s"))
    if step is not None:
        return Measured("step_time_s", step, stat)
    total = parse_positive(raw.get("tokens_per_s_total"))
    if total is not None and num_chips:
        notes.append("tokens/s per chip = tokens_per_s_total / num_chips")
        return Measured("tokens_per_s_per_chip", total / num_chips, stat)
    seq_per_s = _seq_per_s_from_notes(raw.get("notes", ""))
    seq_per_s = seq_per_s if seq_per_s is not None and seq_per_s > 0 else None
    if seq_per_s is not None and seq_len is not None and num_chips:
        notes.append(f"tokens/s per chip from notes ({seq_per_s:g} seq/s x seq_len / chips)")
        return Measured("tokens_per_s_per_chip", seq_per_s * seq_len / num_chips, "value")
    if seq_per_s is not None and global_seqs is not None:
        notes.append(f"step time from notes: global batch {global_seqs} / {seq_per_s:g} seq/s")
        return Measured("step_time_s", global_seqs / seq_per_s, "value")
    if derive_from_tflops:
        return _measured_from_tflops(raw, dims, seq_len, notes)
    return None


def _training_skip_reason(
    raw: Mapping[str, str], chip: str, num_chips: int | None, measured: Measured | None, known: frozenset[str]
) -> str | None:
    if measured is None and parse_number(raw.get("gpu_hours")) is not None:
        family = "model card" if "model card" in raw.get("source_family", "").lower() else "paper"
        return f"aggregate GPU-hours figure ({family})"
    if chip not in known:
        return f"chip not in catalog: {chip or '<empty>'}"
    if num_chips is None:
        return SKIP_NO_CHIPS
    if measured is not None:
        return None
    notes_text = raw.get("notes", "").lower()
    if re.search(r"tokens/s\s*=\s*[\d.]", notes_text) and re.search(r"per-gpu|total|unit", notes_text):
        return SKIP_UNIT_AMBIGUOUS
    if parse_number(raw.get("tflops_per_chip")) is not None:
        return f"{SKIP_NO_THROUGHPUT} (model TFLOP/s only)"
    if parse_number(raw.get("mfu_pct")) is not None or parse_number(raw.get("hfu_pct")) is not None:
        return SKIP_MFU_ONLY
    return SKIP_NO_THROUGHPUT


def _parse_training_row(
    raw: dict[str, str], known_chips: frozenset[str], derive_from_tflops: bool, aliases: Mapping[str, str]
) -> TrainingRow:
    notes: list[str] = []
    dims = _parse_training_dims(raw, notes)
    chip = canonical_chip(raw.get("chip", ""), aliases, notes)
    num_chips = parse_int(raw.get("num_chips"))
    seq_len = parse_int(raw.get("seq_len"))
    if seq_len is None:
        notes.append("seq_len not stated")
    global_seqs = parse_global_batch_seqs(raw.get("global_batch_seqs", ""), notes)
    plan = _training_plan_keys(raw, notes)
    plan_text = f"{raw.get('sharding', '')}; {raw.get('notes', '')}; {raw.get('derived_fields', '')}"
    counts_cores = reconcile_plan_with_chips(plan, chip=chip, num_chips=num_chips, text=plan_text, notes=notes)
    measured = training_measured(
        raw,
        dims,
        seq_len=seq_len,
        global_seqs=global_seqs,
        num_chips=num_chips,
        notes=notes,
        derive_from_tflops=derive_from_tflops,
    )
    lora_text = f"{raw.get('model', '')} {raw.get('notes', '')}"
    return TrainingRow(
        id=raw.get("id", "").strip(),
        source_family=raw.get("source_family", "").strip(),
        model=dims,
        chip=chip,
        num_chips=num_chips,
        precision=normalize_training_precision(raw.get("precision", ""), notes),
        seq_len=seq_len,
        global_batch_tokens=_global_batch_tokens(raw, seq_len, global_seqs, notes),
        micro_batch=parse_int(raw.get("micro_batch")),
        plan=plan,
        plan_counts_cores=counts_cores,
        measured=measured,
        skip_reason=_training_skip_reason(raw, chip, num_chips, measured, known_chips),
        lora=bool(re.search(r"\blora\b", lora_text, re.IGNORECASE)),
        notes=_notes_text(notes),
        raw=raw,
    )


# --------------------------------------------------------------------------------------------------
# Inference rows
# --------------------------------------------------------------------------------------------------


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
#:   pass --kv-cache-dtype fp8 (ROCm/rocm-blogs, mlperf-inf-4-1).
SOURCE_PRECISIONS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "supercharging-llama-3-1-across-nvidia-platforms": ("FP8 weights, BF16 KV cache", ("",)),
    r"closed/AMD/results/[^/ ]+/llama2-70b": ("FP8 weights + FP8 KV cache", ("fp8 weights (weight_data_types=fp8)",)),
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
        tokens = _precision_tokens(text.split("(", maxsplit=1)[0]) or _precision_tokens(text)
        if tokens:
            return tokens[0]
    if "mxfp4" in lowered and re.search(r"\bmoe\b|expert", lowered):
        return "mxfp4"  # MXFP4 experts, 16-bit elsewhere: the gpt-oss checkpoint format (serve.quant)
    for pattern in (
        rf"{_TOKEN}\s+weights",
        rf"weights?(?:\s+storage)?\s*[:=]?\s*{_TOKEN}",
        rf"weight_data_types\s*=\s*{_TOKEN}",
        rf"{_TOKEN}\s+(?:moe|experts)",
        rf"model dtype\s*{_TOKEN}",
    ):
        found = _token_after(pattern, lowered)
        if found is not None:
            return found
    tokens = _precision_tokens(text)
    if tokens:
        return tokens[0]
    notes.append(UNSTATED_WEIGHTS)
    return "bf16"


_KV_PATTERNS: Final[tuple[str, ...]] = (rf"{_TOKEN}[\s_-]*kv", rf"kv[_ ]cache(?:[_ ]dtype)?\s*[:=]?\s*{_TOKEN}")


def kv_precision_stated(text: str) -> bool:
    """Whether the precision text names the KV cache's precision."""
    lowered = text.lower()
    return any(_token_after(p, lowered) is not None for p in _KV_PATTERNS)


def parse_kv_precision(text: str, weight: str) -> str:
    """KV-cache precision: stated ('FP8 KV cache', 'FP8-KV', 'kv_cache_dtype fp8'), else 16-bit default."""
    lowered = text.lower()
    for pattern in _KV_PATTERNS:
        found = _token_after(pattern, lowered)
        if found is not None:
            return found
    if weight in ("bf16", "fp16"):
        return weight
    model_dtype = _token_after(rf"model dtype\s*{_TOKEN}", lowered)
    return model_dtype if model_dtype in ("bf16", "fp16") else "bf16"


def normalize_engine(text: str) -> str:
    """trtllm | vllm | sglang | neuron | fastertransformer | other (Neuron back ends win over vLLM; an NVIDIA NIM
    that names no other back end is TensorRT-LLM, the engine of its optimised profiles)."""
    lowered = text.lower()
    if re.search(r"neuron|\bnxd|\btnx\b", lowered):
        return "neuron"
    if re.search(r"tensorrt[-_ ]?llm|trt-?llm", lowered):
        return "trtllm"
    if re.search(r"\bnim\b", lowered) and "vllm" not in lowered and "sglang" not in lowered:
        return "trtllm"  # NVIDIA NIM for LLMs runs its optimised (precision x TP) profiles on TensorRT-LLM
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
    k = next((v for p in _DRAFT_TOKEN_PATTERNS if (v := _lookup_int(p, text)) is not None), None)
    length = _lookup_float(rf"(?:mean |average )?accept(?:ance|ed)[ _]length\s*(?:of\s*)?[=:]?\s*({_NUM})", text)
    rate = _lookup_float(rf"accept(?:ance|ed)(?:[ _]rate)?\s*[=:]?\s*({_NUM})\s*%", text)
    if length is None and rate is not None and k:
        length = 1.0 + rate / 100.0 * k  # vLLM's acceptance rate: accepted / drafted tokens
    draft_model = _lookup(r"with\s+(?:an?\s+)?([A-Za-z][\w.\-/]*)\s+draft", text) or ""
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
#: 'n x TPm', launcher flags ('--tp-size 8', 'tensor_parallel_size=8') and spelled-out names.
_PLAN_SPELLINGS: Final[tuple[tuple[str, str], ...]] = (
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
    decode = _lookup(r"decode\s*:\s*([^;]*)", text)
    if decode is not None:
        notes.append("prefill/decode split; decode-phase parallelism used")
    core = _strip_parentheses(decode if decode is not None else text)
    sizes = {key: _lookup_int(rf"\b{key}\s*[=:]?\s*(\d+)", core) for key in ("TP", "PP", "EP", "DP")}
    replicas = _lookup_int(r"\bx\s*(\d+)\s*(?:instances?|replicas?|copies)?\s*(?:$|[;,])", core.strip())
    if replicas is None:
        replicas = _lookup_int(r"(\d+)\s*(?:replicas|model copies|instances)\b", text)
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
    rf"(?:rate|@)\s*[=:@]?\s*({_NUM})\s*req",
    rf"(?<![\w.])({_NUM})\s*(?:req(?:uests)?\s*/\s*s(?:ec)?|rps|qps)\b",
    rf"\b(?:qps|rps|request[-_ ]rate)\s*[=:]?\s*({_NUM})(?!\s*(?:users?|concurren))",
)


def _concurrency(text: str) -> int | None:
    for pattern in _CONCURRENCY_PATTERNS:
        found = _lookup_int(pattern, text)
        if found is not None:
            return found
    return None


def parse_load(batch_text: str, scenario_text: str, notes_text: str) -> _Load:
    """Concurrency (fixed batch or users), batch limit and request rate from the load description."""
    max_batch = None
    remaining = batch_text
    for pattern in _MAX_BATCH_PATTERNS:
        found = _lookup_int(pattern, remaining)
        if found is not None:
            max_batch = max_batch or found
            remaining = re.sub(pattern, " ", remaining, flags=re.IGNORECASE)
    if max_batch is None:
        max_batch = _lookup_int(r"(?:server max batch size|compiled batch_size)\s*[=:]?\s*(\d+)", notes_text)
    concurrency = _concurrency(remaining)
    if concurrency is None:
        concurrency = _lookup_int(r"(?<![\w-])(?:batch(?:[-_ ]size)?|bs)\s*[=:]?\s*(\d+)", remaining)
    if concurrency is None:  # a bare count in the batch-or-concurrency column
        concurrency = _lookup_int(r"^\s*(\d+)\s*$", remaining)
    if concurrency is None:
        concurrency = _concurrency(scenario_text)
    rate = None
    for text in (batch_text, scenario_text):
        for pattern in _RATE_PATTERNS:
            rate = rate if rate is not None else _lookup_float(pattern, text)
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
    if "static batch" in s:
        return "single" if concurrency == 1 else "closed_loop"
    unpaced = released_at_once(s)
    if concurrency is not None and unpaced:
        # a load generator that sends without pacing behind a cap on requests in flight: a closed loop of its users
        return "single" if concurrency == 1 else "closed_loop"
    if unpaced or re.search(r"^offline\b", s):
        return "offline"
    if re.search(r"asynchronous@|req/s|poisson|constant[- ]rate|request rate", s):
        return "rate"
    if re.search(r"(?<!a)synchronous|single[- ]stream|single request|1 concurrent request|one request", s):
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
    measured = _lookup_float(rf"measured mean\s*~?\s*({_NUM})", text)
    if measured is None:
        measured = _lookup_float(rf"(?<![A-Za-z0-9_.])({_NUM})\s*measured", text)
    return measured if measured is not None else parse_number(text)


def parse_latency_limits(text: str) -> tuple[float | None, float | None]:
    """(TTFT limit, TPOT limit) in seconds from 'TTFT p99 <= 2000 ms, TPOT p99 <= 200 ms'."""

    def limit(metric: str) -> float | None:
        match = re.search(rf"{metric}[^,;<≤]*(?:<=|≤|<)\s*({_NUM})\s*(ms|s)\b", text, re.IGNORECASE)
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
    pair = re.search(rf"p50/p99 \(ms\)\"?\s*=\s*({_NUM})\s*/\s*({_NUM})", context)
    if metric == "tpot" and pair is not None:
        if _close(value, float(pair.group(1)), 1e-3):
            return "p50", None
        if _close(value, float(pair.group(2)), 1e-3):
            return "p99", None
    p99 = _lookup_float(rf"{metric} p99\s*=\s*({_NUM})", context)
    if p99 is not None and not _close(value, p99, 1e-3):
        return "p50", f"{metric} column taken as p50 (p99 {p99:g} ms given in notes)"
    return "value", None


def parse_latency_ms(text: str, metric: str, context: str, notes: list[str]) -> dict[str, float]:
    """Latency statistics in milliseconds from a ttft_ms/tpot_ms cell.

    Handles 'p99 461.3; mean 275.9', 'p50 870.1', 'prefill 63.17', '~8 (derived ...)', and, for TPOT,
    a per-user speed 'avg output speed 20-22 tok/s per user' (inverted to ms per token).
    """
    if not text.strip():
        return {}
    if metric == "tpot" and re.search(r"tok(?:ens)?/s", text, re.IGNORECASE) and "derived" not in text:
        speed = parse_range_midpoint(text)
        if speed:
            notes.append(f"tpot = 1 / ({text.strip()})")
            return {"mean" if re.search(r"\bavg|mean|average", text, re.I) else "value": 1000.0 / speed}
    values = parse_stat_values(text)
    if re.search(rf"(?:{_NUM})\s*(?:s|sec|seconds)\b", text) and not re.search(r"ms\b|tok", text, re.IGNORECASE):
        values = {stat: 1000.0 * v for stat, v in values.items()}  # a value written in seconds in a ms column
        notes.append(f"{metric} given in seconds ({text.strip()})")
    if "prefill" in text.lower():
        notes.append("prefill latency used as TTFT")
    if set(values) == {"value"}:
        stat, note = _context_stat(metric, values["value"], context)
        if note:
            notes.append(note)
        values = {stat: values["value"]}
    return values


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


#: The Neuron SDK's decoder benchmark tables up to release 2.17 (general/benchmarks/{trn1,inf2}/*_data_decoder.csv)
#: have "Throughput (tokens/second)" and "Latency per Token" columns that count every token of the sequence, prompt
#: included: throughput x latency per token = 1000 x batch on every row, the Llama-2-13b row of 3,968 prompt and 128
#: output tokens reads 2,756 tokens/s at 0.36 ms per token (a 13B model cannot emit an output token in 0.36 ms: its
#: weights alone take 2 ms to read on 16 Trainium chips), and only this reading gives one decode rate per model and
#: SDK across prompt lengths (Llama-2-70b on inf2: 0.77 output tokens/s per chip at 256/256 and at 256/2048). Hugging
#: Face's optimum-neuron benchmark of Llama-2-13b on Inferentia2 (docs v0.0.21) states the convention: throughput is
#: batch_size x sequence_length / end-to-end latency, prompt included, "the same convention as other benchmarks".
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
            found = _lookup_int(pattern, text)
            if found is not None and found > 0:
                return found
    return None


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
        return f"chip not in catalog: {chip or '<empty>'}"
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
    if stated is not None:
        return stated
    hardware_text = raw.get("hardware", "")
    for pattern in _HARDWARE_COUNTS:
        found = _lookup_int(pattern, hardware_text)
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
            body = _lookup(rf"{name}: ([^;]*);", text)
            if body is not None and not re.search(r"\bx\s*\d", body):
                text = text.replace(f"{name}: {body};", f"{name}: {body} x {n};", 1)
    section = _lookup(r"prefill:\s*([^;]*)", text)
    if section is None or "decode:" not in text:
        return text, None
    prefill = parse_serving_plan(section, chip, None, arch, [])
    if not prefill.given:
        return text, None
    notes.append(f"disaggregated: prefill pool {prefill.dp} x TP{prefill.tp}")
    return text, prefill


#: words of a chip's marketing name that do not tell chips apart ('NVIDIA H200 141GB', 'AMD Instinct MI300X')
_CHIP_NOISE: Final = frozenset({"nvidia", "amd", "intel", "google", "aws", "instinct", "tesla", "gpu", "tensor"})


def _chip_spellings(key: str) -> list[str]:
    """Ways to look a chip's name up: as written, hyphenated, without the vendor's words, without the socket's
    generation ('SXM5' -> 'SXM') or the socket, and last without the memory size (H200 has one; A100's two sizes
    are aliases of their own, so '80GB' is dropped only where the name with it is unknown). A form factor that is
    another product ('PCIe', 'NVL') is never dropped."""
    words = [w for w in re.findall(r"[a-z0-9.]+", key) if w not in _CHIP_NOISE and not re.fullmatch(r"hbm\d*e?", w)]
    words = [re.sub(r"^sxm\d$", "sxm", w) for w in words]
    no_socket = [w for w in words if w != "sxm"]
    no_memory = [w for w in no_socket if not re.fullmatch(r"\d+gb", w)]
    out = [key, re.sub(r"\s+", "-", key)]
    for ws in (words, no_socket, no_memory):
        out += ["-".join(ws), "".join(ws)]
    return out


def _chip_count_cell(text: str) -> int | None:
    """The chips a num_chips cell counts: '8', '1,024', or the GPUs of '1 node (8 GPUs)'."""
    devices = _lookup_int(r"(\d+)\s*(?:x\s*)?(?:gpus?|chips?|accelerators?|devices?)\b", text)
    return devices if devices is not None else parse_int(text)


def canonical_chip(text: str, aliases: Mapping[str, str], notes: list[str]) -> str:
    """The catalog chip id a row's chip column names: an id, or a chip or system alias ('h100', 'p5.48xlarge',
    'gb200-nvl72'), or a marketing name ('NVIDIA H100 SXM5 80GB', 'Gaudi 3'); unknown text is returned as written
    (lower case)."""
    key = text.strip().lower()
    chip = next((aliases[k] for k in _chip_spellings(key) if k in aliases), key)
    if chip != key:
        notes.append(f"chip '{text.strip()}' read as {chip}")
    return chip


def _parse_inference_row(raw: dict[str, str], known_chips: frozenset[str], aliases: Mapping[str, str]) -> InferenceRow:
    notes: list[str] = []
    name = raw.get("model", "").strip()
    arch_text = raw.get("arch", "")
    total, active = _billions(raw.get("params_total_B", "")), _billions(raw.get("params_active_B", ""))
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
    checkpoint = _precision_tokens(raw.get("model", ""))
    if checkpoint and not _precision_tokens(precision_text):
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
        notes=_notes_text(notes),
        raw=raw,
        num_requests=parse_request_count(
            *(raw.get(f, "") for f in ("batch_or_concurrency", "latency_constraint", "scenario", "notes"))
        ),
        prefill_pool=(prefill.tp, prefill.pp, prefill.ep, prefill.attention_dp, prefill.dp) if prefill else None,
        precision_text=precision_text,
    )


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        return [{str(k): (v or "") for k, v in row.items() if k is not None} for row in rows]


def detect_kind(path: Path) -> Literal["train", "serve"]:
    """'train' or 'serve' from the header columns of a ground-truth CSV."""
    with path.open(newline="", encoding="utf-8") as handle:
        header = set(next(csv.reader(handle), []))
    if header & _TRAIN_MARKERS:
        return "train"
    if header & _SERVE_MARKERS:
        return "serve"
    raise ChipwiseError(
        f"{path}: the header is neither a training nor a serving ground-truth table. "
        "Fix: give a CSV with the columns of ../shared/data/groundtruth_training.csv or groundtruth_inference.csv."
    )


_Row = TypeVar("_Row")


def _parse_all(
    rows: list[dict[str, str]],
    parse: Callable[[dict[str, str]], _Row],
    fallback: Callable[[dict[str, str], str], _Row],
) -> list[_Row]:
    parsed: list[_Row] = []
    for raw in rows:
        try:
            parsed.append(parse(raw))
        except (ValueError, ArithmeticError, KeyError, IndexError, TypeError) as exc:
            parsed.append(fallback(raw, f"unparseable row: {exc}"))
    return parsed


def _unparsed_training(raw: dict[str, str], reason: str) -> TrainingRow:
    dims = ModelDims(raw.get("model", ""), "dense", None, None, None, None, None, None, None, None)
    return TrainingRow(
        raw.get("id", ""), raw.get("source_family", ""), dims, raw.get("chip", ""), None, "bf16",
        None, None, None, {}, False, None, reason, False, reason, raw,
    )  # fmt: skip


def _unparsed_inference(raw: dict[str, str], reason: str) -> InferenceRow:
    return InferenceRow(
        raw.get("id", ""), raw.get("source_family", ""), raw.get("model", ""), "dense", None, None,
        raw.get("chip", ""), None, "bf16", "bf16", "other", 1, 1, 1, 1, False, False, False, "single",
        None, None, None, None, None, None, None, False, [], reason, reason, raw,
    )  # fmt: skip


def read_training(
    path: Path,
    known_chips: frozenset[str] = KNOWN_CHIPS,
    derive_from_tflops: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> list[TrainingRow]:
    """Every row of a training ground-truth CSV as a :class:`TrainingRow`.

    With ``derive_from_tflops`` a row that gives only model TFLOP/s per chip gets tokens/s per chip
    derived from it (6*N + attention FLOPs per token) when attention is a small share of the FLOPs.
    """
    return _parse_all(
        _read_csv(path),
        lambda raw: _parse_training_row(raw, known_chips, derive_from_tflops, aliases or {}),
        _unparsed_training,
    )


def read_inference(
    path: Path, known_chips: frozenset[str] = KNOWN_CHIPS, aliases: Mapping[str, str] | None = None
) -> list[InferenceRow]:
    """Every row of a serving ground-truth CSV as an :class:`InferenceRow` (`aliases`: chip and system names to
    chip ids, Hardware.chip_aliases)."""
    names = aliases or {}
    return _parse_all(_read_csv(path), lambda raw: _parse_inference_row(raw, known_chips, names), _unparsed_inference)
