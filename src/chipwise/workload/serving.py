"""Serving workloads: the `kind: serve` scenario of DESIGN.md, request-length distributions, request traces and
the ServingJob the serving model and simulator consume.

Lengths are a fixed number, a distribution mapping ({dist: lognormal, mean: 512, std: 256, min: 1, max: 4096};
dist is fixed, uniform, normal, lognormal or exponential), or a trace file (CSV, JSONL or a JSON array with an
arrival time, input tokens and output tokens per request). The load is an open-loop arrival rate (Poisson, or
bursty gamma arrivals with `burstiness` = coefficient of variation of the gaps), a closed loop of `concurrency`
users, all requests at once (`offline: true`), or the trace's own arrival times. A trace given with an arrival_rate,
concurrency or offline: true replays its requests' lengths under that load instead of at its own times.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from chipwise.errors import ChipwiseError, user_file
from chipwise.types import Array as FloatArray
from chipwise.types import IntArray
from chipwise.workload.model import ModelSpec
from chipwise.workload.scenario import Count, IntCount, StrictModel, count_value, parse_count

TRACE_COLUMNS: dict[str, tuple[str, ...]] = {
    # a name ending in _ms holds milliseconds
    "arrival": ("arrival_s", "arrival_time", "arrival", "timestamp", "time_s", "arrival_ms", "timestamp_ms", "time_ms"),
    "input": ("input_tokens", "input_len", "prompt_tokens", "input_length"),
    "output": ("output_tokens", "output_len", "completion_tokens", "output_length"),
}


def _share(value: float) -> float:
    """A share from 0 up to (not including) 1; NaN, an infinity or a value outside it says so (NaN read 'Input should
    be less than 1')."""
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise ValueError(f"must be a finite number in [0, 1), not {value:g} (a share, such as 0.5)")
    return value


Fraction = Annotated[float, AfterValidator(_share)]
PositiveFloat = Annotated[float, BeforeValidator(parse_count), Field(gt=0, allow_inf_nan=False)]

#: The most requests a scenario simulates (as `plan serve --requests`): a million take about a minute.
MAX_SIMULATED = 1_000_000
#: The most requests/s (or concurrent users) a load may name: a million chips at a thousand each, far past any
#: fleet; 1e308 req/s overflowed the chip count into an internal error.
MAX_LOAD = 1e9
#: The most chips a serving deployment may have: the million-chip fleet MAX_LOAD is sized by, the largest DESIGN.md
#: plans for ("from one chip to a million"); a billion ran the simulator for minutes and took gigabytes.
MAX_CHIPS = 1_000_000
#: The longest request length (tokens) read from a scenario or a trace: a billion, a hundred times the longest
#: context any model states (10M); past it lengths would overflow the simulator's integers.
MAX_TOKENS = 1_000_000_000
#: The largest coefficient of variation of the gaps between arrivals (gamma shape 1/cv^2). At 100 the gaps already
#: underflow: 93% of 2,000 are exactly 0 and one holds 99.8% of the span (an offline batch in a burst or two); at
#: 1,000 every gap is 0 and the times were NaN, and 1e308 overflowed cv^2.
MAX_BURSTINESS = 100.0


def shown(value: float) -> str:
    """A number as an error message shows it: 1,024, 1e+12, or 'a 401-digit number' (past a float's range)."""
    if isinstance(value, int) and abs(value) < 10**15:
        return f"{value:,}"
    try:
        return f"{float(value):g}"
    except OverflowError:
        return f"a {len(str(abs(int(value))))}-digit number"


@dataclass(frozen=True)
class Bound:
    """The largest count of one kind (chips, tokens, requests/s, users) a user may give, and why."""

    limit: float
    unit: str
    beyond: str  # what a larger count would be
    fix: str

    def problem(self, value: float) -> str | None:
        """What is wrong with `value` ('1e+12 requests/s is more than ...'), or None when it is within the bound."""
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value:g} {self.unit} is not a finite number"
        if value <= self.limit:
            return None
        return f"{shown(value)} {self.unit} is {self.beyond} (at most {self.limit:,.0f})"

    def require(self, value: float, name: str) -> None:
        """One line when `name`'s count (an option, a bucket's key) is past the bound."""
        problem = self.problem(value)
        if problem is not None:
            raise ChipwiseError(f"{name} {problem}. Fix: {self.fix}.")

    def check(self, value: Any) -> Any:
        """A pydantic after-validator: the value within the bound, or ValueError saying why and what to give."""
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(f"{problem}: {self.fix}")
        return value


BURSTINESS = Bound(
    MAX_BURSTINESS,
    "(the gaps' coefficient of variation)",
    "past where the gamma gaps between arrivals underflow to 0, all requests in a burst or two",
    f"give at most {MAX_BURSTINESS:g} (1 is Poisson; offline: true sends every request at once)",
)

#: the words that ask for no speculative decoding, in a scenario and in `plan serve --speculative none,mtp:3`
NO_SPECULATION = ("none", "off")


def speculation_asked(value: Any) -> Any:
    """A speculative-decoding setting as given, or None where it asks for none ('none', 'off' or nothing)."""
    if isinstance(value, str) and value.strip().lower() in ("", *NO_SPECULATION):
        return None
    return value


FLEET_LOAD = "more than a fleet of a million chips serves"
CHIPS = Bound(MAX_CHIPS, "chips", "past the largest fleet planned", "give the chips of one deployment")
TOKENS = Bound(MAX_TOKENS, "tokens", "past any model's context", "give a realistic length")
RATE = Bound(MAX_LOAD, "requests/s", FLEET_LOAD, "give the load of one deployment")
USERS = Bound(MAX_LOAD, "users", FLEET_LOAD, "give the users of one deployment")
BATCH = Bound(MAX_LOAD, "requests", FLEET_LOAD, "give the batch of one replica")
#: counts a scenario gives, within their bounds
ChipCount = Annotated[IntCount, AfterValidator(CHIPS.check)]
TokenCount = Annotated[IntCount, AfterValidator(TOKENS.check)]
TokenFloat = Annotated[PositiveFloat, AfterValidator(TOKENS.check)]
Rate = Annotated[PositiveFloat, AfterValidator(RATE.check)]
UserCount = Annotated[IntCount, AfterValidator(USERS.check)]
BatchCount = Annotated[IntCount, AfterValidator(BATCH.check)]

