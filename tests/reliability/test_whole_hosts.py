"""A job's hosts are whole: 2 or 4 GPUs of an 8-GPU p5 die with its host (they had been charged a quarter and half a
host's failures), and 12 span two hosts, with two hosts' checkpoint bandwidth (1.5 had been used)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.reliability import assess_run, interruption_rate
from chipwise.reliability.goodput import reliability_inputs
from chipwise.reliability.rates import hosts_of


def test_hosts_are_whole() -> None:
    assert hosts_of(2, 8.0) == 1.0 and hosts_of(12, 8.0) == 2.0 and hosts_of(16384, 8.0) == 2048.0
    assert np.array_equal(hosts_of(np.array([1, 8, 9, 16]), 8.0), [1.0, 1.0, 2.0, 2.0])


@pytest.mark.parametrize(("chips", "hosts"), [(2, 1), (4, 1), (8, 1), (12, 2)])
def test_failures_and_bandwidth_count_whole_hosts(catalog: Catalog, hw: Hardware, chips: int, hosts: int) -> None:
    inputs = reliability_inputs(catalog, hw.system("p5.48xlarge"))
    rates = inputs.rates
    lam = chips * rates.per_chip_s + hosts * rates.host.value
    assert float(interruption_rate(rates, chips, inputs.chips_per_host.value)) == pytest.approx(lam)
    run = assess_run(inputs, chips, 8e9, 1.0)
    assert run.hosts == hosts and run.failures_per_s == pytest.approx(lam)
    # 112 GB of an 8B model's training state at 0.977 GB/s a host (12 GPUs: 1.954 GB/s, 57.3 s, not 76.4 s)
    assert run.checkpoint_write_s == pytest.approx(8e9 * 14 / (hosts * 0.977e9), rel=1e-12)
