"""Software faults are charged per rank, as the catalog's rate is derived (Llama 3's 63 software interruptions over
its GPU-hours, one rank a GPU): a Trainium job runs one process per logical NeuronCore, 4 a chip on Trn2/Trn3/Trn4
and 2 on Trn1. The rate had been charged per chip: 1,000,000 trn3 (a plan on 524,288) read 279.59 failures a day
where per rank it is 391.71."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.reliability.goodput import assess_run, reliability_inputs
from chipwise.reliability.rates import failure_rates, interruption_rate

HOUR = 3600.0
#: the catalog's rates per chip-hour (GPU, network, software per rank) and per host-hour
GPU, NETWORK, SOFTWARE, HOST = 1.26e-5, 1.65e-6, 2.97e-6, 2.0e-5


@pytest.mark.parametrize(
    ("system", "ranks"),
    [("p5.48xlarge", 1), ("trn1.32xlarge", 2), ("trn2.48xlarge", 4), ("trn3-ultraserver", 4)],
)
def test_a_chip_is_charged_the_software_faults_of_its_ranks(
    catalog: Catalog, hw: Hardware, system: str, ranks: int
) -> None:
    """H100 1.26e-5 + 1.65e-6 + 2.97e-6 = 1.722e-5 a chip-hour; Trn1 + 2 x 2.97e-6 = 2.019e-5; Trn2/Trn3 + 4 x 2.97e-6
    = 2.613e-5."""
    rates = failure_rates(catalog, hw.system(system))
    assert rates.ranks_per_chip == ranks
    assert rates.per_chip_s * HOUR == pytest.approx(GPU + NETWORK + ranks * SOFTWARE, rel=1e-12)
    assert rates.software.value * HOUR == pytest.approx(SOFTWARE)  # the catalog's figure, per rank, as it is sourced


def test_the_record_says_how_many_ranks_a_chip_it_is_charged_for(catalog: Catalog, hw: Hardware) -> None:
    record = failure_rates(catalog, hw.system("trn3-ultraserver")).software.record()
    assert record["value"] == SOFTWARE and record["ranks_per_chip"] == 4
    assert record["per_chip_hour"] == pytest.approx(4 * SOFTWARE)  # 1.188e-5
    assert "ranks_per_chip" not in failure_rates(catalog, hw.system("p5.48xlarge")).software.record()


def test_a_million_trainium3_fail_as_their_ranks_do(catalog: Catalog, hw: Hardware) -> None:
    """524,288 trn3 on 131,072 4-chip hosts: (524,288 x (1.26e-5 + 1.65e-6 + 4 x 2.97e-6) + 131,072 x 2e-5) x 24 =
    (13.6996 + 2.6214) x 24 = 391.71 a day (279.59 with the software rate charged once a chip)."""
    system = hw.system("trn3-ultraserver")
    rates = failure_rates(catalog, system)
    per_day = float(interruption_rate(rates, 524_288, 4.0)) * 86400
    assert per_day == pytest.approx((524_288 * (GPU + NETWORK + 4 * SOFTWARE) + 131_072 * HOST) * 24)
    assert per_day == pytest.approx(391.706, abs=1e-3)
    # a run priced on these rates meets them
    inputs = replace(reliability_inputs(catalog, system), rates=rates)
    assert assess_run(inputs, 524_288, 405e9, 13.0).failures_per_day == pytest.approx(391.706, abs=1e-3)


def test_without_a_system_the_rates_are_a_single_rank_chip_s(catalog: Catalog) -> None:
    rates = failure_rates(catalog)
    assert rates.ranks_per_chip == 1 and rates.per_chip_s * HOUR == pytest.approx(GPU + NETWORK + SOFTWARE)