#: Units a latency target may carry (any case: 2S and 50MS read as 2s and 50ms)
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_TIME = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*$")


def slo_seconds(value: Any) -> float:
    """A latency target in seconds: a number (seconds), or text with a unit, '2s', '50ms', '2S', '800us' (text
    without one, which slo_target refuses first, reads as seconds). ValueError names what is wrong."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        number, unit, text = float(value), "s", f"{value:g}"
    else:
        # true and null as a YAML or JSON scenario writes them, not Python's True and None
        text = json.dumps(value) if isinstance(value, bool) or value is None else str(value).strip()
        m = _TIME.match(text)
        if m is None:
            raise ValueError(f"{text}: not a time such as 2s or 50ms")
        number, unit = float(m.group(1)), m.group(2) or "s"
    scale = TIME_UNITS.get(unit.lower())
    if scale is None:
        raise ValueError(f"{text}: unit '{unit}' unknown; use s, ms or us")
    if not math.isfinite(number):  # 1e400 reads as infinity: it had been told to be positive
        raise ValueError(f"{text}: not a finite time")
    if not number > 0:
        raise ValueError(f"{text}: an SLO must be positive")
    return number * scale


def bare_seconds(value: Any) -> float | None:
    """A target given without a unit, as a number or as text ('50'); None otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    m = _TIME.match(str(value).strip()) if isinstance(value, str) else None
    return float(m.group(1)) if m is not None and not m.group(2) else None


#: The latency targets a serving SLO may set: TTFT, TPOT and end-to-end latency at p50, p90 or p99 (seconds).
SLO_KEYS = tuple(f"{m}_{s}" for m in ("ttft", "tpot", "e2e") for s in ("p50", "p90", "p99"))
#: the SLO text the refusals of --slo give as their example
SLO_EXAMPLE = "ttft_p99=2s,tpot_p99=50ms"


class SLOValueError(ValueError):
    """A latency target that cannot be read: what is wrong with it, and `example`, a time with its unit that fits
    the target (the user's number where it reads as one), for the fix each caller words its own way."""

    def __init__(self, problem: str, key: str, seconds: float | None = None) -> None:
        self.problem = problem
        self.seconds = seconds if seconds is not None else (0.05 if key.startswith("tpot") else 2.0)
        # a token's time in milliseconds, a first token's or an answer's in seconds
        self.example = f"{self.seconds * 1e3:g}ms" if key.startswith("tpot") else f"{self.seconds:g}s"
        super().__init__(f"{problem}; {self.fix()}")

    def fix(self) -> str:
        """The fix where a number can be given (a scenario, the Python API, the web page's JSON)."""
        return f"give seconds as a number ({self.seconds:g}) or a time with a unit ('{self.example}')"


def slo_target(key: str, value: Any) -> float:
    """The one reader of a latency target in seconds, wherever it is given (a scenario's slo, --slo, the Python API,
    the web page): `key` names it ('tpot_p99'). A number is seconds; text needs its unit ('2s', '50ms'): text
    without one is refused (a quoted '2' had been two seconds to a scenario and refused by plan serve). A TPOT of a
    second or more given as a number is a unit slip ('tpot_p99: 50' meant 50 ms), refused rather than read as 50 s;
    with its unit ('1.5s') it stands. SLOValueError names the problem and a time that fits."""
    tpot = key.startswith("tpot")
    bare = bare_seconds(value)
    bare = bare if bare is not None and math.isfinite(bare) and bare > 0 else None  # else slo_seconds says why
    if bare is not None and isinstance(value, str):
        seconds = bare / 1e3 if tpot and bare >= 1 else bare  # a TPOT of '50' meant milliseconds
        raise SLOValueError(f"'{value}' has no unit", key, seconds)
    if bare is not None and tpot and bare >= 1:
        raise SLOValueError(
            f"{bare:g} s per output token is not a plausible target (for {bare:g} seconds, write '{bare:g}s')",
            key,
            bare / 1e3,
        )
    try:
        return slo_seconds(value)
    except ValueError as exc:
        raise SLOValueError(str(exc), key) from None


def read_slo(slo: Any) -> dict[str, float]:
    """A mapping of SLO keys to targets (SLO_KEYS; each read by slo_target) in seconds, as the Python API and the
    web page give it ({'ttft_p99': 2.0, 'tpot_p99': '50ms'}), or one line naming the problem and the fix."""
    if not isinstance(slo, Mapping):
        raise ChipwiseError(f"SLO {slo!r} is not a mapping. Fix: give e.g. {{'ttft_p99': 2.0, 'tpot_p99': 0.05}}.")
    out: dict[str, float] = {}
    for key, value in slo.items():
        if key not in SLO_KEYS:
            raise ChipwiseError(f"unknown SLO key '{key}'. Fix: use one of {', '.join(SLO_KEYS)}.")
        try:
            out[key] = slo_target(key, value)
        except SLOValueError as exc:
            raise ChipwiseError(f"SLO {key} = {exc.problem}. Fix: {exc.fix()}.") from None
    return out


