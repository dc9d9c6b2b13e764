"""Training rows of a ground-truth table: model dimensions, the parallel plan and its sharding, the batch, and
the measured throughput or step time (derived from model TFLOP/s where that is all a row gives)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from chipwise.validation.cells import (
    NUM,
    PRECISION_TOKEN,
    SUFFIXES,
    TIME_COLUMNS,
    billions,
    canonical_chip,
    lookup,
    lookup_float,
    lookup_int,
    normalize_arch,
    notes_text,
    parse_int,
    parse_moe_shape,
    parse_number,
    parse_positive,
    parse_time,
    precision_problem,
    precision_tokens,
    reconcile_plan_with_chips,
    stated_cell,
    time_unit_problem,
    written_time_units,
)
from chipwise.validation.rows import (
    SKIP_MFU_ONLY,
    SKIP_NO_CHIPS,
    SKIP_NO_THROUGHPUT,
    SKIP_UNIT_AMBIGUOUS,
    Measured,
    ModelDims,
    TrainingRow,
    unknown_chip,
)
from chipwise.workload.bounds import CHIPS

# A model TFLOP/s figure is turned into tokens/s only while attention is a small part of FLOPs/token,
# because sources count attention FLOPs differently (causal or not).
_MAX_ATTENTION_SHARE_FOR_TFLOPS: Final[float] = 0.10


def normalize_training_precision(text: str, notes: list[str]) -> str:
    """One of fp32/bf16/fp16/fp8/fp4/int8 from the training precision text."""
    tokens = precision_tokens(text)
    lowered = text.lower()
    if not tokens:
        if "mixed" in lowered:
            notes.append(f"precision '{text}' names no dtype; assumed fp16")
            return "fp16"
        notes.append("precision not stated; assumed bf16")
        return "bf16"
    first = tokens[0]
    if re.search(rf"{PRECISION_TOKEN}\s*(?:or|/)\s*{PRECISION_TOKEN}", lowered) and len(set(tokens)) > 1:
        notes.append(f"precision '{text}' is ambiguous; took {first}")
    elif "not resolved" in lowered or "not verified" in lowered:
        notes.append(f"precision '{text}' not confirmed by source")
    if first == "fp32" and "autocast" in lowered:
        notes.append("fp32 with compiler matmul autocast")
    return first


def _parse_training_dims(raw: Mapping[str, str], notes: list[str]) -> ModelDims:
    name = raw.get("model", "").strip()
    total = billions(raw.get("params_total_B", ""))
    active = billions(raw.get("params_active_B", ""))
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
    expert = lookup_int(r"expert\s*[:=]?\s*(\d+)", text)
    if expert is None:
        return parse_int(text)
    dense = lookup_int(r"dense\s*[:=]?\s*(\d+)", text)
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
    suffix = lookup(rf"(?<![A-Za-z0-9_.])(?:{NUM})([kKM])(?![A-Za-z])", text, 0)
    if value is None or suffix is None:
        return value
    binary = value / SUFFIXES[suffix] * (1024.0 if suffix in "kK" else 1024.0**2)
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
    stage = lookup_int(r"zero[-_ ]?(\d)", lowered)
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


#: Model chunks a rank holds under torchtitan's looped (interleaved) schedules when no split is given: 2
#: (torchtitan's `generate_split_points`: "num_stages_per_rank = 2 ... the default if no pipeline split is specified")
TORCHTITAN_STAGES_PER_RANK: Final = 2


def torchtitan_run(raw: Mapping[str, str]) -> bool:
    """Whether a row reports a torchtitan run, whose batch and schedule read as torchtitan's settings."""
    return "torchtitan" in raw.get("source_family", "").lower()


