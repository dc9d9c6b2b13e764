"""Bad serving input is one line naming the problem and the fix: bounds on lengths, chips and loads, burstiness,
the context of an unbounded length, the provider, traces, and a scenario path that does not exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload.bounds import MAX_LOAD, MAX_SIMULATED
from chipwise.workload.load import Load, load_of
from chipwise.workload.presets import load_model
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serving_job import serving_job
from chipwise.workload.slo import slo_seconds
from chipwise.workload.traces import read_trace
from cli_run import scenario_error
from scenario_kinds import serve_scenario

BASE = "kind: serve\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 1\n"
LOAD = "input_tokens: 512\noutput_tokens: 128\narrival_rate: 5\n"


@pytest.mark.parametrize(
    ("lengths", "says"),
    [
        # an infinite spread drew negative throughput, a huge one overflowed the lognormal's shape (internal error)
        ("{dist: lognormal, mean: 512, std: .inf, max: 4096}", "input_tokens: std: Input should be a finite number"),
        ("{dist: lognormal, mean: 512, std: 1e300, max: 4096}", "std: 1e+300 tokens is past any model's context"),
        ("{dist: normal, mean: 512, std: 1e300, max: 4096}", "std: 1e+300 tokens is past any model's context"),
        ("{dist: lognormal, mean: 1e300, std: 1}", "mean: 1e+300 tokens is past any model's context"),
        ("{dist: uniform, min: 1, max: 1" + "0" * 30 + "}", "max: 1e+30 tokens is past any model's context"),
        ("{dist: uniform, min: 2e9, max: 3e9}", "min: 2,000,000,000 tokens is past any model's context"),
    ],
)
def test_absurd_length_distributions_are_refused(lengths: str, says: str) -> None:
    message = scenario_error(BASE + f"input_tokens: {lengths}\noutput_tokens: 128\narrival_rate: 5\n")
    assert says in message


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        # a billion chips ran the simulator for minutes; 400-digit counts were an internal OverflowError
        ("chips: 1000000000\n" + LOAD, "chips: 1,000,000,000 chips is past the largest fleet planned"),
        ("chips: 1" + "0" * 400 + "\n" + LOAD, "chips: a 401-digit number chips is past the largest fleet"),
        ("input_tokens: 1" + "0" * 400 + "\noutput_tokens: 8\narrival_rate: 5\n", "input_tokens a 401-digit number"),
        ("input_tokens: 512\noutput_tokens: 2e9\narrival_rate: 5\n", "output_tokens 2,000,000,000 tokens is past"),
        (LOAD + "requests: 1" + "0" * 400 + "\n", "requests asks for a 401-digit number requests; at most 1,000,000"),
        (LOAD + "plan: {replicas: 2000000}\n", "plan.replicas: 2,000,000 chips is past the largest fleet planned"),
        (LOAD + "plan: {max_tokens: 2e9}\n", "plan.max_tokens: 2,000,000,000 tokens is past any model's context"),
        # one load limit everywhere: plan serve's 1e9 requests/s (and users)
        ("input_tokens: 512\noutput_tokens: 128\narrival_rate: 1e12\n", "arrival_rate: 1e+12 requests/s is more than"),
        ("input_tokens: 512\noutput_tokens: 128\nconcurrency: 1e12\n", "concurrency: 1,000,000,000,000 users is more"),
        # an infinite burstiness divided by zero in the arrival process
        (LOAD + "burstiness: .inf\n", "burstiness: Input should be a finite number"),
        ("trace: ''\n", "trace is empty: give a trace file's path"),
    ],
)
def test_counts_past_their_bounds_are_one_line(extra: str, says: str) -> None:
    assert says in scenario_error(BASE.replace("chips: 1\n", "") + extra)


def test_a_number_too_long_to_read_says_so(tmp_path: Path) -> None:
    """A 5,000-digit integer hit Python's digit limit and was told to 'give each key once'."""
    for name, text in (
        ("long.yaml", BASE + "input_tokens: 1" + "0" * 5000 + "\noutput_tokens: 8\narrival_rate: 1\n"),
        ("long.json", '{"kind": "serve", "chips": 1' + "0" * 5000 + "}"),
    ):
        path = tmp_path / name
        path.write_text(text)
        message = scenario_error(str(path))
        assert "holds a number of more than 4,300 digits. Fix: give a realistic value." in message
        assert "each key" not in message