def parse_slo(text: str, required: bool = False) -> dict[str, float]:
    """'ttft_p99=2s,tpot_p99=50ms' -> {'ttft_p99': 2.0, 'tpot_p99': 0.05}; every value needs a unit (s, ms or us, in
    any case: slo_target), each key at most once. Text that names no target ('', ',') is one line: it had meant no
    SLO to plan serve, dropped plan lifecycle's default, and was refused by plan fleet. Where targets are `required`
    (plan fleet's --slo), the fix offers no leaving --slo out, which that command refuses."""
    if not text.replace(",", "").strip():
        leave_out = (
            ""
            if required
            else ", or leave --slo out (plan serve then plans with no SLO, plan lifecycle with its default)"
        )
        raise ChipwiseError(f"--slo '{text}' names no latency target. Fix: give e.g. --slo {SLO_EXAMPLE}{leave_out}.")
    out: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = (part.strip() for part in item.partition("="))
        key = key.lower()
        if not sep or not key or not value:
            raise ChipwiseError(
                f"SLO item '{item.strip()}' is not KEY=VALUEUNIT. Fix: write e.g. --slo ttft_p99=2s,tpot_p99=50ms."
            )
        if key not in SLO_KEYS:
            raise ChipwiseError(f"unknown SLO key '{key}'. Fix: use one of {', '.join(SLO_KEYS)}.")
        if key in out:
            raise ChipwiseError(f"SLO key '{key}' is given twice. Fix: give each key once.")
        try:
            out[key] = slo_target(key, value)
        except SLOValueError as exc:  # text only: the fix is a time with its unit
            raise ChipwiseError(f"SLO {key}={exc.problem}. Fix: write e.g. {key}={exc.example}.") from None
    return out


class LengthSpec(StrictModel):
    """A request-length distribution (tokens)."""

    dist: Literal["fixed", "uniform", "normal", "lognormal", "exponential"] = "fixed"
    mean: TokenFloat | None = None
    #: a spread past any context (or an infinite one) drew nonsense lengths or overflowed the lognormal's shape
    std: Annotated[float, Field(ge=0, allow_inf_nan=False), AfterValidator(TOKENS.check)] = 0.0
    min: TokenCount = 1
    max: TokenCount | None = None

    @model_validator(mode="after")
    def _bounds(self) -> LengthSpec:
        unused = {"fixed": ("std", "min", "max"), "uniform": ("mean", "std"), "exponential": ("std",)}
        ignored = [k for k in unused.get(self.dist, ()) if k in self.model_fields_set]
        if ignored:  # it was dropped silently: a uniform length's mean, an exponential one's spread
            raise ValueError(
                f"{'an' if self.dist == 'exponential' else 'a'} {self.dist} length has no {' or '.join(ignored)} "
                f"({self._shape()}): drop {', '.join(ignored)}"
            )
        if self.dist == "uniform":
            if self.max is None:
                raise ValueError("a uniform length needs min and max")
        elif self.mean is None:
            raise ValueError(f"a {self.dist} length needs a mean")
        if self.dist == "fixed" and self.mean is not None and self.mean != int(self.mean):
            # every request is `mean` tokens long: 1.5 had been reported as the mean and simulated as 2 tokens
            raise ValueError(f"a fixed length is a whole number of tokens, got mean {self.mean:g}; give a whole number")
        if self.max is not None and self.max < self.min:
            raise ValueError(f"length max {self.max} is below min {self.min}")
        if self.mean is not None and not self.min <= self.mean <= (self.max or math.inf):
            bounds = f"outside min {self.min} .. max {self.max}" if self.max is not None else f"below min {self.min}"
            raise ValueError(
                f"length mean {self.mean:g} lies {bounds}: clipping every length to the bounds would make a different "
                "mean; give a mean within them"
            )
        return self

    def _shape(self) -> str:
        return {
            "fixed": "it is its mean",
            "uniform": "it is set by min and max",
            "exponential": "its spread is its mean",
        }[self.dist]


class SLO(StrictModel):
    """Latency targets, any subset: each read by slo_target as plan serve, the Python API and the web page read
    theirs (a number is seconds, text needs its unit: '2s', '50ms'), but for quoted numbers, which these keys' _s
    names as seconds ('ttft_p99_s: "2"' is 2 s; 'ttft_p99: "2"' names no unit and is refused)."""

    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p90_s: float | None = None
    tpot_p99_s: float | None = None
    e2e_p50_s: float | None = None
    e2e_p90_s: float | None = None
    e2e_p99_s: float | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        bare = bare_seconds(value) if isinstance(value, str) else None
        return slo_target(str(info.field_name).removesuffix("_s"), value if bare is None else bare)

    def targets(self) -> dict[str, float]:
        """{'ttft_p99': 2.0, ...} for the targets that are set."""
        return {k.removesuffix("_s"): float(v) for k, v in self.model_dump().items() if v is not None}


class PoolSpec(StrictModel):
    """One pool of a disaggregated deployment (prefill or decode)."""

    hardware: str | None = None
    replicas: ChipCount | None = None
    tp: ChipCount | None = None
    pp: ChipCount | None = None
    ep: ChipCount | None = None
    attention_dp: bool | None = None
    max_batch: BatchCount | None = None
    max_tokens: TokenCount | None = None


#: how a deployment spreads its requests over its replicas (serve.sim.policies.ROUTERS)
RouterName = Literal["round_robin", "least_loaded", "power_of_two"]
#: what takes a request's HTTP call and tokenises it: the engine's own OpenAI server, or NVIDIA Dynamo's front end
FrontEnd = Literal["engine", "dynamo"]
#: the router a deployment that names none runs behind
DEFAULT_ROUTER: RouterName = "least_loaded"


