"""The Python API (`chipwise.api`): each function answers as its CLI command's --json does; bad input is one line."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


class ServeLoad(TypedDict):
    """plan_serve's load and request-shape keywords that calls below share."""

    rate: float
    input_tokens: int
    output_tokens: int


class ServeOnH100(ServeLoad):
    """The same, on H100s and without pool splits."""

    hardware: list[str]
    disaggregated: bool


def test_predict_and_plan_train() -> None:
    pred = cw.predict(str(EXAMPLES / "train-llama70b-trn2.yaml"))
    assert pred["kind"] == "train" and pred["plan"]["tp"] == 4
    report = cw.plan_train("llama-3.1-8b", chips=64, hardware="h100-sxm,trn2", tokens=1e11)
    assert {r["hardware"] for r in report["results"]} == {"h100-sxm", "trn2"}


def test_plan_serve_takes_one_load() -> None:
    report = cw.plan_serve("llama-3.1-8b", rate=5, input_tokens=512, output_tokens=128,
                           slo={"ttft_p99": 2.0}, hardware=["h100-sxm"], disaggregated=False)  # fmt: skip
    assert report["kind"] == "plan-serve" and report["best"]["slo_met"] is True
    with pytest.raises(ChipwiseError, match="exactly one load"):
        cw.plan_serve("llama-3.1-8b", hardware=["h100-sxm"])


def test_plan_serve_takes_slo_times_as_the_cli_and_scenarios_do() -> None:
    """Seconds, times with units, or --slo text; the verdict is in the dictionary as in --json."""
    kw: ServeOnH100 = {
        "rate": 5,
        "input_tokens": 512,
        "output_tokens": 128,
        "hardware": ["h100-sxm"],
        "disaggregated": False,
    }
    units = cw.plan_serve("llama-3.1-8b", slo={"ttft_p99": "2s", "tpot_p99": "50ms"}, **kw)
    text = cw.plan_serve("llama-3.1-8b", slo="ttft_p99=2s,tpot_p99=50ms", **kw)
    assert units["slo"] == text["slo"] == {"ttft_p99": 2.0, "tpot_p99": 0.05}
    assert text["verdict"].startswith("Cheapest that meets the SLO in simulation: h100-sxm")


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"input_tokens": -1}, "input_tokens -1 is not a positive finite whole number. Fix: give e.g. 1024 or '4k'."),
        ({"output_tokens": 2.5}, "output_tokens 2.5 is not a positive finite whole number"),
        ({"slo": {"tpot_p99": 50}}, "50 s per output token is not a plausible target (for 50 seconds, write '50s')"),
        ({"slo": {"tpot_p99": "50"}}, "tpot_p99 = '50' has no unit. Fix: give seconds as a number (0.05)"),  # quoted
        ({"slo": {"ttft_p99": "2 parsecs"}}, "SLO ttft_p99 = 2 parsecs"),
        ({"slo": "ttft_p99=2"}, "SLO ttft_p99='2' has no unit. Fix: write e.g. ttft_p99=2s."),
        ({"rate": "five"}, "rate 'five' is not a positive number"),
        ({"rate": None, "concurrency": 2.5}, "concurrency 2.5 is not a positive whole number of users"),
        ({"rate": None, "concurrency": -3}, "concurrency -3 is not a positive whole number of users"),
        # each had been an overflow, a MemoryError, a silent default, a split without a rate or a TypeError
        ({"rate": 1e308}, "more than a fleet of a million chips serves"),
        ({"requests": 10**12}, "is not a whole number from 1 to 1,000,000"),
        ({"requests": 0}, "requests 0 is not a whole number"),
        ({"rate": None, "offline": True, "disaggregated": True}, "pool splits are sized by an arrival rate or a"),
        ({"top": "five"}, "top 'five' is not a whole number of rows"),
    ],
)
def test_plan_serve_refuses_what_the_cli_refuses(kwargs: dict[str, object], says: str) -> None:
    """Bad input is a ChipwiseError with one line, as on the command line: a negative prompt returned a plan, a
    bare TPOT of 50 was read as 50 s, a rate of 'five' raised a TypeError."""
    kw: dict[str, object] = {"rate": 5, "input_tokens": 512, "output_tokens": 128, "hardware": ["h100-sxm"]}
    kw.update(kwargs)
    with pytest.raises(ChipwiseError, match=re.escape(says)):
        cw.plan_serve("llama-3.1-8b", **kw)  # type: ignore[arg-type]


