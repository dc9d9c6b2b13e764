"""TPU v4, v5p and TPU7x rent 3D slices, not any count of 4-chip hosts: 2x2x1, 2x2x2, 2x2x4, 2x4x4 and 4x4x4 (4 to 64
chips), and past one cube whole 4x4x4 cubes, every axis a multiple of 4 (Google's v5p shape table, xpk's topology
lists). The catalog had rented them in units of 4: a 12-chip job paid for 12 chips (three hosts, a 2x2x3 Google does
not schedule) where it rents the 16-chip 2x2x4, as v5e and v6e jobs already did."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.rental import billed_one, job_units
from chipwise.hardware import hardware

CUBED = (4, 8, 16, 32, 64)


@pytest.mark.parametrize("system", ["tpu-v4-pod", "tpu-v5p-pod", "tpu-v7-pod"])
def test_the_3d_tpus_rent_slice_shapes_then_whole_cubes(catalog: Catalog, system: str) -> None:
    s = hardware(catalog).system(system)
    assert s.rental_chips == CUBED and s.provenance["rental"].status == "spec"


@pytest.mark.parametrize(
    ("chips", "units"),
    [
        (4, [(1, 4)]),  # 2x2x1, one host
        (12, [(1, 16)]),  # 2x2x4: there is no 2x2x3 slice (it had billed 12)
        (20, [(1, 32)]),  # 2x4x4
        (48, [(1, 64)]),  # one 4x4x4 cube (it had billed 48)
        (96, [(1, 128)]),  # 4x4x8: two cubes, one slice (it had billed 96)
        (200, [(1, 256)]),  # 4 cubes, 4x8x8
        (6_144 + 12, [(1, 6_144), (1, 16)]),  # a whole 16x16x24 domain and a 2x2x4 beside it over DCN
    ],
)
def test_a_v5p_job_rents_the_slice_that_holds_it(catalog: Catalog, chips: int, units: list[tuple[int, int]]) -> None:
    v5p = hardware(catalog).system("tpu-v5p-pod")
    assert job_units(v5p.rental_chips, v5p.scaleup.size, chips, joined=True) == units


def test_instances_past_the_largest_unit_stay_instances() -> None:
    """A 40-chip job on a Trn2 UltraServer (16-chip instances, one 64-chip NeuronLink domain) rents three instances,
    48 chips; 12 H100s in Capacity Blocks two 8-GPU instances; a system billed per chip no units."""
    assert job_units((16,), 64, 40) == [(3, 16)]
    assert job_units((8,), 8, 12) == [(2, 8)]
    assert job_units((), 8, 12) == []


def test_the_units_sum_to_what_the_ladders_bill(catalog: Catalog) -> None:
    """For every built-in system rented in units, in every mode, the units named add up to what rent bills a job's
    whole domains and its rest (economics.rental.rent), for every count up to two domains and a half."""
    hw = hardware(catalog)
    for sid in catalog.systems:
        s = hw.system(sid)
        for units in (s.rental_chips, *s.rental_modes.values()):
            if not units:
                continue
            domain = s.scaleup.size
            for chips in [*range(1, 3 * 64), 2 * domain, 2 * domain + domain // 2]:
                whole, rest = divmod(chips, domain)
                expected = billed_one(units, domain, whole) + (billed_one(units, rest, 1) if rest else 0.0)
                got = sum(n * c for n, c in job_units(units, domain, chips, joined=s.kind == "slice"))
                assert got == expected, (sid, units, chips)


@pytest.mark.parametrize(
    ("hardware_", "chips", "billed"),
    [("tpu-v5p", 12, 16), ("tpu-v5p", 48, 64), ("tpu-v5p", 96, 128), ("tpu-v4", 12, 16), ("tpu-v7", 12, 16)],
)
def test_a_training_prediction_bills_the_slice(hardware_: str, chips: int, billed: int) -> None:
    """llama-3.1-8b on 12 TPU v5p had billed 12 chips ($2,210 for 10B tokens); the 2x2x4 slice is 16."""
    import chipwise.api as cw

    r = cw.predict({"kind": "train", "model": "llama-3.1-8b", "hardware": hardware_, "chips": chips, "tokens": 1e10})
    assert r["billed_chips"] == billed
    assert r["billed_units"] == [{"count": 1, "chips": billed, "kind": "slice", "name": None}]
    hours = r["time_to_train_s"] / 3600
    assert r["cost_usd"] == pytest.approx(billed * r["price_usd_per_chip_hour"] * hours)


def test_a_12_chip_serving_replica_rents_a_16_chip_slice() -> None:
    """Llama-3.1-405B as one TP4 PP3 replica on TPU v5p had been '12 x tpu-v5p' at 12 x $4.20 = $50.40 an hour; it
    rents the 2x2x4 slice: 16 x $4.20 = $67.20."""
    import chipwise.api as cw

    r = cw.predict({"kind": "serve", "model": "llama-3.1-405b", "hardware": "tpu-v5p", "chips": 12,
                    "input_tokens": 1024, "output_tokens": 256, "arrival_rate": 0.2, "requests": 50,
                    "plan": {"tp": 4, "pp": 3}})  # fmt: skip
    assert (r["chips"], r["billed_chips"]) == (12, 16)
    assert r["cost_usd_per_hour"] == pytest.approx(16 * 4.20)
