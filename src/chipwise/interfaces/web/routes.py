"""What each JSON endpoint of the web page answers: request bodies validated strictly, answers from the Python API.

No HTTP here (that is `server.py`): each handler takes the parsed JSON body and returns a JSON-ready dictionary,
or raises `ChipwiseError` with one line naming the problem and the fix.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, Field, StrictBool, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.catalog.regions import check_region_provider
from chipwise.economics.pricing import MODES, check_mode, check_rental_options
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import hardware, hardware_ids
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import whatif_lines
from chipwise.interfaces.cli.plan_serve_views import lengths_text
from chipwise.interfaces.cli.serve_views import caveats
from chipwise.interfaces.cli.train_views import ranking_notes, with_batch_note
from chipwise.interfaces.plots import pareto_front, training_points
from chipwise.planner.scenario import predict_scenario
from chipwise.planner.sensitivity import DEFAULT_STEP, MAX_STEP, METRICS
from chipwise.planner.sensitivity import sensitivity as planner_sensitivity
from chipwise.planner.serving_inputs import plan_serve_inputs, speculation_options
from chipwise.planner.serving_plan import check_split_load, plan_serving
from chipwise.planner.serving_split import worded_for
from chipwise.planner.training import OBJECTIVES, check_utilisation, plan_training
from chipwise.serve.quant import KV_PRECISIONS, RELEASED, WEIGHT_PRECISIONS
from chipwise.serve.speculation import parse_speculation
from chipwise.sweep.backends import cpu_count
from chipwise.workload.counts import Count, IntCount, read_count
from chipwise.workload.lengths import read_length
from chipwise.workload.load import load_of
from chipwise.workload.presets import no_files, preset_of, preset_summaries
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serve_scenario import DEFAULT_ROUTER, RouterName, ServeScenario
from chipwise.workload.strict_model import StrictModel

TRAINING_PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
#: what a body that is not a JSON object is told to send instead: each endpoint's required fields with real values it
#: takes, written as JSON (they had read {'model': ..., 'chips': ...}, which is not JSON)
PLAN_TRAIN_EXAMPLE = {"model": "llama-3.1-8b", "chips": 64}
PLAN_SERVE_EXAMPLE = {"model": "llama-3.1-8b", "rate": 5}
SERVE_EXAMPLE = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 1,
    "input_tokens": 512,
    "output_tokens": 128,
    "arrival_rate": 2,
    "requests": 100,
}
SENSITIVITY_EXAMPLE = {"scenario": SERVE_EXAMPLE, "metric": "tpot_p50"}
Request = TypeVar("Request", bound=BaseModel)
Args = ParamSpec("Args")


@dataclass(frozen=True)
class Settings:
    """The catalog the server answers from: the user's YAML files and `ID.FIELD=VALUE` overrides."""

    files: Sequence[str | Path] = ()
    sets: Sequence[str] = ()

    def catalog(self) -> Catalog:
        return load_catalog(self.files, self.sets)


class PlanTrainRequest(StrictModel):
    """POST /api/plan/train: the options of `chipwise plan train` (unknown fields refused, true is not a number)."""

    model: str
    chips: IntCount
    hardware: list[str] | str = "all"
    tokens: Count | None = None
    precision: str = "bf16"
    objective: str = "time"
    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None  # only this cloud's prices, as plan train's --provider
    seq_len: IntCount | None = None
    global_batch_tokens: Count | None = None
    utilisation: float | None = None  # an owned fleet's busy share of its hours, as plan train's --utilisation
    top: IntCount | None = None