class ServePlan(StrictModel):
    """A serving configuration; omitted knobs are searched (or take the engine's defaults)."""

    tp: ChipCount | None = None
    pp: ChipCount | None = None
    ep: ChipCount | None = None
    attention_dp: bool | None = None
    #: attention-DP context balancing (TensorRT-LLM attention_dp_config.enable_balance); searched when omitted
    adp_balance: bool | None = None
    replicas: ChipCount | None = None
    max_batch: BatchCount | None = None
    max_tokens: TokenCount | None = None
    chunked_prefill: bool | None = None
    #: decode iterations between the scheduler's polls for new requests (SGLang --scheduler-recv-interval)
    recv_interval: IntCount | None = None
    #: batch waiting (TensorRT-LLM batch_wait_timeout_iters, batch_wait_max_tokens_ratio)
    batch_wait_iters: int | None = Field(default=None, ge=0)
    batch_wait_ratio: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    #: prompt iterations replay piecewise CUDA graphs (no eager-launch floor)
    piecewise_graphs: bool | None = None
    #: the largest decode batch replayed in a captured CUDA graph (SGLang --cuda-graph-max-bs); a larger one launches
    #: eagerly (engine.decode_graph_batch: the engine's default when omitted)
    graph_batch: BatchCount | None = None
    #: the engine's share of memory for its KV cache (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static,
    #: TensorRT-LLM free_gpu_memory_fraction): the engine's default when omitted
    memory_fraction: float | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    #: prompt chunks ride in decode iterations (SGLang --enable-mixed-chunk; vLLM V1 and TensorRT-LLM always mix
    #: them); false runs prompts in iterations of their own while the decodes wait: the engine's default when omitted
    mixed_batching: bool | None = None
    #: what serves the requests' HTTP calls: the engine's own server (its front-end time per request,
    #: engines.*.request_overhead) or Dynamo's front end (`dynamo.frontend` beside `dynamo.<engine>` workers, which
    #: take token ids), priced at 0 for every engine: the engine's default ('engine') when omitted
    front_end: FrontEnd | None = None
    disaggregated: bool = False
    prefill: PoolSpec | None = None
    decode: PoolSpec | None = None
    router: RouterName = DEFAULT_ROUTER

    @model_validator(mode="after")
    def _pools(self) -> ServePlan:
        if (self.prefill is not None or self.decode is not None) and not self.disaggregated:
            raise ValueError("prefill/decode pools are given but disaggregated is not true: set disaggregated: true")
        knobs = ("tp", "pp", "ep", "attention_dp", "adp_balance", "replicas", "max_batch")
        shared = [k for k in knobs if getattr(self, k) is not None]
        if self.disaggregated and shared:
            raise ValueError(
                f"{', '.join(shared)} apply to a colocated deployment; a disaggregated plan sets them per pool "
                "(prefill: {tp: ...}, decode: {tp: ...})"
            )
        return self


def name_value(v: Any) -> Any:
    """A name that reads the same in any case (an engine family), in lower case; anything else as it is."""
    return v.strip().lower() if isinstance(v, str) else v


def _length_value(v: Any) -> Any:
    """Counts with suffixes ('2k') become numbers; a string that is not a count stays a trace path; a mapping
    is a distribution (validated here so that its own error is the one reported)."""
    if isinstance(v, dict):
        try:
            return LengthSpec.model_validate(v)
        except ValidationError as exc:
            unknown = [str(e["loc"][-1]) for e in exc.errors() if e["type"] == "extra_forbidden"]
            if unknown:  # named, with the keys a distribution takes, as the scenario's own unknown keys are
                raise PydanticCustomError("extra_forbidden", "unknown key", {"keys": unknown}) from None
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise ValueError(
                f"{where + ': ' if where else ''}{str(err['msg']).removeprefix('Value error, ')}"
            ) from None
    if isinstance(v, str):
        parsed = parse_count(v)
        if isinstance(parsed, float) and not math.isfinite(parsed):  # '1e400': round(inf) had raised OverflowError
            raise ValueError(f"{v!r} is not a finite number of tokens")
        if isinstance(parsed, float):
            return round(parsed)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


LengthField = int | LengthSpec | str


