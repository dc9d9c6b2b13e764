"""The Python API reads numbers as the CLI and the web page do: NumPy scalars (np.int64(64) chips had been refused as
'not a positive finite whole number'), counts as text ('1k' prompt tokens had been refused as 'input tokens '1k' is
not a whole number of at least 1'), a step as text ('0.1'); it refuses them in the CLI's words, naming a keyword,
not a flag; its answers carry the what-if their --json does; and `catalog list --json` has its function."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chipwise.api as cw
from chipwise.economics.tco import OVERRIDES
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli.tco_cmd import tco as tco_command
from chipwise.workload.counts import count_value, is_count, read_count
from cli_run import run_json

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "train-llama70b-trn2.yaml"
KERNELS = ROOT / "src" / "chipwise" / "validation" / "data" / "h200_serving_kernels.json"
#: H100's dense bf16, 989.4 TFLOP/s in the catalog, set to 2,000
FASTER = "h100-sxm.flops.bf16=2000TFLOP/s"
FASTER_LINE = "h100-sxm.flops.bf16 = 2000 TFLOP/s (catalog 989.4 TFLOP/s), set on the command line"
#: the line in the API's answer, whose what-ifs are given in sets=, not on a command line
FASTER_API_LINE = "h100-sxm.flops.bf16 = 2000 TFLOP/s (catalog 989.4 TFLOP/s), given in sets="
TRAIN = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 64}


def _in_api_words(answer: dict[str, Any], assignment: str) -> dict[str, Any]:
    """A --json answer of a --set with the API's words for the figure it gave (given in sets=)."""
    text = json.dumps(answer).replace(f"set on the command line: --set {assignment}", f"given in sets=['{assignment}']")
    return dict(json.loads(text.replace("set on the command line", "given in sets=")))


def test_numpy_scalars_read_as_the_numbers_they_hold() -> None:
    """np.float32(1e12) holds 999,999,995,904 (float32 has 24 bits of mantissa); np.float32(0.5) exactly 0.5."""
    assert count_value(np.int64(64)) == 64 and type(count_value(np.int64(64))) is int
    assert read_count(np.int64(64), "chips", whole=True) == 64
    assert read_count(np.float32(1e12), "tokens") == 999_999_995_904.0
    assert is_count(np.int64(3)) and is_count(np.float64(3.0))
    assert not is_count(np.float32(2.5)) and not is_count(np.bool_(True)) and not is_count(np.int8(0))


def test_plan_train_takes_numpy_counts() -> None:
    numpy = cw.plan_train("llama-3.1-8b", chips=np.int64(64), hardware="h100-sxm", tokens=np.float32(1e12), top=1)
    plain = cw.plan_train("llama-3.1-8b", chips=64, hardware="h100-sxm", tokens=999_999_995_904.0, top=1)
    assert numpy["chips"] == 64 and numpy["tokens"] == 999_999_995_904.0
    assert numpy["results"][0]["time_to_train_s"] == plain["results"][0]["time_to_train_s"]


def test_plan_serve_takes_numpy_and_text_counts() -> None:
    """A rate of np.float32(2) had been refused as 'not a positive number of requests/s'; 1k tokens is 1,000."""

    def serve(rate: cw.NumberIn, input_tokens: cw.WholeIn, output_tokens: cw.WholeIn) -> dict[str, Any]:
        return cw.plan_serve("llama-3.1-8b", rate, input_tokens=input_tokens, output_tokens=output_tokens,
                             hardware="h100-sxm", top=1, disaggregated=False, requests=np.int64(200))  # fmt: skip

    numpy = serve(np.float32(2), np.int64(1000), "64")
    text = serve("2", "1k", 64)
    for report in (numpy, text):
        assert report["load"]["arrival_rate_per_s"] == 2.0
        assert (report["input_tokens"], report["output_tokens"]) == (1000, 64)
    assert numpy["best"]["cost_usd_per_mtok"] == text["best"]["cost_usd_per_mtok"]