#: MaxText's head width, which `global_parameter_scale` leaves alone: MaxText/configs/base.yml sets `head_dim: 128`
#: beside base_emb_dim 2048 and 16 query heads, and get_individual_scales() scales the embedding, heads, MLP and
#: layers only. Its synthetic 16B, 128B and 1024B models (hidden/heads 64) so have a query width of twice their hidden
#: size; built with hidden/heads they came out 14-16% short of the 16/128/1024B the rows state.
MAXTEXT_HEAD_DIM: Final = 128


def source_head_dim(raw: Mapping[str, str]) -> int | None:
    """The head width a row's source sets apart from hidden/heads (MaxText's synthetic models); None for the rest."""
    maxtext = "maxtext" in raw.get("source_family", "").lower()
    return MAXTEXT_HEAD_DIM if maxtext and "global_parameter_scale" in raw.get("model", "") else None


@dataclass(frozen=True)
class SourceRule:
    """What a cited source says of its rows that their cells do not: settings a row leaves blank (a cell the row
    states wins) and a caveat on the measurement, read where the row's source cell (and, for `when`, its precision
    cell) matches."""

    source: str  # a regular expression searched in the row's source cell
    why: str  # the source's words, for the row's notes
    when: str = ""  # a regular expression the precision cell must match too ('' for every row of the source)
    micro_batch: int | None = None
    plan: tuple[tuple[str, int | str | bool], ...] = ()


SOURCE_RULES: Final[tuple[SourceRule, ...]] = (
    SourceRule(
        r"NVIDIA/Megatron-LM README\.md @50a4b5fa\b.*GPT-3 Example",
        "micro-batch 1, full recompute, no interleaving or sequence parallelism from the script the README's GPT-3 "
        "example runs (Megatron-LM examples/pretrain_gpt3_175B.sh, 2021: --micro-batch-size 1 "
        "--checkpoint-activations, no --num-layers-per-virtual-pipeline-stage; sequence parallelism came in 2022)",
        micro_batch=1,
        plan=(("recompute", "full"), ("vpp", 1), ("sp", False)),
    ),
    SourceRule(
        r"arXiv 2201\.11990\b",
        "micro-batch 1, full recompute, a plain 1F1B pipeline and no sequence parallelism as MT-NLG ran (arXiv "
        "2201.11990: its 126 TFLOP/s x 2,240 GPUs x 60.1 s is 96 B s l h^2 (1 + s/6h + V/16lh), the count with a "
        "recomputed forward pass, and the cited llm-analysis run_train.sh passes --activation_recomputation 2; "
        "sequence parallelism came later, arXiv 2205.05198)",
        micro_batch=1,
        plan=(("recompute", "full"), ("vpp", 1), ("sp", False)),
    ),
    SourceRule(
        r"pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan\.md",
        "source caveat: the benchmark notes its float8 rowwise baseline is low (pytorch/torchtitan issue #1207: the "
        "default filter_fqns converted the small wk/wv linears, which ran slower in float8 and left rowwise flat "
        "against bf16; fixed by PR #1319), so this figure is below what float8 rowwise reaches",
        when=r"\browwise\b",
    ),
)


def source_rules(raw: Mapping[str, str]) -> tuple[SourceRule, ...]:
    """The SOURCE_RULES a row's source (and precision) cells match."""
    source, precision = raw.get("source", ""), raw.get("precision", "")
    return tuple(
        rule
        for rule in SOURCE_RULES
        if re.search(rule.source, source) and (not rule.when or re.search(rule.when, precision, re.IGNORECASE))
    )