def test_plan_serve_checks_region_and_engine_as_the_cli_does() -> None:
    with pytest.raises(ChipwiseError, match="unknown region 'mars'"):
        cw.plan_serve("llama-3.1-8b", rate=5, hardware=["h100-sxm"], region="mars")
    report = cw.plan_serve("llama-3.1-8b", rate=5, hardware=["h100-sxm", "trn2"], engine="trtllm", disaggregated=False)
    assert {r["hardware"] for r in report["results"]} == {"h100-sxm"}
    assert any(s["reason"].startswith("trtllm does not run on trn2") for s in report["skipped"])


def test_plan_hetero_fleet_and_lifecycle() -> None:
    hetero = cw.plan_hetero("llama-3.1-8b", {"h100-sxm": 16, "a100-80gb": 16}, tokens=1e11)
    assert hetero["alone"] and hetero["verdict"]
    fleet = cw.plan_fleet("llama-3.1-8b", EXAMPLES / "chat-mix.yaml", {"ttft_p99": 2.0, "tpot_p99": 0.05},
                          hardware="h100-sxm,mi300x")  # fmt: skip
    assert fleet["cost_usd_per_hour"] > 0
    # the checkpoint's own precision, as the CLI takes it (the API had planned fp8 where the CLI planned bf16),
    # stated as resolved (it had read 'auto')
    assert fleet["precision"] == "bf16"
    life = cw.plan_lifecycle("llama-3.1-8b", train_tokens=1e11, serve_rate=5, hardware=["h100-sxm", "mi300x"],
                             train_chips=64)  # fmt: skip
    assert life["best"]["train"]["hardware"] in {"h100-sxm", "mi300x"}
    assert life["serving"]["precision"] == "auto"


def test_tco_and_claims() -> None:
    t = cw.tco("h100-sxm", utilisation=0.8)
    assert t["kind"] == "tco" and t["break_even"] and t["usd_per_chip_hour"] > 0
    # the claims asked for alone (`--claim`), a check's id naming its claim; all seven by default (test_claims)
    assert [c["claim"] for c in cw.claims(only="5c,2")["claims"]] == [2, 5]


def test_validate_tells_training_from_serving(shared_data: Path, tmp_path: Path) -> None:
    assert cw.validate(shared_data / "groundtruth_training.csv")["kind"] == "train"
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ChipwiseError, match="neither a training nor a serving"):
        cw.validate(bad)
    with pytest.raises(ChipwiseError, match="does not exist"):
        cw.validate(tmp_path / "missing.csv")


def test_plan_serve_takes_what_the_cli_takes() -> None:
    """Without `disaggregated` splits are tried, as on the command line (None had turned them off); `top` trims the
    ranking; a TPOT of 1.5 s with its unit is read once; a chip and its own system are planned once."""
    kw: ServeLoad = {"rate": 5, "input_tokens": 512, "output_tokens": 128}
    report = cw.plan_serve("llama-3.1-8b", hardware=["h100-sxm", "p5.48xlarge"], slo="tpot_p99=1.5s", top=3, **kw)
    assert any(r["disaggregated"] for r in report["results"]) and len(report["results"]) <= 3
    assert report["slo"] == {"tpot_p99": 1.5}
    assert len({(r["system"], r["disaggregated"]) for r in report["results"]}) == len(report["results"])


def test_predict_and_plan_fleet_refuse_what_makes_no_sense() -> None:
    """An empty scenario or a folder (IsADirectoryError), a negative limit (read as a binding limit)."""
    for source, says in (("", "the scenario is empty"), (".", "is a folder")):
        with pytest.raises(ChipwiseError, match=says):
            cw.predict(source)
    with pytest.raises(ChipwiseError, match="limit h100-sxm=-3 is not a chip count"):
        cw.plan_fleet("llama-3.1-8b", "examples/chat-mix.yaml", {"ttft_p99": 2.0}, ["h100-sxm"], {"h100-sxm": -3})


