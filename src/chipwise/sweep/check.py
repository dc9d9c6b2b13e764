"""Check a sweep against the catalog before any point runs, so bad input fails fast with one line (exit code 2).

Every what-if's catalog is loaded (so an override naming an unknown chip or figure is reported), every axis value is
validated as part of a scenario (one axis varied at a time from the first point: the sum of the axis lengths, not
their product) with the checks predict makes before it runs (plan keys, precision, pricing mode; a serving
engine, KV-cache precision and speculative decoding), and every model, region, provider and hardware name (a
serving sweep's where it is one plain name) must exist in at least one what-if's catalog. What is left (a plan
that does not fit, a name that exists only in some what-ifs) is a per-point error, stored with the point.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.economics.energy import check_region
from chipwise.economics.pricing import check_mode
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.sweep.spec import SweepSpec, scenario_of
from chipwise.train.plans import normalise
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import check_provider
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.train_scenario import TrainScenario
from chipwise.workload.training import training_precision


def load_variant_catalogs(spec: SweepSpec) -> dict[str, Catalog]:
    """Each what-if's catalog by variant digest; a bad override or catalog file names the what-if."""
    out: dict[str, Catalog] = {}
    for v in spec.variants:
        try:
            out[v.digest] = load_catalog(v.files, v.sets)
        except ChipwiseError as exc:
            raise ChipwiseError(f"{spec.source}: what_if '{v.name}': {exc}") from None
    return out


def _describe(axes: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in axes.items())


def _probes(spec: SweepSpec) -> Iterator[dict[str, Any]]:
    """The first point's axes, then each axis value (or zip row) swapped into it, one at a time."""
    first = next(spec.combos())
    yield first
    for key, values in spec.grid.items():
        for value in values[1:]:
            yield {**first, key: value}
    for group in spec.zips:
        n = len(next(iter(group.values())))
        for i in range(1, n):
            yield {**first, **{k: v[i] for k, v in group.items()}}


def check_scenarios(spec: SweepSpec) -> None:
    cls: type[BaseModel] = TrainScenario if spec.kind == "train" else ServeScenario
    for axes in _probes(spec):
        try:
            scenario = cls.model_validate(scenario_of(spec.base, axes))
        except ValidationError as exc:
            errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")  # a typo before its effects
            err = errors[0]
            loc = ".".join(str(p) for p in err["loc"])
            msg = "unknown key" if err["type"] == "extra_forbidden" else str(err["msg"]).removeprefix("Value error, ")
            head = _field(err)
            varied = [k for k in axes if k.split(".", 1)[0] == head]
            where = f"the point {_describe(axes)}" if varied or not head else "base"
            # a check of the whole scenario names no key: the point's axes may be what conflicts (a grid's
            # arrival_rate beside its concurrency had been blamed on base, which held neither)
            fix = "grid or zip" if varied else "base, grid or zip" if not head and axes else "base"
            raise ChipwiseError(
                f"{spec.source}: {where} is not a valid scenario: {loc + ': ' if loc else ''}{msg}. "
                f"Fix: correct it in {fix} (scenario keys: docs/guide.md#scenario-keys)."
            ) from None
        _check_plan_keys(spec, axes, scenario)
        _check_fields(spec, axes, scenario)


def _field(err: Any) -> str:
    """The top-level scenario key an error is about: StrictModel's check of every field (true for a number) names
    it in the error's context, not its location (a grid's 'chips: [64, true]' had been blamed on base)."""
    return str(err["loc"][0]) if err["loc"] else str(err.get("ctx", {}).get("key", ""))


