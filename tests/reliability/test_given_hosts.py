"""A job whose hosts the caller knows (a mixed fleet's two parts, each on its own hosts) is charged those hosts'
failures and given their checkpoint bandwidth, not the whole hosts its chips would fill at one chips-per-host."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.reliability import assess_run, interruption_rate
from chipwise.reliability.goodput import reliability_inputs

#: the catalog's rates per chip-hour (accelerator, link, software) and per host-hour (Llama 3's 54-day log)
PER_CHIP_HOUR = 1.26e-5 + 1.65e-6 + 2.97e-6
PER_HOST_HOUR = 2e-5


def test_given_hosts_set_the_host_failures_and_bandwidth(catalog: Catalog, hw: Hardware) -> None:
    """16 H100s on 5 hosts: 16 x 1.722e-5 + 5 x 2e-5 = 3.7552e-4 interruptions an hour, 0.00901 a day (the 2 whole
    p5 hosts 16 chips fill would give 3.1552e-4), and 5 hosts' 4.885 GB/s for an 8B model's 112 GB checkpoint."""
    inputs = reliability_inputs(catalog, hw.system("p5.48xlarge"))  # 8 chips a host
    per_hour = 16 * PER_CHIP_HOUR + 5 * PER_HOST_HOUR
    assert per_hour == pytest.approx(3.7552e-4)
    assert float(interruption_rate(inputs.rates, 16, 8.0, 5.0)) * 3600 == pytest.approx(per_hour)
    run = assess_run(inputs, 16, 8e9, 1.0, hosts=5.0)
    assert run.hosts == 5.0 and run.failures_per_day == pytest.approx(per_hour * 24) == pytest.approx(0.00901248)
    assert run.checkpoint_write_s == pytest.approx(112e9 / 4.885e9, rel=1e-12)  # 22.93 s
    # without it, the hosts 16 chips fill at 8 a host: 2
    default = assess_run(inputs, 16, 8e9, 1.0)
    assert default.hosts == 2.0 and default.failures_per_day == pytest.approx(
        (16 * PER_CHIP_HOUR + 2 * PER_HOST_HOUR) * 24
    )