#: the fix for each field of a request, named where its value is refused (StrictModel's `bool_for_number`: true
#: where a number is expected)
_FIELD_FIX = {
    "model": "give a model preset's name, e.g. 'llama-3.1-8b' (GET /api/models lists them)",
    "chips": "give a whole number above 0, e.g. 64",
    "hardware": "give a list of chip or system ids, a comma-separated string or 'all'",
    "tokens": "give a number above 0, e.g. 15e12, or text such as '15T'",
    "seq_len": "give a whole number above 0, e.g. 8192",
    "global_batch_tokens": "give a number above 0, e.g. 4e6, or text such as '4M'",
    "top": "give a whole number of rows above 0, e.g. 10",
    "utilisation": "give an owned fleet's busy share of its hours in [0.01, 1], e.g. 0.7",
    "rate": "give requests/s as a number above 0, e.g. 5, or numeric text such as '5' or '2k'",
    "concurrency": "give a whole number of users above 0, e.g. 64, or numeric text such as '64'",
    "input_tokens": "give a whole number above 0, e.g. 1024, or a distribution, e.g. 'lognormal:mean=2k,std=1.5k'",
    "output_tokens": "give a whole number above 0, e.g. 256, or a distribution, e.g. 'uniform:min=64,max=1k'",
    "slo": 'give an object such as {"ttft_p99": 2.0, "tpot_p99": "50ms"}',
    "offline": "give true or false",
    "disaggregated": "give true or false, or leave it out",
    "router": "use least_loaded, power_of_two or round_robin",
    # /api/sensitivity's
    "scenario": "give a scenario object as /api/predict takes it, e.g. " + json.dumps(SERVE_EXAMPLE),
    "figures": 'give a list of texts a figure\'s name holds, e.g. ["hbm_bandwidth"]',
    "step": f"give a fraction in (0, {MAX_STEP:g}), e.g. 0.1",
    "metric": "give one of the scenario kind's metrics as text ("
    + "; ".join(f"{kind}: {', '.join(names)}" for kind, names in METRICS.items())
    + ")",
    "replan": "give true or false",
}
#: the fix for an error of a kind that says it whatever the field
_TYPE_FIX = {"bool_type": "give true or false", "bool_for_number": "give a number", "string_type": "give text"}


def _fix(model: type[BaseModel], field: str, kind: str, given: Iterable[str] = ()) -> str:
    """What to do about a refused `field` of `model`: a typo's likely meaning (of a key `given`, for a field
    missing: 'chip' for 'chips'), the field's own fix, or its kind's."""
    if kind == "missing":
        unknown = [str(key) for key in given if key not in model.model_fields]
        close = difflib.get_close_matches(field, unknown, n=1)
        if close:
            return f"rename '{close[0]}' to '{field}' if that is what you meant"
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(field, model.model_fields, n=1)
        if close:
            return f"rename it '{close[0]}' if that is what you meant, or remove it"
        return f"remove it; the fields are {', '.join(model.model_fields)}"
    return _FIELD_FIX.get(field) or _TYPE_FIX.get(kind) or "give a value of the kind the endpoint's table names"


def _one_line(exc: ValidationError, what: str, model: type[BaseModel], given: Iterable[str] = ()) -> str:
    """The first validation error as one line: the field (and item index), the problem, and a fix for that field."""
    err = exc.errors()[0]
    parts = err["loc"]
    # StrictModel's check of every field names the field in its context (true for a number), not in its location
    field = str(parts[0]) if parts else str(err.get("ctx", {}).get("key", ""))
    # pydantic names a union's member after the field ('hardware.list[str].0'): the field and its item are enough
    loc = f"{parts[0]}" + "".join(f"[{p}]" for p in parts[1:] if isinstance(p, int)) if parts else ""
    msg = "unknown field" if err["type"] == "extra_forbidden" else str(err["msg"]).removeprefix("Value error, ")
    fix = _fix(model, field, err["type"], given)
    return f"{what}: {loc + ': ' if loc else ''}{msg}. Fix: {fix} (see docs/web.md)."


def _parse(model: type[Request], body: Any, what: str, example: Mapping[str, Any]) -> Request:
    """The request body validated as `model`, or one line naming the problem and the fix."""
    if not isinstance(body, Mapping):
        raise ChipwiseError(f"the request body must be a JSON object. Fix: send e.g. {json.dumps(example)}.")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise ChipwiseError(_one_line(exc, what, model, body)) from None


#: what a request that names a file on the server is told: the page reads none (its answers said whether a path
#: such as /etc/passwd existed)
NO_FILES = "the web page reads no files on the server"


def _preset(cat: Catalog, model: str) -> str:
    """A model the web page serves: a preset name or alias, or a Hub id naming one, as on the command line
    (presets.preset_of), never a path to a config.json on the server."""
    if preset_of(cat, model) is None:
        raise UnknownNameError(
            "model", model, cat.models, hint=f"give a model preset (GET /api/models lists them); {NO_FILES}"
        )
    return model


