"""The Python API and the catalog and model commands: their answers carry the what-if as every other command's
--json does (catalog show trn3 --set ..., model show, cw.models() had none); a `--set` fix ending a sentence is
rewritten without the sentence's full stop; `import chipwise.api` loads the planners, the validation, the CLI's
catalog views and scipy only when a function needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from cli_run import run_json

SET = "trn3.hbm_bandwidth=6TB/s"
#: what the --set above makes of trn3's 4.9 TB/s, as predict --json names it
LINE = "trn3.hbm_bandwidth = 6 TB/s (catalog 4.9 TB/s), set on the command line"
#: the same line in the API's answer, whose what-ifs are given in sets=, not on a command line
API_LINE = "trn3.hbm_bandwidth = 6 TB/s (catalog 4.9 TB/s), given in sets="


@pytest.mark.parametrize(
    ("answer", "argv"),
    [
        (lambda sets: cw.catalog_show("trn3", sets=sets), ["catalog", "show", "trn3"]),
        (lambda sets: cw.catalog_show("efficiency.trainium3", sets=sets), ["catalog", "show", "efficiency.trainium3"]),
        (lambda sets: cw.catalog_list(sets=sets), ["catalog", "list"]),
        (lambda sets: cw.catalog_engine("vllm", chip="trn3", sets=sets),
         ["catalog", "engine", "vllm", "--chip", "trn3"]),
        (lambda sets: cw.model("llama-3.1-8b", sets=sets), ["model", "show", "llama-3.1-8b"]),
        (lambda sets: cw.models(sets=sets), ["model", "list"]),
    ],
)  # fmt: skip
def test_catalog_and_model_answers_carry_the_what_if(
    capsys: pytest.CaptureFixture[str], answer: Callable[[list[str]], dict[str, Any]], argv: list[str]
) -> None:
    assert answer([SET])["what_if"] == [API_LINE]
    assert answer([])["what_if"] == []
    assert run_json(capsys, [*argv, "--set", SET, "--json"])["what_if"] == [LINE]
    assert run_json(capsys, [*argv, "--json"])["what_if"] == []


def test_a_set_fix_ending_a_sentence_leaves_its_full_stop_out() -> None:
    """eu-north-1 has no electricity price: the fix's '--set ...=0.1USD/kWh.' had read sets=['...=0.1USD/kWh.'],
    which passed back is "unknown unit 'USD/kWh.'"; the 0.1's own '.' stays."""
    owned = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "tokens": 1e9,
             "pricing": "owned", "region": "eu-north-1"}  # fmt: skip
    with pytest.raises(ChipwiseError) as exc:
        cw.predict(owned)
    fix = "sets=['datacenter.electricity_usd_per_kwh.eu-north-1=0.1USD/kWh']"
    assert str(exc.value).endswith(f" or {fix}.")
    assert cw.predict(owned, sets=["datacenter.electricity_usd_per_kwh.eu-north-1=0.1USD/kWh"])["cost_usd"] > 0


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("Fix: --set a.b=0.1USD/kWh.", "Fix: sets=['a.b=0.1USD/kWh']."),
        ("Fix: --set trn2.tdp=5. Then run.", "Fix: sets=['trn2.tdp=5']. Then run."),
        ("Fix: --set trn2.tdp=500W, or drop it", "Fix: sets=['trn2.tdp=500W'], or drop it"),
        ("--set trn2.hbm_bandwith: unknown", "sets=['trn2.hbm_bandwith']: unknown"),
        ("--set gives.", "sets gives."),  # no assignment (a word that ends a sentence): the bare flag
        ("--set 'trn2.hbm' has no '='", "sets=['trn2.hbm'] has no '='"),
    ],
)
def test_a_set_keeps_its_decimals_and_leaves_the_sentence_its_stop(message: str, said: str) -> None:
    assert cw._keyword_names(message, {"sets"}) == said


#: what `import chipwise.api` had loaded for functions that need them: 0.44-0.59 s against 0.195 s for the CLI
HEAVY = {
    "scipy",
    "chipwise.planner.claims",
    "chipwise.planner.fleet",
    "chipwise.planner.scenario",
    "chipwise.planner.training",
    "chipwise.planner.serving_plan",
    "chipwise.serve.iteration",
    "chipwise.economics.tco",
    "chipwise.interfaces.cli.catalog_cmd",
    "chipwise.validation.run",
}


def test_importing_the_api_loads_no_planner() -> None:
    code = "import json, sys; import chipwise.api; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert not {m for m in loaded for h in HEAVY if m == h or m.startswith(h + ".")}
    assert callable(cw.plan_fleet) and cw.sensitivity.__name__ == "sensitivity"  # the public names as they were


def test_an_option_error_still_names_the_planners_keyword() -> None:
    """The keywords a planner takes are read when its error is rewritten (its module imported then): plan_training's
    '--as-of' and '--objective', options plan_train passes on, are as_of and objective here."""
    with pytest.raises(ChipwiseError) as exc:
        cw.plan_train("llama-3.1-8b", 64, hardware="h100-sxm", objective="cost", as_of="2020-01-01")
    assert str(exc.value).endswith(
        "Fix: choose hardware that can be priced so, drop as_of, or rank by another objective."
    )
