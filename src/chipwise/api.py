"""The Python API: the same answers as the CLI, as plain dictionaries (SI units: seconds, bytes, FLOP/s, joules,
US dollars). Every function takes `files` (catalog YAML files of your own) and `sets` (`ID.FIELD=VALUE` what-ifs).

import chipwise.api as cw
cw.predict({"kind": "train", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 1024, "tokens": 15e12})
cw.plan_train("llama-3.1-405b", tokens=15e12, chips=16384, hardware=["h100-sxm", "trn2", "gb200"])
cw.plan_serve("llama-3.1-70b", rate=20, input_tokens=1024, output_tokens=256, slo={"ttft_p99": 2.0, "tpot_p99": 0.05})
cw.plan_hetero("llama-3.1-405b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack")
cw.plan_fleet("llama-3.1-70b", "examples/chat-mix.yaml", slo={"ttft_p99": 2.0, "tpot_p99": 0.05})
cw.plan_lifecycle("llama-3.1-70b", train_tokens=15e12, serve_rate=100, serve_months=12)
cw.tco("h100-sxm", utilisation=0.8)
cw.claims()
cw.validate("../shared/data/groundtruth_training.csv")
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.economics.tco import owned_tco, tco_report
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware import hardware as hw_view
from chipwise.hardware import hardware_ids
from chipwise.interfaces.format import explain_plan_serve
from chipwise.planner.claims import check_claims
from chipwise.planner.fleet import plan_fleet as planner_fleet
from chipwise.planner.hetero import plan_hetero_training
from chipwise.planner.lifecycle import plan_lifecycle as planner_lifecycle
from chipwise.planner.serving import plan_serve_inputs
from chipwise.planner.serving_plan import check_split_load, plan_serving
from chipwise.planner.training import plan_training, predict_training
from chipwise.serve.quant import RELEASED
from chipwise.validation.run import validate_path
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import TrainScenario, load_scenario, read_count
from chipwise.workload.serving import is_count, load_of, name_value


def catalog(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> Catalog:
    """The built-in catalog with users' YAML files and `ID.FIELD=VALUE` overrides applied."""
    return load_catalog(files, sets)


def _check_options(options: Mapping[str, Any], takes: Callable[..., Any], *extra: str) -> None:
    """One line for an option the function answering a call does not take (`extra`: those the API reads itself);
    Python raised a TypeError naming an internal function."""
    known = [n for n, p in inspect.signature(takes).parameters.items() if p.default is not p.empty]
    known += [e for e in extra if e not in known]
    for name in options:
        if name not in known:
            raise UnknownNameError("option", name, known, hint=f"use one of {', '.join(known)}")


def _hardware(cat: Catalog, hardware: Any) -> list[str]:
    """The ids `hardware` names: 'all', a comma-separated string or a sequence of ids (another type is one line,
    not a TypeError)."""
    ids = isinstance(hardware, str) or (isinstance(hardware, Sequence) and all(isinstance(h, str) for h in hardware))
    if not ids:
        raise ChipwiseError(
            f"hardware {hardware!r} is not chip or system ids. Fix: give e.g. 'h100-sxm,trn2', ['h100-sxm', 'trn2'] "
            "or 'all'."
        )
    return hardware_ids(cat, hardware)


_FLAG = TypeAdapter(bool)