def _field_checks(kind: str) -> list[tuple[str, Callable[[Any], Any]]]:
    """The scenario fields a prediction reads by name before it runs (precision, pricing, a serving engine ...),
    each with the check predict applies to it: free text to the scenario's own validation, so a typo ('bf-16') had
    run every point and stored each as failed, where predict refuses it at once. Names a catalog holds (hardware,
    model, region, provider) are check_names'."""
    if kind == "train":
        return [("precision", training_precision), ("pricing", check_mode)]
    from chipwise.serve.engine import check_engine_name  # serving's modules only for a serving sweep
    from chipwise.serve.quant import KV_PRECISIONS, RELEASED, WEIGHT_PRECISIONS, check_precision
    from chipwise.serve.speculation import parse_speculation

    return [
        ("precision", lambda p: check_precision(p, (*WEIGHT_PRECISIONS, RELEASED), "weight")),
        ("kv_precision", lambda p: check_precision(p, KV_PRECISIONS, "KV-cache")),
        ("engine", check_engine_name),
        ("speculative", parse_speculation),
        ("pricing", check_mode),
    ]


def _check_fields(spec: SweepSpec, axes: dict[str, Any], scenario: BaseModel) -> None:
    for key, check in _field_checks(spec.kind):
        value = getattr(scenario, key, None)
        if value is None:
            continue
        try:
            check(value)
        except ChipwiseError as exc:
            where = f"the point {_describe(axes)}" if key in axes else "base"
            raise ChipwiseError(f"{spec.source}: {where} is not a valid scenario: {exc}") from None


def _check_plan_keys(spec: SweepSpec, axes: dict[str, Any], scenario: BaseModel) -> None:
    """A training scenario's plan knobs are a free mapping to the scenario's model, checked by the search: an
    unknown one ('plan.tq') had run every point and stored each as failed, where predict refuses it at once."""
    plan = getattr(scenario, "plan", None) if isinstance(scenario, TrainScenario) else None
    if not plan:
        return
    try:
        normalise(plan)
    except ChipwiseError as exc:
        varied = [k for k in axes if k.split(".", 1)[0] == "plan"]
        where = f"the point {_describe(axes)}" if varied else "base"
        raise ChipwiseError(f"{spec.source}: {where} is not a valid scenario: {exc}") from None


def text_values(spec: SweepSpec, key: str) -> list[str]:
    """The text values `key` takes in the sweep (base, grid, zips), each once."""
    found: list[Any] = [spec.base.get(key)]
    found += spec.grid.get(key, [])
    for group in spec.zips:
        found += group.get(key, [])
    return list(dict.fromkeys(v for v in found if isinstance(v, str)))


def _plain(name: str) -> bool:
    """Whether a hardware value is one chip or system name (no fleet or mix syntax such as 'trn4=512,gb300=512')."""
    return re.fullmatch(r"[\w.\-]+", name) is not None


def check_names(spec: SweepSpec, catalogs: dict[str, Catalog]) -> None:
    """Each model, region and provider name, and each hardware name, exists in at least one what-if's catalog (a
    serving sweep's plain hardware names: a value with fleet or mix syntax is the serving scenario's own check, per
    point; a typo in a plain one had run the whole sweep, stored as failed)."""
    checks: list[tuple[str, Callable[[Catalog, str], Any]]] = [
        ("hardware", lambda cat, name: hardware(cat).system(name)),
        ("model", load_model),
        ("region", check_region),
        ("provider", check_provider),
    ]
    for key, resolve in checks:
        for name in text_values(spec, key):
            if key == "hardware" and spec.kind != "train" and not _plain(name):
                continue
            first_error: ChipwiseError | None = None
            for cat in catalogs.values():
                try:
                    resolve(cat, name)
                except ChipwiseError as exc:
                    first_error = first_error or exc
                else:
                    first_error = None
                    break
            if first_error is not None:
                raise ChipwiseError(f"{spec.source}: {key} '{name}': {first_error}") from None


def check_sweep(spec: SweepSpec) -> dict[str, Catalog]:
    """Validate the whole sweep against its catalogs; return each what-if's catalog by variant digest."""
    catalogs = load_variant_catalogs(spec)
    check_scenarios(spec)
    check_names(spec, catalogs)
    return catalogs