def _apply_source_rules(
    raw: Mapping[str, str], plan: dict[str, int | str | bool], micro_batch: int | None, notes: list[str]
) -> int | None:
    """Fill the plan keys and micro-batch the row leaves blank from its source's rules, noting each rule; returns
    the micro-batch."""
    for rule in source_rules(raw):
        for key, value in rule.plan:
            if key not in plan:
                plan[key] = value
        if micro_batch is None and rule.micro_batch is not None:
            micro_batch = rule.micro_batch
        notes.append(rule.why)
    return micro_batch


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
    tp = lookup_int(r"ici_(?:tp|tensor_parallelism)\s*=\s*(\d+)", text)
    if "tp" not in plan and tp is not None:
        plan["tp"] = tp
        notes.append(f"tp={tp} from ici_tp setting")
    if "pp" not in plan and re.search(r"\bno PP\b", sharding, re.IGNORECASE):
        plan["pp"] = 1
    if "vpp" not in plan and re.search(r"(?<!interleaved )\b1F1B\b", text, re.IGNORECASE):
        plan["vpp"] = 1  # a plain one-forward-one-backward schedule: one model chunk a stage
        notes.append("schedule 1F1B: vpp=1")
    elif "vpp" not in plan and torchtitan_run(raw) and re.search(r"\binterleaved 1F1B\b", text, re.IGNORECASE):
        plan["vpp"] = TORCHTITAN_STAGES_PER_RANK
        notes.append(f"torchtitan's interleaved 1F1B: {TORCHTITAN_STAGES_PER_RANK} stages a rank")
    zero = parse_zero_stage(sharding)
    if zero is not None:
        plan["zero"] = zero
    remat_text = recompute_text or lookup(r"remat(?:_policy)?\s*=\s*([\w]+)", raw.get("notes", "")) or ""
    recompute = normalize_recompute(remat_text)
    if recompute is not None:
        plan["recompute"] = recompute
    elif remat_text.strip():
        notes.append(f"recompute '{remat_text}' not understood")
    if re.search(r"(?<!no )sequence[- ]parallel", text, re.IGNORECASE):
        plan["sp"] = True  # the search's knob (PLAN_KNOBS): "sequence_parallel" had been dropped and sp searched
    return plan


def training_flops_per_token(dims: ModelDims, seq_len: int, head_dim: int | None = None) -> tuple[float, float] | None:
    """(training FLOPs per token, attention share) as 6*N_active + 12*layers*width*seq_len, the width the query's,
    heads*head_dim where the source sets a head_dim (MaxText's FLOP count, which multiplies its query heads by its
    head_dim), else hidden.

    ``None`` when the parameter count or the layer/hidden sizes are missing.
    """
    params = dims.params_active if dims.params_active is not None else dims.params_total
    if params is None or dims.layers is None or dims.hidden is None:
        return None
    width = dims.heads * head_dim if head_dim and dims.heads else dims.hidden
    attention = 12.0 * dims.layers * width * seq_len
    total = 6.0 * params + attention
    return total, attention / total


def _throughput_stat(raw: Mapping[str, str]) -> str:
    return "p50" if "median" in raw.get("derived_fields", "").lower() else "value"


def _seq_per_s_from_notes(notes_text: str) -> float | None:
    return lookup_float(rf"performance\s*=\s*({NUM})\s*seq(?:uences)?\s*/\s*s", notes_text)


def _tflops_conversion(raw: Mapping[str, str], dims: ModelDims, seq_len: int | None) -> float | str:
    """The FLOPs per token that turn a row's model TFLOP/s per chip into tokens/s per chip, or why they cannot."""
    if re.search(r"\bup to\b", raw.get("notes", ""), re.IGNORECASE):
        return "only an 'up to' (peak, not sustained) figure"
    if seq_len is None:
        return "seq_len unknown"
    flops = training_flops_per_token(dims, seq_len, source_head_dim(raw))
    if flops is None:
        return "model dims incomplete"
    per_token, attention_share = flops
    if attention_share > _MAX_ATTENTION_SHARE_FOR_TFLOPS:
        return f"attention is {attention_share:.0%} of FLOPs/token, so the FLOP convention matters too much to convert"
    return per_token