def test_one_load_limit_for_every_command() -> None:
    """load_of (plan serve, the API, the web page) and a scenario refuse the same loads; text reads as a number."""
    with pytest.raises(ChipwiseError, match=r"--rate 1e\+12 requests/s is more than a fleet of a million chips"):
        load_of(1e12, None, False)
    with pytest.raises(ChipwiseError, match=r"concurrency 1,000,000,000,000 users is more than"):
        load_of(None, 10**12, False, flag="")
    with pytest.raises(ChipwiseError, match=r"rate True is not a positive number"):
        load_of(True, None, False, flag="")
    with pytest.raises(ChipwiseError, match=r"concurrency inf is not a positive whole number"):
        load_of(None, float("inf"), False, flag="")  # type: ignore[arg-type]
    # NaN had raised pydantic's own error outside a model: an internal error, exit 1
    with pytest.raises(ChipwiseError, match=r"--rate nan is not a positive number of requests/s\. Fix: give e\.g\. 20"):
        load_of(float("nan"), None, False)
    with pytest.raises(ChipwiseError, match=r"concurrency nan is not a positive whole number"):
        load_of(None, float("nan"), False, flag="")  # type: ignore[arg-type]
    assert load_of("5", None, False).rate == 5.0  # type: ignore[arg-type]
    assert load_of(None, "8", False).concurrency == 8  # type: ignore[arg-type]
    assert load_of(MAX_LOAD, None, False).rate == MAX_LOAD
    assert serve_scenario(BASE + f"input_tokens: 8\noutput_tokens: 8\narrival_rate: {MAX_LOAD:g}\n").arrival_rate


def test_an_unbounded_length_past_the_context_asks_for_a_max(catalog: Catalog) -> None:
    """An exponential length of mean 100,000 passed the context check on its mean and failed later with 'less than
    one 700,128-token request. Fix: raise tp or pp'; its longest draws are checked against the context."""
    llama = load_model(catalog, "llama-3.1-8b")  # 131,072 tokens
    sc = serve_scenario(BASE + "input_tokens: {dist: exponential, mean: 100000}\noutput_tokens: 128\narrival_rate: 1\n")
    with pytest.raises(ChipwiseError) as exc:
        serving_job(llama, sc)
    # a max of 130,944 (the fix this had offered) draws a mean of 72,827, which LengthSpec refuses
    assert str(exc.value) == (
        "input_tokens: the exponential length of mean 100,000 has no max, and its longest draws (about 700,000 "
        "tokens) outgrow llama-3.1-8b's context of 131,072 tokens. Fix: give input_tokens a smaller mean (its draws "
        "reach 7x its mean), or a uniform length with a max of at most 130,944 (a max there would draw a mean of "
        "72,827)."
    )
    bounded = (
        BASE + "input_tokens: {dist: exponential, mean: 100000, max: 130944}\noutput_tokens: 128\narrival_rate: 1\n"
    )
    with pytest.raises(ChipwiseError, match=r"an exponential length of mean 100000, clipped to 1 \.\. 130,944 tokens"):
        serve_scenario(bounded)
    shorter = BASE + "input_tokens: {dist: exponential, mean: 20000}\noutput_tokens: 128\narrival_rate: 1\n"
    with pytest.raises(ChipwiseError, match=r"Fix: give input_tokens a max within the context \(at most 130,944\)"):
        serving_job(llama, serve_scenario(shorter))
    assert serving_job(llama, serve_scenario(shorter.replace("20000}", "20000, max: 130944}"))).input.high == 130944
    answer = BASE + "input_tokens: 1000\noutput_tokens: {dist: lognormal, mean: 30000, std: 30000}\narrival_rate: 1\n"
    # clipped at 130,072 it would draw 29,249 (2.5% under): a smaller spread or a uniform length is the fix
    with pytest.raises(ChipwiseError, match=r"Fix: give output_tokens a smaller mean or std .* 130,072 \(a max there"):
        serving_job(llama, serve_scenario(answer))


def test_an_unknown_provider_names_the_known_ones(catalog: Catalog) -> None:
    """A mistyped provider matched no price and the cost read '-/h'."""
    with pytest.raises(ChipwiseError) as exc:
        load_scenario(BASE + LOAD + "provider: nobody\n", catalog)
    assert "unknown provider 'nobody'" in str(exc.value) and "Fix: use one of aws, azure" in str(exc.value)
    with pytest.raises(ChipwiseError, match=r"unknown provider 'awss'\. Did you mean 'aws'"):
        load_scenario("kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\nprovider: awss\n", catalog)
    assert load_scenario(BASE + LOAD + "provider: gcp\n", catalog).provider == "gcp"


