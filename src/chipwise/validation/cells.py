"""Reading the text of one ground-truth cell: numbers with suffixes and statistics, precisions, architectures,
chip names and how a plan's ranks map onto chips. Shared by the training and the serving row readers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from chipwise.catalog.units import quantity, resolve_unit, to_si
from chipwise.errors import ChipwiseError

# NeuronCores per chip as the parallelism of a row counts them (trn2-class chips: logical cores at LNC=2).
_PHYSICAL_NEURON_CORES: Final[dict[str, int]] = {"trn1": 2, "inf2": 2, "trn2": 8, "trn3": 8, "trn4": 8}
_DEFAULT_LNC: Final[int] = 2

NUM: Final[str] = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?"
# A number that is not glued to a word before it (so 'p99', 'TP8', 'x64' give no number).
_NUMBER_RE: Final[re.Pattern[str]] = re.compile(rf"(?<![A-Za-z0-9_.])({NUM})([kKMBGT](?![A-Za-z]))?")
SUFFIXES: Final[dict[str, float]] = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def _first_figure(text: str | None) -> tuple[float, int] | None:
    """The first number in a cell (with its k/M/B multiplier) and where it ends; ``None`` when there is none."""
    if not text:
        return None
    match = _NUMBER_RE.search(text)
    if match is None:
        return None
    value = float(match.group(1).replace(",", ""))
    if match.group(2):
        value *= SUFFIXES[match.group(2)]
    return (value, match.end()) if math.isfinite(value) else None


def parse_number(text: str | None) -> float | None:
    """First number in a cell: '2787.5 (derived)' -> 2787.5, '~1500 (var 150)' -> 1500, '1.3M' -> 1.3e6.

    A number glued to letters before it ('p99', 'TP8') is not a value; a k/K/M/B/G/T right after the
    digits is a decimal multiplier. Returns ``None`` when the cell has no finite number.
    """
    figure = _first_figure(text)
    return None if figure is None else figure[0]


#: The unit each measured time column is named for: a figure written without a unit is in it
TIME_COLUMNS: Final[dict[str, str]] = {
    "step_time_s": "s", "e2e_latency_s": "s", "ttft_ms": "ms", "tpot_ms": "ms", "time_to_train": "s",
}  # fmt: skip
#: How a cell may spell a time unit beyond the catalog's own names (s, ms, us, ns, min, h, day), to that name
_TIME_SPELLINGS: Final[dict[str, str]] = {
    "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
    "\u00b5s": "us", "\u03bcs": "us", "usec": "us", "usecs": "us", "microsecond": "us", "microseconds": "us",
    "mins": "min", "minute": "min", "minutes": "min",
    "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "days": "day",
}  # fmt: skip
#: The word written right after a figure, its unit ('18410 ms', '2.5s', '50 tok/s'); a '(comment)' or ';' is none
_UNIT_WORD: Final[re.Pattern[str]] = re.compile(r"[ \t]*([A-Za-z\u00b5\u03bc][A-Za-z\u00b5\u03bc/]*)")


def _unit_word(text: str, end: int) -> str:
    """The word right after the figure that ends at ``end`` in ``text``; '' when none is written."""
    match = _UNIT_WORD.match(text, end)
    return match.group(1) if match else ""


def _time_factor(word: str, unit: str) -> float | None:
    """What a figure written in ``word`` is multiplied by to be in ``unit`` (1 for no word: the column's own unit);
    ``None`` where the word names no time (the catalog's unit names, in any case where it is one unit, and the
    spellings above: '11 min', '2.5 hours', '1.2 us')."""
    if not word:
        return 1.0
    try:
        written = resolve_unit(_TIME_SPELLINGS.get(word.lower(), word))
    except ChipwiseError:
        return None
    return to_si(1.0, written) / to_si(1.0, unit) if quantity(written) == "time" else None


def parse_time(text: str | None, column: str) -> float | None:
    """A measured time in its column's unit (TIME_COLUMNS), with the unit the cell writes after the figure honoured:
    step_time_s '18410 ms' -> 18.41, '11 min' -> 660. ``None`` where the cell has no positive figure or writes a
    word that is no time after it (time_unit_problem says so; it had been read in the column's unit)."""
    figure = _first_figure(text)
    if text is None or figure is None or figure[0] <= 0:
        return None
    factor = _time_factor(_unit_word(text, figure[1]), TIME_COLUMNS[column])
    return None if factor is None else figure[0] * factor


def written_time_units(text: str) -> list[str]:
    """The words a time cell writes after its figures, outside parentheses ('p99: 1.2 s; p50: 300 ms' -> s, ms)."""
    bare = strip_parentheses(text)
    words = (_unit_word(bare, m.end()) for m in _NUMBER_RE.finditer(bare))
    return list(dict.fromkeys(w for w in words if w))


def time_unit_problem(text: str, column: str) -> str | None:
    """Why a time cell's figures cannot be read: a word after one that is no unit of time ('18 fortnights', '50
    tok/s'), which had been dropped and the figure read in the column's unit (a 1000x error for 'us' in ms)."""
    unit = TIME_COLUMNS[column]
    for word in written_time_units(text):
        if _time_factor(word, unit) is None:
            return (
                f"{column} '{text}' is written in '{word}', which is no unit of time. Fix: give the figure in {unit}, "
                "or write its unit after it (us, ms, s, min or h)."
            )
    return None


#: What a cell that gives no figure may say; it reads as a blank one (the figure is not stated)
UNSTATED: Final[frozenset[str]] = frozenset({"", "-", "\u2013", "\u2014", "n/a", "na", "none", "not stated", "?"})


def stated_cell(raw: Mapping[str, str], column: str) -> str | None:
    """A cell's text, or None where it states nothing (UNSTATED)."""
    text = raw.get(column, "").strip()
    return None if text.lower() in UNSTATED else text


def parse_int(text: str | None) -> int | None:
    """Integer cell ('512', '1,024', '16 (nodes)'); ``None`` when absent or not a whole number."""
    value = parse_number(text)
    if value is None or abs(value - round(value)) > 1e-9:
        return None
    return round(value)


STAT_ALIASES: Final[dict[str, str]] = {
    "p50": "p50", "median": "p50", "p90": "p90", "p99": "p99",
    "mean": "mean", "avg": "mean", "average": "mean",
}  # fmt: skip
_STAT_VALUE_RE: Final[re.Pattern[str]] = re.compile(
    rf"\b(p50|p90|p99|median|mean|avg|average)\b(?:\s+(?:ttft|tpot|itl|e2el?|latency))?\s*[:=]?\s*~?({NUM})",
    re.IGNORECASE,
)
#: 'value [unit] (stat)': '45.3 (p50)', '120 ms (mean)'
_VALUE_STAT_RE: Final[re.Pattern[str]] = re.compile(
    rf"~?({NUM})(?:\s*([A-Za-z\u00b5\u03bc][A-Za-z\u00b5\u03bc/]*))?\s*\(\s*(p50|p90|p99|median|mean|avg|average)\s*\)",
    re.IGNORECASE,
)


def parse_stat_values(text: str | None, column: str | None = None) -> dict[str, float]:
    """Labelled statistics in a cell: 'p99 461.3; mean 275.9' -> {'p99': 461.3, 'mean': 275.9}.

    A cell with a single unlabelled number gives {'value': x}; an empty cell gives {}. For a time ``column``
    (TIME_COLUMNS) each figure is read in the unit written after it ('p99: 1.2 s; p50: 300 ms' -> 1200, 300 in ms),
    a figure without one in the one unit the cell writes ('p50 1.1 / p99 2.3 s'), else in the column's unit; a
    figure in a word that is no time is left out (time_unit_problem names it).
    """
    if not text:
        return {}
    figures: list[tuple[str, str, str]] = []  # (stat, number, unit word)
    for match in _STAT_VALUE_RE.finditer(text):
        figures.append((STAT_ALIASES[match.group(1).lower()], match.group(2), _unit_word(text, match.end(2))))
    for match in _VALUE_STAT_RE.finditer(text):
        figures.append((STAT_ALIASES[match.group(3).lower()], match.group(1), match.group(2) or ""))
    if not figures and (figure := _first_figure(text)) is not None:
        figures.append(("value", repr(figure[0]), _unit_word(text, figure[1])))
    written = written_time_units(text) if column is not None else []
    found: dict[str, float] = {}
    for stat, number, word in figures:
        value = float(number.replace(",", ""))
        if column is not None:
            factor = _time_factor(word or (written[0] if len(written) == 1 else ""), TIME_COLUMNS[column])
            if factor is None:
                continue
            value *= factor
        found.setdefault(stat, value)
    return found


def parse_range_midpoint(text: str) -> float | None:
    """Midpoint of a range such as '20-22' or '20 to 22'; a single number is returned as is."""
    match = re.search(rf"({NUM})\s*(?:-|–|to)\s*({NUM})", text)
    if match is not None:
        low, high = float(match.group(1)), float(match.group(2))
        if high >= low >= 0:
            return (low + high) / 2
    return parse_number(text)


def parse_positive(text: str | None) -> float | None:
    """A measured figure: the cell's number when it is > 0, else ``None`` (zero means 'not measured')."""
    value = parse_number(text)
    return value if value is not None and value > 0 else None


def lookup(pattern: str, text: str, flags: int = re.IGNORECASE) -> str | None:
    """First capture group of ``pattern`` in ``text``, or ``None``."""
    match = re.search(pattern, text, flags)
    return match.group(1) if match else None


def lookup_int(pattern: str, text: str) -> int | None:
    return parse_int(lookup(pattern, text))


def lookup_float(pattern: str, text: str) -> float | None:
    return parse_number(lookup(pattern, text))


def billions(text: str) -> float | None:
    """A count given in billions, as a count ('6.7' -> 6.7e9, without binary rounding noise)."""
    value = parse_number(text)
    if value is None:
        return None
    text_value = repr(value)
    return value * 1e9 if "e" in text_value else float(f"{text_value}e9")


def strip_parentheses(text: str) -> str:
    """Text with every '( ... )' group removed (nested groups are removed from the inside out)."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\([^()]*\)", " ", text)
    return text


def close_to(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


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
PRECISION_TOKEN: Final[str] = _PRECISION_TOKEN_RE.pattern


def precision_tokens(text: str) -> list[str]:
    """Normalized precisions named in ``text``, in order of appearance. 'W8A8' is int8 unless fp8 is named too
    ('W8A8-FP8'); AWQ and GPTQ checkpoints are 4-bit weights unless 8-bit is named ('GPTQ int8')."""
    found = _PRECISION_TOKEN_RE.findall(text.lower())
    named = {_PRECISION_OF_TOKEN[t] for t in found if t not in ("w8a8", "awq", "gptq")}
    skip = {t for t, other in (("w8a8", "fp8"), ("awq", "int8"), ("gptq", "int8")) if other in named}
    return [_PRECISION_OF_TOKEN[t] for t in found if t not in skip]


def precision_problem(raw: Mapping[str, str]) -> str | None:
    """Why a row's precision cell cannot be read: it states something that names no precision chipwise knows ('FP3').
    Such a row is skipped, not priced as bf16 with a note that the precision was not stated; a blank cell, or one
    that says it is not stated or 'mixed' (training's fp16 reading), is the rows' own assumption to make."""
    text = stated_cell(raw, "precision")
    if text is None or precision_tokens(text) or re.search(r"mixed|not stated", text, re.IGNORECASE):
        return None
    known = ", ".join(dict.fromkeys(_PRECISION_OF_TOKEN.values()))
    return f"precision '{text}' not recognised. Fix: name one of {known} (e.g. 'BF16' or 'FP8 weights')."


def token_after(pattern: str, text: str) -> str | None:
    """Normalized precision captured by ``pattern`` (which must contain one precision-token group)."""
    token = lookup(pattern, text.lower(), 0)
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
    experts = lookup_int(r"(\d+)\s*(?:routed\s*)?experts", arch_text)
    if experts is None:
        experts = lookup_int(r"(\d+)\s*routed", arch_text)
    top_k = lookup_int(r"top-?\s*(\d+)", arch_text)
    return experts, top_k


def parse_params_from_arch(arch_text: str) -> tuple[float | None, float | None]:
    """(total, active) parameters from text such as 'MoE 671B/37B active'."""
    match = re.search(rf"({NUM})\s*B\s*/\s*({NUM})\s*B\s*active", arch_text, re.IGNORECASE)
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
    lnc = lookup_int(r"\bLNC\s*=?\s*(\d)", text) or _DEFAULT_LNC
    return max(physical // lnc, 1)


def notes_text(notes: list[str]) -> str:
    return "; ".join(dict.fromkeys(n for n in notes if n))


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


def canonical_chip(text: str, aliases: Mapping[str, str], notes: list[str]) -> str:
    """The catalog chip id a row's chip column names: an id, or a chip or system alias ('h100', 'p5.48xlarge',
    'gb200-nvl72'), or a marketing name ('NVIDIA H100 SXM5 80GB', 'Gaudi 3'); unknown text is returned as written
    (lower case)."""
    key = text.strip().lower()
    chip = next((aliases[k] for k in _chip_spellings(key) if k in aliases), key)
    if chip != key:
        notes.append(f"chip '{text.strip()}' read as {chip}")
    return chip
