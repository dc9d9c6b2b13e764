"""Request lengths given outside a scenario (read_length): a count, or a distribution as text
('lognormal:mean=2k,std=1.5k,max=16k') or as a scenario's mapping; written back as a scenario takes them
(LengthDist.scenario_value) and labelled for a heading."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chipwise.errors import ChipwiseError
from chipwise.workload.lengths import LengthDist, LengthSpec, read_length
from chipwise.workload.serve_scenario import ServeScenario


def test_a_count_is_every_requests_length() -> None:
    assert read_length("4k", "--input-tokens", "1024") == LengthDist.fixed(4000)
    assert read_length(1024, "input_tokens", "1024") == LengthDist.fixed(1024)


def test_text_and_mapping_read_the_same_distribution() -> None:
    text = read_length("lognormal:mean=2k,std=1.5k,max=16k", "--input-tokens", "1024")
    mapping = read_length({"dist": "lognormal", "mean": 2000, "std": 1500, "max": 16000}, "input_tokens", "1024")
    assert text == mapping == LengthDist("lognormal", 2000.0, 1500.0, 1, 16000)
    assert read_length("uniform:min=256,max=4k", "x", "1") == LengthDist("uniform", 2128.0, 0.0, 256, 4000)
    assert read_length(LengthSpec(dist="exponential", mean=300), "x", "1") == LengthDist("exponential", 300.0)


@pytest.mark.parametrize(
    "text",
    ["lognormal:mean=2k,std=1.5k,max=16k", "uniform:min=256,max=4k", "normal:mean=500,std=100,min=200",
     "exponential:mean=300", "512"],
)  # fmt: skip
def test_the_scenario_value_draws_the_same_lengths(text: str) -> None:
    dist = read_length(text, "x", "1")
    value = dist.scenario_value()
    again = LengthDist.of(value if isinstance(value, int) else LengthSpec.model_validate(value))
    assert again == dist


def test_labels() -> None:
    assert read_length("1k", "x", "1").label() == "1,000"
    assert read_length("lognormal:mean=2k,std=1.5k,max=16k", "x", "1").label() == (
        "lognormal 2,000 (std 1,500, max 16,000)"
    )
    assert read_length("uniform:min=256,max=4k", "x", "1").label() == "uniform 256-4,000"
    assert read_length("normal:mean=2k,std=100,min=1500", "x", "1").label() == "normal 2,000 (std 100, min 1,500)"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("lognormal:mean=2k,sd=3", "unknown key 'sd' (a length takes dist, mean, std, min and max). Fix: correct it"),
        ("lognormal:mean", "'mean' is not KEY=NUMBER. Fix: write the distribution, a colon and its keys"),
        ("gamma:mean=3", "dist: Input should be 'fixed', 'uniform', 'normal', 'lognormal' or 'exponential'"),
        ("uniform:mean=3,max=4", "a uniform length has no mean (it is set by min and max). Fix: drop mean."),
        ("uniform:min=5", "a uniform length needs min and max. Fix: correct it, e.g. lognormal:mean=2k"),
        ("lognormal:mean=2k,std=1.5k,min=1900,max=16k", "draws a mean of 2,462. Fix: give a smaller std, a lower min"),
        ({"dist": "fixed", "mean": 2.5}, "got mean 2.5. Fix: give a whole number."),
        ("0", "'0' is not a positive finite whole number. Fix: give e.g. 1024."),
    ],
)
def test_bad_lengths_are_one_line_naming_the_option(given: object, says: str) -> None:
    with pytest.raises(ChipwiseError) as err:
        read_length(given, "--input-tokens", "1024")
    line = str(err.value)
    assert line.startswith("--input-tokens ") and says in line and "\n" not in line


def test_quantiles() -> None:
    assert LengthDist.fixed(512).quantile(0.99) == 512.0
    assert read_length("uniform:min=100,max=300", "x", "1").quantile(0.99) == pytest.approx(298.0)
    lognormal = read_length("lognormal:mean=1k,std=800,max=8k", "x", "1")
    # the lognormal's own 99th percentile, exp(mu + 2.326 sigma), is 4,010 tokens (the sample reads 4,024)
    assert lognormal.quantile(0.99) == pytest.approx(4010, rel=0.01)


def test_a_scenario_takes_a_distribution_as_text() -> None:
    """A scenario's input_tokens reads 'lognormal:mean=2k,std=1.5k' as the command line does (it had been refused as
    'is not a token count'); a path with a drive's colon stays a trace file."""
    base = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "arrival_rate": 2}
    text = ServeScenario.model_validate({**base, "input_tokens": "lognormal:mean=2k,std=1.5k", "output_tokens": 64})
    mapping = ServeScenario.model_validate(
        {**base, "input_tokens": {"dist": "lognormal", "mean": 2000, "std": 1500}, "output_tokens": 64}
    )
    assert text.input_tokens == mapping.input_tokens == LengthSpec(dist="lognormal", mean=2000, std=1500)
    assert ServeScenario.model_validate({**base, "input_tokens": "C:/traces/a.csv"}).trace_path() is not None
    with pytest.raises(ValidationError, match=r"'mean' is not KEY=NUMBER: write the distribution"):
        ServeScenario.model_validate({**base, "input_tokens": "lognormal:mean", "output_tokens": 64})