@pytest.mark.parametrize(
    ("call", "says"),
    [
        # a TypeError, raw, for a wrong type or an unknown keyword (wrong types on purpose: the ignores)
        (lambda: cw.plan_serve("llama-3.1-8b", rate=5, hardware=5), "hardware 5 is not chip or system ids. Fix:"),  # type: ignore[arg-type]
        (lambda: cw.plan_serve("llama-3.1-8b", rate=5, foo=1), "unknown option 'foo'. Fix: use one of slo, precision"),
        (lambda: cw.plan_train("llama-3.1-8b", 8, hardware=[5]), "hardware [5] is not chip or system ids"),  # type: ignore[list-item]
        (lambda: cw.plan_train("llama-3.1-8b", 8, objectiv="cost"), "Did you mean 'objective'"),
        (lambda: cw.tco("h100-sxm", colour="red"), "unknown option 'colour'"),
        # 'no' was truthy: splits asked for without a rate
        (lambda: cw.plan_serve("llama-3.1-8b", rate=5, disaggregated="maybe"), "disaggregated 'maybe' is not true"),
        (lambda: cw.plan_serve("llama-3.1-8b", offline="sometimes"), "offline 'sometimes' is not true or false"),  # type: ignore[arg-type]
        # the load limit plan serve has, and k past what any engine drafts (eagle:100000 priced 433 H100s)
        (lambda: cw.plan_serve("llama-3.1-8b", concurrency=10**12), "users is more than a fleet of a million chips"),
        (lambda: cw.plan_serve("llama-3.1-8b", rate=5, speculative="eagle:100000"), "drafts 100,000 tokens a step"),
        (lambda: cw.plan_serve("llama-3.1-8b", rate=5, input_tokens=10**400), "a 401-digit number tokens is past"),
        # a scenario's burstiness of infinity raised a ZeroDivisionError; a 5,000-digit number a ValueError
        (lambda: cw.predict({**SCENARIO, "burstiness": float("inf")}), "burstiness: Input should be a finite number"),
        (lambda: cw.predict({**SCENARIO, "chips": 10**5000}), "the scenario holds a value JSON cannot carry"),
        (lambda: cw.predict({**SCENARIO, "provider": "nobody"}), "unknown provider 'nobody'"),
        # raw AttributeErrors, TypeErrors and ValueErrors, or an empty answer for 0 or -5 chips, 'inf' costs (the
        # ignores: None, 1.5 chips and a list for a mapping are the wrong types these calls pass on purpose)
        (lambda: cw.predict(None), "scenario None is not a path, YAML/JSON text or a mapping"),  # type: ignore[arg-type]
        (lambda: cw.plan_train("llama-3.1-8b", 0, hardware="h100-sxm"), "chips 0 is not a positive finite whole"),
        (lambda: cw.plan_train("llama-3.1-8b", 1.5, hardware="h100-sxm"), "chips 1.5 is not a positive finite whole"),  # type: ignore[arg-type]
        (lambda: cw.plan_train("llama-3.1-8b", 8, tokens=float("inf")), "tokens inf is not a positive finite"),
        (lambda: cw.plan_train("llama-3.1-8b", 8, seq_len=0), "seq_len 0 is not a positive finite whole number"),
        (lambda: cw.plan_train("llama-3.1-8b", 8, utilisation="high"), "utilisation 'high' is not a number"),
        (lambda: cw.plan_hetero("llama-3.1-70b", ["trn4", "gb300"]), "is not a mapping of chips to counts"),  # type: ignore[arg-type]
        (lambda: cw.plan_hetero("llama-3.1-70b", {"trn4": -36, "gb300": 36}), "fleet['trn4'] -36 is not a positive"),
        (lambda: cw.tco(None), "hardware None is not a name. Fix: give e.g. 'h100-sxm'."),  # type: ignore[arg-type]
        (lambda: cw.model("deepseek-v3", seq_len=-4), "seq_len -4 is not a positive finite whole number"),
    ],
)
def test_the_api_refuses_with_one_line(call: Callable[[], object], says: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        call()
    assert says in str(exc.value) and "\n" not in str(exc.value)


SCENARIO: dict[str, object] = {
    "kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "input_tokens": 512,
    "output_tokens": 128, "arrival_rate": 5, "requests": 200,
}  # fmt: skip


def test_the_api_reads_counts_as_scenarios_do_and_one_file_or_override_alone() -> None:
    """'15T' tokens and '64' chips as a scenario reads them (a TypeError had come from the planner), a NumPy count
    as its number, and sets='ID.FIELD=VALUE' as one override (it was read letter by letter)."""
    import numpy as np

    text = cw.plan_train("llama-3.1-8b", "64", hardware="h100-sxm", tokens="15T", sets="h100-sxm.tdp=500W")
    assert text["chips"] == 64 and text["tokens"] == 15e12
    assert (
        text["results"][0]["power_w_per_chip"]
        < cw.plan_train("llama-3.1-8b", 64, hardware="h100-sxm")["results"][0]["power_w_per_chip"]
    )
    assert cw.predict({**SCENARIO, "chips": np.int64(1)})["chips"] == 1


def test_the_api_reads_text_as_the_web_page_does() -> None:
    """Users as text ('8'), which the page took and the API refused, and disaggregated 'no' (read as true) agree
    with the page; an SLO's text needs its unit except under a scenario key ending in _s, read as seconds."""
    report = cw.plan_serve(
        "llama-3.1-8b",
        concurrency="8",
        disaggregated="no",
        input_tokens=512,
        output_tokens=64,
        hardware="h100-sxm",
        top=1,
    )
    assert report["kind"] == "plan-serve" and not any(r["disaggregated"] for r in report["results"])
    with pytest.raises(ChipwiseError, match=r"SLO ttft_p99 = '2' has no unit"):
        cw.plan_serve("llama-3.1-8b", rate=5, slo={"ttft_p99": "2"}, hardware="h100-sxm")
    assert cw.predict({**SCENARIO, "slo": {"ttft_p99_s": "2"}})["slo"] == {"ttft_p99": 2.0}


def _non_finite(obj: object, where: str = "") -> list[str]:
    """Where a result holds a float that JSON cannot carry (NaN, infinity)."""
    if isinstance(obj, dict):
        return [w for k, v in obj.items() for w in _non_finite(v, f"{where}.{k}")]
    if isinstance(obj, list | tuple):
        return [w for i, v in enumerate(obj) for w in _non_finite(v, f"{where}[{i}]")]
    return [where] if isinstance(obj, float) and not math.isfinite(obj) else []


def test_results_hold_none_where_the_cli_json_has_null() -> None:
    """A chip with no owned price had cost_usd NaN, an offline load an arrival rate NaN; --json prints null."""
    owned = cw.predict({"kind": "train", "model": "llama-3.1-8b", "hardware": "tpu-v4", "chips": 64,
                        "pricing": "owned"})  # fmt: skip
    assert owned["cost_usd"] is None and not _non_finite(owned)
    ranking = cw.plan_train("llama-3.1-8b", 64, "tpu-v4,h100-sxm", pricing="owned")
    assert {r["hardware"]: r["cost_usd"] for r in ranking["results"]}["tpu-v4"] is None
    assert not _non_finite(ranking)
    offline = cw.predict({**SCENARIO, "arrival_rate": None, "offline": True, "requests": 100})
    assert offline["little_law"]["arrival_rate_per_s"] is None and not _non_finite(offline)
    json.dumps([owned, ranking, offline], allow_nan=False)


def test_model_takes_sets_as_every_function_does() -> None:
    """`sets` raised a TypeError, though the module promises it everywhere."""
    changed, plain = cw.model("llama-3.1-8b", sets=["h100-sxm.tdp=500W"]), cw.model("llama-3.1-8b")
    assert changed.pop("what_if") == ["h100-sxm.tdp = 500 W (catalog 700 W), given in sets="]
    assert changed == {k: v for k, v in plain.items() if k != "what_if"}


def test_plan_train_takes_top_as_the_cli_does() -> None:
    """`top` (plan train --top, the web page's top) was an unknown option: 'Did you mean top_plans?'."""
    both = cw.plan_train("llama-3.1-8b", 64, ["h100-sxm", "trn2"])
    first = cw.plan_train("llama-3.1-8b", 64, ["h100-sxm", "trn2"], top=1)
    assert len(both["results"]) == 2 and first["results"] == both["results"][:1]
    with pytest.raises(ChipwiseError, match="top 0 is not a whole number of rows"):
        cw.plan_train("llama-3.1-8b", 64, ["h100-sxm"], top=0)


def test_the_api_reads_counts_and_limits_as_text_as_the_cli_does() -> None:
    """plan_lifecycle's '1e11' tokens and '5' requests/s raised TypeErrors (plan_train took '15T'); plan_fleet's
    limits as --limits text raised a ValueError."""
    life = cw.plan_lifecycle("llama-3.1-8b", train_tokens="1e11", serve_rate="5", hardware=["h100-sxm"],
                             train_chips="64")  # fmt: skip
    assert life["best"]["train"]["hardware"] == "h100-sxm"
    fleet = cw.plan_fleet("llama-3.1-8b", EXAMPLES / "chat-mix.yaml", "ttft_p99=2s,tpot_p99=50ms",
                          hardware="h100-sxm,mi300x", limits="h100-sxm=0")  # fmt: skip
    assert {f["hardware"] for f in fleet["fleet"]} == {"mi300x"}


@pytest.mark.parametrize(
    ("call", "says"),
    [
        # raw TypeErrors and AttributeErrors (wrong types on purpose: the ignores)
        (lambda: cw.plan_lifecycle("llama-3.1-8b", train_tokens=None, serve_rate=5), "train_tokens is None. Fix:"),  # type: ignore[arg-type]
        (lambda: cw.plan_serve(None, rate=5), "model None is not a name. Fix:"),  # type: ignore[arg-type]
        (lambda: cw.plan_serve("llama-3.1-8b", rate=5, engine=5), "engine 5 is not text. Fix: give e.g. 'vllm'"),
        (lambda: cw.plan_train("llama-3.1-8b", None, "h100-sxm"), "chips is None. Fix: give a positive whole number"),  # type: ignore[arg-type]
        (lambda: cw.plan_train("llama-3.1-8b", 8, "h100-sxm", region=5), "region 5 is not text. Fix:"),
        (lambda: cw.tco("h100-sxm", region=5), "region 5 is not text. Fix:"),  # type: ignore[arg-type]
        (lambda: cw.plan_hetero("llama-3.1-8b", "h100-sxm=8,a100-80gb=8", hybrid=5), "hybrid 5 is not text"),  # type: ignore[arg-type]
        (lambda: cw.plan_fleet("llama-3.1-8b", EXAMPLES / "chat-mix.yaml", "ttft_p99=2s", limits=5),  # type: ignore[arg-type]
         "limits 5 is not a mapping of chips to counts. Fix: give e.g. {'h100-sxm': 64} or 'h100-sxm=64'"),
        (lambda: cw.plan_fleet("llama-3.1-8b", None, "ttft_p99=2s"), "workload None is not a path"),  # type: ignore[arg-type]
        (lambda: cw.validate(None), "path None is not a path"),  # type: ignore[arg-type]
        # errors that named command-line flags name the keyword arguments
        (lambda: cw.plan_lifecycle("llama-3.1-8b", 1e11, serve_rate=0), "serve_rate 0 is not a positive number"),
        (lambda: cw.plan_lifecycle("llama-3.1-8b", 1e11, 5, serve_months=1e6), "serve_months 1e+06 is more than"),
        (lambda: cw.plan_fleet("llama-3.1-8b", EXAMPLES / "chat-mix.yaml", None),  # type: ignore[arg-type]
         "plan_fleet needs an SLO. Fix: give slo={'ttft_p99': 2.0, 'tpot_p99': 0.05}"),
        (lambda: cw.plan_fleet("llama-3.1-8b", EXAMPLES / "chat-mix.yaml", "ttft_p99=2s", "h100-sxm", "trn2=4"),
         "limits names 'trn2', which is not among the hardware considered"),
    ],
)  # fmt: skip
def test_the_api_refuses_wrong_types_in_one_line_naming_its_arguments(call: Callable[[], object], says: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        call()
    message = str(exc.value)
    assert says in message and "\n" not in message and "--" not in message, message


def test_command_line_flags_are_named_as_keyword_arguments() -> None:
    """A flag the function takes as a keyword is renamed; another flag and a command to run stay as they are."""
    from chipwise.api import _keyword_names

    message = (
        "--serve-rate must be positive. Fix: add a price in a --catalog file, or run 'chipwise plan --serve-rate 5'."
    )
    assert _keyword_names(message, {"serve_rate"}) == (
        "serve_rate must be positive. Fix: add a price in a --catalog file, or run 'chipwise plan --serve-rate 5'."
    )


def test_plan_lifecycle_takes_the_commands_targets_when_none_are_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """`chipwise plan lifecycle` defaults --slo to ttft_p99=2s,tpot_p99=50ms; the API had planned with no SLO."""
    seen: dict[str, Any] = {}

    def planner(*args: Any, **options: Any) -> dict[str, Any]:
        seen.update(options)
        return {}

    monkeypatch.setattr("chipwise.planner.lifecycle.plan_lifecycle", planner)  # cw imports it when called
    cw.plan_lifecycle("llama-3.1-8b", "1T", 5, 12, hardware=["h100-sxm"])
    assert seen["slo"] == {"ttft_p99": 2.0, "tpot_p99": 0.05}


# The Python API's promise, one line for bad input: a None utilisation for tco, and a months example for
# plan_lifecycle's serve_months.


def test_tco_refuses_a_none_utilisation_in_one_line() -> None:
    """It had raised TypeError: float() argument must be ... not 'NoneType', from deep in economics.tco."""
    with pytest.raises(ChipwiseError) as info:
        cw.tco("h100-sxm", utilisation=None)  # type: ignore[arg-type]  # None on purpose: the error path
    assert str(info.value) == (
        "utilisation None is not a number. Fix: give the share of hours used, e.g. 0.8 (1.0 the default)."
    )


@pytest.mark.parametrize("months", [-1, "x", 0, float("nan"), None])
def test_serve_months_is_told_a_number_of_months(months: object) -> None:
    """'Fix: give e.g. 15e12 or '15T'' had answered a month count with a token count."""
    with pytest.raises(ChipwiseError, match=r"^serve_months .*Fix: give (a positive number, )?e\.g\. 12\.$"):
        cw.plan_lifecycle("llama-3.1-70b", train_tokens=1e12, serve_rate=10, serve_months=months)  # type: ignore[arg-type]  # wrong types on purpose


def test_errors_of_tco_and_catalog_name_what_python_gives() -> None:
    """cw.tco('trn4') had advised 'chipwise tco trn4 --chip-price USD', and cw.catalog(sets=...) "--set 'trn2.tdp'":
    both now say it as a Python caller writes it."""
    with pytest.raises(ChipwiseError) as info:
        cw.tco("trn4")
    assert "Fix: give one, sets=['trn4.unit_price=USD']" in str(info.value)
    with pytest.raises(ChipwiseError) as info:
        cw.catalog(sets=["trn2.tdp"])
    assert str(info.value).startswith("sets=['trn2.tdp'] has no '='. Fix: write sets=['ID.FIELD=VALUE']")


def test_model_takes_a_config_path_as_a_path(tmp_path: Path) -> None:
    """A pathlib.Path to a config.json had been refused as 'not a name' where its text was read."""
    from chipwise.catalog.loader import load_catalog

    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(load_catalog().model_config("llama-3.1-8b"))))
    total = cw.model("llama-3.1-8b")["params_total"]
    assert cw.model(path)["params_total"] == cw.model(str(path))["params_total"] == total
