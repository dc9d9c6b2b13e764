"""Training predictions carry ideal and expected (goodput-adjusted) time, cost, energy and carbon; the fleet ranking
follows the objective; the million-chip plan answers quickly; a rented fleet is billed in whole rental units."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.training import _ideal_and_expected, plan_training, predict_training, rank_value
from chipwise.workload.train_scenario import TrainScenario

DAY = 86400.0


def _predict(catalog: Catalog, **kw: object) -> dict[str, Any]:
    base: dict[str, object] = {
        "model": "llama-3.1-405b",
        "hardware": "h100-sxm",
        "chips": 16384,
        "tokens": 15e12,
        "seq_len": 8192,
        "global_batch_tokens": 16e6,
    }
    base.update(kw)
    return predict_training(catalog, TrainScenario.model_validate(base))


def test_prediction_has_ideal_and_expected(catalog: Catalog) -> None:
    """Llama 3.1 405B on 16,384 H100 (2,048 hosts), goodput by hand (reliability.goodput, Daly 2006): M = 3,600 /
    (16,384 x 1.722e-5 + 2,048 x 2e-5) = 11,142.3 s, planned stops p = 0.0363 / 3,600 /s. In-memory recovery
    checkpoints every step (tau = the step time, delta 0, R = 120 s): (1 - 120 p) tau / (M e^(R/M) (e^(tau/M) - 1))
    = 0.98780 at its 6.61 s step; persistent checkpoints of 405.853e9 x 14 B at 2 TB/s (delta 2.841 s, Daly's tau
    249.72 s, R 1,200 s) give 0.86715. The better one is taken."""
    r = _predict(catalog)
    for key in ("time_to_train_s", "cost_usd", "energy_j", "co2e_kg", "usd_per_million_tokens"):
        assert r[f"expected_{key}"] >= r[key] > 0, key
    m, p, tau = 3600 / (16_384 * (1.26e-5 + 1.65e-6 + 2.97e-6) + 2_048 * 2e-5), 0.0363 / 3600, r["step_time_s"]
    in_memory = (1 - 120 * p) * tau / (m * math.exp(120 / m) * math.expm1(tau / m))
    assert r["goodput"] == pytest.approx(in_memory, rel=1e-9)
    assert r["goodput"] == pytest.approx(0.98780, abs=5e-4)  # at the 6.61 s step the model prices today
    assert r["expected_time_to_train_s"] == pytest.approx(r["time_to_train_s"] / r["goodput"])
    assert r["expected_cost_usd"] == pytest.approx(r["cost_usd"] * 1.02 / r["goodput"])  # 2% spare chips
    assert r["failures_per_day"] == pytest.approx(86_400 / m, rel=1e-9)  # 7.754: Llama 3's 419 in 54 days
    rel = r["reliability"]
    assert rel["recovery"] == "in-memory"
    assert rel["goodput_checkpoint"] == pytest.approx(0.86715, rel=1e-4)
    assert rel["goodput"] == max(rel["goodput_checkpoint"], rel["goodput_in_memory"])
    assert r["tokens_per_joule"] == pytest.approx(15e12 / r["energy_j"])
    assert r["flop_per_joule"] == pytest.approx(r["model_flops_per_token"] * 15e12 / r["energy_j"])
    assert any(k.startswith("reliability.failures.") for k in r["economics_figures"])
    assert "datacenter.pue.aws" in r["economics_figures"]


def test_owned_pricing_uses_tco(catalog: Catalog) -> None:
    r = _predict(catalog, pricing="owned", utilisation=0.8)
    tco = r["price_source"]["tco"]
    assert r["price_usd_per_chip_hour"] == pytest.approx(tco["usd_per_chip_hour"])
    assert tco["utilisation"] == 0.8 and r["region"] == "country-usa"
    assert r["cost_usd"] == pytest.approx(r["price_usd_per_chip_hour"] * 16384 * r["time_to_train_s"] / 3600)


def test_one_hour_basis_without_tokens(catalog: Catalog) -> None:
    r = _predict(catalog, tokens=None, chips=1024, model="llama-3.1-70b")
    assert r["economics_basis"] == "one hour" and "expected_time_to_train_s" not in r
    assert r["cost_usd"] == pytest.approx(r["price_usd_per_chip_hour"] * 1024)


@pytest.mark.parametrize("objective", ["time", "cost", "energy", "carbon"])
def test_ranking_follows_the_objective(catalog: Catalog, objective: str) -> None:
    report = plan_training(
        catalog, "llama-3.1-8b", 256, ["h100-sxm", "trn2", "b200", "mi300x"], tokens=1e12, objective=objective
    )
    values = [rank_value(r, objective) for r in report["results"]]
    assert values == sorted(values) and len(values) == 4


def test_owned_ranking_puts_unpriced_chips_last(catalog: Catalog) -> None:
    report = plan_training(
        catalog, "llama-3.1-8b", 64, ["trn1", "h100-sxm"], tokens=1e11, objective="cost", pricing="owned"
    )
    assert report["results"][0]["hardware"] == "h100-sxm"
    last = report["results"][-1]
    assert last["hardware"] == "trn1" and math.isnan(last["cost_usd"]) and "price_note" in last


def test_region_applies_to_every_fleet(catalog: Catalog) -> None:
    report = plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm", "gb200"], tokens=1e11, region="eu-north-1")
    assert {r["region"] for r in report["results"]} == {"eu-north-1"}
    assert all(r["grid_kg_co2e_per_kwh"] == pytest.approx(0.008) for r in report["results"])


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"region": "us-eest-1"}, "Did you mean"),
        ({"pricing": "cheap"}, "unknown pricing mode"),
        ({"utilisation": -0.2}, "utilisation"),
        ({"pue": 0.8}, "PUE 0.8 is below 1"),
        # an infinite PUE gave 'inf TWh' (exit 0); NaN was refused as 'below 1'
        ({"pue": math.inf}, r"PUE inf is not a finite number\. Fix: give a PUE >= 1"),
        ({"pue": math.nan}, r"PUE nan is not a finite number\. Fix: give a PUE >= 1"),
        # 'FP8' is fp8 (plan serve took it); the error lists what a training job takes
        (
            {"precision": "fp6"},
            r"unknown precision 'fp6'\. Did you mean 'fp16', 'fp8', 'fp4'\? "
            r"Fix: use one of fp32, tf32, bf16, fp16, fp8, int8, fp4\.",
        ),
        ({"recovery": "pray"}, "unknown recovery"),
        ({"objective": "speed"}, "unknown objective"),
        # the API's closed sets say the near match, as the CLI's do (errors.one_of)
        ({"objective": "tim"}, r"^unknown objective 'tim'\. Did you mean 'time'\? Fix: use one of time, cost,"),
        ({"recovery": "in_memory"}, r"^unknown recovery 'in_memory'\. Did you mean 'in-memory'\?"),
        ({"pricing": "spott"}, r"^unknown pricing mode 'spott'\. Did you mean 'spot'\?"),
    ],
)
def test_bad_economics_options(catalog: Catalog, kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ChipwiseError, match=needle):
        plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], tokens=1e11, **kwargs)


def test_a_precision_reads_in_any_case(catalog: Catalog) -> None:
    """--precision FP8 was 'unknown precision' on plan train while plan serve read it as fp8."""
    report = plan_training(catalog, "llama-3.1-8b", 64, ["h100-sxm"], tokens=1e11, precision="FP8")
    assert report["precision"] == "fp8" and report["results"][0]["precision"] == "fp8"


def test_million_chip_trn3_plan(catalog: Catalog) -> None:
    """A 1M-chip plan (its speed is measured by benchmarks/plan_speed.py)."""
    report = plan_training(catalog, "llama-3.1-405b", 1_000_000, ["trn3"], tokens=15e12)
    (r,) = report["results"]
    assert r["plan"]["dp"] >= 1 and 0 < r["goodput"] <= 1
    # ~280 a day on the 524,288 chips of the plan that trains soonest (the plan of the fastest step, on 917,504,
    # sees ~490): a job-wide interruption every ~5 minutes
    assert r["chips_used"] == 524_288 and r["failures_per_day"] > 250
    assert r["expected_time_to_train_s"] > r["time_to_train_s"]
    assert r["energy_j"] > 0 and r["expected_cost_usd"] > r["cost_usd"] > 0


@pytest.mark.parametrize("chips", [1_000_001, 1e12])
def test_a_fleet_past_a_million_chips_is_one_line(catalog: Catalog, chips: float) -> None:
    """1e12 chips had been planned as DP137438953472 at $inf an hour; a million still plans (above)."""
    with pytest.raises(ChipwiseError, match=r"chips is past the largest fleet planned \(at most 1,000,000\)\. Fix:"):
        plan_training(catalog, "llama-3.1-8b", int(chips), ["h100-sxm"], tokens=1e12)


def test_a_larger_fleet_is_never_slower_than_half_of_it_and_its_idle_chips_are_said(catalog: Catalog) -> None:
    """Llama-3.1-70B on 1,000 H100: plans had to use three quarters of the ranks, and the 512-sequence batch let no
    such plan run well (TP4 PP25 DP2 CP4 on 800 chips, 27.6 days, against 22.7 on 512 chips). A plan may now leave
    up to half of the fleet out; the chips it leaves out are paid for and draw idle power."""
    runs = {n: plan_training(catalog, "llama-3.1-70b", n, ["h100-sxm"], tokens=1e12)["results"][0] for n in (512, 1000)}
    small, large = runs[512], runs[1000]
    assert large["time_to_train_s"] <= small["time_to_train_s"]
    assert large["chips"] == 1000 and 500 <= large["chips_used"] < 1000
    power = large["power_w_per_chip"]
    idle_w = (large["facility_power_w"] / large["pue"] - power * large["chips_used"]) / (1000 - large["chips_used"])
    assert 0 < idle_w < power  # the left-out chips at idle, not busy, power
    assert large["energy_j"] == pytest.approx(large["facility_power_w"] * large["time_to_train_s"])
    assert large["cost_usd"] == pytest.approx(large["price_usd_per_chip_hour"] * 1000 * large["time_to_train_s"] / 3600)


def test_a_price_set_on_the_command_line_changes_the_price_only() -> None:
    """--set h100-sxm.price=2.0 (the guide's negotiated price): the quote's provider 'user' had been read as an
    operator without a PUE, so the job moved to a colocation site (PUE 1.15 -> 1.42, another grid, +23% energy)."""
    from chipwise.catalog import load_catalog

    base, negotiated = (
        _predict(load_catalog(sets=sets), chips=1024, model="llama-3.1-70b") for sets in ((), ["h100-sxm.price=2.0"])
    )
    assert negotiated["price_usd_per_chip_hour"] == 2.0 != base["price_usd_per_chip_hour"]
    for key in ("pue", "region", "grid_kg_co2e_per_kwh", "energy_j", "co2e_kg"):
        assert negotiated[key] == base[key], key


def test_a_run_shorter_than_one_batch_takes_one_whole_step(catalog: Catalog) -> None:
    """1,000 tokens on a 524,288-token batch is one optimizer step: it had read 2.1 ms, a 0.002 share of the
    2.2 s step."""

    def first_row(tokens: float) -> dict[str, Any]:
        """The first-ranked row for `tokens` in 8,192-token sequences on a 524,288-token batch."""
        report = plan_training(
            catalog, "llama-3.1-8b", 64, ["h100-sxm"], tokens=tokens, seq_len=8192, global_batch_tokens=524_288.0
        )
        row: dict[str, Any] = report["results"][0]
        return row

    row = first_row(1000)
    assert row["steps"] == 1
    assert row["time_to_train_s"] == pytest.approx(row["step_time_s"])
    exact = first_row(3 * 524_288)
    assert exact["global_batch_tokens"] == 524_288 and exact["steps"] == 3  # an exact multiple adds no step


def test_a_fleet_failures_overwhelm_says_where_half_the_run_trains(catalog: Catalog) -> None:
    """At 10^6 H100 failing 80 times as often as the catalog's a failure comes every 3.6 s: the row carries the
    largest fleet that keeps half its time for training at the plan's step time, and that count is the boundary
    (one more chip falls below half)."""
    from chipwise.catalog import load_catalog
    from chipwise.hardware import hardware
    from chipwise.reliability import assess_run
    from chipwise.reliability.goodput import reliability_inputs

    failing = load_catalog(sets=["reliability.failures.gpu_failure_rate_per_chip_hour=1e-3/h"])
    row = plan_training(failing, "llama-3.1-70b", 1_000_000, ["h100-sxm"], tokens=15e12)["results"][0]
    # the plan that trains soonest runs on 32,768 chips at 27.6%, the fastest step's on <0.1%
    assert row["chips_used"] == 32_768 and row["goodput"] < 0.5
    n = row["half_goodput_chips"]
    inputs = reliability_inputs(failing, hardware(failing).system("h100-sxm"))
    rec = row["reliability"]["recovery"]
    params = 70.55e9
    assert assess_run(inputs, n, params, row["step_time_s"], rec).goodput >= 0.5 - 1e-3
    assert assess_run(inputs, n + 1, params, row["step_time_s"], "best").goodput < 0.5 + 1e-3
    assert 1e4 < n < 1e5
    ok = plan_training(catalog, "llama-3.1-70b", 1024, ["h100-sxm"], tokens=15e12)["results"][0]
    assert "half_goodput_chips" not in ok  # only where failures dominate


def test_plan_train_prints_the_expected_time_it_prices_where_failures_dominate(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The expected column had read '5.07e+23 y' and $/Mtok thirty digits, then 'never' beside the cost priced on a
    finite time; now the time that cost is priced on, goodput '<0.1%' and where half the run would train."""
    from chipwise.interfaces.cli.app import run

    monkeypatch.setenv("COLUMNS", "400")  # no cell folds

    # a million chips (the most a training run may have) failing 8,000 times as often as the catalog's GPUs: at 80
    # times (1e-3/h) the plan that trains soonest, on 32,768 chips, keeps 27.6%
    failing = "reliability.failures.gpu_failure_rate_per_chip_hour=1e-1/h"
    assert run(["plan", "train", "--model", "llama-3.1-70b", "--chips", "1e6", "--hardware", "h100-sxm",
                "--tokens", "15e12", "--set", failing]) == 0  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())
    # failures of the 32,768 chips the plan runs on; the idle ones, paid for, stand in for the spares (re-pinned from
    # 7.39e+59 y and $4.46e+70: its FSDP rings step through all 32,768 members, NCCL's tuning.cc)
    assert " 6.4 d 7.58e+59 y " in out and "$4.57e+70 3.05e+63" in out and " <0.1% " in out
    assert "half the run goes to training on at most" in out