def _draft_presets(cat: Catalog, options: Iterable[str | None]) -> None:
    """Each draft model that speculative-decoding `options` name is a preset: 'draft:/etc/shadow:3@0.7' had been
    loaded as a config.json on the server. The text is read without the catalog, which would load the model."""
    for option in options:
        if option:  # None: no speculation ('none' and 'off' are read as None before)
            spec = parse_speculation(option)
            if spec.draft_model:
                _preset(cat, spec.draft_model)


def _known_hardware(cat: Catalog, ids: Iterable[str]) -> list[str]:
    """`ids` where the catalog holds each, else one line naming the endpoint that lists them: the command line's
    fix ('run chipwise catalog list') had been given to the page, where an unknown model is told GET /api/models."""
    hw, named = hardware(cat), list(ids)
    for name in named:
        try:
            hw.system(name)
        except UnknownNameError as exc:
            if exc.name != name:  # another name it rests on (a fabric, a chip of a system): its own line
                raise
            raise UnknownNameError(
                "chip or system", name, [*cat.chips, *cat.systems], hint="GET /api/catalog lists them"
            ) from None
    return named


def _check_pricing_fields(pricing: str, region: str | None, provider: str | None, utilisation: float | None) -> None:
    """A utilisation of rented chips, a provider of owned ones, a region of another cloud than the provider's: one
    line each naming the request's fields, before the planner's refusals, which name the CLI's flags ('add --pricing
    owned', '--provider is gcp')."""
    mode = check_mode(pricing)
    check_utilisation(utilisation, mode, "utilisation", '"pricing": "owned"')
    check_rental_options(mode, {"provider": provider})
    check_region_provider(region, provider, "provider")


def plan_train(body: Any, settings: Settings) -> dict[str, Any]:
    """Rank hardware for a training run; adds `pareto`: the indices of the results on the cost-time front."""
    req = _parse(PlanTrainRequest, body, "plan request", PLAN_TRAIN_EXAMPLE)
    _check_pricing_fields(req.pricing, req.region, req.provider, req.utilisation)
    cat = settings.catalog()
    _preset(cat, req.model)
    report = plan_training(
        cat,
        req.model,
        req.chips,
        _known_hardware(cat, hardware_ids(cat, req.hardware)),
        tokens=read_count(req.tokens, "tokens"),  # at most MAX_TRAIN_TOKENS, as the CLI and /api/predict read it
        seq_len=req.seq_len,
        global_batch_tokens=req.global_batch_tokens,
        precision=req.precision,
        objective=req.objective,
        pricing=req.pricing,
        region=req.region,
        provider=req.provider,
        utilisation=req.utilisation,
    )
    if req.top is not None:
        report["results"] = report["results"][: req.top]
    points, _ = training_points(report)
    front = pareto_front([p.days for p in points], [p.musd for p in points])
    report["pareto"] = sorted(points[k].index for k in front)
    # what plan train says under its tables about its rows, as text, each fix worded for the page (its fields)
    report["notes"] = ranking_notes(report, where="web")
    return {**fmt.web_worded(report), "what_if": whatif_lines(cat)}


def predict(body: Any, settings: Settings) -> dict[str, Any]:
    """One scenario (DESIGN.md's contract, kind train or serve) -> the prediction. Its model is a preset and its
    lengths are numbers or distributions: a trace file or a config.json would be read from the server."""
    cat = settings.catalog()
    result = fmt.web_worded(with_batch_note(predict_scenario(cat, _scenario(body, cat))))
    if result.get("kind") == "serve":  # predict's warnings, which the page draws as the table's rows
        result["caveats"] = caveats(result)
    # what the server's --set or --catalog changed, as the CLI's --json and chipwise.api say it (it had said nothing)
    return {**result, "what_if": whatif_lines(cat)}


class SensitivityRequest(StrictModel):
    """POST /api/sensitivity: a scenario (as /api/predict takes it) and the options of `chipwise sensitivity`."""

    scenario: dict[str, Any]
    metric: str | None = None
    step: float = DEFAULT_STEP
    figures: list[str] = Field(default_factory=list)  # a list: pydantic's refusal of a tuple had said 'tuple'
    replan: StrictBool = False


