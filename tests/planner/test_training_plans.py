"""Training predictions: which plans read as given, the default batch, what a LoRA checkpoint holds, and settings
that would be ignored (a utilisation for rented chips, an as_of that is not a date) refused in one line."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.training import make_job, plan_training, predict_training
from chipwise.workload import load_model
from chipwise.workload.train_scenario import TrainScenario


def _predict(catalog: Catalog, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 64}
    return predict_training(catalog, TrainScenario.model_validate({**base, **kw}))


@pytest.mark.parametrize(
    ("plan", "source", "held"),
    [
        # four keys had read as 'given' though the search chose dp, cp, zero and recompute (and ignored mb and vp)
        ({"tp": 8, "pp": 4, "mb": 1, "vp": 1}, "partial", {"microbatch": 1, "vpp": 1}),
        ({"tp": 8, "pp": 4, "dp": 2, "cp": 1}, "partial", {"dp": 2}),
        (
            {"tp": 8, "pp": 4, "dp": 2, "vpp": 2, "mb": 1, "zero": 1, "recompute": "Full"},
            "given",
            {"vpp": 2, "microbatch": 1, "recompute": "full"},
        ),
        ({"tp": 8, "sequence_parallel": False}, "partial", {"sp": False}),
        ({}, "searched", {}),
    ],
)
def test_plan_source_and_the_knobs_held(
    catalog: Catalog, plan: dict[str, Any], source: str, held: dict[str, Any]
) -> None:
    r = _predict(catalog, plan=plan)
    assert r["plan_source"] == source
    assert {k: r["plan"][k] for k in held} == held


@pytest.mark.parametrize(
    "plan",
    [{"recompute": "Full"}, {"tp": float("nan")}, {"pp": float("inf")}, {"sp": "no"}, {"hsdp": "false"}, {"cp": 3}],
)
def test_bad_plans_through_the_api_are_one_line(plan: dict[str, Any]) -> None:
    """Through cw.predict: a recompute of 'Full' is read (it had failed in tuple.index), the rest are ChipwiseErrors
    (ValueError, OverflowError, or priced: sp 'no' as true, cp 3 at 8,192 tokens)."""
    scenario = {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 6, "plan": plan}
    if plan == {"recompute": "Full"}:
        assert cw.predict(scenario)["plan"]["recompute"] == "full"
        return
    with pytest.raises(ChipwiseError) as err:
        cw.predict(scenario)
    assert len(str(err.value).splitlines()) == 1


@pytest.mark.parametrize(
    ("model", "seq_len", "chips", "sequences"),
    [
        ("llama-3.1-70b", 8000, 64, 512),  # 524.3 wanted: had been 1,024 (8,192,000 tokens, twice the documented)
        ("llama-3.1-70b", 8192, 64, 512),  # a power-of-two length: exactly 4,194,304 tokens, as before
        ("llama-3.1-70b", 5000, 64, 1024),  # 838.9 wanted: nearer 1,024 than 512 on a log scale
        ("llama-3.1-8b", 3000, 64, 256),  # 349.5 wanted
        ("llama-3.1-405b", 8192, 16384, 2048),  # 1,024 tokens a chip
        ("llama-3.1-8b", 100_000, 8, 8),  # 10.5 wanted
    ],
)
def test_the_default_batch_is_the_nearest_power_of_two(
    catalog: Catalog, model: str, seq_len: int, chips: int, sequences: int
) -> None:
    spec = load_model(catalog, model)
    job = make_job(spec, seq_len, None, None, "bf16", None, chips=chips)
    assert job.global_batch == sequences
    documented = max(4 * 2**20 if spec.params_total >= 10e9 else 2**20, 1024 * chips)
    assert documented / 2**0.5 <= job.global_batch_tokens <= documented * 2**0.5


def test_a_lora_checkpoint_holds_the_adapters_and_their_optimizer_state(catalog: Catalog) -> None:
    """Llama-3.1-70B LoRA had checkpointed 988 GB: the whole model and its optimizer state."""
    full = _predict(catalog, tokens=1e9)["reliability"]["checkpoint_bytes"]
    lora = _predict(catalog, tokens=1e9, lora=True)["reliability"]["checkpoint_bytes"]
    spec = load_model(catalog, "llama-3.1-70b")
    assert full == pytest.approx(spec.params_total * 14.0)  # bf16 weight, fp32 master and two Adam moments
    # rank 16 on each of 80 layers' fused QKV (8,192 -> 64 x 128 + 2 x 8 x 128 = 10,240) and output (8,192 -> 8,192)
    adapters = 80 * (16 * (8192 + 10240) + 16 * (8192 + 8192))
    assert adapters == 44_564_480
    assert lora == pytest.approx(adapters * 14.0) == pytest.approx(623_902_720)


def test_a_utilisation_for_rented_chips_is_refused(catalog: Catalog) -> None:
    """It prices owned chips (economics.tco) and had been dropped in silence with on-demand prices."""
    with pytest.raises(ChipwiseError, match=r"^utilisation 0\.5 prices owned chips .* Fix: add pricing: owned"):
        _predict(catalog, utilisation=0.5)
    with pytest.raises(ChipwiseError, match=r"^--utilisation 0\.5 prices owned chips .* Fix: add --pricing owned"):
        plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], utilisation=0.5)
    owned = _predict(catalog, utilisation=0.5, pricing="owned")
    assert owned["price_source"]["tco"]["utilisation"] == 0.5


@pytest.mark.parametrize("as_of", ["garbage", "2025-13", "25-06", 2025, ""])
def test_as_of_is_a_date(catalog: Catalog, as_of: Any) -> None:
    """'garbage' had been accepted: after every date as text, it ignored no price."""
    with pytest.raises(ChipwiseError, match=r"as_of .* is not a date\. Fix: give YYYY-MM"):
        plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], as_of=as_of)
    if isinstance(as_of, str):  # the API refuses anything but text itself
        with pytest.raises(ChipwiseError, match=r"as_of .* is not a date"):
            cw.plan_train("llama-3.1-8b", 64, "h100-sxm", as_of=as_of)


@pytest.mark.parametrize("as_of", ["2025", "2025-06", "2025-06-30"])
def test_as_of_takes_a_year_month_or_day(catalog: Catalog, as_of: str) -> None:
    report = plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], as_of=as_of)
    assert report["results"]


def test_a_rental_setting_with_owned_pricing_is_refused(catalog: Catalog) -> None:
    """A provider or a managed service with owned pricing had been dropped in silence (an owned fleet rents from no
    one), as a utilisation with rented chips had."""
    sc = TrainScenario.model_validate(
        {"model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "pricing": "owned", "provider": "lambda"}
    )
    with pytest.raises(ChipwiseError, match="provider lambda chooses whom chips are rented from"):
        predict_training(catalog, sc)
    for managed, provider in (("sagemaker", None), (None, "aws")):
        with pytest.raises(ChipwiseError, match="an owned fleet is bought, not rented"):
            plan_training(
                catalog,
                "llama-3.1-8b",
                64,
                ["h100-sxm"],
                tokens=1e12,
                pricing="owned",
                managed=managed,
                provider=provider,
            )