def test_predict_says_which_chips_idle_and_what_precision_the_chip_computes_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """predict printed fp4 on an H100 (it runs as fp8, no faster) and MFU over 1,000 chips with 24 idle, without a
    word of either; plan train's table marks the fallback too."""
    from chipwise.interfaces.cli.app import run

    monkeypatch.setenv("COLUMNS", "400")  # no cell folds

    sc = tmp_path / "tr.yaml"
    sc.write_text(
        "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 1000\ntokens: 1e12\nprecision: fp4\n"
        "global_batch_tokens: 4e6\n"
    )
    assert run(["predict", str(sc)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 4e6 tokens: 512 sequences of 8,192 (train.batch), so DP16 x TP2 x PP7 x CP4 runs on 896 chips
    assert "896 of 1,000 (its data parallelism divides the 512-sequence batch); the other 104 are paid for" in out
    assert "fp8: h100-sxm has no fp4 units, so this run is no faster than at fp8" in out
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm,b200"]
    assert run([*argv, "--precision", "fp4", "--tokens", "1e12"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "h100-sxm: computes in fp8: h100-sxm has no fp4 units" in out and "b200: computes" not in out


def test_zero3_with_tensor_parallelism_filling_the_domain_is_not_degenerate_hybrid_sharding(catalog: Catalog) -> None:
    """TP8 on an 8-GPU node left hybrid sharding one rank to shard over in the node: 'ZeRO-3' ran as DDP with fp32
    state at 138 GiB a GPU, more than ZeRO-1's 68. It is plain FSDP now, and ZeRO-3 never holds more than ZeRO-1."""
    plan = {"tp": 8, "dp": 8, "pp": 1, "cp": 1, "recompute": "full", "microbatch": 1}
    base = {"model": "llama-3.1-70b", "hardware": "b200", "chips": 64, "tokens": 1e12, "global_batch_tokens": 4e6}
    z3 = predict_training(catalog, TrainScenario.model_validate({**base, "plan": {**plan, "zero": 3}}))
    z1 = predict_training(catalog, TrainScenario.model_validate({**base, "plan": {**plan, "zero": 1}}))
    assert z3["plan"]["hsdp"] is False
    assert z3["memory_per_chip_gib"] < z1["memory_per_chip_gib"]


def test_a_default_batch_past_the_largest_published_one_is_marked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 100,000 chips the default batch is 134M tokens, 8x Llama 3 405B's 16M, and the time to train said nothing of
    what a batch past the critical size costs in tokens; a given batch, or one within 16M, carries no note."""
    from chipwise.interfaces.cli.app import run

    monkeypatch.setenv("COLUMNS", "400")
    argv = ["plan", "train", "--model", "llama-3.1-405b", "--hardware", "h100-sxm", "--tokens", "15.6e12"]
    assert run([*argv, "--chips", "100000"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the default batch grows with the fleet (1,024 tokens a chip): 134 M tokens here, past the 16.8 M" in out
    for extra in (["--chips", "16384"], ["--chips", "100000", "--global-batch-tokens", "134e6"]):
        assert run([*argv, *extra]) == 0
        assert "default batch" not in capsys.readouterr().out


def test_zero2_reduces_its_gradient_shard_every_micro_batch(catalog: Catalog) -> None:
    """ZeRO-2 keeps only its shard of the gradients, so it reduce-scatters them each micro-batch (DeepSpeed stage 2);
    it had paid one reduce-scatter a step, as ZeRO-1 does, and so beat ZeRO-1 on memory at no cost: the search chose
    'Z2' everywhere. With one micro-batch the two cost the same."""
    base = {"model": "llama-3.1-70b", "hardware": "b200", "chips": 64, "tokens": 1e12}
    plan = {"tp": 8, "dp": 8, "pp": 1, "cp": 1, "recompute": "full", "microbatch": 1}

    def run(zero: int, batch: float) -> dict[str, Any]:
        sc = {**base, "global_batch_tokens": batch, "plan": {**plan, "zero": zero}}
        return predict_training(catalog, TrainScenario.model_validate(sc))

    many = {z: run(z, 64 * 8 * 8192) for z in (1, 2)}  # 64 micro-batches a step
    assert many[2]["memory_per_chip_gib"] < many[1]["memory_per_chip_gib"]
    assert many[2]["breakdown"]["dp_comm"] > many[1]["breakdown"]["dp_comm"]
    one = {z: run(z, 8 * 8192) for z in (1, 2)}  # one micro-batch a step
    assert one[2]["step_time_s"] == pytest.approx(one[1]["step_time_s"])


def test_an_owned_price_is_marked_an_estimate_and_its_inputs_are_listed(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """An owned Trainium2 fleet's $/chip-hour rests on an equivalent-cost chip price and estimated datacenter
    figures: it printed with no § and `economics_figures` (and --sources) left its inputs out."""
    from chipwise.interfaces.cli.train_views import print_prediction

    r = _predict(catalog, model="llama-3.1-70b", hardware="trn2", chips=1024, tokens=1e12, pricing="owned")
    assert r["price_source"]["status"] == "estimate"
    assert "trn2.unit_price" in r["price_source"]["tco"]["estimated_inputs"]
    opex = "datacenter.opex.operations_fraction_of_capex_per_year"
    for key in ("trn2.unit_price", "datacenter.depreciation_years", opex):
        assert r["economics_figures"][key]["status"] == "estimate", key
    print_prediction(r)
    assert "§ (a catalog estimate" in capsys.readouterr().out


def test_a_missing_price_says_why_in_the_table(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """Trainium1 has no unit price: the owned price row read '-' with the reason only in --json."""
    from chipwise.interfaces.cli.train_views import print_prediction

    r = _predict(catalog, model="llama-3.1-70b", hardware="trn1", chips=1024, tokens=1e12, pricing="owned")
    print_prediction(r)
    assert "(no price: no unit price for trn1 in the catalog" in " ".join(capsys.readouterr().out.split())


# A rented training fleet is billed in its provider's rental units in the mode, as plan serve bills a serving one: EC2
# Capacity Blocks sell whole 8-GPU p5 and 16-chip trn2 instances, so 12 chips rent 16.


def _rows(catalog: Catalog, hardware: list[str], chips: int, pricing: str) -> dict[str, dict[str, Any]]:
    report = plan_training(catalog, "llama-3.1-8b", chips, hardware, tokens=1e10, pricing=pricing)
    return {r["hardware"]: r for r in report["results"]}


def test_capacity_block_training_rents_whole_instances(catalog: Catalog) -> None:
    """12 H100s and 12 Trainium2 chips in Capacity Blocks had cost 12 x price x T ($2,157 and $1,252), 25% under
    the two p5.48xlarge and the one trn2.48xlarge AWS sells for them: 16 chips each."""
    rows = _rows(catalog, ["h100-sxm", "trn2"], 12, "capacity-block")
    for hw_id, price in (("h100-sxm", 41.528 / 8), ("trn2", 35.7608 / 16)):
        r = rows[hw_id]
        assert r["billed_chips"] == 16
        assert r["price_usd_per_chip_hour"] == pytest.approx(price, rel=1e-3)
        assert r["cost_usd"] == pytest.approx(price * 16 * r["time_to_train_s"] / 3600, rel=1e-9)
        # the 4 chips the units hold past the job's stand in for its 2% spares (0.24 chips): none paid on top
        assert r["expected_cost_usd"] == pytest.approx(price * 16 * r["expected_time_to_train_s"] / 3600, rel=1e-9)


def test_whole_units_cost_no_more_than_their_chips_and_per_chip_modes_stay_per_chip(catalog: Catalog) -> None:
    """16 H100s in Capacity Blocks fill two instances: billed 16, spares paid on top as before (16.32 chips). On
    demand, where single H100s are rented, 12 are billed as 12, and 12 Trainium2 as the trn2.48xlarge whose
    NeuronLink the plan runs on, 16 (a scale-up domain's chips are one rented unit; 12 trn2.3xlarge had been
    billed); owned chips are bought one by one."""
    full = _rows(catalog, ["h100-sxm"], 16, "capacity-block")["h100-sxm"]
    assert full["billed_chips"] == 16
    assert full["expected_cost_usd"] == pytest.approx(
        full["price_usd_per_chip_hour"] * 16 * 1.02 * full["expected_time_to_train_s"] / 3600, rel=1e-9
    )
    for pricing in ("on-demand", "owned"):
        for r in _rows(catalog, ["h100-sxm", "trn2"], 12, pricing).values():
            billed = 16 if (pricing, r["hardware"]) == ("on-demand", "trn2") else 12
            assert r["billed_chips"] == billed, (pricing, r["hardware"])
            assert r["cost_usd"] == pytest.approx(
                r["price_usd_per_chip_hour"] * billed * r["time_to_train_s"] / 3600, rel=1e-9
            )


def test_a_tpu_fleet_rents_whole_hosts(catalog: Catalog) -> None:
    """A TPU v5p slice is whole 4-chip hosts in every mode (rental.chips [4]): 6 chips had been billed as 6."""
    r = _rows(catalog, ["tpu-v5p"], 6, "on-demand")["tpu-v5p"]
    assert r["billed_chips"] == 8
    assert r["cost_usd"] == pytest.approx(4.2 * 8 * r["time_to_train_s"] / 3600, rel=1e-9)


def test_expected_energy_spends_the_downtime_at_idle_power() -> None:
    """Expected energy by hand (planner.training._ideal_and_expected): 10 chips billed, 8 used (2 left out idle),
    1,000 s of work at goodput 0.5 = 2,000 s of wall time, 440 s of it down (RunReliability.downtime_s, Daly's
    restarts and planned stops; tests/planner/test_expected_downtime_and_spares.py). At 1,000 W busy, 200 W idle,
    PUE 1.5, 5% spares (0.4 chip, inside the 2 left out, which stand in for them): 1.5 x (8 x (1,000 x 1,560 +
    200 x 440) + 2 x 200 x 2,000) = 20,976,000 J (25,500,000 had the downtime run at busy power; 21,276,000 had paid
    0.5 spare on top of the idle chips); ideal 1.5 x (8 x 1,000 + 2 x 200) x 1,000 = 12,600,000 J. With all 10 used
    the spares are paid past them: 1.5 x (10 x (1,000 x 1,560 + 200 x 440) + 0.5 x 200 x 2,000) = 25,020,000 J."""
    rel = SimpleNamespace(goodput=0.5, chips=8, spare_fraction=0.05, downtime_s=lambda work: 440.0)
    power = SimpleNamespace(busy_w=1000.0, idle_w=200.0)
    result = {"tokens": 1e9, "tokens_per_s": 1e6, "model_flops_per_token": 6e9}
    r = _ideal_and_expected(result, 10, 1000.0, 2.0, power, 1.5, 0.0, rel)  # type: ignore[arg-type]
    assert r["expected_time_s"] == 2000.0
    assert r["expected_downtime_s"] == pytest.approx(440.0, rel=1e-12)
    assert r["expected_energy_j"] == pytest.approx(20_976_000.0, rel=1e-12)
    assert r["energy_j"] == pytest.approx(12_600_000.0, rel=1e-12)
    assert r["expected_cost_usd"] == pytest.approx(2.0 * 10 * 2000.0 / 3600.0, rel=1e-12)  # the 10 paid for
    rel.chips = 10
    full = _ideal_and_expected(result, 10, 1000.0, 2.0, power, 1.5, 0.0, rel)  # type: ignore[arg-type]
    assert full["expected_energy_j"] == pytest.approx(25_020_000.0, rel=1e-12)
    assert full["expected_cost_usd"] == pytest.approx(2.0 * 10.5 * 2000.0 / 3600.0, rel=1e-12)  # chips + spares
