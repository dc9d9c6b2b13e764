"""A --set of a reliability figure no prediction reads is refused in one line, as chips' display-only fields are:
detection_time_s=6000s had been announced as a WHAT-IF, and goodput (86.7% on 16k H100s), downtime and failures
came out the same to the digit."""

from __future__ import annotations

import pytest

from catalog_errors import catalog_error
from chipwise.catalog import load_catalog
from chipwise.catalog.overrides import RELIABILITY_READ
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.reliability.goodput import reliability_inputs


@pytest.mark.parametrize(
    "assignment",
    [
        "reliability.checkpoint.checkpoint_save_time_s=3000s",
        "reliability.failures.software_failure_rate_per_job_hour=10/h",
        "reliability.failures.silent_data_corruption_rate_per_chip_hour=1/h",
        "reliability.goodput.byterobust_ettr=0.5",
        "reliability.failures.llama3_16k_h100.chips=5",
    ],
)
def test_a_reference_figure_is_refused(assignment: str) -> None:
    lhs = assignment.split("=", maxsplit=1)[0]
    msg = catalog_error(sets=[assignment])
    assert msg.startswith(f"--set {lhs}: no prediction reads this reliability figure, which is reference data")
    assert "Fix: drop it (predict --sources lists the figures a run reads)." in msg


def test_detection_says_where_it_is_given() -> None:
    with pytest.raises(ChipwiseError, match=r"reliability_inputs\(catalog, system, detection_s=600\)"):
        load_catalog(sets=["reliability.checkpoint.detection_time_s=6000s"])


def test_the_figures_read_are_exactly_those_reliability_inputs_reads() -> None:
    """The list lets through what a run reads and nothing else; a --set of each moves the catalog's figure."""
    cat = load_catalog()
    inputs = reliability_inputs(cat, hardware(cat).system("h100-sxm"))
    read = {t.key.removeprefix("reliability.") for t in inputs.terms() if t.key.startswith("reliability.")}
    read.discard("checkpoint.detection_time_s")  # 0 s, derived: the catalog's value is not read (detection_s is)
    assert read == RELIABILITY_READ
    moved = load_catalog(sets=["reliability.checkpoint.restart_overhead_s=600s"])
    assert reliability_inputs(moved, hardware(moved).system("h100-sxm")).restart_overhead.value == 600.0