def test_tco_takes_a_numpy_utilisation() -> None:
    """0.5 is exact in float32: the same answer as 0.5 (np.float32(0.8) had been refused as 'not a number')."""
    assert cw.tco("h100-sxm", utilisation=np.float32(0.5)) == cw.tco("h100-sxm", utilisation=0.5)
    assert cw.tco("h100-sxm", utilisation="0.5") == cw.tco("h100-sxm", utilisation=0.5)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        # the type is the problem, not the value
        (
            lambda: cw.plan_train("llama-3.1-8b", chips=[64], hardware="h100-sxm"),  # type: ignore[arg-type]
            "chips [64] is a list, not an int, a float or numeric text. Fix: give e.g. 64.",
        ),
        (
            lambda: cw.plan_train("llama-3.1-8b", chips=True, hardware="h100-sxm"),
            "chips True is a bool, not an int, a float or numeric text. Fix: give e.g. 64.",
        ),
        (
            lambda: cw.tco("h100-sxm", utilisation=[0.8]),  # type: ignore[arg-type]
            "utilisation [0.8] is a list, not a number or numeric text. Fix: give e.g. 0.8.",
        ),
        # each keyword its own example: a PUE is at least 1 (every keyword had been offered 0.8)
        (lambda: cw.tco("h100-sxm", pue="x"), "pue 'x' is not a number. Fix: give e.g. 1.2."),
        # the keyword named, and text read as on the command line
        (
            lambda: cw.plan_serve("llama-3.1-8b", rate=2, input_tokens="1.5k5", hardware="h100-sxm"),
            "input_tokens '1.5k5' is not a positive finite whole number. Fix: give e.g. 1024 or '4k'.",
        ),
        (
            lambda: cw.plan_serve("llama-3.1-8b", rate=2, output_tokens=None, hardware="h100-sxm"),  # type: ignore[arg-type]
            "output_tokens is None. Fix: give a positive whole number, e.g. 256 or '1k'.",
        ),
        # the CLI's line for a step (it had read 'step nan is not a number. Fix: give e.g. 0.8.', and 0.8 is no step)
        (
            lambda: cw.sensitivity(SCENARIO, step=float("nan")),
            "step nan is not a fraction in (0, 0.5). Fix: give e.g. 0.1 for +/-10%.",
        ),
        (
            lambda: cw.sensitivity(SCENARIO, step="0.8"),
            "step 0.8 is not a fraction in (0, 0.5). Fix: give e.g. 0.1 for +/-10%.",
        ),
        # tco's flags as the overrides keys they are here ('drop --colocation' named a flag the API has not)
        (
            lambda: cw.tco("h100-sxm", facility="owned", overrides={"colocation_usd_per_kw_month": 100}),
            "Fix: drop overrides['colocation_usd_per_kw_month'], or use facility colocation.",
        ),
    ],
)
def test_the_api_refuses_in_its_own_words(call: Callable[[], object], says: str) -> None:
    with pytest.raises(ChipwiseError, match=re.escape(says)):
        call()


def test_a_step_may_be_numeric_text_as_on_the_web() -> None:
    report = cw.sensitivity(SCENARIO, step="0.1", only=["hbm_bandwidth"])
    assert report["step"] == 0.1
    assert report["figures"] == cw.sensitivity(SCENARIO, step=0.1, only=["hbm_bandwidth"])["figures"]


def test_every_tco_flag_names_an_overrides_key() -> None:
    """Each of tco's override options, its flag as the API names it: the CLI's own options, the API's keys."""
    flags = {p.replace("_", "-") for p in tco_command.__annotations__} - {"hardware-id", "region", "utilisation", "pue",
                                                                         "facility", "compare", "catalog-files", "sets",
                                                                         "as-json", "return"}  # fmt: skip
    assert flags == set(cw._TCO_FLAGS) and set(cw._TCO_FLAGS.values()) == set(OVERRIDES)
    said = cw._keyword_names("Fix: drop --chip-price and --scaleup-network.", {"overrides"})
    assert said == "Fix: drop overrides['chip_price_usd'] and overrides['scaleup_network_usd_per_chip']."
    assert cw._keyword_names("drop --server", {"sets"}) == "drop --server"  # no overrides keyword: the flag stays


