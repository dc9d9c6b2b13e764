"""Building systems from the catalog: a torus's per-dimension bandwidths are its dimensions' own figures, their sum
the total; a total the system gives, or a what-if on the chip's, splits in their proportions, so it reaches every
dimension."""

from __future__ import annotations

from pathlib import Path

import chipwise.api as cw
from chipwise.hardware import hardware
from chipwise.perf.device import topology_of

#: the reviewer's us.yaml: the Trn2 UltraServer, whose three torus dimensions carry 256, 256 and 128 GB/s
ULTRA = {"kind": "train", "model": "llama-3.1-70b", "hardware": "trn2-ultraserver", "chips": 64, "tokens": 1e11,
         "plan": {"tp": 64, "pp": 1, "dp": 4}}  # fmt: skip
DOUBLED = ["trn2.scaleup_bandwidth=1280GB/s"]


def test_a_set_of_the_chip_scaleup_bandwidth_scales_each_torus_dimension() -> None:
    """dim_bandwidth once took over the total: the chip's figure, set to 1,280 GB/s, changed nothing."""
    system = hardware(cw.catalog(sets=DOUBLED)).system("trn2-ultraserver")
    assert system.scaleup.bandwidth == 1280e9
    assert system.scaleup.dim_bandwidth == (512e9, 512e9, 256e9)
    assert topology_of(system).up_dim_bandwidth == (128e9, 128e9, 64e9)  # per rank, 4 a chip


def test_a_set_of_the_chip_scaleup_bandwidth_moves_an_ultraserver_prediction() -> None:
    """240.547 s either way before (238.683 s since in-domain collectives take a ring per torus dimension); the
    built-in figures (256 + 256 + 128 = 640 GB/s, the chip's) do not move."""
    base, doubled = cw.predict(ULTRA), cw.predict(ULTRA, sets=DOUBLED)
    assert round(base["step_time_s"], 3) == 238.683
    assert round(doubled["step_time_s"], 3) == 185.835


def test_sources_give_the_total_and_where_its_split_comes_from() -> None:
    """The dimensions named are those used: the --set moves them with the chip (256 : 256 : 128 GB/s x 2)."""
    figure = cw.predict(ULTRA, sets=DOUBLED)["figures"]["trn2-ultraserver.scaleup.bandwidth"]  # the system's
    assert figure["value"] == 1280.0 and figure["status"] == "estimate"
    assert figure["derivation"] == (
        "split over the torus dimensions in the proportions of trn2-ultraserver.scaleup.dim_bandwidth "
        "(512 : 512 : 256 GB/s); the total: given in sets=['trn2.scaleup_bandwidth=1280GB/s']"
    )


def test_a_files_dimension_figures_are_taken_as_given(tmp_path: Path) -> None:
    """A file doubling the UltraServer's inter-instance ring (256/256/256 GB/s) had been scaled to the chip's 640 GB/s
    total, 213 GB/s a dimension: the x and y links fell. The figures stand, and their sum is the total."""
    path = tmp_path / "ring.yaml"
    fig = "{value: 256, unit: GB/s, status: spec, source: [NRN_TRN2_ARCH]}"
    path.write_text(f"systems:\n  trn2-ultraserver:\n    scaleup:\n      dim_bandwidth: [{fig}, {fig}, {fig}]\n")
    system = hardware(cw.catalog(files=[path])).system("trn2-ultraserver")
    assert system.scaleup.dim_bandwidth == (256e9, 256e9, 256e9) and system.scaleup.bandwidth == 768e9
    total = system.provenance["scaleup.bandwidth"]
    assert total.derivation == "sum of scaleup.dim_bandwidth: 256 + 256 + 256 GB/s" and total.status == "spec"


def test_a_systems_scaleup_total_can_be_set_where_it_gives_none() -> None:
    """`--set trn2-ultraserver.scaleup.bandwidth` had been an unknown figure (the system gives per-dimension figures
    and no total): it is the system's total, split in the dimensions' proportions, as the chip's is."""
    system = hardware(cw.catalog(sets=["trn2-ultraserver.scaleup.bandwidth=1280GB/s"])).system("trn2-ultraserver")
    assert system.scaleup.bandwidth == 1280e9 and system.scaleup.dim_bandwidth == (512e9, 512e9, 256e9)
    assert round(cw.predict(ULTRA, sets=["trn2-ultraserver.scaleup.bandwidth=1280GB/s"])["step_time_s"], 3) == 185.835


def test_every_number_a_prediction_rests_on_carries_its_si_value() -> None:
    """A prediction's `figures` carry `si` as economics_figures and catalog show do (they had carried the display
    unit alone: trn2.flops.bf16 667.0 'TFLOP/s', and the API promised SI): 667 TFLOP/s -> 6.67e14 FLOP/s, 96 GiB
    -> 96 x 2^30 B, 3 us -> 3e-6 s."""
    from chipwise.api import predict

    figures = predict("examples/train-llama70b-trn2.yaml")["figures"]
    assert figures["trn2.flops.bf16"]["si"] == 667e12
    assert figures["trn2.hbm_capacity"]["si"] == 96 * 2**30
    assert figures["neuronlink-v3.latency"]["si"] == 3e-6
    assert all("si" in f for f in figures.values() if isinstance(f["value"], int | float))
