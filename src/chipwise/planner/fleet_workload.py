"""The workload `chipwise plan fleet` serves (step 1 of planner.fleet): buckets of requests, each an input and an
output length at a request rate, read from a YAML mix or split from a trace file, and the chip limits (--limits)
the fleet is bought within."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from chipwise.catalog.strict_yaml import load_yaml
from chipwise.errors import ChipwiseError, user_file
from chipwise.types import Array as FloatArray
from chipwise.workload.bounds import RATE, TOKENS
from chipwise.workload.counts import count_value
from chipwise.workload.lengths import LengthDist, check_context
from chipwise.workload.model import ModelSpec
from chipwise.workload.scenario import unknown_keys_fix
from chipwise.workload.traces import TRACE_SUFFIXES, Trace, read_trace

BUCKET_KEYS = ("name", "input_tokens", "output_tokens", "rate")  # a workload bucket's keys


@dataclass(frozen=True)
class Bucket:
    name: str
    input_tokens: int
    output_tokens: int
    rate: float  # requests/s


#: what each number of a bucket holds, as the one line that refuses a value says to give it
BUCKET_FIXES = {
    "input_tokens": "give the prompt's length in tokens, e.g. 512",
    "output_tokens": "give the answer's length in tokens, e.g. 256",
    "rate": "give the bucket's requests/s as a finite number >= 0, e.g. 8 (0 for a bucket with no load)",
}


def _non_negative(value: Any, key: str, where: str) -> float:
    """A bucket's number (a count such as '2k' read as a scenario reads one), finite and >= 0; else one line naming
    the bucket, the key and the fix (YAML's .nan had reached pydantic's own error, an internal error)."""
    v = count_value(value)
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf:
        shown = f"{value:g}" if isinstance(value, float) else repr(value)
        raise ChipwiseError(f"{where}: {key} {shown} is not a non-negative number. Fix: {BUCKET_FIXES[key]}.")
    return float(v)


def _is_trace(p: Path) -> bool:
    """Whether a workload file is a trace of requests (traces.TRACE_SUFFIXES), not a YAML mix: a .json file that
    holds one object with 'buckets' is a mix written as JSON (a trace's JSON is an array, or an object per line)."""
    if p.suffix.lower() not in TRACE_SUFFIXES:
        return False
    if p.suffix.lower() != ".json":
        return True
    try:
        text = p.read_text(encoding="utf-8-sig")
        data = None if text.lstrip().startswith("[") else json.loads(text)  # an array is a trace's, unparsed here
    except (ValueError, OSError):
        return True  # JSONL in a .json file, or unreadable: read_trace says which in one line
    return not (isinstance(data, dict) and "buckets" in data)


#: what a workload file is expected to be, as the line that refuses one says
WORKLOAD_KINDS = f"a YAML bucket mix (a 'buckets' list) or a trace of requests ({', '.join(TRACE_SUFFIXES)})"


def read_workload(path: str, model: ModelSpec | None = None) -> list[Bucket]:
    """Buckets from a YAML mix (`buckets: [{name, input_tokens, output_tokens, rate}]`) or a CSV/JSONL trace; with
    `model`, each bucket's request (a trace's longest) checked against its context, as predict and plan serve do."""
    p = user_file(path, "workload file", "give a YAML bucket mix or a CSV/JSONL trace (docs/hybrid.md)")
    if _is_trace(p):
        trace = read_trace(path)
        if model is not None:
            check_context(model, LengthDist.fixed(1), LengthDist.fixed(1), trace)
        return buckets_from_trace(trace)
    try:
        data = load_yaml(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ChipwiseError(
            f"workload file '{path}' is not valid YAML: {problem}; a workload is {WORKLOAD_KINDS}. Fix: correct "
            "the YAML, or name a trace by its suffix."
        ) from None
    if isinstance(data, dict) and (unknown := [str(k) for k in data if k != "buckets"]):
        # a key beside the buckets (an 'slo:' meant for --slo) had been dropped without a word
        fix = unknown_keys_fix(unknown, ["buckets"], "a workload file's keys")
        raise ChipwiseError(f"{path}: {', '.join(unknown)}: unknown key{'s' * (len(unknown) > 1)}. Fix: {fix}.")
    items = data.get("buckets") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise ChipwiseError(
            f"workload file '{path}' needs a non-empty 'buckets' list: a workload is {WORKLOAD_KINDS}. Fix: give "
            "the buckets (docs/hybrid.md), or name a trace by its suffix."
        )
    buckets: list[Bucket] = []
    for i, b in enumerate(items):
        where = f"{path}: bucket {i + 1}"
        if not isinstance(b, dict):
            raise ChipwiseError(f"{where}: is not a mapping. Fix: give it the keys {', '.join(BUCKET_KEYS)}.")
        if unknown := [str(k) for k in b if k not in BUCKET_KEYS]:
            fix = unknown_keys_fix(unknown, list(BUCKET_KEYS), "a bucket's keys")
            raise ChipwiseError(f"{where}: {', '.join(unknown)}: unknown key{'s' * (len(unknown) > 1)}. Fix: {fix}.")
        for key in ("input_tokens", "output_tokens", "rate"):
            if key not in b:
                raise ChipwiseError(f"{where}: '{key}' is missing. Fix: add it.")
        inp, out, rate = (_non_negative(b[key], key, where) for key in ("input_tokens", "output_tokens", "rate"))
        if inp < 1 or out < 1:
            raise ChipwiseError(f"{where}: lengths must be at least one token. Fix: correct them.")
        for key, value in (("input_tokens", inp), ("output_tokens", out)):
            if value != round(value):  # 512.5 had been rounded in silence, where a trace's row is refused
                raise ChipwiseError(
                    f"{where}: {key} {value:g} is not a whole number of tokens. Fix: give a whole number."
                )
        # the bounds every serving command holds (a rate of 1e12 had answered 40 billion MI300X)
        for bound, key, value in ((TOKENS, "input_tokens", inp), (TOKENS, "output_tokens", out), (RATE, "rate", rate)):
            bound.require(value, f"{where}: {key}")
        if model is not None:
            try:
                check_context(model, LengthDist.fixed(round(inp)), LengthDist.fixed(round(out)))
            except ChipwiseError as exc:
                raise ChipwiseError(f"{where}: {exc}") from None
        name = b.get("name", f"bucket{i + 1}")
        if not isinstance(name, (str, int)) or isinstance(name, bool):  # a list had been printed as "['x']"
            raise ChipwiseError(f"{where}: name {name!r} is not a name. Fix: give the bucket a short text name.")
        name = str(name)
        if name in {x.name for x in buckets}:  # the report keys its routing and replay by name
            raise ChipwiseError(f"{where}: the name '{name}' is another bucket's. Fix: give each bucket its own name.")
        buckets.append(Bucket(name, round(inp), round(out), rate))
    if not any(b.rate > 0 for b in buckets):
        raise ChipwiseError(f"workload file '{path}': every bucket's rate is 0, nothing to serve. Fix: give a rate.")
    return buckets


def buckets_from_trace(trace: Trace) -> list[Bucket]:
    """Split a trace into up to 3 x 3 buckets by input and output length terciles, each at its share of the trace's
    rate: N arrivals over a span S are N - 1 gaps, (N - 1) / S in all (count / S had read four arrivals a second
    apart as 1.33 req/s)."""
    n = trace.arrival.size
    span = float(trace.arrival.max() - trace.arrival.min()) if n > 1 else 0.0
    if span <= 0:
        raise ChipwiseError(f"trace '{trace.path}' spans no time, so it gives no rates. Fix: give arrival times.")
    in_edges = np.unique(np.quantile(trace.input, [1 / 3, 2 / 3]))
    out_edges = np.unique(np.quantile(trace.output, [1 / 3, 2 / 3]))
    in_bin, out_bin = np.searchsorted(in_edges, trace.input), np.searchsorted(out_edges, trace.output)
    buckets = []
    for a in range(in_edges.size + 1):
        for b in range(out_edges.size + 1):
            sel = (in_bin == a) & (out_bin == b)
            if sel.any():
                buckets.append(
                    Bucket(
                        f"in{a + 1}-out{b + 1}",
                        round(float(trace.input[sel].mean())),
                        round(float(trace.output[sel].mean())),
                        float(sel.sum()) / n * (n - 1) / span,
                    )
                )
    return buckets


#: a trace whose busiest window offers more than this many times its mean rate is told its fleet is sized for the
#: mean: past Poisson noise (a minute of 10 req/s varies by about 4%, its busiest of ten by some 10%)
BURST_RATIO = 1.3
#: the window a trace's busiest rate is read over (a quarter of the trace where it is shorter than four)
BURST_WINDOW_S = 60.0
#: standard deviations past its mean count a window's arrivals must reach to be a burst as well: the replay offers
#: Poisson arrivals at the mean, whose own busiest window it already simulates. A sliding window finds the noisiest
#: minute, and a Poisson trace of 1 req/s over 600 s had been told of a burst 43% of the time (60 arrivals a minute
#: vary by some 8, the busiest of 600 start times by 30%+); past 4 deviations a minute of Poisson arrivals at the
#: mean reaches with odds of about 3e-5
BURST_DEVIATIONS = 4.0


def busiest(arrival: FloatArray, window: float) -> float:
    """The most arrivals (sorted times, s) in any `window` seconds: in [t, t + window) from each arrival, the
    window that holds the most starting at one of them. Fixed windows from 0 (until 2026-12) split a busy minute
    that straddled their edge: 14 req/s over 600 s with 9.8 req/s more over 330-390 s read 18.9 req/s at most,
    1.26x the mean of 15.0 and no note, where the minute from 330 s offers 23.8, 1.59x."""
    return float((np.searchsorted(arrival, arrival + window, side="left") - np.arange(arrival.size)).max())


def busiest_window(arrival: FloatArray) -> str | None:
    """Where a trace's arrivals (sorted, from its first) offer well above their mean rate in their busiest window
    (BURST_RATIO, past Poisson noise: BURST_DEVIATIONS), that window and rate: 'the trace's busiest 49.5 s offers
    40.4 req/s, 4.0x its mean 10.1'; else None. plan fleet's note and predict's read it alike."""
    span = float(arrival[-1]) if arrival.size else 0.0
    if span <= 0:
        return None
    window = min(BURST_WINDOW_S, span / 4.0)
    mean, peak = (arrival.size - 1) / span, busiest(arrival, window) / window
    expected = mean * window  # arrivals a window holds at the mean rate
    if peak * window <= max(BURST_RATIO * expected, expected + BURST_DEVIATIONS * expected**0.5):
        return None
    return f"the trace's busiest {window:,.3g} s offers {peak:,.3g} req/s, {peak / mean:.1f}x its mean {mean:,.3g}"


def burst_note(path: str) -> str | None:
    """For a trace workload whose busiest window offers well above its mean rate (busiest_window), one line saying
    the fleet is sized and replayed at its buckets' mean rates as Poisson arrivals: an on-off trace (40 req/s for a
    minute, 5 the next) had been sized for its mean 22.5 and said to meet a 2 s TTFT p99 it missed by 4x on its own
    times."""
    if not _is_trace(Path(path)) or (measured := busiest_window(read_trace(path).arrival)) is None:
        return None
    return (
        f"{measured}: the fleet is sized for the mean, and its replay offers each bucket's mean rate as Poisson "
        f"arrivals, not the trace's times. Check it on the trace (chipwise predict with trace: {path}), or give a "
        "mix at the peak rates."
    )


def parse_limits(spec: str | None) -> dict[str, int]:
    if not spec:
        return {}
    out: dict[str, int] = {}
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        name, _, count = item.partition("=")
        if not name.strip():  # '=3' had been refused as naming '', not among the hardware
            raise ChipwiseError(f"limit '{item}' names no chip or system. Fix: write e.g. --limits h100-sxm=64.")
        if name.strip() in out:
            raise ChipwiseError(f"limit for '{name.strip()}' is given twice. Fix: give each type one limit.")
        try:
            out[name.strip()] = int(count)
        except ValueError:
            raise ChipwiseError(
                f"limit '{item}' is not TYPE=CHIPS. Fix: write e.g. --limits h100-sxm=64,trn2=128."
            ) from None
        if out[name.strip()] < 0:
            raise ChipwiseError(f"limit '{item}' is negative. Fix: give a chip count >= 0.")
    return out