@pytest.mark.parametrize(
    ("answer", "argv"),
    [
        (lambda sets: cw.predict(TRAIN, sets=sets),
         ["predict", '{"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 64}']),
        (lambda sets: cw.plan_train("llama-3.1-8b", 64, hardware="h100-sxm", top=1, sets=sets),
         ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm", "--top", "1"]),
        (lambda sets: cw.plan_serve("llama-3.1-8b", rate=2, output_tokens=64, hardware="h100-sxm", top=1,
                                    disaggregated=False, requests=200, sets=sets),
         ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "2", "--output-tokens", "64", "--hardware", "h100-sxm",
          "--top", "1", "--no-disaggregated", "--requests", "200"]),
        (lambda sets: cw.claims(sets=sets, only="2"), ["claims", "--claim", "2"]),
    ],
)  # fmt: skip
def test_answers_carry_the_what_if_as_their_json_does(
    capsys: pytest.CaptureFixture[str], answer: Callable[[list[str]], dict[str, Any]], argv: list[str]
) -> None:
    """The what-if a --set made, in the API's answer and in --json alike (only the table's banner had said it, and
    claims --json): [] where none was made."""
    assert answer([FASTER])["what_if"] == [FASTER_API_LINE]
    assert answer([])["what_if"] == []
    assert run_json(capsys, [*argv, "--set", FASTER, "--json"])["what_if"] == [FASTER_LINE]
    assert run_json(capsys, [*argv, "--json"])["what_if"] == []


def test_validate_carries_the_what_if_as_its_json_does() -> None:
    """H200's 4.8 TB/s halved, as validate --json names it."""
    halved = "h200.hbm_bandwidth = 2.4 TB/s (catalog 4.8 TB/s), given in sets="
    assert cw.validate(KERNELS, sets=["h200.hbm_bandwidth=x0.5"])["what_if"] == [halved]
    assert cw.validate(KERNELS)["what_if"] == []


def test_catalog_list_is_catalog_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    """H100's 989.4 TFLOP/s dense bf16 in both; a --set's value in both."""
    answer = cw.catalog_list()
    assert answer == run_json(capsys, ["catalog", "list", "--json"])
    h100 = next(c for c in answer["chips"] if c["id"] == "h100-sxm")
    assert h100["figures"]["flops.bf16"]["value"] == 989.4
    changed = cw.catalog_list(sets=[FASTER])
    assert changed == _in_api_words(run_json(capsys, ["catalog", "list", "--set", FASTER, "--json"]), FASTER)
    assert next(c for c in changed["chips"] if c["id"] == "h100-sxm")["figures"]["flops.bf16"]["value"] == 2000


@pytest.mark.parametrize("ident", ["trn3", "p5.48xlarge", "nvlink5", "efficiency.hopper"])
def test_catalog_show_is_catalog_show_json(capsys: pytest.CaptureFixture[str], ident: str) -> None:
    """A chip, a system, a fabric and a family's efficiency factors: the API had no catalog show."""
    assert cw.catalog_show(ident) == run_json(capsys, ["catalog", "show", ident, "--json"])


def test_catalog_engine_is_catalog_engine_json(capsys: pytest.CaptureFixture[str]) -> None:
    """An engine's figures and track record on a family, and without one: the API had no catalog engine."""
    on_hopper = cw.catalog_engine("trtllm", chip="h100-sxm")
    assert on_hopper == run_json(capsys, ["catalog", "engine", "trtllm", "--chip", "h100-sxm", "--json"])
    assert on_hopper["chip_family"] == "hopper" and on_hopper["track_record"]
    assert cw.catalog_engine("vllm") == run_json(capsys, ["catalog", "engine", "vllm", "--json"])
    with pytest.raises(ChipwiseError, match="unknown chip, system or chip family 'hoper'"):
        cw.catalog_engine("vllm", chip="hoper")


def test_every_plans_and_tcos_answer_names_its_what_if(capsys: pytest.CaptureFixture[str]) -> None:
    """tco, plan hetero (and sensitivity, plan fleet, plan lifecycle, built alike) had carried no what_if in their
    --json or their API answer: a figure changed by --set read as the catalog's own."""
    sets = ["h100-sxm.unit_price=20000"]
    tco = cw.tco("h100-sxm", sets=sets)
    line = "h100-sxm.unit_price = 20000 USD (catalog 27500 USD), set on the command line"
    assert tco["what_if"] == [line.replace("set on the command line", "given in sets=")]
    assert run_json(capsys, ["tco", "h100-sxm", "--set", sets[0], "--json"])["what_if"] == [line]
    mix = cw.plan_hetero("llama-3.1-8b", {"h100-sxm": 8, "h200": 8}, tokens=1e10, sets=sets)
    argv = ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "h100-sxm=8,h200=8", "--tokens", "1e10"]
    assert run_json(capsys, [*argv, "--set", sets[0], "--json"])["what_if"] == [line]
    assert mix["what_if"] == tco["what_if"]
    assert cw.tco("h100-sxm")["what_if"] == []