def _measured_from_tflops(
    raw: Mapping[str, str], dims: ModelDims, seq_len: int | None, notes: list[str]
) -> Measured | None:
    tflops = parse_positive(raw.get("tflops_per_chip"))
    if tflops is None:
        return None
    per_token = _tflops_conversion(raw, dims, seq_len)
    if isinstance(per_token, str):
        notes.append(f"only model TFLOP/s per chip given, not converted: {per_token}")
        return None
    width = f"heads*{head_dim}" if (head_dim := source_head_dim(raw)) else "hidden"
    notes.append(
        f"tokens/s per chip derived from {tflops:g} model TFLOP/s per chip with "
        f"FLOPs/token = 6*N_active + 12*layers*{width}*seq_len"
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
    step = parse_time(raw.get("step_time_s"), "step_time_s")  # '18410 ms' is 18.41 s
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


#: The measurement cells of a training row: each, where stated, must be a positive figure
_MEASURED_CELLS: Final[tuple[str, ...]] = (
    "tokens_per_s_per_chip",
    "tokens_per_s_total",
    "step_time_s",
    "tflops_per_chip",
)
#: The largest measurement a row may state (SI), far past any published one: ten million tokens/s per chip (the
#: table's most is 70,315) and a day a step (its longest: 145 s)
MAX_TRAINING_MEASURED: Final[dict[str, float]] = {"tokens_per_s_per_chip": 1e7, "step_time_s": 86_400.0}
#: The cells that, where stated, must be a whole number from 1: a '0' or 'abc' had been read as blank and the row
#: priced at an assumed sequence length or a searched micro-batch or degree, without a word
_WHOLE_CELLS: Final[tuple[str, ...]] = ("seq_len", "micro_batch", *(column for column, _ in _PLAN_COLUMNS))


def _batch_cell_problem(raw: Mapping[str, str]) -> str | None:
    """Why a stated global batch cell is no batch: a sequence count (a ramp's final one) that is no whole number from
    1, or a token count that is not positive ('-5' tokens had become one sequence, and the error blamed the plan)."""
    seqs = stated_cell(raw, "global_batch_seqs")
    if seqs is not None and ((n := parse_global_batch_seqs(seqs, [])) is None or n < 1):
        return f"global_batch_seqs '{seqs}' is not a positive whole number of sequences"
    tokens = stated_cell(raw, "global_batch_tokens")
    if tokens is not None and parse_positive(tokens) is None:
        return f"global_batch_tokens '{tokens}' is not a positive number of tokens"
    return None


def training_cell_problem(raw: Mapping[str, str], num_chips: int | None, measured: Measured | None) -> str | None:
    """Why a training row's stated cells cannot be used, as serving's cell_problem says it: a chip count that is no
    whole number from one to the largest fleet planned, a sequence length, micro-batch, parallel degree or global
    batch that is no positive count, a measurement that is not a positive number (it had been
    read as blank: skipped as 'MFU only', or replaced by tokens_per_s_total / num_chips without a word), a precision
    not recognised, or a measurement past any plausible figure."""
    chips_text = stated_cell(raw, "num_chips")
    if chips_text is not None and num_chips is None:
        return f"num_chips '{chips_text}' is not a whole number of chips"
    if num_chips is not None and num_chips < 1:
        return f"num_chips {num_chips} is not a chip count"
    if num_chips is not None and (problem := CHIPS.problem(num_chips)) is not None:
        return f"num_chips: {problem}"
    for column in _WHOLE_CELLS:
        text = stated_cell(raw, column)
        if text is not None and ((n := parse_int(text)) is None or n < 1):
            return f"{column} '{text}' is not a positive whole number"
    if (problem := _batch_cell_problem(raw)) is not None:
        return problem
    for column in _MEASURED_CELLS:
        text = stated_cell(raw, column)
        if text is not None and column in TIME_COLUMNS and (problem := time_unit_problem(text, column)) is not None:
            return problem  # '18 fortnights' had been read as 18 s
        if text is not None and parse_positive(text) is None:
            return f"{column} '{text}' is not a positive measurement"
    if (problem := precision_problem(raw)) is not None:
        return problem  # 'FP3' had been noted 'not stated' and priced as bf16
    if measured is not None and measured.value > MAX_TRAINING_MEASURED[measured.metric]:
        most = MAX_TRAINING_MEASURED[measured.metric]
        return f"{measured.metric} {measured.value:g} is past any plausible measurement (at most {most:g})"
    return None


#: A FLOP rate written in a row's notes ('502 petaFLOP/s aggregate'): a skipped MFU-only row that has one says so
_FLOP_RATE_IN_NOTES: Final[re.Pattern[str]] = re.compile(
    rf"(?:{NUM})\s*(?:peta|tera|exa|[PTE])FLOP/?s\b(?:\s+aggregate)?", re.IGNORECASE
)


def _training_skip_reason(
    raw: Mapping[str, str],
    chip: str,
    num_chips: int | None,
    measured: Measured | None,
    known: frozenset[str],
    tflops_conversion: float | str,  # _tflops_conversion: FLOPs per token, or why a TFLOP/s figure has none
) -> str | None:
    if measured is None and parse_number(raw.get("gpu_hours")) is not None:
        family = "model card" if "model card" in raw.get("source_family", "").lower() else "paper"
        return f"aggregate GPU-hours figure ({family})"
    if chip not in known:
        return unknown_chip(chip, known)
    if (problem := training_cell_problem(raw, num_chips, measured)) is not None:
        return problem
    if num_chips is None:
        return SKIP_NO_CHIPS
    if measured is not None:
        return None
    notes_text = raw.get("notes", "").lower()
    if re.search(r"tokens/s\s*=\s*[\d.]", notes_text) and re.search(r"per-gpu|total|unit", notes_text):
        return SKIP_UNIT_AMBIGUOUS
    if parse_number(raw.get("tflops_per_chip")) is not None:
        return f"{SKIP_NO_THROUGHPUT} (model TFLOP/s only" + (
            f": {tflops_conversion})" if isinstance(tflops_conversion, str) else ")"
        )
    if parse_number(raw.get("mfu_pct")) is not None or parse_number(raw.get("hfu_pct")) is not None:
        if (rate := _FLOP_RATE_IN_NOTES.search(raw.get("notes", ""))) is not None:
            return f"MFU only (a FLOP rate, '{rate[0]}', is stated in the notes only, not as tflops_per_chip)"
        return SKIP_MFU_ONLY
    return f"{SKIP_NO_THROUGHPUT} ({only})" if (only := _time_to_train_only(raw, num_chips)) else SKIP_NO_THROUGHPUT


def _time_to_train_only(raw: Mapping[str, str], num_chips: int) -> str | None:
    """What a row that gives only a time to train and its tokens says, and why it is not read as a throughput: the
    MLPerf rows that give both take theirs from the log's training blocks (a median of block tokens over block time),
    0.5-11% above their tokens over their time to train, which counts the evaluations between the blocks too."""
    text = stated_cell(raw, "time_to_train")
    seconds = parse_time(text, "time_to_train") if text is not None and written_time_units(text) else None
    tokens = parse_positive(raw.get("total_tokens"))
    if seconds is None or tokens is None:
        return None
    return (
        f"time-to-train only: {text} for {tokens:,.0f} tokens is {tokens / seconds / num_chips:,.0f} tokens/s per "
        "chip over the whole timed run, evaluations included; not converted, as the table's throughputs are the "
        "training steps' own rate"
    )


def parse_training_row(
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
    micro_batch = _apply_source_rules(raw, plan, parse_int(raw.get("micro_batch")), notes)
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
        micro_batch=micro_batch,
        plan=plan,
        plan_counts_cores=counts_cores,
        measured=measured,
        skip_reason=_training_skip_reason(
            raw, chip, num_chips, measured, known_chips, _tflops_conversion(raw, dims, seq_len)
        ),
        lora=bool(re.search(r"\blora\b", lora_text, re.IGNORECASE)),
        notes=notes_text(notes),
        raw=raw,
    )
