"""What each JSON endpoint of the web page answers: request bodies validated strictly, answers from the Python API.

No HTTP here (that is `server.py`): each handler takes the parsed JSON body and returns a JSON-ready dictionary,
or raises `ChipwiseError` with one line naming the problem and the fix.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, StrictBool, ValidationError

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.economics.pricing import MODES
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import hardware, hardware_ids
from chipwise.interfaces import format as fmt
from chipwise.interfaces.plots import pareto_front, training_points
from chipwise.planner.serving import plan_serve_inputs, predict_serving
from chipwise.planner.serving_plan import check_split_load, plan_serving
from chipwise.planner.training import OBJECTIVES, plan_training, predict_training
from chipwise.serve.quant import RELEASED, WEIGHT_PRECISIONS
from chipwise.sweep.backends import cpu_count
from chipwise.workload.presets import preset_id, preset_summaries
from chipwise.workload.scenario import Count, IntCount, StrictModel, TrainScenario, load_scenario
from chipwise.workload.serving import DEFAULT_ROUTER, RouterName, ServeScenario, load_of

TRAINING_PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp4")
Request = TypeVar("Request", bound=BaseModel)


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
    seq_len: IntCount | None = None
    global_batch_tokens: Count | None = None
    top: IntCount | None = None


#: the fix for a value of the wrong JSON type (StrictModel's `bool_for_number`: true where a number is expected)
_TYPE_FIX = {"bool_type": "give true or false", "bool_for_number": "give a number"}


def _one_line(exc: ValidationError, what: str) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = "unknown field" if err["type"] == "extra_forbidden" else str(err["msg"]).removeprefix("Value error, ")
    fix = _TYPE_FIX.get(err["type"], "correct the request")
    return f"{what}: {loc + ': ' if loc else ''}{msg}. Fix: {fix} (see docs/web.md)."


def _parse(model: type[Request], body: Any, what: str, example: str) -> Request:
    """The request body validated as `model`, or one line naming the problem and the fix."""
    if not isinstance(body, Mapping):
        raise ChipwiseError(f"the request body must be a JSON object. Fix: send {example}.")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise ChipwiseError(_one_line(exc, what)) from None


#: what a request that names a file on the server is told: the page reads none (its answers said whether a path
#: such as /etc/passwd existed)
NO_FILES = "the web page reads no files on the server"


def _preset(cat: Catalog, model: str) -> str:
    """A model the web page serves: a preset name or alias, never a path to a config.json on the server."""
    if preset_id(cat, model) is None:
        raise UnknownNameError(
            "model", model, cat.models, hint=f"give a model preset (GET /api/models lists them); {NO_FILES}"
        )
    return model


def plan_train(body: Any, settings: Settings) -> dict[str, Any]:
    """Rank hardware for a training run; adds `pareto`: the indices of the results on the cost-time front."""
    req = _parse(PlanTrainRequest, body, "plan request", "{'model': ..., 'chips': ...}")
    cat = settings.catalog()
    _preset(cat, req.model)
    report = plan_training(
        cat,
        req.model,
        req.chips,
        hardware_ids(cat, req.hardware),
        tokens=req.tokens,
        seq_len=req.seq_len,
        global_batch_tokens=req.global_batch_tokens,
        precision=req.precision,
        objective=req.objective,
        pricing=req.pricing,
        region=req.region,
    )
    if req.top is not None:
        report["results"] = report["results"][: req.top]
    points, _ = training_points(report)
    front = pareto_front([p.days for p in points], [p.musd for p in points])
    report["pareto"] = sorted(points[k].index for k in front)
    return report


def predict(body: Any, settings: Settings) -> dict[str, Any]:
    """One scenario (DESIGN.md's contract, kind train or serve) -> the prediction. Its model is a preset and its
    lengths are numbers or distributions: a trace file or a config.json would be read from the server."""
    if not isinstance(body, Mapping):
        raise ChipwiseError("the request body must be a JSON object. Fix: send a scenario (docs/guide.md).")
    cat = settings.catalog()
    scenario = load_scenario(json.dumps(dict(body)), cat)
    _preset(cat, scenario.model)
    if isinstance(scenario, ServeScenario) and scenario.trace_path() is not None:
        raise ChipwiseError(
            f"a trace file ('{scenario.trace_path()}') is not read here: {NO_FILES}. Fix: give input_tokens and "
            "output_tokens as numbers or distributions, or run 'chipwise predict' with the trace."
        )
    if isinstance(scenario, TrainScenario):
        return predict_training(cat, scenario)
    return dict(predict_serving(cat, scenario))


class PlanServeRequest(StrictModel):
    """POST /api/plan/serve: the options of `chipwise plan serve` (the SLO in seconds or with a unit, e.g.
    {"ttft_p99": 2.0, "tpot_p99": "50ms"}); its flags are JSON booleans ("yes" and 1 are not true)."""

    model: str
    # numbers, or text such as "5" or "2k": load_of reads and checks them as it does for the API (true is not 1)
    rate: Any = None
    concurrency: Any = None
    offline: StrictBool = False
    input_tokens: IntCount = 1024
    output_tokens: IntCount = 256
    # seconds, or text with a unit ('2s', '50ms'): check_slo reads it as it does for the API and the command line
    slo: dict[str, Any] | None = None
    hardware: list[str] | str = "all"
    precision: str = RELEASED
    kv_precision: str | None = None
    engine: str | None = None
    pricing: str = "on-demand"
    region: str | None = None
    disaggregated: StrictBool | None = None  # None: splits where the load allows them; true: asked for (a rate needed)
    speculative: str | None = None
    router: RouterName = DEFAULT_ROUTER
    top: IntCount | None = None


def plan_serve(body: Any, settings: Settings) -> dict[str, Any]:
    """The cheapest fleet and configuration per chip that serves a load within its SLO, simulated."""
    req = _parse(PlanServeRequest, body, "serve plan request", "{'model': ..., 'rate': ...}")
    load = load_of(req.rate, req.concurrency, req.offline, flag="")
    check_split_load(req.disaggregated, load, "disaggregated", "rate")
    cat = settings.catalog()
    ids, unrunnable = plan_serve_inputs(  # what the CLI and the API check before the search
        cat,
        _preset(cat, req.model),
        hardware_ids(cat, req.hardware),
        req.input_tokens,
        req.output_tokens,
        req.engine,
        req.region,
    )
    report = plan_serving(
        cat,
        req.model,
        ids,
        load,
        int(req.input_tokens),
        int(req.output_tokens),
        req.slo,
        precision=req.precision,
        kv_precision=req.kv_precision,
        engine=req.engine,
        pricing=req.pricing,
        region=req.region,
        disaggregated=req.disaggregated is not False,
        speculative=req.speculative,
        router=req.router,
        workers=cpu_count(),  # long checks side by side, as on the CLI (the server's main is the chipwise command)
    )
    report["skipped"].extend(unrunnable)
    if req.top is not None:
        report["results"] = report["results"][: req.top]
    return fmt.explain_plan_serve(report)


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
    }


def models(settings: Settings) -> dict[str, Any]:
    """The model presets (as `chipwise model list --json`)."""
    return {"models": preset_summaries(settings.catalog())}


GET_ROUTES: dict[str, Callable[[Settings], dict[str, Any]]] = {
    "/api/catalog": catalog_summary,
    "/api/models": models,
}
POST_ROUTES: dict[str, Callable[[Any, Settings], dict[str, Any]]] = {
    "/api/predict": predict,
    "/api/plan/train": plan_train,
    "/api/plan/serve": plan_serve,
}


def jsonable(obj: Any) -> Any:
    """Plain JSON values: NaN and infinities become null, NumPy scalars and arrays become numbers and lists."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating | float):
        value = float(obj)
        return value if math.isfinite(value) else None
    if isinstance(obj, Path):
        return str(obj)
    return obj
