"""Rental units: a fleet rents whole instances or slices that host its replicas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.economics.rental import billed_one, filled, rent, split_rent, unit_for
from chipwise.hardware import hardware

V5E = (1, 4, 8, 16, 32, 64, 128, 256)  # v5litepod-1 ... v5litepod-256
INF2 = (1, 6, 12)  # inf2.xlarge / 8xlarge, 24xlarge, 48xlarge


@pytest.mark.parametrize(
    ("units", "chips", "replicas", "billed"),
    [
        (V5E, 2, 1, 4),  # a TP2 replica needs a 2x2 slice: there is no 2-chip v5e slice
        (V5E, 2, 3, 8),  # three of them share a 2x4 slice
        (V5E, 1, 3, 3),  # one-chip replicas rent one-chip slices
        (V5E, 4, 5, 20),  # a 4x4 slice for four, a 2x2 for the fifth
        (V5E, 2, 200, 400),  # 128 + 64 + 8 replicas in 256-, 128- and 16-chip slices
        (INF2, 4, 1, 6),  # a TP8 Inferentia2 replica (8 NeuronCores, 4 chips) in an inf2.24xlarge
        (INF2, 4, 4, 18),  # three in an inf2.48xlarge, the fourth in an inf2.24xlarge
        (INF2, 8, 3, 36),  # TP16: one per inf2.48xlarge
        (INF2, 16, 2, 48),  # larger than the largest instance: two inf2.48xlarge each
        (INF2, 0.5, 3, 2),  # one-core replicas: two to a chip
        ((4,), 8, 1, 8),  # a TPU v5p TP8 replica: two 4-chip hosts
        ((), 2, 3, 6),  # no units: the chips used
        ((), 0.25, 3, 1),  # ... in whole chips
    ],
)
def test_a_fleet_rents_the_units_that_host_its_replicas(
    units: tuple[int, ...], chips: float, replicas: int, billed: float
) -> None:
    assert billed_one(units, chips, replicas) == billed


def _brute_force(units: tuple[int, ...], chips: float, replicas: int) -> tuple[int, int]:
    """(fewest chips that host the replicas, most replicas those chips can host) over every mix of units."""
    hosts = {u: int(u / chips + 1e-9) for u in units if u / chips >= 1 - 1e-9}
    best: tuple[int, int] = (10**9, 0)
    bound = replicas // min(hosts.values()) + 1
    for counts in itertools.product(range(bound + 1), repeat=len(hosts)):
        runs = sum(k * h for k, h in zip(counts, hosts.values(), strict=True))
        cost = sum(k * u for k, u in zip(counts, hosts, strict=True))
        if runs >= replicas and (cost, -runs) < (best[0], -best[1]):
            best = (cost, runs)
    return best


@pytest.mark.parametrize(
    ("units", "chips"), [(INF2, 4), (INF2, 2), (INF2, 8), (V5E[:4], 2), (V5E[:4], 4), ((1, 16), 4)]
)
def test_billing_is_the_brute_force_cheapest_and_runs_the_most(units: tuple[int, ...], chips: float) -> None:
    """8 replicas of 4 Inferentia2 chips: three 12-chip instances run 9 for the 36 chips that two 12-chip and two
    6-chip ones ran 8 on."""
    for replicas in range(1, 13):
        billed, runs = rent(units, chips, replicas)
        assert (float(billed), float(runs)) == _brute_force(units, chips, replicas), replicas


def test_billing_broadcasts_and_keeps_infeasible_fleets_infinite() -> None:
    out = rent(V5E, np.array([2.0, 4.0, 8.0]), np.array([1.0, 1.0, np.inf]))[0]
    assert out[:2].tolist() == [4.0, 4.0] and math.isinf(out[2])


@given(
    st.sampled_from([V5E, INF2, (4,), (1, 16)]),
    st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]),
    st.integers(min_value=1, max_value=2000),
)
def test_billing_covers_the_fleet_and_never_shrinks_with_more_replicas(
    units: tuple[int, ...], chips: float, replicas: int
) -> None:
    billed = billed_one(units, chips, replicas)
    assert billed >= math.ceil(replicas * chips - 1e-9)
    assert billed_one(units, chips, replicas + 1) >= billed
    # never more than each replica in its own smallest hosting unit
    own = min((u for u in units if u >= chips), default=math.ceil(chips / units[-1]) * units[-1])
    assert billed <= replicas * own


@pytest.mark.parametrize(
    ("units", "chips", "replicas", "cheaper_than", "runs"),
    [
        (V5E, 2, 1, 0, 2),  # the 2x2 slice a TP2 replica rents runs two
        (INF2, 4, 4, 0, 4),  # an inf2.48xlarge and an inf2.24xlarge: 3 + 1
        ((), 0.5, 3, 0, 4),  # one-core replicas on a two-core chip fill whole chips
        ((), 2, 3, 0, 3),
        ((1, 16), 4, 10, 12, 8),  # twelve TP16 Trainium2 replicas in three instances, cut: two instances hold 8
        ((1, 16), 4, 15, 20, 16),  # twenty in five instances, cut to fifteen: four instances hold 16
        ((), 0.25, 8, 10, 8),  # a quarter-chip replica: ten on three chips, cut to eight on two
        ((), 0.25, 10, 12, 8),  # twelve on three chips, cut to ten still needs three: eight on two
    ],
)
def test_a_pool_runs_what_its_rental_hosts_and_a_cut_rents_less(
    units: tuple[int, ...], chips: float, replicas: int, cheaper_than: int, runs: int
) -> None:
    assert filled(units, chips, replicas, cheaper_than) == runs
    if cheaper_than:
        assert billed_one(units, chips, runs) < billed_one(units, chips, cheaper_than)


@pytest.mark.parametrize(
    ("units", "chips", "unit", "runs"),
    [
        (INF2, 4, 12, 3),  # an inf2.48xlarge runs three, where an inf2.24xlarge ran one for 6 chips
        (INF2, 2, 6, 3),  # as few chips a replica in an inf2.24xlarge: the smaller
        (INF2, 16, 24, 1),  # spans two inf2.48xlarge
        (V5E, 3, 256, 85),  # 3.01 chips a replica in the 16x16 slice, where a 2x2 slice spends 4
        ((), 0.25, 1, 4),  # whole chips
    ],
)
def test_a_fleet_mix_offers_the_unit_with_the_fewest_chips_a_replica(
    units: tuple[int, ...], chips: float, unit: int, runs: int
) -> None:
    assert [float(x) for x in unit_for(units, chips)] == [unit, runs]


@pytest.mark.parametrize(
    ("units", "pre", "dec", "billed", "shared"),
    [
        (V5E, (2, 1), (2, 1), 4, True),  # two TP2 replicas in one 2x2 slice, not two
        (V5E, (1, 2), (1, 3), 5, False),  # five one-chip slices cost less than a 2x4
        (INF2, (2, 1), (2, 1), 6, True),  # two 2-chip replicas in one inf2.24xlarge, not one each
        (INF2, (0.5, 2), (1, 3), 4, False),  # four inf2.xlarge cost less than an inf2.24xlarge
        ((), (2, 2), (2, 1), 6, False),  # no units: the chips used
    ],
)
def test_a_split_of_one_system_shares_a_unit_where_that_costs_no_more(
    units: tuple[int, ...], pre: tuple[float, int], dec: tuple[float, int], billed: float, shared: bool
) -> None:
    assert split_rent(units, pre[0], pre[1], dec[0], dec[1]) == (billed, shared)


def test_the_catalog_rents_tpus_and_neuron_instances_in_their_units(catalog: Catalog) -> None:
    hw = hardware(catalog)
    assert hw.system("tpu-v5e").rental_chips == V5E
    assert hw.system("inf2").rental_chips == INF2
    assert hw.system("trn2").rental_chips == (1, 16)  # trn2.3xlarge, trn2.48xlarge
    assert hw.system("tpu-v7").rental_chips == (4, 8, 16, 32, 64)  # 2x2x1 ... 4x4x4, then whole cubes
    assert hw.system("h100").rental_chips == ()  # GPUs: billed per GPU used ...
    assert hw.system("h100").rental_modes == {"capacity-block": (8,)}  # ... but Capacity Blocks sell whole p5s
    assert hw.system("trn2").rental_modes == {"capacity-block": (16,)}
    assert hw.system("inf2").provenance["rental"].status == "spec"


@pytest.mark.parametrize(
    ("system", "units"), [("trn2-ultraserver", (16,)), ("trn3-ultraserver-gen1", (16,)), ("trn3-ultraserver", (4,))]
)
def test_a_trainium_ultraserver_rents_whole_instances(catalog: Catalog, system: str, units: tuple[int, ...]) -> None:
    """A Trn2 UltraServer (4 x trn2u.48xlarge) had billed per chip used: Llama-3.1-70B at 1 req/s rented 2 chips
    ($5.46 an hour) where trn2.48xlarge rents 16, and naming the UltraServer flipped which system won on cost."""
    import chipwise.api as cw

    assert hardware(catalog).system(system).rental_chips == units
    serve = cw.predict({"kind": "serve", "model": "llama-3.1-70b", "hardware": system, "input_tokens": 1024,
                        "output_tokens": 256, "arrival_rate": 1, "requests": 200})  # fmt: skip
    assert serve["billed_chips"] % units[0] == 0 and serve["billed_chips"] >= serve["chips"]