class ServeScenario(StrictModel):
    """A serving deployment under load: DESIGN.md's scenario contract (kind: serve)."""

    kind: Literal["serve"] = "serve"
    model: str
    hardware: str
    chips: ChipCount | None = None
    #: weights: one of serve.quant.WEIGHT_PRECISIONS, or 'auto', the checkpoint's own (its quantization_config)
    precision: str = "auto"
    kv_precision: str | None = None
    #: an engine family in any case ('VLLM' is vllm, as a chip id is read)
    engine: Annotated[str | None, BeforeValidator(name_value)] = None
    input_tokens: Annotated[LengthField, BeforeValidator(_length_value)] = 1024
    output_tokens: Annotated[LengthField | None, BeforeValidator(_length_value)] = None
    trace: str | None = None
    arrival_rate: Rate | None = None
    concurrency: UserCount | None = None
    offline: bool = False
    #: an infinite one divided by zero in the arrival process, and 1e308 overflowed its square (MAX_BURSTINESS)
    burstiness: Annotated[float, Field(gt=0, allow_inf_nan=False), AfterValidator(BURSTINESS.check)] = 1.0
    requests: IntCount | None = None
    duration_s: Count | None = None
    slo: SLO | None = None
    plan: ServePlan | None = None
    #: speculative decoding of the decoding replicas: 'mtp:K', 'eagle:K' or 'draft:MODEL:K', optionally
    #: '@ACCEPTANCE' (serve.speculation; MTP and EAGLE default to their sourced priors); 'none': no drafting
    speculative: Annotated[str | None, BeforeValidator(speculation_asked)] = None
    prefix_hit_rate: Fraction = 0.0
    #: distinct prompts the load cycles through, each repeat served from the prefix cache (a benchmark's dataset
    #: size: AIPerf holds 100 synthetic prompts unless given --num-dataset-entries); 0: every prompt is new
    prompt_pool: Annotated[int, Field(ge=0)] = 0
    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None
    seed: Annotated[int, Field(ge=0)] = 0

    @model_validator(mode="after")
    def _load(self) -> ServeScenario:
        loads = [self.arrival_rate is not None, self.concurrency is not None, self.offline]
        if sum(loads) > 1:
            raise ValueError("give one of arrival_rate, concurrency or offline: true")
        if sum(loads) == 0 and self.trace_path() is None:
            raise ValueError("give a load: arrival_rate (requests/s), concurrency (users) or offline: true")
        if self.requests is not None and self.duration_s is not None:
            raise ValueError("give requests or duration_s, not both")
        if self.burstiness != 1.0 and self.arrival_rate is None:
            raise ValueError("burstiness shapes an arrival_rate's gaps; drop it (or give arrival_rate)")
        if self.duration_s is not None and self.arrival_rate is None:
            raise ValueError("duration_s sets how long an arrival_rate lasts; give requests instead (or arrival_rate)")
        word = isinstance(self.input_tokens, str) and not any(c in self.input_tokens for c in "./\\")  # no file
        if isinstance(self.output_tokens, str) or (word and self.trace is None and self.output_tokens is not None):
            key = "output_tokens" if isinstance(self.output_tokens, str) else "input_tokens"
            raise ValueError(
                f"{key} {getattr(self, key)!r} is not a token count: give a number (1024, 2k) or a distribution "
                "({dist: lognormal, mean: 1024, std: 512}); a trace file goes under trace"
            )
        planned = self.requests or (self.arrival_rate or 0.0) * (self.duration_s or 0.0)
        if planned > MAX_SIMULATED:
            raise ValueError(
                f"{'requests' if self.requests else 'arrival_rate x duration_s'} asks for {shown(planned)} requests; "
                f"at most {MAX_SIMULATED:,} are simulated (a million takes about a minute): give fewer"
            )
        for key in ("input_tokens", "output_tokens"):
            length = getattr(self, key)
            if isinstance(length, int) and length <= 0:
                raise ValueError(f"{key} must be positive, got {length}")
            if isinstance(length, int) and (problem := TOKENS.problem(length)) is not None:
                raise ValueError(f"{key} {problem}: {TOKENS.fix}")
        if self.trace is not None and not self.trace.strip():
            raise ValueError("trace is empty: give a trace file's path (CSV or JSONL), or drop trace")
        if self.output_tokens is None and self.trace_path() is None:
            raise ValueError("give output_tokens (a number or a distribution)")
        if self.trace_path() is not None:
            given = [k for k in ("input_tokens", "output_tokens") if k in self.model_fields_set]
            lengths = [k for k in given if not (k == "input_tokens" and self.trace is None)]
            if lengths:
                raise ValueError(
                    f"a trace gives every request's input and output tokens; {' and '.join(lengths)} would be "
                    "ignored: drop them (or drop the trace)"
                )
        return self

    def trace_path(self) -> str | None:
        if self.trace is not None:
            return self.trace
        if isinstance(self.input_tokens, str):
            return self.input_tokens
        return None

    def relative_to(self, folder: Path) -> ServeScenario:
        """This scenario with a relative trace path taken from `folder` (the scenario file's) rather than from the
        current directory; absolute paths stay as they are."""
        path = self.trace_path()
        if path is None:
            return self
        key = "trace" if self.trace is not None else "input_tokens"
        return self.model_copy(update={key: path_from(folder, path)})


def path_from(folder: Path, path: str) -> str:
    """A relative file path taken from `folder` (its scenario's or sweep's file) rather than from the current
    directory; an absolute one as it is."""
    return path if Path(path).is_absolute() else str(folder / path)


# --------------------------------------------------------------------------------------------------
# Length distributions
# --------------------------------------------------------------------------------------------------


#: lengths drawn to read a distribution's clipped mean (its standard error: std / 450)
EXPECTED_SAMPLES = 200_000


