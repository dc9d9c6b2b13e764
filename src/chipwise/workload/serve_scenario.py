"""The serving scenario (`kind: serve` of DESIGN.md's scenario contract), validated strictly: its lengths, load,
SLO, serving plan (colocated, or disaggregated into prefill and decode pools) and speculative decoding. A trace
given with an arrival_rate, concurrency or offline: true replays its requests' lengths under that load instead of
at its own times."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from chipwise.workload.bounds import (
    BURSTINESS,
    MAX_SIMULATED,
    TOKENS,
    BatchCount,
    ChipCount,
    Rate,
    TokenCount,
    UserCount,
    shown,
)
from chipwise.workload.counts import Count, IntCount, parse_count
from chipwise.workload.lengths import LengthSpec, is_length_text, length_text
from chipwise.workload.slo import SLO
from chipwise.workload.strict_model import StrictModel
from chipwise.workload.train_scenario import OwnedUtilisation


def _share(value: float) -> float:
    """A share from 0 up to (not including) 1; NaN, an infinity or a value outside it says so (NaN read 'Input should
    be less than 1')."""
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise ValueError(f"must be a finite number in [0, 1), not {value:g} (a share, such as 0.5)")
    return value


Fraction = Annotated[float, AfterValidator(_share)]

#: the words that ask for no speculative decoding, in a scenario and in `plan serve --speculative none,mtp:3`
NO_SPECULATION = ("none", "off")


def speculation_asked(value: Any) -> Any:
    """A speculative-decoding setting as given, or None where it asks for none ('none' or 'off'). Empty text names
    no option, as `--speculative ''` is told: a scenario's `speculative: ''` had run without drafting, silently."""
    if isinstance(value, str) and not value.strip():
        raise ValueError("empty text names no option: give e.g. mtp:3, eagle:3@0.8 or draft:MODEL:3@0.7, or none")
    if isinstance(value, str) and value.strip().lower() in NO_SPECULATION:
        return None
    return value


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
    #: prompt iterations replay piecewise CUDA graphs (true: no eager-launch floor) or launch their kernels one by one
    #: where the engine would capture them (false: vLLM's cudagraph_mode FULL_DECODE_ONLY); the engine's when omitted
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
        knobs = ("tp", "pp", "ep", "attention_dp", "adp_balance", "replicas", "max_batch", "max_tokens")
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
    """Counts with suffixes ('2k') become numbers; a distribution is a mapping or text as plan serve's
    --input-tokens takes it ('lognormal:mean=2k,std=1.5k'), validated here so that its own error is the one
    reported; any other string stays a trace path."""
    if isinstance(v, str) and is_length_text(v):
        v = length_text(v)  # its ValueError is the field's
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
    #: with pricing: owned, the share of calendar hours the fleet serves (a train scenario's key); each hour served
    #: pays for the idle ones between (economics.tco.Tco.charged_per_chip_hour)
    utilisation: OwnedUtilisation | None = None
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
                "({dist: lognormal, mean: 1024, std: 512}, or lognormal:mean=1k,std=512); a trace file goes under trace"
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