def sensitivity(body: Any, settings: Settings) -> dict[str, Any]:
    """Which catalog figure matters most for a scenario (as `chipwise sensitivity --json`)."""
    req = _parse(SensitivityRequest, body, "sensitivity request", SENSITIVITY_EXAMPLE)
    cat = settings.catalog()
    sc = _scenario(req.scenario, cat)
    result = planner_sensitivity(
        sc, settings.files, settings.sets, req.step, req.metric, req.replan, only=req.figures, catalog=cat
    )
    return {**result, "what_if": whatif_lines(cat)}


def _scenario(body: Any, cat: Catalog) -> Any:
    """A scenario the web page prices: a preset model (and draft model), lengths as numbers or distributions (a
    trace file or a config.json would be read from the server)."""
    if not isinstance(body, Mapping):
        raise ChipwiseError("the request body must be a JSON object. Fix: send a scenario (docs/guide.md).")
    scenario = load_scenario(json.dumps(dict(body)), cat)
    _preset(cat, scenario.model)
    _known_hardware(cat, [scenario.hardware])
    if isinstance(scenario, ServeScenario):
        _draft_presets(cat, [scenario.speculative])
    if isinstance(scenario, ServeScenario) and scenario.trace_path() is not None:
        raise ChipwiseError(
            f"a trace file ('{scenario.trace_path()}') is not read here: {NO_FILES}. Fix: give input_tokens and "
            "output_tokens as numbers or distributions, or run 'chipwise predict' with the trace."
        )
    return scenario


class PlanServeRequest(StrictModel):
    """POST /api/plan/serve: the options of `chipwise plan serve` (the SLO in seconds or with a unit, e.g.
    {"ttft_p99": 2.0, "tpot_p99": "50ms"}); its flags are JSON booleans ("yes" and 1 are not true)."""

    model: str
    # numbers, or text such as "5" or "2k": load_of reads and checks them as it does for the API (true is not 1)
    rate: Any = None
    concurrency: Any = None
    offline: StrictBool = False
    # whole counts (1024, '4k') or distributions, as text ('lognormal:mean=2k,std=1.5k,max=16k') or a scenario's
    # mapping: read_length reads them as the command line and the API do
    input_tokens: Any = 1024
    output_tokens: Any = 256
    # seconds, or text with a unit ('2s', '50ms'): check_slo reads it as it does for the API and the command line
    slo: dict[str, Any] | None = None
    hardware: list[str] | str = "all"
    precision: str = RELEASED
    kv_precision: str | None = None
    engine: str | None = None
    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None  # only this cloud's prices, as plan serve's --provider
    utilisation: float | None = None  # an owned fleet's share of hours in paid work, as plan serve's --utilisation
    disaggregated: StrictBool | None = None  # None: splits under a rate; true: also under a closed loop (asked for)
    speculative: str | None = None
    router: RouterName = DEFAULT_ROUTER
    top: IntCount | None = None

    @model_validator(mode="before")
    @classmethod
    def _load_is_a_number(cls, data: Any) -> Any:
        """true is not a rate or a number of users (StrictModel had said 'is not text' of these untyped fields)."""
        if isinstance(data, Mapping):
            for key in ("rate", "concurrency", "input_tokens", "output_tokens"):
                value = data.get(key)
                if isinstance(value, bool):
                    said = {"key": key, "value": str(value).lower()}
                    raise PydanticCustomError("bool_for_number", "{key}: {value} is not a number", said)
        return data


def plan_serve(body: Any, settings: Settings) -> dict[str, Any]:
    """The cheapest fleet and configuration per chip that serves a load within its SLO, simulated."""
    req = _parse(PlanServeRequest, body, "serve plan request", PLAN_SERVE_EXAMPLE)
    _check_pricing_fields(req.pricing, req.region, req.provider, req.utilisation)
    load = load_of(req.rate, req.concurrency, req.offline, flag="")
    check_split_load(req.disaggregated, load, "disaggregated", "rate")
    prompt = read_length(req.input_tokens, "input_tokens", "1024 or '4k'")
    answer = read_length(req.output_tokens, "output_tokens", "256 or '1k'")
    cat = settings.catalog()
    ids, unrunnable = plan_serve_inputs(  # what the CLI and the API check before the search
        cat,
        _preset(cat, req.model),
        _known_hardware(cat, hardware_ids(cat, req.hardware)),
        prompt,
        answer,
        req.engine,
        req.region,
    )
    _draft_presets(cat, speculation_options(req.speculative))
    report = plan_serving(
        cat,
        req.model,
        ids,
        load,
        prompt,
        answer,
        req.slo,
        precision=req.precision,
        kv_precision=req.kv_precision,
        engine=req.engine,
        pricing=req.pricing,
        region=req.region,
        provider=req.provider,
        utilisation=req.utilisation,
        disaggregated=req.disaggregated,
        speculative=req.speculative,
        router=req.router,
        workers=cpu_count(),  # long checks side by side, as on the CLI (the server's main is the chipwise command)
    )
    # the split note's fix names the engine as this interface's field does, not the command line's --engine
    report["skipped"] = [*worded_for(report["skipped"], "web"), *unrunnable]
    # the first `top` rows and those the simulated checks point to, as --json keeps them (a check's rank had
    # indexed a row cut away)
    answer = fmt.web_worded(fmt.explain_plan_serve(fmt.first_rows(report, req.top)))  # a --set fix: the server's
    # the lengths as the command line heads its table (a distribution's mean had been shown as '1,999.955 in')
    return {**answer, "lengths": lengths_text(report), "what_if": whatif_lines(cat)}


