"""plan lifecycle's serving side as plan serve gives it: the KV cache's format (--serve-kv-precision, the API's
serve_kv_precision), the splits plan serve left out and why, the one-operator note of a split at two providers; its
training side's note where the chip computes a wider precision than asked; a serving rate read as a count ('2k');
and a lifecycle (or a mixed fleet) with no option exits 1, as plan train and plan serve do, not bad input's 2."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.interfaces.cli.plan_fleet_cmd import print_lifecycle
from cli_run import run, run_error, run_json

LIFECYCLE_8B = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "100B", "--train-chips", "64"]
#: Llama 3.1 8B's fp8 serving on Trainium4 and GB300, 8,192-token prompts: the neuron engine caches KV in bf16,
#: TensorRT-LLM in fp8 under fp8 weights, so plan serve pairs the two only where one KV format is given
TRN4_GB300 = [
    "--input-tokens",
    "8192",
    "--output-tokens",
    "512",
    "--hardware",
    "trn4,gb300",
    "--serve-precision",
    "fp8",
]


def _printed(capsys: pytest.CaptureFixture[str], report: dict[str, Any]) -> str:
    print_lifecycle(report)
    return " ".join(capsys.readouterr().out.split())  # one line: Rich folds long notes at the console's width


def test_cross_engine_splits_left_out_are_named_with_lifecycles_own_option(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, [*LIFECYCLE_8B, "--serve-rate", "10", *TRN4_GB300, "--json"])
    assert not any(">" in p["serve"]["hardware"] and len(set(p["serve"]["vendors"])) > 1 for p in report["top"])
    (skipped,) = report["serve_skipped"]  # lifecycle had dropped plan serve's 'not ranked' line
    assert skipped["hardware"] == "splits"
    assert "(trn4: bf16; gb300: fp8)" in skipped["reason"]
    assert skipped["reason"].endswith("Fix: give one precision (--serve-kv-precision) to pair them")
    assert "serve: not ranked: splits: a prefill pool of one chip and a decode pool of another" in _printed(
        capsys, report
    )


def test_serve_kv_precision_pairs_the_engines_split() -> None:
    # one fp8 KV cache pairs them: GB300 prefill (3 TP1 replicas, 3 chips at the $15.25 estimate) and Trainium4
    # decode (8 TP1 replicas on NeuronCores, 2 chips at $15.84) pass plan serve's check at 40 req/s, $77.43/h (4
    # GB300 prefill replicas, $108.52/h, while TensorRT-LLM's fp8 quantises were counted unfused; 12 decode
    # replicas on 3 chips, $93.27/h, until a split's capacity probe was timed while its decode pool is full)
    report = cw.plan_lifecycle(
        "llama-3.1-8b",
        train_tokens="100B",
        serve_rate=40,
        hardware="trn4,gb300",
        train_chips=64,
        input_tokens=8192,
        output_tokens=512,
        serve_precision="fp8",
        serve_kv_precision="fp8",
    )
    assert report["serving"]["kv_precision"] == "fp8"
    assert report["serve_skipped"] == []
    split = next(p["serve"] for p in report["top"] if p["serve"]["hardware"] == "gb300>trn4")
    assert split["chips"] == 5
    assert split["plan"]["prefill"]["replicas"] == 3 and split["plan"]["decode"]["replicas"] == 8
    assert split["usd_per_hour"] == pytest.approx(3 * 15.25 + 2 * 15.84)


def test_an_unknown_serve_kv_precision_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = run_error(capsys, [*LIFECYCLE_8B, "--serve-rate", "5", "--serve-kv-precision", "fp7"])
    assert "unknown KV-cache precision 'fp7'. Did you mean 'fp8'" in err


def test_a_split_at_two_providers_says_one_operator_runs_both(capsys: pytest.CaptureFixture[str]) -> None:
    # MI300X prefill (DigitalOcean, $2.59 a chip-hour) beside Gaudi 3 decode (a neocloud's $2.27): $4.86/h
    argv = [*LIFECYCLE_8B, "--serve-rate", "20", "--serve-precision", "fp8", "--hardware", "mi300x,gaudi3", "--json"]
    report = run_json(capsys, argv)
    split = next(p["serve"] for p in report["top"] if p["serve"]["hardware"] == "mi300x>gaudi3")
    assert split["providers"] == ["digitalocean", "neocloud"]
    assert split["usd_per_hour"] == pytest.approx(2.59 + 2.27)
    text = _printed(capsys, report)
    assert "(pools priced at digitalocean and neocloud: one operator running both is assumed)" in text


def test_training_at_a_precision_the_chip_lacks_says_what_it_computes_in(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*LIFECYCLE_8B, "--serve-rate", "5", "--hardware", "h100-sxm", "--train-precision", "fp4", "--json"]
    report = run_json(capsys, argv)
    train = report["best"]["train"]
    assert (train["precision"], train["compute_precision"], train["precision_listed"]) == ("fp4", "fp8", False)
    text = _printed(capsys, report)
    assert "h100-sxm: computes in fp8: h100-sxm has no fp4 units, so this run is no faster than at fp8" in text


def test_the_serve_rate_reads_as_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.interfaces.cli.plan_fleet_cmd import _serve_rate

    assert _serve_rate("2k") == 2000.0 and _serve_rate("0.5") == 0.5
    err = run_error(capsys, [*LIFECYCLE_8B, "--serve-rate", "lots"])
    assert err == "error: --serve-rate 'lots' is not a number of requests/s. Fix: give e.g. 20 or 2k."
    # a number refused stays plan_lifecycle's line
    assert "--serve-rate must be positive and finite, got -3" in run_error(
        capsys, [*LIFECYCLE_8B, "--serve-rate", "-3"]
    )


def test_a_lifecycle_with_no_option_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "lifecycle", "--model", "llama-3.1-70b", "--train-tokens", "1T", "--train-chips", "256",
            "--serve-rate", "1", "--slo", "tpot_p99=1ms", "--hardware", "h100-sxm"]  # fmt: skip
    assert run(argv) == 1  # it had exited 2, bad input's code
    err = capsys.readouterr().err
    assert "the serving side fails: no priced fleet can serve llama-3.1-70b at 1 req/s" in " ".join(err.split())


def test_a_mixed_fleet_that_fits_nothing_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan", "hetero", "--model", "llama-3.1-405b", "--fleet", "h100-sxm=8,trn2=8"]) == 1
    assert "fits neither the mixed fleet nor any of its parts" in capsys.readouterr().err
    # bad input stays 2
    assert "--fleet trn2 'x'" in run_error(
        capsys, ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "h100-sxm=8,trn2=x"]
    )