def test_a_path_that_does_not_exist_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path without an extension read as an inline scenario ('must be a mapping with a kind')."""
    monkeypatch.chdir(tmp_path)
    for missing in ("sc/base_typo", "base_typo"):
        with pytest.raises(ChipwiseError, match=f"scenario file '{missing}' does not exist. Fix: check the path"):
            load_scenario(missing)
    with pytest.raises(ChipwiseError, match="must be a mapping with a 'kind'"):
        load_scenario("just some words")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("kind: serve\nmodel: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ChipwiseError, match=f"scenario file '{latin}' is not UTF-8 text"):
        load_scenario(str(latin))


def _trace(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def test_trace_edge_cases(tmp_path: Path, catalog: Catalog) -> None:
    """A JSON array, epoch microseconds and nanoseconds, a 10**400 token count, a folder, a file not in UTF-8."""
    rows = [
        {"arrival_s": 0, "input_tokens": 10, "output_tokens": 5},
        {"arrival_s": 2, "input_tokens": 20, "output_tokens": 5},
    ]
    array = read_trace(_trace(tmp_path, "a.json", json.dumps(rows)))
    assert array.input.tolist() == [10, 20] and array.arrival.tolist() == [0.0, 2.0]
    with pytest.raises(ChipwiseError, match=r"a2.json' item 2 is not a JSON object"):
        read_trace(_trace(tmp_path, "a2.json", json.dumps([rows[0], 5])))
    epoch_us = _trace(
        tmp_path, "us.csv", "timestamp,input_tokens,output_tokens\n1700000000000000,10,5\n1700000000500000,10,5\n"
    )
    assert read_trace(epoch_us).arrival.tolist() == [0.0, 0.5]  # read as milliseconds: 500 s apart
    epoch_ns = _trace(
        tmp_path, "ns.csv", "timestamp,input_tokens,output_tokens\n1700000000000000000,10,5\n1700000001500000000,10,5\n"
    )
    assert read_trace(epoch_ns).arrival.tolist() == [0.0, 1.5]
    huge = _trace(tmp_path, "huge.jsonl", '{"arrival_s": 0, "input_tokens": 1' + "0" * 400 + ', "output_tokens": 5}\n')
    with pytest.raises(ChipwiseError, match=r"line 1: input_tokens a 401-digit number is out of range \(1 to"):
        read_trace(huge)  # an internal OverflowError in predict, plan fleet and the web page
    with pytest.raises(ChipwiseError, match=r"is a folder. Fix: give a CSV or JSONL file"):
        read_trace(str(tmp_path))
    latin = _trace(tmp_path, "latin.csv", "arrival_s,input_tokens,output_tokens\n0,10,5 caf\xe9\n".encode("latin-1"))
    with pytest.raises(ChipwiseError, match=f"trace '{latin}' is not UTF-8 text"):
        read_trace(latin)


def test_a_trace_longer_than_the_simulated_limit_is_refused(tmp_path: Path, catalog: Catalog) -> None:
    """A trace of more rows than MAX_SIMULATED bypassed the limit a scenario's requests have."""
    lines = "".join(f"{i},10,5\n" for i in range(MAX_SIMULATED + 1))
    path = _trace(tmp_path, "big.csv", "arrival_s,input_tokens,output_tokens\n" + lines)
    llama = load_model(catalog, "llama-3.1-8b")
    with pytest.raises(ChipwiseError, match=r"holds 1,000,001 requests; at most 1,000,000 are simulated"):
        serving_job(llama, serve_scenario(BASE + f"trace: {path}\n"))
    assert serving_job(llama, serve_scenario(BASE + f"trace: {path}\nrequests: 100\n")).requests == 100


def test_a_load_names_itself_in_words() -> None:
    assert Load("closed", concurrency=1).label() == "1 concurrent user"
    assert Load("closed", concurrency=8).label() == "8 concurrent users"
    # large loads read in full, never in exponent form
    assert Load("rate", rate=1e6).label() == "1,000,000 req/s" and Load("rate", rate=0.5).label() == "0.5 req/s"
    assert Load("closed", concurrency=10_000).label() == "10,000 concurrent users"
    assert Load("rate", rate=2.5).label() == "2.5 req/s"
    assert Load("offline").label() == "offline (all requests at once)"


@pytest.mark.parametrize(("value", "said"), [(True, "true"), (False, "false"), (None, "null")])
def test_an_slo_of_true_or_null_is_named_as_the_scenario_wrote_it(value: object, said: str) -> None:
    """A scenario's `slo: {ttft_p99_s: true}` is named in YAML's words, not Python's True."""
    with pytest.raises(ValueError, match=f"^{said}: not a time such as 2s or 50ms$"):
        slo_seconds(value)