def catalog_summary(settings: Settings) -> dict[str, Any]:
    """Chips and systems with their headline figures (SI), and the choices the page offers."""
    cat = settings.catalog()
    hw = hardware(cat)
    chips = []
    for cid, entry in cat.chips.items():
        chip = hw.chip(cid)
        chips.append(
            {
                "id": cid,
                "name": entry.name,
                "vendor": entry.vendor,
                "status": entry.status,
                "projected": chip.projected,
                "default_system": entry.default_system,
                "flops_bf16": chip.flops.get("bf16", chip.flops.get("fp16")),
                "flops_fp8": chip.flops.get("fp8"),
                "hbm_capacity_bytes": chip.hbm_capacity,
                "hbm_bandwidth_bytes_per_s": chip.hbm_bandwidth,
                "tdp_w": chip.tdp,
                "launch_year": chip.launch_year,
            }
        )
    systems = [
        {
            "id": sid,
            "name": s.name,
            "chip": s.chip,
            "chips": s.chips,
            "provider": s.provider,
            "system_kind": s.kind,
            "status": s.status,
        }
        for sid, s in cat.systems.items()
    ]
    return {
        "chips": chips,
        "systems": systems,
        "precisions": list(TRAINING_PRECISIONS),
        "serving_precisions": [RELEASED, *WEIGHT_PRECISIONS],
        "objectives": list(OBJECTIVES),
        "pricing_modes": list(MODES),  # the rental modes and an owned fleet's TCO, as plan train takes them
        # the serving plan's KV-cache formats and engines, as plan serve's --kv-precision and --engine take them
        "kv_precisions": list(KV_PRECISIONS),
        "engines": [e for e in cat.engines if e != "default"],
        # what a server started with --set or --catalog answers from, as the CLI's WHAT-IF banner says it (the page
        # had shown a changed catalog's answers with no word)
        "what_if": whatif_lines(cat),
    }


def models(settings: Settings) -> dict[str, Any]:
    """The model presets and what a --set or --catalog changed, as `chipwise model list --json` answers them (it had
    answered {"models"} alone, where the CLI answers {"models", "what_if"})."""
    cat = settings.catalog()
    return {"models": preset_summaries(cat), "what_if": whatif_lines(cat)}


def _reads_no_files(route: Callable[Args, dict[str, Any]]) -> Callable[Args, dict[str, Any]]:
    """`route` with every model name read as a preset (presets.no_files): the planners load the names they are
    given, and an existing path wins there, so a './llama-3.1-8b/config.json' in the server's folder had been read."""

    @functools.wraps(route)
    def answer(*args: Args.args, **kwargs: Args.kwargs) -> dict[str, Any]:
        with no_files():
            return route(*args, **kwargs)

    return answer


GET_ROUTES: dict[str, Callable[[Settings], dict[str, Any]]] = {
    "/api/catalog": _reads_no_files(catalog_summary),
    "/api/models": _reads_no_files(models),
}
POST_ROUTES: dict[str, Callable[[Any, Settings], dict[str, Any]]] = {
    "/api/predict": _reads_no_files(predict),
    "/api/sensitivity": _reads_no_files(sensitivity),
    "/api/plan/train": _reads_no_files(plan_train),
    "/api/plan/serve": _reads_no_files(plan_serve),
}
