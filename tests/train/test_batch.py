"""A global batch given in tokens becomes whole sequences that data parallelism divides (train.batch)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.training import default_global_batch, make_job
from chipwise.train.batch import BATCH_TOLERANCE, divisible_batch
from chipwise.workload.presets import load_model


@pytest.mark.parametrize(
    ("tokens", "seq", "batch"),
    [
        (4e6, 8192, 512),  # '4M', the help's example: 488.3 sequences had been 488 (DP 122 on 256 chips)
        (8e6, 8192, 1024),  # '8M': 977 sequences, a prime, had left DP 1
        (2e6, 4096, 512),
        (3e6, 8192, 384),  # 366.2: 3 x 2^7
        (6e6, 8192, 768),
        (4194304, 8192, 512),  # exactly 2^9 sequences: as given
        (8_192_000, 8192, 1000),  # a whole number of sequences is the batch stated: kept
        (1.5 * 8192, 8192, 2),  # a few sequences: the nearest whole count
    ],
)
def test_a_batch_in_tokens_is_whole_sequences_that_data_parallelism_divides(
    tokens: float, seq: int, batch: int
) -> None:
    assert divisible_batch(tokens, seq) == batch


def test_the_batch_stays_within_its_tolerance_and_has_the_most_factors_of_two() -> None:
    for tokens in (1e5 * k + 12345.6 for k in range(1, 400)):
        got = divisible_batch(tokens, 1000)
        wanted = tokens / 1000
        assert abs(got / wanted - 1) <= BATCH_TOLERANCE + 1e-9
        # no count within the tolerance has more factors of two
        lo, hi = int(wanted / (1 + BATCH_TOLERANCE)) + 1, int(wanted * (1 + BATCH_TOLERANCE))
        assert all((n & -n) <= (got & -got) for n in range(lo, hi + 1))


def test_a_huge_batch_is_rounded_at_once() -> None:
    """The search steps down powers of two, not through the counts (1e18 tokens would be 1e14 of them)."""
    wanted = 1e18 / 3 / 8192  # 4.07e13 sequences, not a whole number
    assert not wanted.is_integer()
    got = divisible_batch(1e18 / 3, 8192)
    assert abs(got / wanted - 1) <= BATCH_TOLERANCE and got % 2**40 == 0


def test_make_job_rounds_a_batch_in_tokens_and_keeps_the_defaults(catalog: Catalog) -> None:
    model = load_model(catalog, "llama-3.1-70b")
    assert make_job(model, 8192, 8e6, None, "bf16", 1e12, chips=512).global_batch == 1024
    assert make_job(model, 8192, 4e6, None, "bf16", 1e12, chips=512).global_batch == 512
    # the default batch is untouched: the power of two nearest the documented tokens
    job = make_job(model, 8192, None, None, "bf16", 1e12, chips=512)
    assert job.global_batch == default_global_batch(model, 8192, 512) == 512
    # a batch in sequences is taken as given
    assert make_job(model, 8192, None, 977, "bf16", 1e12).global_batch == 977


def test_plan_train_shows_the_batch_a_batch_in_tokens_became(capsys: pytest.CaptureFixture[str]) -> None:
    """--global-batch-tokens 8M trained on 977 sequences without a word (DP1 on trn2 at 512 chips: 24 idle)."""
    from cli_run import run

    argv = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "512", "--hardware", "h100-sxm,trn2",
            "--tokens", "1T", "--global-batch-tokens", "8M"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "global batch: 1,024 sequences of 8,192 tokens, 8,388,608 tokens a step (--global-batch-tokens 8M)" in out
    assert "977" not in out
