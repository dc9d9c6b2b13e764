"""Context parallelism in the plan search: cp above 64 where the sequence and the ranks allow it (the search had
stopped at 64 and left half of a long-context fleet idle, blaming the batch), and a seq_len that no 2 x cp divides
named as what turned context parallelism off (131,071 had read 'use more chips' while needing 191.5 GiB a chip at any
count)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware
from chipwise.train.plans import cp_options, cp_split, cp_split_fix, cp_split_reason
from chipwise.train.search import cp_fix, search_plans
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

MILLION = 1_048_576  # 2^20 tokens


def _job(catalog: Catalog, model: str, seq: int, batch: int) -> TrainingJob:
    return TrainingJob(load_model(catalog, model), seq, batch, "bf16")


def test_cp_ranges_past_64_up_to_the_ranks_and_512_tokens_a_rank(catalog: Catalog) -> None:
    """Powers of two with seq_len a multiple of 2 x cp and 512 tokens a rank at least: 2^20 tokens take cp up to 2^11
    (512 tokens a rank), 131,072 up to 256; the ranks bound them too (64 ranks: cp 64)."""
    powers = [2**i for i in range(12)]
    assert cp_options(_job(catalog, "llama-3.1-8b", MILLION, 1), 16384) == powers
    assert cp_options(_job(catalog, "llama-3.1-8b", 131072, 1), 1024) == powers[:9]
    assert cp_options(_job(catalog, "llama-3.1-8b", 131072, 1), 64) == powers[:7]
    assert cp_options(_job(catalog, "llama-3.1-8b", 8192, 1), 1024) == powers[:5]  # 8,192 / 16 = 512


def test_a_one_sequence_batch_of_a_million_tokens_fills_the_fleet_with_cp(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-8B, one 2^20-token sequence on 1,024 H100: TP8 DP1 CP64 had run on 512 of them at 10.88 s a step;
    TP4 CP256 runs on all 1,024 at 5.50 s."""
    job = _job(catalog, "llama-3.1-8b", MILLION, 1)
    s = search_plans(job.model, job, hw.system("h100-sxm"), 1024)
    plan = s.result.plans.plan(s.best)
    assert (plan["tp"], plan["pp"], plan["dp"], plan["cp"]) == (4, 1, 1, 256)
    assert int(s.chips_used[s.best]) == 1024
    assert float(s.result.step_time[s.best]) == pytest.approx(5.50, abs=0.01)


def test_405b_at_a_million_tokens_uses_every_chip(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-405B, 16 sequences of 2^20 tokens on 16,384 H100: TP8 DP16 CP64 with full recompute had run on
    8,192 of them at 225.3 s a step; the search now runs dp 16 x tp x cp = 16,384 ranks (TP2 CP512, 87.4 s)."""
    job = _job(catalog, "llama-3.1-405b", MILLION, 16)
    s = search_plans(job.model, job, hw.system("h100-sxm"), 16384)
    plan = s.result.plans.plan(s.best)
    assert plan["dp"] == 16 and plan["cp"] > 64 and plan["tp"] * plan["cp"] == 1024
    assert int(s.chips_used[s.best]) == 16384
    assert float(s.result.step_time[s.best]) < 0.5 * 225.3


def test_the_sequence_that_held_cp_is_named_with_the_seq_len_that_frees_it() -> None:
    """131,070 = 2 x 65,535 splits into no 2 x cp chunks for cp 2 (131,070 / 4 is not whole): cp 1, of the 128 its
    length takes on 1,024 ranks (131,070 // 512 = 255); multiples of 256 either side are 130,816 and 131,072.
    100,000 = 2^5 x 3,125 splits for cp up to 16 (2 x 16 = 32 divides it)."""
    assert cp_split(131070, 1024) == (1, 128)
    assert cp_split(131072, 1024) == (256, 256)
    assert cp_split(100000, 1024) == (16, 128)
    assert cp_split(1000, 8) == (1, 1)  # 1,000 tokens take no cp at 512 a rank: nothing held
    assert cp_split_reason(131070, 1024) == (
        "context parallelism needs seq_len a multiple of 2 x cp, and seq_len 131,070 allows no cp above 1 of the 128 "
        "its length and the 1,024 ranks would take"
    )
    assert "allows cp up to 16 of the 128" in cp_split_reason(100000, 1024)
    assert cp_split_fix(131070, 1024) == (
        "give a seq_len that is a multiple of 256, e.g. 130,816 or 131,072, to split sequences over context parallelism"
    )
    assert cp_split_reason(131072, 1024) == cp_split_fix(131072, 1024) == ""


def test_a_model_that_fits_only_with_cp_is_told_the_seq_len(catalog: Catalog, hw: Hardware) -> None:
    """Llama-3.1-405B at seq_len 131,071 on 16,384 H100: no plan fits (191.5 GiB a chip) and the fix had read 'use
    more chips', which leaves the need where it is; 131,072 fits (TP2 DP128 CP64)."""
    job = _job(catalog, "llama-3.1-405b", 131071, 128)
    with pytest.raises(InfeasibleError) as exc:
        search_plans(job.model, job, hw.system("h100-sxm"), 16384)
    assert (
        "Fix: give a seq_len that is a multiple of 256, e.g. 130,816 or 131,072, to split sequences over context"
        in (str(exc.value))
    )
    assert "allows no cp above 1 of the 128 its length and the 16,384 ranks would take); or use more chips" in (
        str(exc.value)
    )


def test_the_seq_len_lever_is_not_offered_where_the_plan_fixes_cp(catalog: Catalog) -> None:
    """A cp given, or tp, pp and dp given (cp 1), is the plan's own: the seq_len would not change it."""
    job = _job(catalog, "llama-3.1-405b", 131071, 128)
    assert cp_fix({}, job.model, job, 16384).startswith("give a seq_len that is a multiple of 256")
    assert cp_fix({"cp": 1}, job.model, job, 16384) == ""
    assert cp_fix({"tp": 8, "pp": 1, "dp": 16}, job.model, job, 16384) == ""
    ok = _job(catalog, "llama-3.1-405b", 131072, 128)
    assert cp_fix({}, ok.model, ok, 16384) == ""
