"""`chipwise claims` on the user's workload (claim_runs.ClaimWorkload: --model, --seq-len, --precision, --chips,
--tokens, --pricing, --region, each claim's own where not given), one-line errors for a workload that cannot be
checked, and the verdicts that rest on unfitted efficiencies or are graded on the spec."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.planner.claim_costs import claim3_training_cost
from chipwise.planner.claim_hardware import TRN4_CHIPS, claim4_trn4
from chipwise.planner.claim_priors import PRIOR_BAND, deciding_matmul, near, with_matmul
from chipwise.planner.claim_runs import ClaimRuns, ClaimWorkload, check_workload
from cli_run import run_error


def test_claim4_runs_the_users_model_on_the_users_fleet(catalog: Catalog) -> None:
    """--model and --chips reach claim 4's runs and its workload line (it had trained Llama-3.1-70B on 1,152 chips
    whatever was asked)."""
    runs = ClaimRuns(catalog, ClaimWorkload(model="llama-3.1-8b", chips=256))
    claim = claim4_trn4(runs)
    assert claim.workload == "catalog ratios; llama-3.1-8b FP8 training on 256 chips (Trn4 projected)"
    run = runs.train("llama-3.1-8b", "trn3-ultraserver", 256, "fp8")
    assert isinstance(run, dict) and run["chips"] == 256 and run["model"] == "llama-3.1-8b"
    assert ClaimWorkload().chips_or(TRN4_CHIPS) == 1152  # the default is today's fleet


def test_claim3_prices_at_the_users_pricing_and_precision(catalog: Catalog) -> None:
    runs = ClaimRuns(catalog, ClaimWorkload(model="llama-3.1-8b", chips=256, precision="bf16", pricing="reserved-1y"))
    claim = claim3_training_cost(runs)
    assert claim.workload == (
        "llama-3.1-8b on 15T tokens, 256 chips, bf16, goodput-adjusted cost at reserved-1y prices"
    )
    assert claim.checks[0].computed.startswith("expected reserved-1y cost, Trn3 $")
    assert "(bf16)" in claim.checks[0].computed and "(fp8)" not in claim.checks[0].computed


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        (ClaimWorkload(model="nosuch"), "unknown model 'nosuch'"),
        (ClaimWorkload(precision="fp7"), "unknown precision 'fp7'"),
        (ClaimWorkload(pricing="cheap"), "unknown pricing mode 'cheap'"),
        (ClaimWorkload(model="llama-3.1-8b", seq_len=1_000_000), "longer than llama-3.1-8b's context"),
    ],
)
def test_a_bad_workload_is_one_line(catalog: Catalog, workload: ClaimWorkload, message: str) -> None:
    with pytest.raises(ChipwiseError, match=message):
        check_workload(catalog, workload)


def test_a_model_the_fleet_cannot_hold_is_refused_on_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    err = run_error(capsys, ["claims", "--model", "llama-3.1-405b", "--chips", "4"])
    assert "has no fp8 training plan on 4 trn3 chips" in err and "Fix: give more --chips" in err


def test_the_prior_band_and_the_deciding_efficiency(catalog: Catalog) -> None:
    """A ratio within 10% of its threshold rests on unfitted priors; the deciding efficiency is the secant through
    today's fraction and one 0.05 below: ratio 3.9 at 0.65 and 3.6 at 0.60 reach 4.0 at 0.65 + 0.1 x 0.05 / 0.3."""
    assert near(3.967, 4.0) and near(3.61, 4.0) and not near(3.59, 4.0) and PRIOR_BAND == 0.10
    trn3 = hardware(catalog).system("trn3-ultraserver")
    assert with_matmul(trn3, "fp8", 0.5).chip.efficiency.matmul["fp8"] == 0.5
    found = deciding_matmul(trn3, "fp8", 3.9, 4.0, lambda s: 3.6 if s.chip.efficiency.matmul["fp8"] < 0.65 else 3.9)
    assert found == pytest.approx(0.65 + 0.1 * 0.05 / 0.3)
