"""The Python API checks what it is given at its boundary: options it passes on (tco's overrides, plan_serve's verify
and progress), files and sets of any type, scenario keys that are not text; its hints say what it accepts, its
errors name keywords rather than flags, and `import chipwise` reaches it."""

from __future__ import annotations

import importlib.resources
import subprocess
import sys
import tomllib
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict

import pytest

import chipwise
import chipwise.api as cw
from chipwise.catalog.loader import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.serving_plan import plan_serving
from chipwise.serve.engine import BASE_PROFILE, ENGINES, check_engine_model
from chipwise.workload.load import Load
from chipwise.workload.presets import load_model

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "train-llama70b-trn2.yaml"
SERVE = {
    "kind": "serve",
    "model": "llama-3.1-8b",
    "hardware": "h100-sxm",
    "chips": 1,
    "arrival_rate": 4,
    "output_tokens": 64,
}


class PlanServeLoad(TypedDict):
    """plan_serve's keywords the refusals below share."""

    rate: float
    hardware: str
    slo: Mapping[str, float | str]
    requests: int


PLAN_SERVE: PlanServeLoad = {"rate": 1, "hardware": "h100-sxm", "slo": {"ttft_p99": 2.0}, "requests": 200}


@pytest.mark.parametrize(
    ("call", "says"),
    [
        # raw ValueErrors and TypeErrors from deep in economics.tco and the serving planner
        (lambda: cw.tco("h100-sxm", overrides={"chip_price_usd": "x"}),
         "overrides['chip_price_usd'] 'x' is not a number. Fix: give e.g. 30000."),
        (lambda: cw.tco("h100-sxm", overrides=5),
         "overrides 5 is not a mapping of TCO inputs to figures. Fix: give e.g. {'chip_price_usd': 20000}."),
        (lambda: cw.tco("h100-sxm", overrides={5: 1.0, "a": 2.0}), "unknown overrides key '5'"),
        (lambda: cw.tco("h100-sxm", overrides={"chip_price_usd": True}), "overrides['chip_price_usd'] True is not"),
        (lambda: cw.plan_serve("llama-3.1-8b", verify="x", **PLAN_SERVE), "verify 'x' is not a positive finite whole"),
        (lambda: cw.plan_serve("llama-3.1-8b", progress=5, **PLAN_SERVE),
         "progress 5 is not a function. Fix: give a function of (what, done, total), or None."),
        # verify 0 had simulated nothing, and the verdict told the user to add hardware or lower the load
        (lambda: cw.plan_serve("llama-3.1-8b", verify=0, **PLAN_SERVE), "verify 0 is not a positive finite whole"),
        (lambda: cw.plan_serve("llama-3.1-8b", verify=-1, **PLAN_SERVE), "verify -1 is not a positive finite whole"),
        # files and sets of another type: TypeErrors from the catalog loader (wrong types on purpose, hence the ignores)
        (lambda: cw.models(files=[5]), "files [5] is not catalog file paths. Fix: give e.g. ['my-chips.yaml']."),  # type: ignore[list-item]
        (lambda: cw.claims(files=5), "files 5 is not catalog file paths."),  # type: ignore[arg-type]
        (lambda: cw.predict(SCENARIO, files=[None]), "files [None] is not catalog file paths."),  # type: ignore[list-item]
        (lambda: cw.models(sets=[5]), "sets [5] is not ID.FIELD=VALUE what-ifs. Fix: give e.g. ['trn2.tdp=600W']."),  # type: ignore[list-item]
        # the keyword's form, not the flag's
        (lambda: cw.predict(SCENARIO, sets=["trn2.hbm_bandwidth"]),
         "sets=['trn2.hbm_bandwidth'] has no '='. Fix: write sets=['ID.FIELD=VALUE'], e.g."),
        (lambda: cw.predict(SCENARIO, sets=["trn2.hbm_bandwith=3TB/s"]),
         "sets=['trn2.hbm_bandwith=3TB/s']: unknown figure of trn2 (chip)"),
        (lambda: cw.plan_train("llama-3.1-8b", chips=8, hardware="h100-sxm", utilisation=0.5),
         "Fix: add pricing='owned', or drop utilisation."),
        # 'default' is the catalog's base level of engine figures, no engine
        (lambda: cw.predict({**SERVE, "engine": "default"}), "unknown serving engine 'default'"),
        # type errors in a scenario: an internal class named, and 'Fix: correct it'; a key None read as 'null'
        (lambda: cw.predict({**SERVE, "slo": "ttft_p99_s=2"}),
         "slo: 'ttft_p99_s=2' is not a mapping. Fix: give a mapping of the slo keys: ttft_p50_s,"),
        (lambda: cw.predict({**SERVE, "plan": [1, 2]}), "plan: [1, 2] is not a mapping. Fix: give a mapping of the"),
        (lambda: cw.predict({"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8,
                             "plan": [1]}), "plan: [1] is not a mapping. Fix: give a mapping, e.g. {tp: 8, pp: 4}"),
        (lambda: cw.predict({**SERVE, "plan": {None: 1}}), "scenario key None in plan is not text. Fix:"),
    ],
)  # fmt: skip
def test_the_api_refuses_in_one_line_naming_its_keywords(call: Callable[[], object], says: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        call()
    message = str(exc.value)
    assert says in message and "\n" not in message and "--" not in message, message
    assert "instance of" not in message and "correct it" not in message and "null" not in message, message


def test_tco_overrides_take_counts_as_text_as_the_api_reads_counts() -> None:
    """'20k' dollars is 20,000 (the API reads every count so); it had raised a ValueError."""
    text = cw.tco("h100-sxm", overrides={"chip_price_usd": "20k"})
    assert text == cw.tco("h100-sxm", overrides={"chip_price_usd": 20000})


def test_the_planner_refuses_a_verify_below_zero_and_keeps_zero() -> None:
    """plan_serving's verify 0 ranks by the estimate alone (the planner's tests use it); -1 had done so in silence."""
    with pytest.raises(ChipwiseError, match=r"^verify -1 is not a whole number of options to simulate\. Fix:"):
        plan_serving(load_catalog(), "llama-3.1-8b", ["h100-sxm"], Load("rate", rate=1.0), 128, 16, verify=-1)


def test_default_is_no_engine_name_but_the_base_profile_validation_prices_with() -> None:
    """Neither accepted from a user nor listed in the fix; validation's rows of unknown engines still price with it."""
    assert "default" not in ENGINES
    with pytest.raises(ChipwiseError) as exc:
        cw.predict({**SERVE, "engine": "tgi"})
    assert "default" not in str(exc.value).split("Fix:")[1].split(", or")[0]
    check_engine_model(BASE_PROFILE, load_model(load_catalog(), "llama-3.1-8b"))  # no error


def test_the_hints_take_what_the_functions_take() -> None:
    """mypy --strict had rejected cw.predict(Path(...)), tokens='15T' and the other documented calls."""
    hints = {f.__name__: typing.get_type_hints(f) for f in (cw.predict, cw.sensitivity, cw.plan_train)}
    hints |= {f.__name__: typing.get_type_hints(f) for f in (cw.plan_serve, cw.plan_hetero, cw.plan_lifecycle)}
    hints["model"] = typing.get_type_hints(cw.model)
    for function, name in [("predict", "scenario"), ("sensitivity", "scenario")]:
        assert Path in typing.get_args(hints[function][name]), function
    for function, name in [
        ("plan_train", "tokens"),
        ("plan_train", "chips"),
        ("plan_serve", "rate"),
        ("plan_serve", "concurrency"),
        ("plan_hetero", "tokens"),
        ("plan_lifecycle", "train_tokens"),
        ("plan_lifecycle", "serve_rate"),
        ("plan_lifecycle", "serve_months"),
        ("model", "seq_len"),
    ]:
        assert str in typing.get_args(hints[function][name]), (function, name)


def test_the_package_ships_its_type_hints() -> None:
    """Without py.typed a user's mypy skipped chipwise ('missing library stubs or py.typed marker')."""
    assert importlib.resources.files("chipwise").joinpath("py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["chipwise"]


def test_import_chipwise_reaches_the_api() -> None:
    """DESIGN.md's 'the same through import chipwise': chipwise.api had been an AttributeError."""
    assert chipwise.api is cw and chipwise.__getattr__("api") is cw
    with pytest.raises(AttributeError):
        chipwise.__getattr__("predict_everything")
    # in a fresh interpreter, where chipwise.api is not loaded yet (a `from chipwise import api` there had recursed)
    code = "import sys, chipwise; assert 'chipwise.api' not in sys.modules; print(chipwise.api.predict.__name__)"
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "predict"), done.stderr[-300:]
