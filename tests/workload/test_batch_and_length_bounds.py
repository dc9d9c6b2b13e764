"""Bad input that had hung or crashed: a global batch past any run, an empty region, a length of
'1e400' and a burstiness of 1e308 are each one line (exit 2 on the command line, ChipwiseError from the API)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.perf.vector import divisors
from chipwise.serve.sim.arrivals import open_loop_times
from chipwise.workload.bounds import MAX_BURSTINESS
from chipwise.workload.load import Load
from chipwise.workload.training import MAX_BATCH_TOKENS
from cli_run import run_error

PAST = (
    "tokens is past a thousand times the largest published batch (Llama 3 405B's 16M tokens) (at most 16,777,216,000)"
)
TRAIN = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8}
SERVE = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "input_tokens": 256,
         "output_tokens": 64, "arrival_rate": 2, "requests": 100}  # fmt: skip


def test_a_batch_past_any_run_is_refused_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "8", "--hardware", "h100-sxm"]
    start = time.monotonic()
    assert f"a global batch of 1e+308 {PAST}" in run_error(capsys, [*argv, "--global-batch-tokens", "1e308"])
    assert time.monotonic() - start < 30  # it had spun for ever in divisors()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"global_batch_tokens": 1e308}, f"a global batch of 1e+308 {PAST}"),
        ({"global_batch": 9223372036854775808}, f"a global batch of 7.55579e+22 {PAST}"),
    ],
)
def test_a_batch_past_any_run_is_refused_by_the_api(extra: dict[str, float], said: str) -> None:
    with pytest.raises(ChipwiseError, match="a global batch of") as err:
        cw.predict({**TRAIN, **extra})
    assert said in str(err.value)
    assert cw.predict({**TRAIN, "global_batch_tokens": MAX_BATCH_TOKENS})["kind"] == "train"


def test_divisors_of_a_power_of_two_take_its_factors_not_its_square_root() -> None:
    start = time.monotonic()
    assert divisors(2**60) == [2**k for k in range(61)]
    assert time.monotonic() - start < 0.1  # 2^30 steps of trial division before
    assert divisors(360) == [1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 18, 20, 24, 30, 36, 40, 45, 60, 72, 90, 120, 180, 360]
    assert divisors(1) == [1] and divisors(97) == [1, 97]


@pytest.mark.parametrize(
    ("scenario", "said"),
    [
        ({**TRAIN, "region": ""}, "unknown region ''"),
        ({**SERVE, "input_tokens": "1e400"}, "input_tokens: '1e400' is not a finite number of tokens"),
        ({**SERVE, "output_tokens": "1e400"}, "output_tokens: '1e400' is not a finite number of tokens"),
        (
            {**SERVE, "burstiness": 1e308},
            "burstiness: 1e+308 (the gaps' coefficient of variation) is past where the gamma gaps",
        ),
    ],
)
def test_bad_input_that_crashed_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scenario: dict[str, object], said: str
) -> None:
    with pytest.raises(ChipwiseError) as err:
        cw.predict(scenario)
    assert said in str(err.value)
    path = tmp_path / "s.json"
    path.write_text(__import__("json").dumps(scenario))
    assert said in run_error(capsys, ["predict", str(path)])


def test_gaps_that_all_underflow_stay_one_burst() -> None:
    """At burstiness 100 nearly every gamma gap is 0.0: two requests' scaling had divided 0 by 0 (NaN times) for 190
    of 200 seeds."""
    times = [open_loop_times(Load("rate", rate=2, burstiness=MAX_BURSTINESS), 2, np.random.default_rng(s)) for s in
             range(200)]  # fmt: skip
    assert all(np.isfinite(t).all() for t in times)
    assert sum(t[1] == 0.0 for t in times) == 190