def _plain(value: Any) -> Any:
    """A NumPy scalar (np.int64(1024) chips) as the Python number it holds, for the scenario's JSON."""
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _number(value: Any, name: str) -> Any:
    """A finite number (a fraction or a PUE, checked for its range by the planner), None kept, else one line."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)):
        return value
    raise ChipwiseError(f"{name} {value!r} is not a number. Fix: give e.g. 0.8.")


def _name(value: Any, what: str) -> str:
    """A model, chip or system name, else one line (None had raised an AttributeError)."""
    if isinstance(value, str) and value:
        return value
    raise ChipwiseError(f"{what} {value!r} is not a name. Fix: give e.g. 'llama-3.1-70b' or 'h100-sxm'.")


#: plan_train's options that are counts (whole or not) and numbers
_TRAIN_COUNTS = {"seq_len": True, "global_batch_tokens": False, "top_plans": True}
_TRAIN_NUMBERS = ("utilisation", "pue")


def _flag(value: Any, name: str) -> bool:
    """A true/false option read as the web page reads it (True, False, 'yes', 'no', 1, 0), else one line: 'no'
    was truthy, and asked for what it meant to refuse."""
    try:
        return _FLAG.validate_python(value)
    except ValidationError:
        raise ChipwiseError(f"{name} {value!r} is not true or false. Fix: give True or False.") from None


def predict(
    scenario: str | Mapping[str, Any], files: Sequence[str | Path] = (), sets: Sequence[str] = ()
) -> dict[str, Any]:
    """Predict a scenario given as a path, inline YAML/JSON text, or a mapping (DESIGN.md's scenario contract)."""
    if isinstance(scenario, Path):
        scenario = str(scenario)
    if not isinstance(scenario, str | Mapping):
        raise ChipwiseError(
            f"scenario {scenario!r} is not a path, YAML/JSON text or a mapping. Fix: give e.g. {{'kind': 'train', "
            "'model': 'llama-3.1-70b', 'hardware': 'h100-sxm', 'chips': 1024}."
        )
    try:
        text = json.dumps(dict(scenario), default=_plain) if isinstance(scenario, Mapping) else scenario
    except (TypeError, ValueError) as exc:  # a NumPy number, an integer of thousands of digits
        raise ChipwiseError(
            f"the scenario holds a value JSON cannot carry ({exc}). Fix: give numbers, text, true/false, lists and "
            "mappings."
        ) from None
    cat = load_catalog(files, sets)
    sc = load_scenario(text, cat)
    if isinstance(sc, TrainScenario):
        return predict_training(cat, sc)
    from chipwise.planner.serving import predict_serving

    return predict_serving(cat, sc)


def plan_train(
    model: str,
    chips: int,
    hardware: Sequence[str] | str = "all",
    tokens: float | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Rank hardware for a training run (see `chipwise plan train --help` for the options)."""
    _check_options(options, plan_training)
    for key, whole in _TRAIN_COUNTS.items():
        if key in options:
            options[key] = read_count(options[key], key, whole)
    for key in _TRAIN_NUMBERS:
        if key in options:
            options[key] = _number(options[key], key)
    cat = load_catalog(files, sets)
    return plan_training(
        cat,
        _name(model, "model"),
        read_count(chips, "chips", whole=True),
        _hardware(cat, hardware),
        tokens=read_count(tokens, "tokens"),
        **options,
    )


def plan_serve(
    model: str,
    rate: float | None = None,
    concurrency: int | None = None,
    offline: bool = False,
    input_tokens: int = 1024,
    output_tokens: int = 256,
    slo: str | Mapping[str, float | str] | None = None,
    hardware: Sequence[str] | str = "all",
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """The cheapest fleet per chip that serves a load (one of rate, concurrency, offline) within the SLO (keys like
    ttft_p99, tpot_p99, e2e_p50, to seconds or times with units, {'ttft_p99': 2.0, 'tpot_p99': '50ms'}, or text as
    --slo takes it), simulated; options as `chipwise plan serve --help`."""
    _check_options(options, plan_serving, "top")
    if "engine" in options:
        options["engine"] = name_value(options["engine"])  # any case, as on the command line
    cat = load_catalog(files, sets)
    load = load_of(rate, concurrency, _flag(offline, "offline"), flag="")
    disaggregated = options.pop("disaggregated", None)  # None: splits where the load allows them, as on the CLI
    if disaggregated is not None:
        disaggregated = _flag(disaggregated, "disaggregated")
    check_split_load(disaggregated, load, "disaggregated", "rate")
    top = options.pop("top", None)
    ids, unrunnable = plan_serve_inputs(
        cat,
        model,
        _hardware(cat, hardware),
        input_tokens,
        output_tokens,
        options.get("engine"),
        options.get("region"),
    )
    report = plan_serving(
        cat, model, ids, load, input_tokens, output_tokens, slo, disaggregated=disaggregated is not False, **options
    )
    report["skipped"].extend(unrunnable)
    if top is not None:
        if not is_count(top):
            raise ChipwiseError(f"top {top!r} is not a whole number of rows. Fix: give e.g. 20.")
        report["results"] = report["results"][:top]
    return explain_plan_serve(report)  # as `chipwise plan serve --json` gives it


def plan_hetero(
    model: str,
    fleet: Mapping[str, int],
    tokens: float | None = None,
    hybrid: str | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Train on a mixed fleet ({chip: count}): pipelines with stages on two chip types against each part alone."""
    _check_options(options, plan_hetero_training)
    if not isinstance(fleet, Mapping):
        raise ChipwiseError(f"fleet {fleet!r} is not a mapping of chips to counts. Fix: give e.g. {{'trn4': 36}}.")
    counts = {_name(chip, "chip"): read_count(n, f"fleet['{chip}']", whole=True) for chip, n in fleet.items()}
    cat = load_catalog(files, sets)
    return plan_hetero_training(
        cat, _name(model, "model"), counts, read_count(tokens, "tokens"), hybrid=hybrid, **options
    )


def plan_fleet(
    model: str,
    workload: str | Path,
    slo: Mapping[str, float],
    hardware: Sequence[str] | str = "all",
    limits: Mapping[str, int] | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """The cheapest mix of instance types for a workload (a YAML bucket mix or a CSV/JSONL trace), replayed in the
    simulator."""
    _check_options(options, planner_fleet)
    options.setdefault("precision", RELEASED)  # the checkpoint's own, as `chipwise plan fleet` takes it
    cat = load_catalog(files, sets)
    return planner_fleet(cat, model, str(workload), slo, _hardware(cat, hardware), limits, **options)


def plan_lifecycle(
    model: str,
    train_tokens: float,
    serve_rate: float,
    serve_months: float = 12.0,
    hardware: Sequence[str] | str = "all",
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Train on X, serve on Y: the best (train, serve) pair by cost, energy or carbon against one vendor for both."""
    _check_options(options, planner_lifecycle)
    options.setdefault("serve_precision", RELEASED)  # as `chipwise plan lifecycle` takes it
    cat = load_catalog(files, sets)
    return planner_lifecycle(cat, model, train_tokens, serve_rate, serve_months, _hardware(cat, hardware), **options)


def tco(
    hardware: str,
    region: str | None = None,
    utilisation: float = 1.0,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """The owned cost of one chip-hour of a chip or system, every term with its source, and the break-even
    utilisation against renting (as `chipwise tco --json`)."""
    _check_options(options, owned_tco, "compare")
    cat = load_catalog(files, sets)
    compare = options.pop("compare", "on-demand")
    system = hw_view(cat).system(_name(hardware, "hardware"))
    return tco_report(cat, owned_tco(cat, system, region, _number(utilisation, "utilisation"), **options), compare)


def claims(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> dict[str, Any]:
    """The Trainium3/Trainium4 launch claims, each with its numbers and a verdict (as `chipwise claims --json`)."""
    return check_claims(load_catalog(files, sets))


def validate(path: str | Path, files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> dict[str, Any]:
    """Predict every row of a ground-truth CSV (training or serving, told apart by its columns) and report the
    errors (as `chipwise validate --json`)."""
    return validate_path(load_catalog(files, sets), Path(path))


def model(name: str, seq_len: int = 4096, files: Sequence[str | Path] = ()) -> dict[str, Any]:
    """A model's parameters, FLOPs per token and KV-cache bytes (as `chipwise model show --json`)."""
    return load_model(load_catalog(files), _name(name, "model")).summary(read_count(seq_len, "seq_len", whole=True))
