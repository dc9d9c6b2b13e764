"""A LoRA run's recovery reads its frozen base back: predict's reliability record and the plan search's goodputs
(fleet_goodputs) both restore adapters and base, where they had restored the adapters' 0.62 GB alone."""

from __future__ import annotations

import pytest

from chipwise.catalog import load_catalog
from chipwise.planner.training import predict_training
from scenario_kinds import train_scenario

LORA_70B = "kind: train\nmodel: llama-3.1-70b\nhardware: h100-sxm\nchips: 8\nseq_len: 8192\ntokens: 1e8\nlora: true\n"


def test_a_lora_prediction_restores_the_base() -> None:
    """Llama-3.1-70B LoRA on 8 H100 with a 60 s restart: the 623,902,720-byte adapter
    checkpoint is written in 0.6386 s, and a restart reads it and the 141,107,412,992-byte bf16 base at one host's
    0.977 GB/s, 145.068 s, the downtime a failure (it had read checkpoint_restore_s 0.6386, downtime 60.0)."""
    cat = load_catalog(sets=["reliability.checkpoint.restart_overhead_s=60"])
    r = predict_training(cat, train_scenario(LORA_70B, cat))
    rel = r["reliability"]
    assert rel["checkpoint_bytes"] == 623_902_720
    assert rel["checkpoint_write_s"] == pytest.approx(0.638590, abs=1e-6)
    assert rel["restore_bytes"] == 623_902_720 + 141_107_412_992
    assert rel["checkpoint_restore_s"] == pytest.approx(145.068, abs=1e-3)
    assert rel["downtime_per_failure_s"] == pytest.approx(145.068, abs=1e-3)


def test_a_full_run_restores_its_checkpoint_only() -> None:
    """Without LoRA the checkpoint is the whole state and nothing else is read: restore = write."""
    cat = load_catalog()
    r = predict_training(cat, train_scenario(LORA_70B.replace("lora: true\n", "").replace("70b", "8b"), cat))
    rel = r["reliability"]
    assert rel["restore_bytes"] == rel["checkpoint_bytes"]
    assert rel["checkpoint_restore_s"] == pytest.approx(rel["checkpoint_write_s"], rel=1e-12)


def test_the_search_and_the_half_goodput_fleet_restore_the_base_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan search ranks plans by goodputs that restore the frozen base (fleet_goodputs), and the largest fleet
    keeping half the run (half_goodput_chips) is sized with it, as the row's own reliability is: either had been
    free to drop it and rank or size a LoRA run by the adapters' 0.62 GB restore alone. Llama-3.1-70B LoRA on 65,536
    H100 with a failure rate that leaves under half the run: both are handed the 141,107,412,992-byte bf16 base."""
    from chipwise.planner import training
    from chipwise.reliability.goodput import largest_fleet_for_goodput

    seen: dict[str, float] = {}
    plan_goodputs, largest = training.plan_goodputs, largest_fleet_for_goodput

    def record_plan(*args: object, **kw: object) -> object:
        seen["search"] = float(args[5] if len(args) > 5 else kw.get("frozen_bytes", 0.0))  # type: ignore[arg-type]
        return plan_goodputs(*args, **kw)  # type: ignore[arg-type]

    def record_largest(*args: object, **kw: object) -> object:
        seen["half"] = float(args[6] if len(args) > 6 else kw.get("frozen_bytes", 0.0))  # type: ignore[arg-type]
        return largest(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(training, "plan_goodputs", record_plan)
    monkeypatch.setattr(training, "largest_fleet_for_goodput", record_largest)
    cat = load_catalog(sets=["reliability.failures.gpu_failure_rate_per_chip_hour=1e-3/h"])
    scenario = LORA_70B.replace("chips: 8", "chips: 65536")
    r = predict_training(cat, train_scenario(scenario, cat))
    assert r["goodput"] < 0.5 and "half_goodput_chips" in r
    assert seen == {"search": 141_107_412_992.0, "half": 141_107_412_992.0}