@dataclass(frozen=True)
class LengthDist:
    """Tokens per request: fixed, uniform[low, high], normal, lognormal (mean, std) or exponential (mean),
    clipped to [low, high], an unbounded one's draws at `maximum`."""

    kind: str
    mean: float
    std: float = 0.0
    low: int = 1
    high: int | None = None

    @classmethod
    def fixed(cls, n: int) -> LengthDist:
        TOKENS.require(n, "a request length of")  # 10**400 tokens overflowed a float (plan serve, the API)
        return cls("fixed", float(n), 0.0, int(n), int(n))

    @classmethod
    def of(cls, spec: int | LengthSpec) -> LengthDist:
        if isinstance(spec, int):
            return cls.fixed(spec)
        if spec.dist == "uniform":
            assert spec.max is not None
            return cls("uniform", (spec.min + spec.max) / 2.0, 0.0, spec.min, spec.max)
        assert spec.mean is not None
        return cls(spec.dist, float(spec.mean), float(spec.std), spec.min, spec.max)

    @cached_property
    def expected(self) -> float:
        """The mean of the lengths drawn, after rounding and clipping to [low, high] (a heavy tail clipped at
        `high` draws below the stated mean): `mean` itself for fixed and uniform lengths, else the mean of a
        fixed-seed sample of EXPECTED_SAMPLES lengths."""
        if self.kind in ("fixed", "uniform"):
            return self.mean
        return float(self.sample(EXPECTED_SAMPLES, np.random.default_rng(0)).mean())

    def sample(self, n: int, rng: np.random.Generator) -> IntArray:
        if self.kind == "fixed":
            return np.full(n, max(1, round(self.mean)), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(self.low, (self.high or self.low) + 1, size=n).astype(np.int64)
        if self.kind == "normal":
            x = rng.normal(self.mean, self.std, size=n)
        elif self.kind == "lognormal":
            sigma2 = math.log1p((self.std / self.mean) ** 2) if self.mean > 0 else 0.0
            x = rng.lognormal(math.log(self.mean) - sigma2 / 2.0, math.sqrt(sigma2), size=n)
        else:
            x = rng.exponential(self.mean, size=n)
        return np.clip(np.rint(x), max(1, self.low), self.maximum).astype(np.int64)

    @property
    def maximum(self) -> int:
        """The longest length the distribution yields: its max, or when unbounded a high quantile at which `sample`
        truncates the tail. The context checks (check_context) and the replicas' sizing take this length, so a draw
        past it (a lognormal of mean 20,000 and std 25,000 drew 244,552 tokens against a 131,072-token context,
        simulated, or dropped unexplained by a cache too small for it) is never produced."""
        if self.high is not None:
            return int(self.high)
        if self.kind == "fixed":
            return max(1, round(self.mean))
        if self.kind == "exponential":
            return max(1, round(self.mean * 7.0))
        return max(1, round(self.mean + 4.0 * self.std))


# --------------------------------------------------------------------------------------------------
# Traces
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trace:
    """Requests of a trace file: arrival times (s, from the first arrival), input and output tokens. An arrival
    column named *_ms is read in milliseconds, and epoch timestamps in finer units than seconds by their size
    (EPOCH_SCALES)."""

    arrival: FloatArray
    input: IntArray
    output: IntArray
    path: str


#: Epoch timestamps in finer units than seconds, told apart by their size: past the year 2001 in nanoseconds,
#: microseconds or milliseconds (each past 33,000 years in the next coarser unit), with the units in a second.
EPOCH_SCALES: tuple[tuple[float, float], ...] = ((1e18, 1e9), (1e15, 1e6), (1e12, 1e3))
JSON_SUFFIXES: tuple[str, ...] = (".jsonl", ".json", ".ndjson")


def _column(header: list[str], role: str, path: str) -> str:
    """The header's column for `role`, matched without regard to case or surrounding spaces."""
    names = {str(h).strip().lower(): h for h in header}
    for name in TRACE_COLUMNS[role]:
        if name in names:
            return str(names[name])
    raise ChipwiseError(
        f"trace '{path}' has no {role} column (one of {', '.join(TRACE_COLUMNS[role])}). Fix: add that column."
    )


def _trace_text(path: str) -> str:
    """The text of a trace file (a spreadsheet's byte-order mark dropped), or one line naming the file."""
    p = user_file(path, "trace file", "check the path", folder_fix="give a CSV or JSONL file")
    try:
        return p.read_text(encoding="utf-8-sig")  # a spreadsheet's CSV export opens with a byte-order mark
    except UnicodeDecodeError:
        raise ChipwiseError(f"trace '{path}' is not UTF-8 text. Fix: save it as UTF-8 CSV or JSONL.") from None
    except OSError as exc:
        raise ChipwiseError(f"cannot read trace '{path}': {exc.strerror}. Fix: check the path.") from None


def _json_rows(text: str, path: str) -> tuple[list[Any], str]:
    """The requests of a JSON trace: one object per line (JSONL), or one array of objects (a .json file), with
    the word that numbers them."""
    if text.lstrip().startswith("["):
        try:
            return list(json.loads(text)), "item"
        except ValueError:
            raise ChipwiseError(
                f"trace '{path}' is not a valid JSON array. Fix: give one array of objects, or one object per line."
            ) from None
    rows: list[Any] = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            raise ChipwiseError(f"trace '{path}' line {i} is not JSON. Fix: one JSON object per line.") from None
    return rows, "line"


def _cell(raw: Any) -> str:
    """A trace value as an error shows it (a 400-digit number is not printed whole)."""
    text = shown(raw) if isinstance(raw, int) and not isinstance(raw, bool) else str(raw)
    return text if len(text) <= 24 else text[:21] + "..."


def _trace_value(raw: Any, role: str, col: str, where: str) -> float:
    """One number of a trace: an arrival time (finite, not negative) or a token count (1 to MAX_TOKENS)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ChipwiseError(f"{where} has no {col}. Fix: give every request its {col}.")
    try:
        if isinstance(raw, bool):  # JSON true is not a count
            raise TypeError
        v = float(raw)
    except (TypeError, ValueError):
        raise ChipwiseError(f"{where}: {col} '{_cell(raw)}' is not a number. Fix: correct that value.") from None
    except OverflowError:  # a JSON integer past a float's range
        v = math.inf
    if role == "arrival" and not (math.isfinite(v) and v >= 0):
        raise ChipwiseError(f"{where}: {col} {_cell(raw)} is out of range. Fix: correct that value.")
    if role != "arrival" and not 1 <= v <= MAX_TOKENS:  # past any context: would overflow the simulator's integers
        raise ChipwiseError(
            f"{where}: {col} {_cell(raw)} is out of range (1 to {MAX_TOKENS:,} tokens). Fix: correct that value."
        )
    if role != "arrival" and not v.is_integer():  # 512.5 tokens had been rounded without a word
        raise ChipwiseError(
            f"{where}: {col} {_cell(raw)} is not a whole number of tokens. Fix: give a whole number, e.g. "
            f"{math.floor(v):,}."
        )
    return v


def _units_per_second(column: str, first: float) -> float:
    """The unit of a trace's arrival times, as units in a second: milliseconds in a column named *_ms, else by the
    first time's size (EPOCH_SCALES), else seconds."""
    if column.strip().lower().endswith("_ms"):
        return 1e3
    return next((units for edge, units in EPOCH_SCALES if first > edge), 1.0)


def _delimiter(header: str) -> str:
    """A CSV trace's separator, from its header: a comma, or the semicolon or tab of a spreadsheet's export in a
    locale whose decimal mark is a comma (such a file read as one column: 'no arrival column')."""
    return max((",", ";", "\t"), key=header.count) if header else ","


def _extra_cells(rows: list[dict[Any, Any]], path: str, header: int) -> None:
    """One line for a CSV row with more cells than the header (csv.DictReader keeps them under the key None): a
    value with a thousands separator ('1,024') splits in two and shifts the rest (input 1, output 24). Blank cells
    past the header (a trailing separator) are let be."""
    for i, row in enumerate(rows, start=1):
        extra = row.get(None)
        if extra and any(str(cell).strip() for cell in extra):
            cells = header + len(extra)
            raise ChipwiseError(
                f"trace '{path}' data row {i} has {cells} cells where the header names {header}. Fix: give every "
                "row the header's cells, with no thousands separators or unquoted commas in its values."
            )


def _in_time_order(arrival: list[float], col: str, path: str, word: str) -> None:
    """One line naming the first request that arrives before the one above it: rows out of time order are most
    likely a mis-joined file (until 2026-12 they were sorted without a word)."""
    times = np.asarray(arrival, dtype=np.float64)
    back = np.flatnonzero(times[1:] < times[:-1])
    if back.size:
        i = int(back[0]) + 2  # the later row, counted from 1
        raise ChipwiseError(
            f"trace '{path}' {word} {i} arrives at {col} {times[i - 1]:g}, before {word} {i - 1} ({times[i - 2]:g}): "
            "its rows are not in time order. Fix: sort the trace by its arrival time."
        )


def read_trace(path: str) -> Trace:
    """Read a CSV, JSONL or JSON-array trace; a missing column, a bad value, a row with more cells than the header or
    rows out of time order are a one-line error."""
    text = _trace_text(path)
    if Path(path).suffix.lower() in JSON_SUFFIXES:
        rows, word = _json_rows(text, path)
        bad = next((i for i, row in enumerate(rows, start=1) if not isinstance(row, dict)), None)
        if bad is not None:
            raise ChipwiseError(f"trace '{path}' {word} {bad} is not a JSON object. Fix: one object per request.")
    else:
        lines = text.splitlines()
        reader = csv.DictReader(lines, delimiter=_delimiter(lines[0] if lines else ""))
        rows, word = list(reader), "data row"
        _extra_cells(rows, path, len(reader.fieldnames or []))
    if not rows:
        raise ChipwiseError(f"trace '{path}' holds no requests. Fix: give at least one row.")
    cols = {role: _column(list(rows[0].keys()), role, path) for role in TRACE_COLUMNS}
    values: dict[str, list[float]] = {role: [] for role in cols}
    for i, row in enumerate(rows, start=1):
        for role, col in cols.items():
            values[role].append(_trace_value(row.get(col), role, col, f"trace '{path}' {word} {i}"))
    _in_time_order(values["arrival"], cols["arrival"], path, word)
    arrival = np.asarray(values["arrival"], dtype=np.float64)
    first = float(arrival[0])
    arrival = (arrival - first) / _units_per_second(cols["arrival"], first)  # from the first arrival
    return Trace(
        arrival=arrival,
        input=np.rint(np.asarray(values["input"])).astype(np.int64),
        output=np.rint(np.asarray(values["output"])).astype(np.int64),
        path=path,
    )


# --------------------------------------------------------------------------------------------------
# The job
# --------------------------------------------------------------------------------------------------

LoadKind = Literal["rate", "closed", "offline", "trace"]


@dataclass(frozen=True)
class Load:
    """How requests arrive: 'rate' (open loop, Poisson or gamma), 'closed' (concurrency users with no think
    time), 'offline' (all at t=0) or 'trace' (the trace's arrival times)."""

    kind: LoadKind
    rate: float = 0.0
    concurrency: int = 0
    burstiness: float = 1.0

    def label(self) -> str:
        if self.kind == "rate":
            rate = f"{self.rate:,.10g} req/s"  # 10,000 req/s, 0.5 req/s; never 1e+06
            return rate + (f" (burstiness {self.burstiness:g})" if self.burstiness != 1.0 else "")
        if self.kind == "closed":
            return f"{self.concurrency:,} concurrent user" + ("s" if self.concurrency != 1 else "")
        return "offline (all requests at once)" if self.kind == "offline" else "trace arrivals"


def is_count(value: Any) -> bool:
    """A whole number of at least 1 (users, tokens), as a Python caller might pass it: 64 or 64.0, not 2.5, True,
    infinity or '64'."""
    number = not isinstance(value, bool) and isinstance(value, int | float)
    return number and 1 <= value < math.inf and value == int(value)


def load_of(rate: float | None, concurrency: int | None, offline: bool, flag: str = "--") -> Load:
    """The one load a request names: an arrival rate, a number of concurrent users, or offline (`flag` prefixes
    the option names in the error, '--' on the command line). A number may come as text ('20', '2k'), as a
    scenario and the web page take it."""
    if [rate is not None, concurrency is not None, offline].count(True) != 1:
        raise ChipwiseError(
            f"give exactly one load: {flag}rate (requests/s), {flag}concurrency (users) or {flag}offline. "
            "Fix: pick one."
        )
    rate, concurrency = count_value(rate), count_value(concurrency)
    if rate is not None:
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate < math.inf:
            given = repr(rate) if isinstance(rate, bool) or not isinstance(rate, int | float) else shown(rate)
            raise ChipwiseError(f"{flag}rate {given} is not a positive number of requests/s. Fix: give e.g. 20.")
        RATE.require(rate, f"{flag}rate")
        return Load("rate", rate=float(rate))
    if concurrency is not None:
        if not is_count(concurrency):
            raise ChipwiseError(
                f"{flag}concurrency {concurrency!r} is not a positive whole number of users. Fix: give e.g. 64."
            )
        USERS.require(concurrency, f"{flag}concurrency")
        return Load("closed", concurrency=int(concurrency))
    return Load("offline")


@dataclass(frozen=True)
class ServingJob:
    """What to serve: the model, request lengths, the load, how many requests, the prefix-cache hit rate, and the
    router that spreads the requests over the replicas (serve.sim.policies.ROUTERS)."""

    model: ModelSpec
    input: LengthDist
    output: LengthDist
    load: Load
    requests: int
    duration_s: float | None = None
    prefix_hit_rate: float = 0.0
    trace: Trace | None = field(default=None, repr=False)
    router: str = DEFAULT_ROUTER
    #: distinct prompts the load generator cycles through (0: every prompt is new). A load generator that draws its
    #: requests from a fixed set (AIPerf's synthetic dataset holds 100 entries unless given --num-dataset-entries)
    #: repeats each prompt once a cycle, and an engine that keeps a prefix cache serves the repeat from it
    prompt_pool: int = 0

    @property
    def mean_input(self) -> float:
        return float(np.mean(self.trace.input)) if self.trace is not None else self.input.expected

    @property
    def mean_output(self) -> float:
        return float(np.mean(self.trace.output)) if self.trace is not None else self.output.expected

    @property
    def max_input(self) -> int:
        return int(self.trace.input.max()) if self.trace is not None else self.input.maximum

    @property
    def max_output(self) -> int:
        return int(self.trace.output.max()) if self.trace is not None else self.output.maximum

    def lengths(self, n: int, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
        """Input and output lengths of n requests (the trace's, cycled, when there is one)."""
        if self.trace is not None:
            idx = np.arange(n) % self.trace.input.size
            return self.trace.input[idx], self.trace.output[idx]
        return self.input.sample(n, rng), self.output.sample(n, rng)


def context_overflow(model: ModelSpec, prompt: float, answer: float) -> str:
    """'input P + output A tokens exceed M's context of N tokens' where a request outgrows the context its model's
    config states ('' where it fits, or no context is stated)."""
    limit = model.max_seq_len
    if limit <= 0 or prompt + answer <= limit:
        return ""
    return f"input {prompt:,.0f} + output {answer:,.0f} tokens exceed {model.name}'s context of {limit:,} tokens"


def check_context(model: ModelSpec, inp: LengthDist, out: LengthDist, trace: Trace | None = None) -> None:
    """One line when requests outgrow the model's context (where its config.json states one): a trace's longest
    request, else the longest prompt and answer of bounded distributions, the means of unbounded ones, and then
    the longest draws of unbounded ones (LengthDist.maximum, where their draws stop), which the replicas are set up
    to hold."""
    limit = model.max_seq_len
    if limit <= 0:
        return
    if trace is not None:
        i = int(np.argmax(trace.input + trace.output))
        prompt, answer = int(trace.input[i]), int(trace.output[i])
    else:
        prompt, answer = (round(d.high if d.high is not None else d.mean) for d in (inp, out))
    if over := context_overflow(model, prompt, answer):
        fixed = trace is None and inp.kind == out.kind == "fixed"
        raise ChipwiseError(
            f"{'' if fixed else 'the longest request: '}{over}. Fix: shorten the prompt or the answer, or pick a "
            "longer-context model."
        )
    if trace is None:
        _check_tails(model.name, limit, {"input_tokens": (inp, prompt), "output_tokens": (out, answer)})


def _check_tails(model: str, limit: int, lengths: dict[str, tuple[LengthDist, int]]) -> None:
    """One line when an unbounded distribution's longest draws, with the other length, outgrow the context (an
    exponential of mean 100,000 tokens draws 700,000): its fix is a max within the context. `lengths` maps each
    key to its distribution and the length the mean check read (its max, or its mean when unbounded)."""
    (key_a, (a, read_a)), (key_b, (b, read_b)) = lengths.items()
    pairs = ((key_a, a, limit - read_b), (key_b, b, limit - read_a))
    unbounded = [(key, d, room) for key, d, room in pairs if d.high is None]
    if a.maximum + b.maximum <= limit or not unbounded:
        return
    key, dist, room = max(unbounded, key=lambda item: item[1].maximum)
    raise ChipwiseError(
        f"{key}: the {dist.kind} length of mean {dist.mean:,.0f} has no max, and its longest draws (about "
        f"{dist.maximum:,} tokens) outgrow {model}'s context of {limit:,} tokens. Fix: give {key} a max within the "
        f"context (at most {room:,})."
    )


DEFAULT_REQUESTS = 2000


def serving_job(model: ModelSpec, sc: ServeScenario) -> ServingJob:
    """The ServingJob of a scenario (reads its trace file, if any)."""
    trace = read_trace(p) if (p := sc.trace_path()) is not None else None
    if sc.arrival_rate is not None:
        load = Load("rate", rate=float(sc.arrival_rate), burstiness=sc.burstiness)
    elif sc.concurrency is not None:
        load = Load("closed", concurrency=int(sc.concurrency))
    elif sc.offline:
        load = Load("offline")
    else:
        load = Load("trace")
    if sc.requests is not None:
        n = int(sc.requests)
    elif sc.duration_s is not None and load.kind == "rate":
        n = max(1, round(load.rate * float(sc.duration_s)))
    elif trace is not None:
        n = int(trace.input.size)
        if n > MAX_SIMULATED:
            raise ChipwiseError(
                f"trace '{trace.path}' holds {n:,} requests; at most {MAX_SIMULATED:,} are simulated (a million "
                f"takes about a minute). Fix: give requests: {MAX_SIMULATED} to replay its first ones, or split it."
            )
    else:
        n = DEFAULT_REQUESTS
    if trace is not None:
        if n < trace.input.size:
            # the job is its first n requests, those replayed: its offered load, capacity share, price per token and
            # length means are theirs (a 200-request trace whose first 100 came at 100 req/s and the rest 1 s apart,
            # replayed as requests: 100, had read 2.1% of the 93.5 req/s one H100 sustains, at the whole trace's
            # 1.96 req/s, and $7.58 per M output tokens where its 100 req/s were 107% of it, at $0.266)
            trace = Trace(trace.arrival[:n], trace.input[:n], trace.output[:n], trace.path)
        inp = LengthDist("fixed", float(np.mean(trace.input)), 0.0, int(trace.input.min()), int(trace.input.max()))
        out = LengthDist("fixed", float(np.mean(trace.output)), 0.0, int(trace.output.min()), int(trace.output.max()))
    else:
        assert not isinstance(sc.input_tokens, str) and sc.output_tokens is not None
        assert not isinstance(sc.output_tokens, str)
        inp, out = LengthDist.of(sc.input_tokens), LengthDist.of(sc.output_tokens)
    check_context(model, inp, out, trace)
    return ServingJob(
        model=model,
        input=inp,
        output=out,
        load=load,
        requests=n,
        duration_s=float(sc.duration_s) if sc.duration_s is not None else None,
        prefix_hit_rate=float(sc.prefix_hit_rate),
        trace=trace,
        router=sc.plan.router if sc.plan else DEFAULT_ROUTER,
        prompt_pool=sc.prompt_pool,
    )
