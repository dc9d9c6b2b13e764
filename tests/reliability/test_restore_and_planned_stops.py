"""What a restart reads back, and what a planned stop costs with checkpoints.

A LoRA run checkpoints its adapters only, but a restarted job must read its frozen base back before it steps: the
restore had been the adapters' 0.64 s where Llama-3.1-70B's 141.1 GB base takes 144.4 s more on one host. A planned
stop writes a checkpoint and restarts from it, so it costs the write and max(restart overhead, restore) as a failure
does: it had been charged the restart overhead alone, below a failure's downtime where the restore is the longer."""

from __future__ import annotations

import math

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.hardware import Hardware, hardware
from chipwise.reliability import assess_run
from chipwise.reliability.goodput import frozen_base_bytes, reliability_inputs, run_goodputs
from reliability.test_no_failures import ZERO  # every failure rate 0: goodput is the planned-stop factor alone

HOUR = 3600.0
#: Llama-3.1-70B's parameters and its rank-16 attention adapters (train.lora)
LLAMA_70B, ADAPTERS_70B = 70_553_706_496, 44_564_480
#: the fair share of the store one host reads and writes at (2 TB/s sustained / 2,048 hosts)
PER_HOST = 0.977e9


def test_the_frozen_base_is_its_16_bit_weights() -> None:
    assert frozen_base_bytes(LLAMA_70B, "bf16") == 141_107_412_992  # 141.1 GB
    assert frozen_base_bytes(LLAMA_70B, "fp8") == 141_107_412_992  # the 16-bit copy a checkpoint keeps
    assert frozen_base_bytes(LLAMA_70B, "fp32") == 282_214_825_984


def test_a_lora_restart_reads_the_frozen_base_back(catalog: Catalog, hw: Hardware) -> None:
    """One 8-H100 host: the adapters' checkpoint is 44,564,480 x 14 B = 623.9 MB, written in 0.6386 s; a restart
    reads it and the 141.1 GB base at the same 0.977 GB/s, (623,902,720 + 141,107,412,992) / 0.977e9 = 145.068 s,
    above a 60 s restart overhead: a failure costs 145.068 s (it had read 60 s, the restore 0.6386 s)."""
    fast = load_catalog(sets=["reliability.checkpoint.restart_overhead_s=60"])
    inputs = reliability_inputs(fast, hardware(fast).system("h100-sxm"))
    base = frozen_base_bytes(LLAMA_70B, "bf16")
    run = assess_run(inputs, 8, ADAPTERS_70B, 7.0, "checkpoint", frozen_bytes=base)
    assert run.checkpoint_bytes == 623_902_720
    assert run.checkpoint_write_s == pytest.approx(623_902_720 / PER_HOST, rel=1e-12)  # 0.6386 s
    assert run.checkpoint_restore_s == pytest.approx(141_731_315_712 / PER_HOST, rel=1e-12)
    assert run.checkpoint_restore_s == pytest.approx(145.068, abs=1e-3)
    assert run.downtime_per_failure_s == pytest.approx(145.068, abs=1e-3)
    assert run.record()["restore_bytes"] == 141_731_315_712
    # the catalog's 1,200 s restart still covers it
    slow = assess_run(reliability_inputs(catalog, hw.system("h100-sxm")), 8, ADAPTERS_70B, 7.0, frozen_bytes=base)
    assert slow.downtime_per_failure_s == 1200.0


def test_the_base_is_read_at_the_jobs_storage_share(catalog: Catalog, hw: Hardware) -> None:
    """The whole job restarts, every host reading its shard: on 64 H100s (8 hosts) the same 141.73 GB take
    141,731,315,712 / (8 x 0.977e9) = 18.13 s; past 2,048 hosts the 2 TB/s aggregate caps it."""
    inputs = reliability_inputs(catalog, hw.system("h100-sxm"))
    base = frozen_base_bytes(LLAMA_70B, "bf16")
    g = run_goodputs(inputs, [64, 32_768], ADAPTERS_70B, 7.0, frozen_bytes=base)
    assert g.restore_s[0] == pytest.approx(141_731_315_712 / (8 * PER_HOST), rel=1e-12)
    assert g.restore_s[1] == pytest.approx(141_731_315_712 / 2e12, rel=1e-12)
    assert list(g.write_s) == pytest.approx([623_902_720 / (8 * PER_HOST), 623_902_720 / 2e12], rel=1e-12)


def test_a_planned_stop_restores_as_a_failure_does() -> None:
    """DeepSeek-V3 LoRA's 1,342.05 GB base on one 8-H100 host: a planned stop writes the adapters' 97,006,592 x 14
    B = 1.358 GB (1.390 s), then restarts from them and the base, (1,358,092,288 + 1,342,052,808,704) / 0.977e9 =
    1,375.04 s above the 1,200 s restart overhead: R_p = 1,376.43 s. At the host's 1.7725e-5 planned stops an hour,
    goodput 1 - 1.7725e-5 / 3,600 x 1,376.43 = 0.99999322 (1,200 s had read 0.99999409)."""
    cat = load_catalog(sets=ZERO)
    inputs = reliability_inputs(cat, hardware(cat).system("h100-sxm"))
    run = assess_run(inputs, 8, 97_006_592, 7.0, "checkpoint", frozen_bytes=frozen_base_bytes(671_026_404_352, "bf16"))
    write, restore = 1_358_092_288 / PER_HOST, 1_343_410_900_992 / PER_HOST
    assert run.checkpoint_restore_s == pytest.approx(restore, rel=1e-12)  # 1,375.04 s
    assert run.planned_restart_s == pytest.approx(write + restore, rel=1e-12)
    assert run.planned_restart_s == pytest.approx(1376.43, abs=1e-2)
    assert run.planned_stopped_s == pytest.approx(restore, rel=1e-12)  # the write runs busy
    assert run.goodput == pytest.approx(1 - 1.7725e-5 / HOUR * (write + restore), rel=1e-12)
    assert run.goodput == pytest.approx(0.99999322, abs=1e-8)
    work = 1e6
    assert run.downtime_s(work) == pytest.approx(1.7725e-5 / HOUR * work / run.goodput * restore, rel=1e-12)


def test_a_planned_stop_in_memory_keeps_its_recovery() -> None:
    """In memory, state comes back from peers: a planned stop costs the 120 s in-memory recovery, whatever the
    restore from storage would take."""
    cat = load_catalog(sets=ZERO)
    inputs = reliability_inputs(cat, hardware(cat).system("h100-sxm"))
    run = assess_run(inputs, 16, 97_006_592, 7.0, "in-memory", frozen_bytes=1.342e12)
    assert (run.recovery, run.planned_restart_s, run.planned_stopped_s) == ("in-memory", 120.0, 120.0)
    assert run.goodput == pytest.approx(1 - 2 * 1.7725e-5 / HOUR * 120.0, rel=1e-12)
    assert not math.isinf(run.downtime_s(1e6))
