"""A serving row's measurements, read from its cells: the mean lengths, the output tokens/s per chip and the TTFT and
TPOT statistics (in SI units), the latency limits it ran under, and what is wrong with a measurement cell."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from typing import Final

from chipwise.validation.cells import (
    NUM,
    TIME_COLUMNS,
    close_to,
    lookup_float,
    parse_number,
    parse_positive,
    parse_range_midpoint,
    parse_stat_values,
    stated_cell,
    strip_parentheses,
    time_unit_problem,
    written_time_units,
)
from chipwise.validation.rows import InferenceRow, Measured

_STAT_PREFERENCE: Final[tuple[str, ...]] = ("p50", "mean", "value", "p90", "p99")


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


def measurement_cell_problem(raw: Mapping[str, str]) -> str | None:
    """Why a row's stated measurement cells cannot be used: a time in a unit that is no time (its e2e latency too),
    a measurement that is not a positive number, or a latency cell that parse_latency_ms would read only in part."""
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
    return None
