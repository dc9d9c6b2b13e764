"""An unknown key in a scenario is named, every one of them, with the key meant or the keys allowed."""

from __future__ import annotations

import pytest

from chipwise.errors import ChipwiseError
from chipwise.workload.scenario import load_scenario

TRAIN = "{kind: train, model: llama-3.1-8b, hardware: h100, chips: 8"
SERVE = "{kind: serve, model: llama-3.1-8b, hardware: h100, chips: 8, output_tokens: 100, arrival_rate: 2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # a typo of a required key had read 'hardware: Field required', the typo unnamed
        ("{kind: train, model: llama-3.1-8b, hardwar: h100, chips: 8}", "hardwar: unknown key. Fix: use 'hardware'"),
        (
            "{kind: train, model: llama-3.1-8b, hardwar: h100, chipz: 8}",
            "hardwar, chipz: unknown keys. Fix: use 'hardware' for 'hardwar', 'chips' for 'chipz'",
        ),
        (TRAIN + ", foo: 1, bar: 2}", "foo, bar: unknown keys. Fix: use one of the train keys: kind, model, hardware"),
        # a length distribution's unknown key had read 'input_tokens: kind: Extra inputs are not permitted'
        (
            SERVE + ", input_tokens: {kind: fixed, mean: 100}}",
            "input_tokens.kind: unknown key. Fix: use one of the input_tokens keys: dist, mean, std, min, max",
        ),
        (SERVE + ", input_tokens: {dist: normal, maen: 100}}", "input_tokens.maen: unknown key. Fix: use 'mean'"),
        (SERVE + ", slo: {ttft_p99: 2, foo: 3}}", "slo.ttft_p99, slo.foo: unknown keys. Fix: use one of the slo keys"),
    ],
)
def test_unknown_keys_are_named(text: str, message: str) -> None:
    with pytest.raises(ChipwiseError) as info:
        load_scenario(text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_other_errors_of_a_length_distribution_keep_their_reading() -> None:
    with pytest.raises(ChipwiseError, match=r"input_tokens: mean: Input should be greater than 0"):
        load_scenario(SERVE + ", input_tokens: {dist: fixed, mean: -100}}")


def test_unknown_keys_fix() -> None:
    from chipwise.workload.scenario import unknown_keys_fix

    assert unknown_keys_fix(["rate"], ["arrival_rate", "trace"], "the serve keys") == "use 'arrival_rate'"
    assert unknown_keys_fix(["x", "tpp"], ["tp", "pp"], "the plan keys") == "use one of the plan keys: tp, pp"
